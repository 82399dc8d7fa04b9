"""`ai-context save | resume | handoff | done`: the agent side's commands (agent.py does the work).

Agents run these at every checkpoint, so start-up stays lean: this module imports nothing heavy
at the top; a command imports the GitHub adapter only when it runs, and nothing imports jinja2.
Settings: token from $GITHUB_TOKEN or $GH_TOKEN (or --token-env NAME), repository from --repo,
an issue URL, $GITHUB_REPOSITORY or the `origin` remote, API URL from $GITHUB_API_URL, cache from
--cache or $AI_CONTEXT_CACHE, actor from --actor or $AI_CONTEXT_ACTOR.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ai_context.cli.common import (
    EXIT_CONFLICT,
    EXIT_INCOMPLETE,
    EXIT_OK,
    EXIT_SERVICE,
    EXIT_USAGE,
    UsageError,
    block_json,
)
from ai_context.cli.common import timestamp_arg as _timestamp
from ai_context.cli.mirror import agent_mirror_hook
from ai_context.core.block import parse, render

if TYPE_CHECKING:
    from ai_context.adapters.cache import Cache
    from ai_context.adapters.github import GitHub
    from ai_context.core.block import Block
    from ai_context.core.models import Issue
    from ai_context.jobs.agent import Outcome

DEFAULT_API_URL = "https://api.github.com"
DEFAULT_CONFIG = ".github/ai-context.yml"
ACTOR_ENV = "AI_CONTEXT_ACTOR"
EXIT_BY_STATUS = {
    "ok": EXIT_OK,
    "conflict": EXIT_CONFLICT,
    "incomplete": EXIT_INCOMPLETE,
    "pick": EXIT_USAGE,
}
_ISSUE_URL_RE = re.compile(r"https?://[^/]+/(?:[^/]+/)*?([^/]+/[^/]+)/(?:issues|pull)/(\d+)/?")


# --- arguments ----------------------------------------------------------------------------


def _issue(value: str) -> tuple[str | None, int]:
    """`12`, `#12` or an issue URL -> (repository or None, number)."""
    text = value.strip()
    match = _ISSUE_URL_RE.fullmatch(text)
    if match:
        return match.group(1), int(match.group(2))
    digits = text.removeprefix("#")
    if digits.isdigit() and int(digits) > 0:
        return None, int(digits)
    raise argparse.ArgumentTypeError(
        f"{value!r} is not an issue: write its number (12 or #12) or its URL"
    )


def add_agent_commands(sub: Any) -> None:
    """Register save, resume, handoff and done on the `ai-context` subcommand parser."""

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--repo", metavar="OWNER/NAME", help="default: $GITHUB_REPOSITORY or origin")
        p.add_argument(
            "--token-env", metavar="NAME", help="read the token from $NAME (default GITHUB_TOKEN)"
        )
        p.add_argument(
            "--cache",
            metavar="PATH",
            help="cache directory, or a .json file for one active task "
            "(default $AI_CONTEXT_CACHE or .ai-context/cache)",
        )
        p.add_argument("--actor", metavar="ID", help="this machine's actor id ($AI_CONTEXT_ACTOR)")
        p.add_argument("--now", type=_timestamp, help="fix the clock (ISO 8601) for timestamps")
        p.add_argument("--format", choices=("text", "json"), default="text")

    save = sub.add_parser("save", help="write an AI Context block into its issue")
    save.add_argument("issue", type=_issue, metavar="ISSUE")
    save.add_argument(
        "--from",
        dest="source",
        metavar="FILE",
        help="the block (or a body holding it); default stdin",
    )
    save.add_argument("--dry-run", action="store_true", help="print the diff, write nothing")
    common(save)
    save.set_defaults(handler=cmd_save)

    resume = sub.add_parser("resume", help="reconcile the local copy with the issue and go on")
    resume.add_argument("issue", type=_issue, nargs="?", metavar="ISSUE")
    resume.add_argument(
        "--take", choices=("local", "remote"), help="resolve a conflict with this copy"
    )
    resume.add_argument("--assignee", metavar="LOGIN", help="your GitHub login (finds your task)")
    resume.add_argument(
        "--config", metavar="FILE", help=f"for actors.<id>.owner ({DEFAULT_CONFIG})"
    )
    common(resume)
    resume.set_defaults(handler=cmd_resume)

    handoff = sub.add_parser("handoff", help="hand the task to another actor")
    handoff.add_argument("issue", type=_issue, metavar="ISSUE")
    handoff.add_argument("--to", required=True, metavar="ACTOR", help="the next actor's id")
    handoff.add_argument("--description", metavar="TEXT", help="who the next actor is")
    handoff.add_argument("--next-step", metavar="TEXT", help="replace Next step")
    handoff.add_argument("--dry-run", action="store_true", help="print the diff, write nothing")
    common(handoff)
    handoff.set_defaults(handler=cmd_handoff)

    done = sub.add_parser("done", help="write the final block: what shipped, the PR, follow-ups")
    done.add_argument("issue", type=_issue, metavar="ISSUE")
    done.add_argument("--pr", metavar="URL", help="the pull request that shipped it")
    done.add_argument(
        "--followup",
        action="extend",
        nargs="+",
        default=[],
        metavar="TEXT",
        help="follow-up work, one argument each",
    )
    done.add_argument("--shipped", metavar="TEXT", help="default: the plan's done steps")
    done.add_argument("--dry-run", action="store_true", help="print the diff, write nothing")
    common(done)
    done.set_defaults(handler=cmd_done)


# --- settings -----------------------------------------------------------------------------


def _git_remote() -> str | None:
    from ai_context.adapters.gitrepo import GitError, remote_repository  # noqa: PLC0415

    try:
        return remote_repository(Path.cwd())
    except GitError:
        return None


def _repository(args: argparse.Namespace, env: Mapping[str, str]) -> str:
    from_url = args.issue[0] if args.issue else None
    repository = args.repo or from_url or env.get("GITHUB_REPOSITORY") or _git_remote()
    if not repository:
        raise UsageError(
            "no repository: pass --repo OWNER/NAME, set GITHUB_REPOSITORY, or run inside a "
            "clone whose `origin` remote points at GitHub"
        )
    if from_url and args.repo and from_url.lower() != args.repo.lower():
        raise UsageError(f"the issue URL is in {from_url} but --repo says {args.repo}")
    return str(repository)


def _github(args: argparse.Namespace, env: Mapping[str, str]) -> GitHub:
    names = [args.token_env] if args.token_env else ["GITHUB_TOKEN", "GH_TOKEN"]
    token = next((env[n].strip() for n in names if env.get(n, "").strip()), None)
    if token is None:
        raise UsageError(
            f"no GitHub token in ${' or $'.join(names)}: export one (e.g. "
            "`export GITHUB_TOKEN=$(gh auth token)`) with issues read/write"
        )
    repository = _repository(args, env)
    from pydantic import SecretStr  # noqa: PLC0415 - only commands that talk to GitHub

    from ai_context.adapters.github import GitHub, GitHubConfigError  # noqa: PLC0415

    try:
        return GitHub(
            SecretStr(token), repository, api_url=env.get("GITHUB_API_URL") or DEFAULT_API_URL
        )
    except GitHubConfigError as exc:
        raise UsageError(str(exc)) from exc


def _cache(args: argparse.Namespace, env: Mapping[str, str]) -> Cache:
    from ai_context.adapters.cache import CacheError, open_cache  # noqa: PLC0415

    try:
        return open_cache(args.cache, dict(env))
    except CacheError as exc:
        raise UsageError(str(exc)) from exc


def _actor(args: argparse.Namespace, env: Mapping[str, str]) -> str | None:
    actor = args.actor or env.get(ACTOR_ENV, "").strip() or None
    if actor is not None and (not actor or any(ch.isspace() for ch in actor)):
        raise UsageError(f"actor id {actor!r} must be one word, e.g. cc-ariel-laptop")
    return actor


def login_for(actor: str | None, config: Path) -> str | None:
    """The actor's human owner (`actors.<actor>.owner` in the config file), when both exist."""
    if actor is None:
        return None
    from ai_context.adapters.config import load_yaml  # noqa: PLC0415
    from ai_context.core.errors import ConfigError  # noqa: PLC0415
    from ai_context.rules.actors import parse_actors  # noqa: PLC0415 - resume step 1 only

    try:
        data, _ = load_yaml(config)
        return parse_actors(data.get("actors"), str(config)).owner(actor)
    except ConfigError as exc:
        raise UsageError(str(exc)) from exc


def _now(args: argparse.Namespace) -> datetime:
    now: datetime = args.now or datetime.now(UTC)
    return now


def _read_block(args: argparse.Namespace, stdin: TextIO) -> Block:
    name = args.source or "-"
    if name == "-":
        if stdin.isatty():
            raise UsageError("pipe the block on stdin or pass --from FILE")
        text, name = stdin.read(), "<stdin>"
    else:
        try:
            text = Path(name).read_bytes().decode("utf-8")
        except FileNotFoundError:
            raise UsageError(f"{name}: no such file") from None
        except UnicodeDecodeError as exc:
            raise UsageError(f"{name}: not UTF-8 text (byte {exc.start})") from None
        except OSError as exc:
            raise UsageError(f"{name}: cannot read: {exc.strerror}") from None
    parsed = parse(text)
    fatal = [f for f in parsed.findings if f.code in ("AIC101", "AIC102")]
    if parsed.block is None or fatal:
        raise UsageError(
            "\n".join(f"{name}:{f.line or 1}: {f.code} {f.message}; {f.hint}" for f in fatal)
        )
    for f in parsed.findings:
        if f.code != "AIC301":  # save stamps Last updated itself
            sys.stderr.write(f"{name}:{f.line or 1}: {f.code} {f.severity} {f.message}\n")
    return parsed.block


# --- running ------------------------------------------------------------------------------


def _run(
    args: argparse.Namespace,
    out: TextIO,
    work: Callable[[GitHub, Cache], Outcome],
    env: Mapping[str, str] | None = None,
) -> int:
    env = os.environ if env is None else env
    gh = _github(args, env)
    cache = _cache(args, env)
    from ai_context.adapters.cache import CacheError  # noqa: PLC0415
    from ai_context.adapters.github import (  # noqa: PLC0415
        GitHubConfigError,
        GitHubError,
        GitHubNotFound,
    )
    from ai_context.jobs.agent import AgentError  # noqa: PLC0415

    try:
        outcome = work(gh, cache)
    except (AgentError, CacheError, GitHubConfigError) as exc:
        raise UsageError(str(exc)) from exc
    except GitHubNotFound as exc:
        raise UsageError(
            f"{exc}; check the issue number and the repository ({gh.repository})"
        ) from exc
    except GitHubError as exc:
        sys.stderr.write(f"ai-context: {exc}\n")
        return EXIT_SERVICE
    calls = gh.counter.total
    if args.format == "json":
        out.write(json.dumps(outcome_json(outcome, calls), ensure_ascii=False) + "\n")
    else:
        out.write(outcome_text(outcome, calls))
    return EXIT_BY_STATUS[outcome.status]


def cmd_save(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    block = _read_block(args, stdin)
    actor = _actor(args, os.environ)
    from ai_context.jobs import agent  # noqa: PLC0415

    return _run(
        args,
        out,
        lambda gh, cache: agent.save(
            gh,
            cache,
            args.issue[1],
            block,
            writer=actor,
            now=_now(args),
            dry_run=args.dry_run,
            mirror=agent_mirror_hook(),
        ),
    )


def cmd_resume(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    del stdin
    actor = _actor(args, os.environ)
    config = Path(args.config or DEFAULT_CONFIG)
    from ai_context.jobs import agent  # noqa: PLC0415

    return _run(
        args,
        out,
        lambda gh, cache: agent.resume(
            gh,
            cache,
            args.issue[1] if args.issue else None,
            actor=actor,
            login=lambda: args.assignee or login_for(actor, config),
            now=_now(args),
            take=args.take,
            mirror=agent_mirror_hook(),
        ),
    )


def cmd_handoff(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    del stdin
    actor = _actor(args, os.environ)
    from ai_context.jobs import agent  # noqa: PLC0415

    return _run(
        args,
        out,
        lambda gh, cache: agent.handoff(
            gh,
            cache,
            args.issue[1],
            args.to,
            description=args.description,
            next_step=args.next_step,
            writer=actor,
            now=_now(args),
            dry_run=args.dry_run,
            release_lease=_release_hook(gh),
            mirror=agent_mirror_hook(),
        ),
    )


def _release_hook(gh: GitHub) -> Callable[[Issue, str], None]:
    from ai_context.cli.lease import handoff_release_hook  # noqa: PLC0415

    return handoff_release_hook(gh)


def cmd_done(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    del stdin
    actor = _actor(args, os.environ)
    from ai_context.jobs import agent  # noqa: PLC0415

    return _run(
        args,
        out,
        lambda gh, cache: agent.done(
            gh,
            cache,
            args.issue[1],
            pr=args.pr,
            followups=args.followup,
            shipped=args.shipped,
            writer=actor,
            now=_now(args),
            dry_run=args.dry_run,
            mirror=agent_mirror_hook(),
        ),
    )


# --- output -------------------------------------------------------------------------------


def outcome_json(outcome: Outcome, calls: int) -> dict[str, Any]:
    """The stable JSON shape of a command's outcome: keys may be added, never renamed."""
    decision = outcome.decision
    conflict = None
    if outcome.status == "conflict" and decision is not None:
        conflict = {
            "local": render(decision.local) if decision.local is not None else None,
            "remote": render(decision.remote) if decision.remote is not None else None,
            "diff": outcome.diff,
        }
    return {
        "command": outcome.command,
        "repository": outcome.repository,
        "issue": outcome.issue,
        "title": outcome.title,
        "url": outcome.html_url,
        "status": outcome.status,
        "exit_code": EXIT_BY_STATUS[outcome.status],
        "source": outcome.source or None,
        "decision": None
        if decision is None
        else {
            "kind": decision.kind,
            "reasons": list(decision.reasons),
            "local_revision": decision.local_revision,
            "remote_revision": decision.remote_revision,
            "base_revision": decision.base_revision,
        },
        "state": block_json(outcome.state),
        "next_step": outcome.state.next_step if outcome.state else None,
        "missing": list(outcome.missing),
        "wrote_remote": outcome.wrote_remote,
        "wrote_local": outcome.wrote_local,
        "reapplied": outcome.reapplied,
        "dry_run": outcome.dry_run,
        "diff": outcome.diff if outcome.status != "conflict" else "",
        "conflict": conflict,
        "conflict_log": outcome.conflict_log,
        "candidates": [c.model_dump(mode="json") for c in outcome.candidates],
        "notes": list(outcome.notes),
        "github_calls": calls,
    }


_KIND_TEXT = {
    "init": "a new task",
    "take_remote": "took the issue's copy",
    "push_local": "pushed this machine's copy to the issue",
    "equal": "the copies agree",
    "conflict": "conflict",
}


# Owned by issue 11a/13, to be reduced; the lead removes this noqa after merging.
def outcome_text(outcome: Outcome, calls: int) -> str:  # noqa: C901
    """What a person reads: the verdict first, then why, the state, and the next step."""
    where = f"{outcome.repository}#{outcome.issue}" if outcome.issue else outcome.repository
    title = f' "{outcome.title}"' if outcome.title else ""
    lines: list[str] = []
    decision = outcome.decision
    if outcome.status == "pick":
        lines.append(f"{outcome.command}: no active task found in {outcome.repository}")
        lines.extend(f"  {note}" for note in outcome.notes)
        if outcome.candidates:
            lines.append("open tasks, most recently updated first:")
            for c in outcome.candidates:
                who = f"{c.actor or '-'} / {c.phase or '-'}"
                lines.append(f"  #{c.number:<5} {c.title[:60]:60}  {who}")
        else:
            lines.append("there are no open issues.")
        lines.append("run `ai-context resume ISSUE` with the one to work on")
        return "\n".join(lines) + f"\ngithub calls: {calls}\n"
    if outcome.status == "conflict" and decision is not None:
        lines.append(f"CONFLICT on {where}{title}: nothing was overwritten")
        lines.extend(f"  why: {reason}" for reason in decision.reasons)
        local = render(decision.local) if decision.local is not None else "(none)"
        remote = render(decision.remote) if decision.remote is not None else "(none)"
        lines += ["", "=== local copy (this machine)", local, "", "=== the issue's copy", remote]
        lines += ["", "=== diff (issue -> local)", outcome.diff.rstrip("\n") or "(none)", ""]
        lines.extend(outcome.notes)
        if outcome.conflict_log:
            lines.append(f"logged to {outcome.conflict_log}")
        return "\n".join(lines) + f"\ngithub calls: {calls}\n"
    if outcome.status == "incomplete":
        lines.append(f"INCOMPLETE state for {where}{title}: missing {', '.join(outcome.missing)}")
        if decision is not None:
            lines.extend(f"  why: {reason}" for reason in decision.reasons)
        lines.append(
            "fill these fields and save the block (`ai-context save ISSUE --from FILE`); a "
            "half-state gives the next session false confidence. Nothing was written."
        )
        lines.extend(outcome.notes)
        return "\n".join(lines) + f"\ngithub calls: {calls}\n"
    verb = {
        "save": "saved the block to",
        "handoff": "handed off",
        "done": "closed out",
        "resume": "resumed",
    }[outcome.command]
    if outcome.dry_run:
        lines.append(f"dry run: {outcome.command} would change {where}{title} as follows")
        lines.append(outcome.diff.rstrip("\n") or "(no change)")
        lines.extend(outcome.notes)
        return "\n".join(lines) + f"\ngithub calls: {calls}\n"
    head = f"{verb} {where}{title}"
    if outcome.command == "resume" and decision is not None:
        source = {"cache": " (from the local cache)", "assigned": " (your in-progress issue)"}
        head += f"{source.get(outcome.source, '')}: {_KIND_TEXT[decision.kind]}"
    if outcome.command == "handoff" and outcome.state is not None:
        head += f" to {outcome.state.actor}"
    lines.append(head)
    if decision is not None:
        lines.extend(f"  why: {reason}" for reason in decision.reasons)
    lines.extend(f"  note: {note}" for note in outcome.notes)
    if outcome.html_url:
        lines.append(f"  {outcome.html_url}")
    if outcome.state is not None:
        lines += ["", render(outcome.state), ""]
        lines.append(f"Next step: {outcome.state.next_step or '(none)'}")
    return "\n".join(lines) + f"\ngithub calls: {calls}\n"
