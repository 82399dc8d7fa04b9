"""The lease operations: claim, renew, release, who, driven by rules/lease.py's decisions.

The command line (cli/lease.py) and the MCP server call `run_lease` with a `LeaseRequest` and
read its outcome as `outcome_json` and `outcome_exit`; nothing here prints. Calls per
operation (GitHub REST, no retries needed):
  claim a free lease      3  (read ref -> 404, create commit, create ref)
  claim a held lease      2  (read ref, read commit: held, refused)
  claim an expired lease  4  (read ref, read commit, commit on top, fast-forward the ref)
  renew                   4  (read ref, read commit, commit on top, fast-forward the ref)
  release                 3  (read ref, read commit, delete; 2 with --lease SHA)
  who                     2  (read ref, read commit; 1 when free)
A lost compare-and-swap (422) re-reads and decides again, at most ATTEMPTS times.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from ai_context.adapters.config import load_config
from ai_context.adapters.github import (
    GitHub,
    GitHubConflict,
    GitHubError,
    GitHubNotFound,
    GitHubUnavailable,
)
from ai_context.core.durations import format_duration
from ai_context.core.errors import AIContextError, Exit, UsageError
from ai_context.core.models import GitCommit, Issue
from ai_context.rules.lease import (
    EMPTY_TREE,
    Lease,
    LeaseConfig,
    LeaseError,
    LeaseRecord,
    Same,
    decide_claim,
    decide_renew,
    next_record,
    parse_record,
    same_actor,
    stamp,
)

ATTEMPTS = 5
TTL_MIN, TTL_MAX = timedelta(minutes=1), timedelta(days=30)
# The tree of a lease commit when GitHub refuses the empty one (its object store need not hold
# it): one small file, the same for every lease, created once per run and store.
LEASE_FILES = {"LEASE": "An ai-context lease: the record is in the commit message.\n"}
_TREES: weakref.WeakKeyDictionary[object, str] = weakref.WeakKeyDictionary()


class Outcome(BaseModel):
    """What an operation ended in, and the lease as it now stands (None: free)."""

    model_config = ConfigDict(frozen=True)

    # mismatch: `release --lease SHA` by the holder, but SHA is not the lease's current commit
    result: Literal["won", "held", "free", "released", "lost", "mismatch"]
    issue: int
    lease: Lease | None = None
    calls: int = 0
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.result in ("won", "free", "released")


Clock = Callable[[], datetime]
_utcnow: Clock = partial(datetime.now, UTC)


def read_lease(store: GitHub, ref: str, sha: str | None = None) -> Lease | None:
    """The lease at REF (at SHA when the ref was already read), or None when free."""
    sha = sha or store.get_ref(ref)
    if sha is None:
        return None
    commit = store.get_commit(sha)
    try:
        record = parse_record(commit.message)
    except LeaseError as exc:
        raise LeaseError(
            f"{ref} points at {sha[:12]}, which is not a lease: {exc}. If it is junk, delete "
            "the ref (git push origin :" + ref + ")"
        ) from exc
    return Lease(
        ref=ref, sha=sha, record=record, parent=commit.parents[0] if commit.parents else None
    )


def check_ttl(ttl: timedelta, what: str = "the lease's ttl") -> timedelta:
    """A lease lasts between TTL_MIN and TTL_MAX: 0 is not "the default", 99999d not "forever"."""
    if not TTL_MIN <= ttl <= TTL_MAX:
        raise UsageError(
            f"{what} {format_duration(ttl)} is out of range: a lease lasts from 1m to 30d "
            "(e.g. 90m, 2h or 3d); renew it to keep it longer"
        )
    return ttl


def _check_issue(store: GitHub, number: int) -> None:
    """What `claim` runs before its first write: the issue must exist (one GET)."""
    try:
        store.get_issue(number)
    except GitHubNotFound as exc:
        raise UsageError(
            f"no issue #{number} in {store.repository}: check the number and the repository; "
            "no lease was written"
        ) from exc


def _moved(store: GitHub, ref: str, current: Lease | None, sha: str) -> str:
    """Create or fast-forward REF to SHA: "moved", "lost" (someone else moved it first), or
    "landed" (GitHub answered 5xx but reading the ref back shows our write is there)."""
    try:
        if current is None:
            return "moved" if store.create_ref(ref, sha) else "lost"
        return "moved" if store.update_ref(ref, sha, force=False) else "lost"
    except GitHubUnavailable:
        now_at = store.get_ref(ref)
        if now_at == sha:
            return "landed"
        if now_at != (current.sha if current else None):
            return "lost"  # another claimer's write landed: read again and decide again
        raise


def claim(
    store: GitHub,
    issue: int,
    actor: str,
    *,
    ttl: timedelta,
    renewing: bool = False,
    config: LeaseConfig | None = None,
    now: Clock = _utcnow,
    same: Same = same_actor,
    before_write: Callable[[int], None] | None = None,
) -> Outcome:
    """Win a free or expired lease, extend your own, or report who holds it; RENEWING only
    extends your own. BEFORE_WRITE (run_lease: the issue exists) runs once, only when the
    claim is about to write. A lost compare-and-swap reads and decides again, at most
    ATTEMPTS times."""
    check_ttl(ttl)
    ref = (config or LeaseConfig()).ref(issue)
    current: Lease | None = None
    for _ in range(ATTEMPTS):
        current = read_lease(store, ref)
        when = now()
        if renewing:
            step = decide_renew(current, actor, same)
        else:
            step = decide_claim(current, actor, when, same)
        if step == "missing":
            return Outcome(result="lost", issue=issue)
        if step == "refuse":
            return Outcome(result="held", issue=issue, lease=current)
        if before_write is not None:
            before_write(issue)
            before_write = None
        record = next_record(current, step, issue, actor, ttl=ttl, now=when)
        won, notes = _write(store, ref, current, record)
        if won is not None:
            return Outcome(result="won", issue=issue, lease=won, notes=notes)
    return Outcome(result="lost", issue=issue, lease=current)


def _lease_commit(store: GitHub, message: str, parents: list[str]) -> GitCommit:
    """The lease commit, on the empty tree, or on LEASE_FILES' tree once GitHub refused it."""
    tree = _TREES.get(store, EMPTY_TREE)
    try:
        return store.create_commit(message, tree, parents)
    except GitHubConflict:  # 422: no such tree in this repository's object store
        if tree != EMPTY_TREE:
            raise
    _TREES[store] = tree = store.create_tree(LEASE_FILES)
    return store.create_commit(message, tree, parents)


def _write(
    store: GitHub, ref: str, current: Lease | None, record: LeaseRecord
) -> tuple[Lease | None, tuple[str, ...]]:
    """A lease commit on top of CURRENT, then the compare-and-swap; None when someone moved
    the ref first (read again and decide again). Notes say what the caller should know."""
    parent = current.sha if current else None
    try:
        commit = _lease_commit(store, record.message(), [parent] if parent else [])
        moved = _moved(store, ref, current, commit.sha)
    except GitHubError as exc:
        if exc.status != 409:
            raise
        raise UsageError(
            f"{store.repository} is empty (GitHub answers 409 to git writes): a lease needs a "
            "repository with at least one commit; push one (a README will do) and claim again"
        ) from exc
    if moved == "lost":
        return None, ()
    landed = "GitHub answered the ref write with an error, but the ref reads back as this lease: "
    landed += "it landed, and the lease is yours"
    notes = (landed,) if moved == "landed" else ()
    return Lease(ref=ref, sha=commit.sha, record=record, parent=parent), notes


def release(
    store: GitHub,
    issue: int,
    actor: str,
    *,
    expected: str | None = None,
    config: LeaseConfig | None = None,
    same: Same = same_actor,
) -> Outcome:
    """Delete your lease only if the ref still points where you read it (EXPECTED, when the
    caller kept the sha from its claim; else the commit just read and checked to be yours).
    See rules/lease.py for the window between that read and the DELETE."""
    ref = (config or LeaseConfig()).ref(issue)
    sha = store.get_ref(ref)
    if sha is None:
        return Outcome(result="free", issue=issue)
    if sha != expected:  # not the lease the caller named: whose is it?
        current = read_lease(store, ref, sha)
        mine = current is not None and same(current.record.actor, actor)
        if expected is not None or not mine:
            return Outcome(result="mismatch" if mine else "held", issue=issue, lease=current)
    store.delete_ref(ref)
    return Outcome(result="released", issue=issue)


def who(store: GitHub, issue: int, *, config: LeaseConfig | None = None) -> Outcome:
    lease = read_lease(store, (config or LeaseConfig()).ref(issue))
    return Outcome(result="held" if lease else "free", issue=issue, lease=lease)


def lease_settings(env: Mapping[str, str], workspace: Path) -> tuple[LeaseConfig, Same]:
    """The lease section and the actor aliases of the config file (ConfigError when bad)."""
    settings = load_config(env, workspace)
    return settings.lease, lambda a, b: bool(settings.actors.same(a, b))


LeaseOp = Literal["claim", "renew", "release", "who"]


class LeaseRequest(BaseModel):
    """One lease operation as a face asks for it: TTL (claim, renew) None for the config's;
    LEASE (release) the lease commit the claim printed, to release only that one."""

    model_config = ConfigDict(frozen=True)

    op: LeaseOp
    issue: int
    actor: str = ""
    ttl: timedelta | None = None
    lease: str | None = None


def run_lease(store: GitHub, request: LeaseRequest, config: LeaseConfig, same: Same) -> Outcome:
    """One operation, its `calls` counted; a claim checks the issue exists before it writes."""
    before = store.counter.total
    issue, actor = request.issue, request.actor
    ttl = config.ttl if request.ttl is None else request.ttl  # 0 is refused, never the default
    if request.op in ("claim", "renew"):
        renewing = request.op == "renew"
        check = None if renewing else partial(_check_issue, store)
        outcome = claim(
            store,
            issue,
            actor,
            ttl=ttl,
            renewing=renewing,
            config=config,
            same=same,
            before_write=check,
        )
    elif request.op == "release":
        outcome = release(store, issue, actor, expected=request.lease, config=config, same=same)
    else:
        outcome = who(store, issue, config=config)
    return outcome.model_copy(update={"calls": store.counter.total - before})


def outcome_exit(op: LeaseOp, outcome: Outcome) -> Exit:
    """0 won, released or answered (`who`); 4 held by another; 2 a lease id not yours."""
    if outcome.result == "mismatch":
        return Exit.USAGE
    return Exit.OK if op == "who" or outcome.ok else Exit.CONFLICT


def outcome_json(outcome: Outcome, actor: str | None, same: Same) -> dict[str, Any]:
    """The stable JSON shape of a lease outcome, for every face: keys may be added, never
    renamed. `mine`: the lease belongs to ACTOR (or an alias of it, by SAME)."""
    data = outcome.model_dump(mode="json", include={"result", "issue", "calls", "notes"})
    lease = outcome.lease
    data["mine"] = bool(actor and lease and same(lease.record.actor, actor))
    if lease is not None:
        data.update(
            actor=lease.record.actor,
            acquired=stamp(lease.record.acquired),
            expires=stamp(lease.record.expires),
            lease=lease.sha,
        )
    return data


def release_after_handoff(
    store: GitHub,
    issue: Issue,
    actor: str,
    *,
    env: Mapping[str, str],
    workspace: Path,
    note: Callable[[str], None],
) -> None:
    """After `handoff` or `done` wrote the block: release the lease ACTOR holds on ISSUE, if
    any, with the settings of ENV and WORKSPACE. Each step is a NOTE (the faces write it on
    stderr, so `--format json` output stays parseable); a lease held by someone else is left
    alone and said so."""
    try:
        config, same = lease_settings(env, workspace)
        outcome = release(store, issue.number, actor, config=config, same=same)
    except AIContextError as exc:  # the block has landed: say so, not fail the command
        note(f"lease: not released ({exc})")
        return
    if outcome.result == "released":
        note(f"lease: released {actor}'s lease on #{issue.number}")
    elif outcome.result == "held" and outcome.lease is not None:
        note(f"lease: #{issue.number} is held by {outcome.lease.record.actor}; left alone")
