"""`ai-context claim | renew | release | who`: the command line's face on jobs/lease.py.

Exit status: 0 won (or released, or `who` answered); 4 held by another actor (the holder and
expiry are printed); 2 usage or configuration; 3 GitHub failed. Errors go to cli/main.py.
"""

from __future__ import annotations

import argparse
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ai_context.cli.common import (
    add_actor,
    add_format,
    add_issue,
    add_repo,
    any_duration_arg,
    resolve_actor,
    resolve_repository,
)
from ai_context.core.errors import Exit
from ai_context.rules.lease import stamp

if TYPE_CHECKING:
    from ai_context.jobs.lease import Outcome
    from ai_context.rules.lease import Lease


def add_lease_commands(sub: Any) -> None:
    """Register claim, renew, release and who on the `ai-context` parser's subparsers."""
    for name, text in (
        ("claim", "take the lease on an issue (exit 4 when another actor holds it)"),
        ("renew", "extend the lease you hold"),
        ("release", "give up the lease you hold"),
        ("who", "who holds the lease on an issue, and until when"),
    ):
        p = sub.add_parser(name, help=text)
        add_issue(p)
        add_actor(p)  # optional for `who`: with it, `who` tells the holder that it is them
        add_repo(p)
        add_format(p)
        p.set_defaults(handler=cmd_lease, lease_op=name, ttl=None, lease=None)
        if name in ("claim", "renew"):
            p.add_argument(
                "--ttl",
                type=any_duration_arg,
                default=None,
                help="how long the lease lasts, 1m to 30d, e.g. 90m, 2h (default: config, 2h)",
            )
        elif name == "release":
            p.add_argument("--lease", metavar="SHA", help="the lease commit your claim printed")


def cmd_lease(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    # The lease commands import the GitHub client and the git plumbing only when they run.
    from ai_context.adapters.clients import github_from_env  # noqa: PLC0415
    from ai_context.jobs.lease import (  # noqa: PLC0415
        LeaseRequest,
        check_ttl,
        lease_settings,
        outcome_exit,
        outcome_json,
        run_lease,
    )

    del stdin
    env = os.environ
    config, same = lease_settings(env, Path.cwd())
    actor = resolve_actor(args, env, required=args.lease_op != "who")
    if args.ttl is not None:
        check_ttl(args.ttl, "--ttl")
    repository = resolve_repository(args, env)
    github = github_from_env(repository, env)
    request = LeaseRequest(
        op=args.lease_op, issue=args.issue.number, actor=actor or "", ttl=args.ttl, lease=args.lease
    )
    outcome = run_lease(github, request, config, same)
    data = outcome_json(outcome, actor, same)
    code = outcome_exit(request.op, outcome)
    text = render_outcome(outcome, actor, mine=data["mine"], given=args.lease)
    if args.format == "json":
        if code != Exit.OK:  # every non-zero JSON answer carries the error shape too
            data.update(error=text.splitlines()[0], exit=int(code))
        text = json.dumps(data)
    out.write(text + "\n")
    return int(code)


def _held_text(outcome: Outcome, lease: Lease, when: datetime, mine: bool, given: str) -> str:
    issue = outcome.issue
    if outcome.result == "mismatch":
        return (
            f"#{issue}: the lease id {given[:12]} is not your current lease ({lease.sha[:12]}); "
            f"nothing was released: run `ai-context release {issue} --lease {lease.sha}`, or "
            "leave out --lease"
        )
    if outcome.result == "lost":
        from ai_context.jobs.lease import ATTEMPTS  # noqa: PLC0415

        return f"#{issue}: lost the race {ATTEMPTS} times; {lease.describe(when)}"
    if mine:
        return (
            f"{lease.describe(when)}: that is you; renew it (ai-context renew {issue}) or "
            f"release it (ai-context release {issue}) when done"
        )
    return f"{lease.describe(when)}; wait, or ask {lease.record.actor}'s owner to hand it off"


def render_outcome(outcome: Outcome, actor: str | None, *, mine: bool, given: str | None) -> str:
    """What a lease command prints; MINE: the lease belongs to ACTOR (or an alias of it)."""
    lease, issue = outcome.lease, outcome.issue
    if outcome.result == "won" and lease is not None:
        return (
            f"#{issue}: {lease.record.actor} holds the lease until "
            f"{stamp(lease.record.expires)} (lease {lease.sha})"
        ) + "".join(f"\nnote: {note}" for note in outcome.notes)
    if outcome.result == "released":
        return f"#{issue}: released; the lease is free"
    if outcome.result == "free":
        return f"#{issue}: free; nobody holds the lease"
    if lease is None:
        return (
            f"#{issue}: {actor or 'this actor'} holds no lease on it; claim it first "
            f"(ai-context claim {issue} --actor {actor or 'ID'})"
        )
    return _held_text(outcome, lease, datetime.now(UTC), mine, given or "")
