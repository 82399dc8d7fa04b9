"""One key vocabulary for every report's `--format json` (digest, summary, status, report).

A task is always `repository`, `number`, `title`, `url`, `state`, ... and its age is
`age_seconds`. Keys may be added, never renamed; each has one name (README, "JSON").
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from ai_context.core.block.model import format_timestamp
from ai_context.rules.digest.model import (
    CATEGORIES,
    Digest,
    Entry,
    Plate,
    TaskSummary,
)
from ai_context.rules.digest.trends import Trends


def _seconds(age: timedelta | None) -> int | None:
    return int(age.total_seconds()) if age is not None else None


def _task(e: Entry) -> dict[str, Any]:
    """One task in the shared vocabulary: the entry's fields, its age as `age_seconds`."""
    data = e.model_dump(mode="json", exclude={"done_at"})
    data.update(last_updated=format_timestamp(e.last_updated) or None, age=_seconds(e.age))
    return {("age_seconds" if key == "age" else key): value for key, value in data.items()}


def digest_json(digest: Digest) -> dict[str, Any]:
    """The stable JSON shape of a digest (`--format json`)."""
    previous = digest.previous.state
    return {
        "generated_at": format_timestamp(digest.generated_at),
        "window_hours": digest.window.total_seconds() / 3600,
        "stale_after_hours": digest.stale_after.total_seconds() / 3600,
        "repositories": list(digest.repositories),
        "counts": dict(digest.counts),
        "deltas": dict(digest.deltas),
        "categories": {c: [_task(e) for e in digest.entries.get(c, ())] for c in CATEGORIES},
        "changes": [c.model_dump() for c in digest.changes],
        "previous": {
            "status": digest.previous.status,
            "detail": digest.previous.detail,
            "generated_at": format_timestamp(previous.generated_at) or None,
            "counts": dict(previous.counts) if not digest.first else None,
        },
    }


def plate_json(p: Plate) -> dict[str, Any]:
    """One actor's plate (`status --format json`)."""
    return {
        "actor": p.actor,
        "login": p.login,
        "generated_at": format_timestamp(p.generated_at),
        "counts": dict(p.counts),
        "entries": [_task(e) for e in p.entries],
    }


def summary_json(s: TaskSummary) -> dict[str, Any]:
    """One task's progress (`summary --format json`): the model's fields, plus the shared
    `age_seconds` and times written as everywhere else."""
    data: dict[str, Any] = s.model_dump(mode="json", exclude={"age"})
    data["age_seconds"] = _seconds(s.age)
    data["last_updated"] = format_timestamp(s.last_updated) or None
    data["generated_at"] = format_timestamp(s.generated_at)
    return data


def trends_json(t: Trends) -> dict[str, Any]:
    """The period's figures (`digest --since D --format json`, key `trends`)."""
    lead = t.median_lead
    return {
        "since": format_timestamp(t.since),
        "until": format_timestamp(t.until),
        "digests": t.digests,
        "covered_from": format_timestamp(t.covered_from) or None,
        "shipped": len(t.shipped),
        "median_first_block_to_done_seconds": int(lead.total_seconds()) if lead else None,
        "first_block_to_done_seconds": [int(d.total_seconds()) for d in t.lead_times],
        "shipped_not_seen_before_done": t.unknown_lead,
        "stuck_seconds": int(t.stuck_total.total_seconds()),
        "stuck": [
            {**s.model_dump(exclude={"time"}), "stuck_seconds": int(s.time.total_seconds())}
            for s in t.stuck
        ],
        "stuck_all_period": [_task(e) for e in t.stuck_throughout],
    }
