"""`ai-context claim | renew | release | who`: the lease calls, driven by lease.py's decisions.

Calls per operation (GitHub REST, no retries needed):
  claim a free lease      3  (read ref -> 404, create commit, create ref)
  claim a held lease      2  (read ref, read commit: held, refused)
  claim an expired lease  4  (read ref, read commit, commit on top, fast-forward the ref)
  renew                   4  (read ref, read commit, commit on top, fast-forward the ref)
  release                 3  (read ref, read commit, delete; 2 with --lease SHA)
  who                     2  (read ref, read commit; 1 when free)
A lost compare-and-swap (422) re-reads and decides again, at most ATTEMPTS times.

Exit status: 0 won (or released, or `who` answered); 4 held by another actor (the holder and
expiry are printed); 2 usage or configuration; 3 GitHub failed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal, Protocol, TextIO

from pydantic import BaseModel, ConfigDict

from ai_context.adapters.config import load_settings
from ai_context.core.durations import parse_duration
from ai_context.core.errors import ConfigError
from ai_context.core.models import GitCommit
from ai_context.rules.actors import ActorMap, parse_actors
from ai_context.rules.lease import (
    EMPTY_TREE,
    Lease,
    LeaseConfig,
    LeaseError,
    LeaseRecord,
    Same,
    decide_claim,
    decide_release,
    decide_renew,
    next_record,
    parse_lease_config,
    parse_record,
    same_actor,
    stamp,
)

ATTEMPTS = 5
EXIT_OK, EXIT_USAGE, EXIT_SERVICE, EXIT_HELD = 0, 2, 3, 4


class RefStore(Protocol):
    """The git database calls a lease needs; github.GitHub provides them."""

    def get_ref(self, ref: str) -> str | None: ...

    def create_ref(self, ref: str, sha: str) -> bool: ...

    def update_ref(self, ref: str, sha: str, *, force: bool = False) -> bool: ...

    def delete_ref(self, ref: str) -> bool: ...

    def create_commit(self, message: str, tree: str, parents: Iterable[str] = ()) -> GitCommit: ...

    def get_commit(self, sha: str) -> GitCommit: ...


class Outcome(BaseModel):
    """What an operation ended in, and the lease as it now stands (None: free)."""

    model_config = ConfigDict(frozen=True)

    result: Literal["won", "held", "free", "released", "lost"]
    issue: int
    lease: Lease | None = None
    calls: int = 0

    @property
    def ok(self) -> bool:
        return self.result in ("won", "free", "released")


Clock = Callable[[], datetime]


def _utcnow() -> datetime:
    return datetime.now(UTC)


def read_lease(store: RefStore, ref: str, sha: str | None = None) -> Lease | None:
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


def _moved(store: RefStore, ref: str, current: Lease | None, sha: str) -> bool:
    """Create or fast-forward REF to SHA; a POST lost to a 5xx may have landed: ask the ref."""
    from ai_context.adapters.github import GitHubUnavailable  # noqa: PLC0415 - see cmd_lease

    try:
        if current is None:
            return store.create_ref(ref, sha)
        return store.update_ref(ref, sha, force=False)
    except GitHubUnavailable:
        if store.get_ref(ref) == sha:
            return True
        raise


def claim(
    store: RefStore,
    issue: int,
    actor: str,
    *,
    ttl: timedelta,
    config: LeaseConfig | None = None,
    now: Clock = _utcnow,
    same: Same = same_actor,
) -> Outcome:
    """Win a free or expired lease, extend your own, or report who holds it."""
    ref = (config or LeaseConfig()).ref(issue)
    current: Lease | None = None
    for _ in range(ATTEMPTS):
        current = read_lease(store, ref)
        when = now()
        step = decide_claim(current, actor, when, same)
        if step == "refuse":
            return Outcome(result="held", issue=issue, lease=current)
        won = _write(
            store, ref, current, next_record(current, step, issue, actor, ttl=ttl, now=when)
        )
        if won is not None:
            return Outcome(result="won", issue=issue, lease=won)
    return Outcome(result="lost", issue=issue, lease=current)


def _write(store: RefStore, ref: str, current: Lease | None, record: LeaseRecord) -> Lease | None:
    """A lease commit on top of CURRENT, then the compare-and-swap; None when someone moved
    the ref first (read again and decide again)."""
    parent = current.sha if current else None
    commit = store.create_commit(record.message(), EMPTY_TREE, [parent] if parent else [])
    if _moved(store, ref, current, commit.sha):
        return Lease(ref=ref, sha=commit.sha, record=record, parent=parent)
    return None


def renew(
    store: RefStore,
    issue: int,
    actor: str,
    *,
    ttl: timedelta,
    config: LeaseConfig | None = None,
    now: Clock = _utcnow,
    same: Same = same_actor,
) -> Outcome:
    """Extend your own lease (a fast-forward on top of the commit read)."""
    ref = (config or LeaseConfig()).ref(issue)
    current: Lease | None = None
    for _ in range(ATTEMPTS):
        current = read_lease(store, ref)
        step = decide_renew(current, actor, same)
        if step == "missing":
            return Outcome(result="lost", issue=issue)
        if step == "refuse" or current is None:
            return Outcome(result="held", issue=issue, lease=current)
        won = _write(
            store, ref, current, next_record(current, step, issue, actor, ttl=ttl, now=now())
        )
        if won is not None:
            return Outcome(result="won", issue=issue, lease=won)
    return Outcome(result="lost", issue=issue, lease=current)


def release(
    store: RefStore,
    issue: int,
    actor: str,
    *,
    expected: str | None = None,
    config: LeaseConfig | None = None,
    same: Same = same_actor,
) -> Outcome:
    """Delete your lease only if the ref still points where you read it (EXPECTED, when the
    caller kept the sha from its claim; else the commit just read and checked to be yours).
    See lease.py for the window between that read and the DELETE."""
    ref = (config or LeaseConfig()).ref(issue)
    sha = store.get_ref(ref)
    if sha is None:
        return Outcome(result="free", issue=issue)
    if expected is not None and sha != expected:
        return Outcome(result="held", issue=issue, lease=read_lease(store, ref, sha))
    if expected is None:
        current = read_lease(store, ref, sha)
        if decide_release(current, actor, same) != "delete":
            return Outcome(result="held", issue=issue, lease=current)
    store.delete_ref(ref)
    return Outcome(result="released", issue=issue)


def who(store: RefStore, issue: int, *, config: LeaseConfig | None = None) -> Outcome:
    lease = read_lease(store, (config or LeaseConfig()).ref(issue))
    return Outcome(result="held" if lease else "free", issue=issue, lease=lease)


# --- the command line ------------------------------------------------------------------------


def _issue(value: str) -> int:
    text = value.strip().removeprefix("#")
    if not text.isdigit() or int(text) <= 0:
        raise argparse.ArgumentTypeError(f"{value!r} is not an issue number; write it like 42")
    return int(text)


def _ttl(value: str) -> timedelta:
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_lease_commands(sub: Any) -> None:
    """Register claim, renew, release and who on the `ai-context` parser's subparsers."""

    def common(p: argparse.ArgumentParser, actor: bool) -> None:
        p.add_argument("issue", type=_issue, metavar="ISSUE", help="the issue number")
        if actor:
            p.add_argument("--actor", required=True, help="your actor id, e.g. cc-ariel-laptop")
        p.add_argument("--repo", help="owner/name (default: $GITHUB_REPOSITORY)")
        p.add_argument("--api-url", help="GitHub API URL (default: $GITHUB_API_URL or github.com)")
        p.add_argument("--format", choices=("text", "json"), default="text")

    for name, text in (
        ("claim", "take the lease on an issue (exit 4 when another actor holds it)"),
        ("renew", "extend the lease you hold"),
    ):
        p = sub.add_parser(name, help=text)
        common(p, actor=True)
        p.add_argument("--ttl", type=_ttl, default=None, help="e.g. 90m, 2h (default: config, 2h)")
        p.set_defaults(handler=cmd_lease, lease_op=name)
    p = sub.add_parser("release", help="give up the lease you hold")
    common(p, actor=True)
    p.add_argument("--lease", metavar="SHA", help="the lease commit your claim printed")
    p.set_defaults(handler=cmd_lease, lease_op="release")
    p = sub.add_parser("who", help="who holds the lease on an issue, and until when")
    common(p, actor=False)
    p.set_defaults(handler=cmd_lease, lease_op="who")


def cmd_lease(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    # PyGithub takes a quarter of a second to import: only the lease commands pay for it.
    from ai_context.adapters.github import (  # noqa: PLC0415
        DEFAULT_API_URL,
        GitHub,
        GitHubConfigError,
        GitHubError,
    )

    del stdin
    env = os.environ
    try:
        settings, extras = load_settings(env, Path.cwd())
        config = parse_lease_config(extras.get("lease"), settings.config)
        actors = parse_actors(extras.get("actors"), settings.config)
    except ConfigError as exc:
        return _fail(str(exc), EXIT_USAGE)
    repository = args.repo or env.get("GITHUB_REPOSITORY", "")
    if settings.github_token is None:
        return _fail(
            "no GitHub token: set GITHUB_TOKEN (or GH_TOKEN) to a token that may "
            "write the repository's contents",
            EXIT_USAGE,
        )
    if not repository:
        return _fail(
            "which repository? pass --repo owner/name or set GITHUB_REPOSITORY", EXIT_USAGE
        )
    try:
        github = GitHub(
            settings.github_token,
            repository,
            api_url=args.api_url or env.get("GITHUB_API_URL") or DEFAULT_API_URL,
            write_interval=0,
        )
        outcome = run_lease_op(github, args, config, actors)
    except GitHubConfigError as exc:
        return _fail(str(exc), EXIT_USAGE)
    except LeaseError as exc:
        return _fail(str(exc), EXIT_HELD)
    except GitHubError as exc:
        return _fail(str(exc), EXIT_SERVICE)
    outcome = outcome.model_copy(update={"calls": github.counter.total})
    out.write(render_outcome(outcome, args.format, getattr(args, "actor", None)) + "\n")
    return EXIT_OK if args.lease_op == "who" or outcome.ok else EXIT_HELD


def run_lease_op(
    store: RefStore, args: argparse.Namespace, config: LeaseConfig, actors: ActorMap
) -> Outcome:
    def same(a: str, b: str) -> bool:
        return bool(actors.same(a, b))

    ttl = getattr(args, "ttl", None) or config.ttl
    if args.lease_op == "claim":
        return claim(store, args.issue, args.actor, ttl=ttl, config=config, same=same)
    if args.lease_op == "renew":
        return renew(store, args.issue, args.actor, ttl=ttl, config=config, same=same)
    if args.lease_op == "release":
        return release(store, args.issue, args.actor, expected=args.lease, config=config, same=same)
    return who(store, args.issue, config=config)


def render_outcome(
    outcome: Outcome, fmt: str, actor: str | None, now: datetime | None = None
) -> str:
    lease = outcome.lease
    if fmt == "json":
        data: dict[str, Any] = {
            "result": outcome.result,
            "issue": outcome.issue,
            "calls": outcome.calls,
        }
        if lease is not None:
            data.update(
                actor=lease.record.actor,
                acquired=stamp(lease.record.acquired),
                expires=stamp(lease.record.expires),
                lease=lease.sha,
            )
        return json.dumps(data)
    when = now or _utcnow()
    if outcome.result == "won" and lease is not None:
        return (
            f"#{outcome.issue}: {lease.record.actor} holds the lease until "
            f"{stamp(lease.record.expires)} (lease {lease.sha})"
        )
    if outcome.result == "released":
        return f"#{outcome.issue}: released; the lease is free"
    if outcome.result == "free":
        return f"#{outcome.issue}: free; nobody holds the lease"
    if outcome.result == "lost" and lease is None:
        return (
            f"#{outcome.issue}: {actor or 'this actor'} holds no lease on it; claim it first "
            f"(ai-context claim {outcome.issue} --actor {actor or 'ID'})"
        )
    if outcome.result == "lost":
        assert lease is not None
        return f"#{outcome.issue}: lost the race {ATTEMPTS} times; {lease.describe(when)}"
    assert lease is not None
    return f"{lease.describe(when)}; wait, or ask {lease.record.actor}'s owner to hand it off"


def _fail(message: str, code: int) -> int:
    sys.stderr.write(f"ai-context: {message}\n")
    return code


def handoff_release_hook(store: RefStore) -> Callable[[Any, str], None]:
    """What `ai-context handoff` calls after writing the block: release the lease the actor
    handing off holds, if any. Notes go to stderr so `--format json` output stays parseable;
    a lease held by someone else is left alone and said so."""

    def hook(issue: Any, actor: str) -> None:
        try:
            settings, extras = load_settings(os.environ, Path.cwd())
            config = parse_lease_config(extras.get("lease"), settings.config)
            actors = parse_actors(extras.get("actors"), settings.config)
        except ConfigError as exc:
            sys.stderr.write(f"lease: not released ({exc})\n")
            return
        outcome = release(
            store, issue.number, actor, config=config, same=lambda a, b: bool(actors.same(a, b))
        )
        if outcome.result == "released":
            sys.stderr.write(f"lease: released {actor}'s lease on #{issue.number}\n")
        elif outcome.result == "held" and outcome.lease is not None:
            sys.stderr.write(
                f"lease: #{issue.number} is held by {outcome.lease.record.actor}; left alone\n"
            )

    return hook
