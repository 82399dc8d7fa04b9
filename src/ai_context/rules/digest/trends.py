"""Trends over a period (`ai-context digest --since 7d`), from the digests it covers (pure).

Each day's digest comment carries every task's category, so the digests of a week are its
history, with no other store. From them and today's digest: what shipped within the period;
the median time from the first digest that listed a task to its done time (a task no earlier
digest listed is counted apart); per task, the time stuck between digests (a digest's
category holds until the next one); and the tasks stuck in every digest of the period, the
one it started from included. The times are as precise as the schedule.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from statistics import median

from pydantic import BaseModel, ConfigDict

from ai_context.rules.digest.model import Digest, DigestState, Entry

Key = tuple[str, int]


class StuckTime(BaseModel):
    model_config = ConfigDict(frozen=True)

    repository: str
    number: int
    title: str
    url: str
    time: timedelta


class Trends(BaseModel):
    """What a period says: see the module's doc."""

    model_config = ConfigDict(frozen=True)

    since: datetime
    until: datetime
    digests: int  # digests of the period read (the one it started from included)
    covered_from: datetime | None  # the earliest digest the timeline starts with
    shipped: tuple[Entry, ...]
    lead_times: tuple[timedelta, ...]  # first block to done, for the shipped tasks known
    unknown_lead: int  # shipped tasks no earlier digest listed
    stuck: tuple[StuckTime, ...]  # longest first
    stuck_throughout: tuple[Entry, ...]

    @property
    def median_lead(self) -> timedelta | None:
        if not self.lead_times:
            return None
        seconds = median(d.total_seconds() for d in self.lead_times)
        return timedelta(seconds=round(seconds))

    @property
    def stuck_total(self) -> timedelta:
        return sum((s.time for s in self.stuck), timedelta(0))


def _first_seen(history: Iterable[DigestState]) -> dict[Key, datetime]:
    seen: dict[Key, datetime] = {}
    for state in history:
        if state.generated_at is None:
            continue
        for key in state.tasks:
            if key not in seen or state.generated_at < seen[key]:
                seen[key] = state.generated_at
    return seen


def timeline(history: Sequence[DigestState], since: datetime, today: Digest) -> list[DigestState]:
    """The digests that speak for the period, oldest first: the last one at or before SINCE
    (it holds until the next), those after, and today's."""
    dated = sorted(
        (s for s in history if s.generated_at is not None and s.generated_at < today.generated_at),
        key=lambda s: s.generated_at or since,
    )
    before = [s for s in dated if s.generated_at is not None and s.generated_at <= since]
    after = [s for s in dated if s.generated_at is not None and s.generated_at > since]
    return [*before[-1:], *after, today.state]


def _leads(shipped: Sequence[Entry], first: dict[Key, datetime]) -> tuple[list[timedelta], int]:
    """First block to done for each shipped task known before it was done; how many were not."""
    leads, unknown = [], 0
    for entry in shipped:
        start = first.get(entry.key)
        if entry.done_at is None or start is None or start >= entry.done_at:
            unknown += 1
        else:
            leads.append(entry.done_at - start)
    return leads, unknown


def _stuck_times(points: Sequence[DigestState], since: datetime) -> dict[Key, timedelta]:
    """Per task, the time within the period between a digest that had it stuck and the next."""
    stuck: dict[Key, timedelta] = {}
    for this, after in itertools.pairwise(points):
        if this.generated_at is None or after.generated_at is None:
            continue
        begin = max(this.generated_at, since)
        for key, task in this.tasks.items():
            if task.category == "stuck" and after.generated_at > begin:
                stuck[key] = stuck.get(key, timedelta(0)) + (after.generated_at - begin)
    return stuck


def _throughout(points: Sequence[DigestState], since: datetime, today: Digest) -> list[Entry]:
    """Today's stuck tasks that every digest of the period had stuck; none when no digest
    reaches back to the period's start (nothing can say the whole period then)."""
    start = points[0].generated_at if points else None
    if len(points) < 2 or start is None or start > since:
        return []
    return [
        e
        for e in today.entries.get("stuck", ())
        if all(e.key in p.tasks and p.tasks[e.key].category == "stuck" for p in points)
    ]


def trends(history: Sequence[DigestState], since: datetime, today: Digest) -> Trends:
    """The period from SINCE to TODAY's digest, from the digests in HISTORY (any order, any
    age: the older ones say when a task was first seen)."""
    shipped = today.entries.get("shipped", ())
    leads, unknown = _leads(shipped, _first_seen([*history, today.state]))
    points = timeline(history, since, today)
    entries = {e.key: e for e in today.all_entries()}
    rows = [
        StuckTime(
            repository=key[0],
            number=key[1],
            title=entries[key].title if key in entries else "",
            url=entries[key].url if key in entries else "",
            time=time,
        )
        for key, time in _stuck_times(points, since).items()
    ]
    return Trends(
        since=since,
        until=today.generated_at,
        digests=len(points) - 1,
        covered_from=points[0].generated_at,
        shipped=shipped,
        lead_times=tuple(sorted(leads)),
        unknown_lead=unknown,
        stuck=tuple(sorted(rows, key=lambda r: (-r.time.total_seconds(), r.repository, r.number))),
        stuck_throughout=tuple(sorted(_throughout(points, since, today), key=lambda e: e.key)),
    )
