"""What the agent commands answer, on the command line and as MCP tools: the stable JSON shape
and the text a person reads."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from ai_context.core.block.model import Block, block_data, format_timestamp
from ai_context.core.block.render import render
from ai_context.core.errors import Exit
from ai_context.core.phases import plan_progress

if TYPE_CHECKING:
    from ai_context.jobs.agent.model import Candidate, Outcome
    from ai_context.rules.reconcile import Decision

EXIT_BY_STATUS = {
    "ok": Exit.OK,
    "conflict": Exit.CONFLICT,
    "incomplete": Exit.INCOMPLETE,
    "pick": Exit.USAGE,
}


def candidate_json(candidate: Candidate) -> dict[str, Any]:
    """One task to pick from, JSON-ready: lists, and the time as `2026-05-26T14:32:00Z`."""
    return asdict(candidate) | {
        "assignees": list(candidate.assignees),
        "labels": list(candidate.labels),
        "updated_at": format_timestamp(candidate.updated_at) or None,
    }


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
        "exit_code": int(EXIT_BY_STATUS[outcome.status]),
        # Every non-zero answer carries the command line's error shape too.
        **(
            {"error": outcome_text(outcome, calls).splitlines()[0], "exit": int(code)}
            if (code := EXIT_BY_STATUS[outcome.status])
            else {}
        ),
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
        "state": None if outcome.state is None else block_data(outcome.state),
        "plan_progress": plan_progress(outcome.state.plan) if outcome.state else "",
        "next_step": outcome.state.next_step if outcome.state else None,
        "missing": list(outcome.missing),
        "wrote_remote": outcome.wrote_remote,
        "wrote_local": outcome.wrote_local,
        "reapplied": outcome.reapplied,
        "dry_run": outcome.dry_run,
        "diff": outcome.diff if outcome.status != "conflict" else "",
        "conflict": conflict,
        "conflict_log": outcome.conflict_log,
        "candidates": [candidate_json(c) for c in outcome.candidates],
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


def _footer(lines: list[str], calls: int | None) -> str:
    """The lines, and the GitHub calls they cost for a person reading a terminal (CALLS None:
    the text goes into an agent's context, where the count is noise)."""
    tail = "" if calls is None else f"github calls: {calls}\n"
    return "\n".join(lines) + "\n" + tail


def _state_lines(block: Block) -> list[str]:
    """The block, its plan's progress (done told apart from skipped) and its next step."""
    lines = ["", render(block), ""]
    if progress := plan_progress(block.plan):
        lines.append(f"Plan: {progress}")
    lines.append(f"Next step: {block.next_step or '(none)'}")
    return lines


def _pick_text(outcome: Outcome) -> list[str]:
    lines = [f"{outcome.command}: no active task found in {outcome.repository}"]
    lines.extend(f"  {note}" for note in outcome.notes)
    if outcome.candidates:
        lines.append("open tasks, most recently updated first:")
        for c in outcome.candidates:
            who = f"{c.actor or '-'} / {c.phase or '-'}"
            lines.append(f"  #{c.number:<5} {c.title[:60]:60}  {who}")
    else:
        lines.append("there are no open issues.")
    lines.append("run `ai-context resume ISSUE` with the one to work on")
    return lines


def _conflict_text(outcome: Outcome, decision: Decision, where: str) -> list[str]:
    lines = [f"CONFLICT on {where}: nothing was overwritten"]
    lines.extend(f"  why: {reason}" for reason in decision.reasons)
    local = render(decision.local) if decision.local is not None else "(none)"
    remote = render(decision.remote) if decision.remote is not None else "(none)"
    lines += ["", "=== local copy (this machine)", local, "", "=== the issue's copy", remote]
    lines += ["", "=== diff (issue -> local)", outcome.diff.rstrip("\n") or "(none)", ""]
    lines.extend(outcome.notes)
    if outcome.conflict_log:
        lines.append(f"logged to {outcome.conflict_log}")
    return lines


def _incomplete_text(outcome: Outcome, where: str) -> list[str]:
    lines = [f"INCOMPLETE state for {where}: missing {', '.join(outcome.missing)}"]
    if outcome.decision is not None:
        lines.extend(f"  why: {reason}" for reason in outcome.decision.reasons)
    lines.append(
        "fill these fields and save the block (`ai-context save ISSUE --from FILE`); a "
        "half-state gives the next session false confidence. Nothing was written to the issue."
    )
    lines.extend(outcome.notes)
    if outcome.state is not None and outcome.state != Block():
        lines += ["", "=== the block to complete, then save", render(outcome.state)]
    return lines


_VERB = {
    "save": "saved the block to",
    "handoff": "handed off",
    "done": "closed out",
    "resume": "resumed",
}
_SOURCE = {"cache": " (from the local cache)", "assigned": " (your in-progress issue)"}


def _done_text(outcome: Outcome, where: str) -> list[str]:
    decision = outcome.decision
    head = f"{_VERB[outcome.command]} {where}"
    if outcome.command == "resume" and decision is not None:
        head += f"{_SOURCE.get(outcome.source, '')}: {_KIND_TEXT[decision.kind]}"
    if outcome.command == "handoff" and outcome.state is not None:
        head += f" to {outcome.state.actor}"
    lines = [head]
    if decision is not None:
        lines.extend(f"  why: {reason}" for reason in decision.reasons)
    lines.extend(f"  note: {note}" for note in outcome.notes)
    if outcome.html_url:
        lines.append(f"  {outcome.html_url}")
    if outcome.state is not None:
        lines += _state_lines(outcome.state)
    return lines


def outcome_text(outcome: Outcome, calls: int | None) -> str:
    """What a person reads: the verdict first, then why, the state, and the next step; the
    GitHub calls last (CALLS None: left out, for an agent's context)."""
    where = f"{outcome.repository}#{outcome.issue}" if outcome.issue else outcome.repository
    if outcome.title:
        where += f' "{outcome.title}"'
    if outcome.status == "pick":
        return _footer(_pick_text(outcome), calls)
    if outcome.status == "conflict" and outcome.decision is not None:
        return _footer(_conflict_text(outcome, outcome.decision, where), calls)
    if outcome.status == "incomplete":
        return _footer(_incomplete_text(outcome, where), calls)
    if outcome.dry_run:
        lines = [f"dry run: {outcome.command} would change {where} as follows"]
        lines.append(outcome.diff.rstrip("\n") or "(no change)")
        return _footer([*lines, *outcome.notes], calls)
    return _footer(_done_text(outcome, where), calls)
