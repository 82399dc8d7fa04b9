"""`ai-context hook session-start | stop | post-tool-use`: Claude Code's hooks (setup writes them).

Each reads the hook's JSON on stdin and answers JSON on stdout, as Claude Code defines them:
- session-start: the resume reconciliation (seeds/000 steps 1-6; one GitHub call when the local
  cache names the task) and the reconciled block as `hookSpecificOutput.additionalContext`, so
  every session and every window after a compaction starts from the authority;
- stop: blocks the end of a turn once (`{"decision": "block", "reason": ...}`) when the block is
  behind git or older than the cadence with work waiting; never when `stop_hook_active` is set;
- post-tool-use (matcher Bash): after a `git commit`, asks for a checkpoint at the cadence
  (3 commits or 30 minutes since Last updated by default: `--every-commits`, `--every`).
Only session-start talks to GitHub; stop and post-tool-use read the local cache and git.
A hook never fails the agent's turn: whatever goes wrong (GitHub down, no token, bad input) it
exits 0 and says so in one line. Start-up stays lean: nothing heavy is imported at the top.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ai_context.cli.common import (
    add_actor,
    add_repo,
    duration_arg,
    resolve_actor,
    resolve_repository,
    timestamp_arg,
)
from ai_context.core.errors import AIContextError
from ai_context.rules.cadence import DEFAULT_COMMITS, DEFAULT_INTERVAL, Cadence

if TYPE_CHECKING:
    from ai_context.adapters.cache import Cache, CacheEntry
    from ai_context.adapters.github import GitHub
    from ai_context.jobs.agent import Outcome
    from ai_context.rules.cadence import Progress

EVENTS = ("session-start", "stop", "post-tool-use")
EVENT_NAMES = {"session-start": "SessionStart", "stop": "Stop", "post-tool-use": "PostToolUse"}
RECENT = timedelta(hours=24)
Answer = dict[str, Any] | None


class HookNote(Exception):
    """Something the hook cannot do; said in one line, and the agent goes on."""


def add_hook_command(sub: Any) -> None:
    p = sub.add_parser(
        "hook",
        help="run a Claude Code hook: its JSON on stdin, the answer as JSON on stdout",
        description="Claude Code hooks (`ai-context setup claude` installs them). Always exits "
        "0: a hook never fails the agent's turn.",
    )
    p.add_argument("event", choices=EVENTS)
    p.add_argument(
        "--every-commits",
        type=int,
        default=DEFAULT_COMMITS,
        metavar="N",
        help=f"a checkpoint is due after N commits (default {DEFAULT_COMMITS})",
    )
    p.add_argument(
        "--every",
        type=duration_arg,
        default=DEFAULT_INTERVAL,
        metavar="DURATION",
        help="... or this long after the last save (default 30m)",
    )
    add_repo(p)
    p.add_argument(
        "--cache", metavar="PATH", help="default: $AI_CONTEXT_CACHE or .ai-context/cache"
    )
    add_actor(p)
    p.add_argument("--now", type=timestamp_arg, help="fix the clock (ISO 8601), for tests")
    p.set_defaults(handler=cmd_hook)


def cmd_hook(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    env = os.environ
    try:
        payload = read_payload(stdin)
        cwd = payload.get("cwd")
        if isinstance(cwd, str) and cwd and Path(cwd).is_dir():
            os.chdir(cwd)  # the cache and git are the project's, wherever the hook was started
        answer = HANDLERS[args.event](args, payload, env)
    except (HookNote, AIContextError) as exc:
        answer = note_answer(args.event, f"ai-context: {exc}")
    except Exception as exc:
        answer = note_answer(args.event, f"ai-context: the {args.event} hook failed: {exc}")
    if answer is not None:
        out.write(json.dumps(answer, ensure_ascii=False) + "\n")
    return 0


def read_payload(stdin: TextIO) -> dict[str, Any]:
    text = "" if stdin.isatty() else stdin.read()
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise HookNote(f"the hook's input is not JSON ({exc.msg}); nothing was checked") from None
    if not isinstance(data, dict):
        raise HookNote("the hook's input is not a JSON object; nothing was checked")
    return data


def note_answer(event: str, line: str) -> Answer:
    """One line for the agent (session-start) or the user (the others), never a block."""
    sys.stderr.write(line + "\n")
    if event == "session-start":
        return context_answer(line)
    return {"systemMessage": line}


def context_answer(text: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}


# --- settings -----------------------------------------------------------------------------


def _now(args: argparse.Namespace) -> datetime:
    now: datetime = args.now or datetime.now(UTC)
    return now


def _repository(args: argparse.Namespace, env: Mapping[str, str]) -> str:
    repository = resolve_repository(args, env)
    assert repository is not None  # required
    return repository


def _cache(args: argparse.Namespace, env: Mapping[str, str]) -> Cache:
    from ai_context.adapters.cache import open_cache  # noqa: PLC0415

    return open_cache(args.cache, dict(env))


def _github(repository: str, env: Mapping[str, str]) -> GitHub:
    """A GitHub client that gives up fast: a session must not wait half a minute for an outage."""
    try:
        from ai_context.adapters import clients  # noqa: PLC0415

        http = clients.Http(timeout=5, retries=1, backoff=0.2)
        return clients.github_from_env(repository, env, http=http)
    except AIContextError as exc:
        raise HookNote(f"{exc}. The AI Context block was not reconciled; run /continue") from exc


# --- session-start ------------------------------------------------------------------------

_LEADS = {
    "ok": "This block is the task's authoritative state: go on from its Next step. Keep it "
    "current with the state-sync skill (`ai-context save {issue}` at every checkpoint); never "
    "edit it by hand.",
    "conflict": "Two copies of the block disagree and nothing was overwritten: show both to the "
    "user and ask which to keep (`ai-context resume {issue} --take local|remote`); never merge "
    "them silently.",
    "incomplete": "The block lacks required fields: ask the user to fill the gap before going "
    "on, then save it; a half-state gives false confidence.",
    "pick": "No active task is known on this machine: ask the user which task to work on, then "
    "run `ai-context resume ISSUE` (or /continue ISSUE).",
}


def session_context(outcome: Outcome, calls: int) -> str:
    """What the agent reads at session start: what to do with the block, then the block."""
    from ai_context.jobs.agent.output import outcome_text  # noqa: PLC0415

    lead = _LEADS[outcome.status].format(issue=outcome.issue or "ISSUE")
    return f"ai-context ({outcome.command} at session start): {lead}\n\n" + outcome_text(
        outcome, calls
    )


def _offline_note(exc: Exception, cache: Cache, repository: str) -> str:
    recent = cache.recent(repository, RECENT, datetime.now(UTC))
    local = ""
    if recent and recent[0].block.next_step:
        local = (
            f"; the local copy of #{recent[0].issue} says Next step: {recent[0].block.next_step}"
        )
    return (
        f"GitHub did not answer ({exc}): the AI Context block was not reconciled{local}. "
        "Go on, and run /continue once GitHub is back."
    )


def session_start(
    args: argparse.Namespace, payload: Mapping[str, Any], env: Mapping[str, str]
) -> Answer:
    del payload  # every source (startup, resume, clear, compact) starts from the authority
    repository = _repository(args, env)
    cache = _cache(args, env)
    gh = _github(repository, env)
    actor = resolve_actor(args, env)
    from ai_context.adapters.config_file import DEFAULT_CONFIG  # noqa: PLC0415
    from ai_context.adapters.github import GitHubConfigError, GitHubError  # noqa: PLC0415
    from ai_context.jobs import agent  # noqa: PLC0415
    from ai_context.jobs.agent.mirror import agent_mirror_hook  # noqa: PLC0415

    def login() -> str | None:
        from ai_context.adapters.config import owner_of  # noqa: PLC0415

        try:
            return owner_of(actor, Path(DEFAULT_CONFIG))
        except Exception:
            return None

    try:
        outcome = agent.resume(
            gh, cache, None, actor=actor, login=login, now=_now(args), mirror=agent_mirror_hook()
        )
    except GitHubConfigError as exc:
        raise HookNote(f"GitHub refused the request ({exc}); the block was not reconciled") from exc
    except GitHubError as exc:
        raise HookNote(_offline_note(exc, cache, repository)) from exc
    return context_answer(session_context(outcome, gh.counter.total))


# --- stop and post-tool-use ---------------------------------------------------------------


def _active(args: argparse.Namespace, env: Mapping[str, str]) -> CacheEntry | None:
    repository = _repository(args, env)
    recent = _cache(args, env).recent(repository, RECENT, datetime.now(UTC))
    return recent[0] if recent else None


def progress_of(entry: CacheEntry, now: datetime, checkout: Path) -> Progress:
    """What git says happened since the active task's block was last written."""
    from ai_context.adapters.gitrepo import commits_after, has_changes  # noqa: PLC0415
    from ai_context.core.phases import is_terminal  # noqa: PLC0415
    from ai_context.rules.cadence import Progress  # noqa: PLC0415

    block = entry.block
    since = block.last_updated or entry.saved_at
    return Progress(
        issue=entry.issue,
        commits=commits_after(checkout, since),
        age=now - since if block.last_updated else None,
        dirty=has_changes(checkout),
        finished=is_terminal(block.phase),
    )


def _cadence(args: argparse.Namespace) -> Cadence:
    try:
        return Cadence(commits=args.every_commits, interval=args.every)
    except ValueError as exc:
        raise HookNote(str(exc)) from exc


def stop(args: argparse.Namespace, payload: Mapping[str, Any], env: Mapping[str, str]) -> Answer:
    from ai_context.rules.cadence import stop_nudge  # noqa: PLC0415

    if payload.get("stop_hook_active") is True:
        return None  # blocked once already: let the agent stop (never twice in a row)
    entry = _active(args, env)
    progress = progress_of(entry, _now(args), Path.cwd()) if entry else None
    reason = stop_nudge(progress, _cadence(args), stop_hook_active=False)
    return {"decision": "block", "reason": reason} if reason else None


def post_tool_use(
    args: argparse.Namespace, payload: Mapping[str, Any], env: Mapping[str, str]
) -> Answer:
    from ai_context.rules.cadence import commit_nudge, is_git_commit  # noqa: PLC0415

    tool_input = payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if payload.get("tool_name") != "Bash" or not isinstance(command, str):
        return None
    if not is_git_commit(command):
        return None
    entry = _active(args, env)
    if entry is None:
        return None
    reason = commit_nudge(progress_of(entry, _now(args), Path.cwd()), _cadence(args))
    if reason is None:
        return None
    return {
        "decision": "block",
        "reason": reason,
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": reason},
    }


HANDLERS: dict[
    str, Callable[[argparse.Namespace, Mapping[str, Any], Mapping[str, str]], Answer]
] = {"session-start": session_start, "stop": stop, "post-tool-use": post_tool_use}
