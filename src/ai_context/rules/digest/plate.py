"""What is on one actor's plate, most urgent first (`/status`) (pure)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ai_context.rules.digest.model import Digest, Entry, Plate

if TYPE_CHECKING:
    from ai_context.rules.actors import ActorMap

# Urgency tiers of `/status`, most urgent first. Within a tier the task untouched longest
# comes first (its age is the time since its block was last updated), then by number.
URGENCY_TIERS: dict[str, int] = {
    "stuck": 0,  # needs someone now: blocked, stale or broken
    "blocked step": 1,  # in progress, but a plan step is marked blocked
    "in_progress": 2,
    "in_review": 3,  # waiting on others
    "shipped": 4,  # done within the window, listed for the record
}


def urgency_tier(entry: Entry) -> str:
    if entry.category == "in_progress" and entry.blocked_steps:
        return "blocked step"
    return entry.category


def urgency(entry: Entry) -> tuple[int, float, str, int]:
    """Sort key: tier, then oldest update first (unknown age counts as oldest)."""
    age = entry.age.total_seconds() if entry.age is not None else float("inf")
    return (URGENCY_TIERS[urgency_tier(entry)], -age, entry.repository, entry.number)


def actors(digest: Digest) -> list[str]:
    """Every actor named in the digest, sorted."""
    return sorted({e.actor for e in digest.all_entries() if e.actor})


def plate(
    digest: Digest, actor: str, *, login: str | None = None, ids: Iterable[str] = ()
) -> Plate:
    """The tasks of `actor` (compared without case), most urgent first: those it is the
    Active actor of, and those it owns as a GitHub login (assigned to it, or owned through
    `actors:`). Asked by a `login`, the plate also holds the tasks of every actor id in `ids`
    (those the login owns)."""
    wanted = {i.strip().lower() for i in (*ids, actor)}
    mine = [
        e
        for e in digest.all_entries()
        if (e.actor or "").lower() in wanted or wanted & {o.lower() for o in e.owners}
    ]
    return Plate(
        actor=actor.strip(),
        generated_at=digest.generated_at,
        entries=tuple(sorted(mine, key=urgency)),
        login=login,
    )


def plates_for(digest: Digest, wanted: str | None, known: ActorMap) -> list[Plate]:
    """The plate asked for (an actor id, or a GitHub login: its actors in KNOWN), or
    everyone's when WANTED is None: what `status` answers, on the command line and in MCP."""
    if wanted is None:
        return [plate(digest, a) for a in actors(digest)]
    found = known.matches(wanted)
    if found and wanted.casefold() not in {a.id.casefold() for a in found}:
        return [plate(digest, wanted, login=wanted, ids=[a.id for a in found])]
    return [plate(digest, found[0].id if found else wanted)]
