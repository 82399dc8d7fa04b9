"""`handoff` and `done`: reconcile, change the state, write it; the end of a task's turn."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from ai_context.adapters.cache import Cache
from ai_context.adapters.github import GitHub
from ai_context.core.block.model import Block
from ai_context.core.block.parse import parse
from ai_context.core.block.syntax import StepStatus
from ai_context.core.models import Issue
from ai_context.jobs.agent.model import AgentError, LeaseHook, MirrorHook, Outcome
from ai_context.jobs.agent.write import Turn, as_utc, guard, with_changes, with_local, write_block
from ai_context.rules.checks import REQUIRED_DEFAULT
from ai_context.rules.reconcile import decide, missing_labels, resolve


def _rewrite(
    turn: Turn,
    change: Callable[[Block], Block],
    *,
    dry_run: bool,
    take: Literal["local"] | None,
    required: tuple[str, ...],
    mirror: MirrorHook | None,
    release_lease: LeaseHook | None,
) -> Outcome:
    """Reconcile as resume does, apply CHANGE to the state, and write it if the write guard allows
    (TAKE "local" writes over a refusal, logged): 4 GitHub calls; then RELEASE_LEASE."""
    tracker, number = turn.tracker, turn.number
    entry = turn.cache.load(tracker.repository, number)
    issue = tracker.get_issue(number)
    held = entry.base_revision if entry else None
    turn = replace(turn, actor=turn.actor or (entry.actor if entry else None))
    decision = decide(entry.block if entry else None, parse(issue.body).block, base=held)
    if decision.conflict and take == "local":
        decision = resolve(decision, "local")
    elif decision.conflict:
        first = f"resolve it first with `ai-context resume {number} --take local|remote`"
        return turn.conflict(decision, issue, (first,), dry_run=dry_run)
    block = change(decision.state or Block())
    check, _ = guard(issue.body, number, base=held, writer=turn.actor)
    if check.conflict and take != "local":
        return turn.conflict(with_local(check, block), issue, dry_run=dry_run)
    missing = missing_labels(block, required)
    if missing:
        return turn.outcome(
            issue, status="incomplete", missing=tuple(missing), state=block, dry_run=dry_run
        )
    written = write_block(
        tracker,
        number,
        block,
        writer=turn.actor,
        base=held,
        read_body=issue.body,
        dry_run=dry_run,
        force=take == "local",
    )
    if written.decision.conflict:
        return turn.conflict(with_local(written.decision, block), issue, dry_run=dry_run)
    if dry_run:
        return turn.outcome(issue, state=block, dry_run=True, diff=written.diff)
    notes, log = turn.landed(block, written, mirror)
    if release_lease is not None and written.issue is not None and turn.actor:
        release_lease(written.issue, turn.actor)
    return turn.outcome(
        issue,
        state=block,
        wrote_remote=written.changed,
        wrote_local=True,
        reapplied=written.reapplied,
        notes=notes,
        conflict_log=log,
    )


def handoff(
    tracker: GitHub,
    cache: Cache,
    number: int,
    to: str,
    *,
    description: str | None = None,
    next_step: str | None = None,
    writer: str | None = None,
    now: datetime,
    dry_run: bool = False,
    take: Literal["local"] | None = None,
    required: tuple[str, ...] = REQUIRED_DEFAULT,
    release_lease: LeaseHook | None = None,
    mirror: MirrorHook | None = None,
) -> Outcome:
    """Hand the task to actor TO: Active actor TO, Phase `handoff`, the plan kept. The lease
    of the actor handing off is released through RELEASE_LEASE once the block is written."""
    now = as_utc(now)
    changes: dict[str, Any] = {
        "actor": to,
        "actor_description": description,
        "phase": "handoff",
        "chunk": None,
        "last_updated": now,
    }
    if next_step is not None:
        changes["next_step"] = next_step
    return _rewrite(
        Turn("handoff", tracker, cache, number, writer, now),
        lambda block: with_changes(block, **changes),
        dry_run=dry_run,
        take=take,
        required=required,
        mirror=mirror,
        release_lease=release_lease,
    )


# What `done` makes of a step still open, so no `(in progress)` stays under `Phase: done`: the
# step being worked on is finished with the task; one never started (pending, blocked, or without
# a status) was left out of it, unless the agent names it among the steps the finish completed
# (`--done-step N`: "Open PR" with --pr).
CLOSED_STATUS: dict[StepStatus | None, StepStatus] = {
    "in progress": "done",
    "pending": "skipped",
    "blocked": "skipped",
    None: "skipped",
}


def final_block(
    block: Block,
    *,
    now: datetime,
    pr: str | None,
    followups: Sequence[str],
    shipped: str | None,
    done_steps: Collection[int] = (),
) -> Block:
    """The block managers and teammates see from now on: what shipped, the PR, follow-ups,
    and the plan closed (CLOSED_STATUS, DONE_STEPS done). Shipped defaults to the steps done."""
    unknown = sorted(set(done_steps) - {step.number for step in block.plan})
    if unknown:
        numbers = ", ".join(str(n) for n in unknown)
        raise AgentError(
            f"--done-step {numbers}: the plan has no such step (it has "
            f"{len(block.plan)}); name the steps by their numbers in the block"
        )
    plan = tuple(
        replace(
            s, status="done" if s.number in done_steps else CLOSED_STATUS.get(s.status, s.status)
        )
        for s in block.plan
    )
    done_texts = [step.text for step in block.plan if step.status == "done"]
    done_texts += [s.text for s in block.plan if s.number in done_steps and s.status != "done"]
    summary = shipped or "; ".join(done_texts) or "see the pull request"
    extra = {
        k: v for k, v in block.extra.items() if k not in ("Shipped", "Pull request", "Follow-ups")
    }
    extra["Shipped"] = summary
    if pr:
        extra["Pull request"] = pr
    items = [item.strip() for item in followups if item.strip()]
    extra["Follow-ups"] = "\n".join(["", *(f"- {item}" for item in items)]) if items else "none"
    next_step = "the follow-ups below (the task itself is done)" if items else "none (task done)"
    return with_changes(
        block,
        phase="done",
        chunk=None,
        last_updated=now,
        plan=plan,
        blockers=(),
        next_step=next_step,
        extra=extra,
    )


def done(
    tracker: GitHub,
    cache: Cache,
    number: int,
    *,
    pr: str | None = None,
    followups: Sequence[str] = (),
    shipped: str | None = None,
    done_steps: Collection[int] = (),
    writer: str | None = None,
    now: datetime,
    dry_run: bool = False,
    take: Literal["local"] | None = None,
    required: tuple[str, ...] = REQUIRED_DEFAULT,
    release_lease: LeaseHook | None = None,
    mirror: MirrorHook | None = None,
) -> Outcome:
    """The final block (seeds/000 "Task complete"): Phase `done`, what shipped, the PR, follow-ups;
    a step still open is skipped unless DONE_STEPS names it. The lease is released as on handoff."""
    if pr is not None and not pr.startswith(("https://", "http://")):
        raise AgentError(f"--pr {pr!r} is not a URL; pass the pull request's https:// link")
    now = as_utc(now)
    return _rewrite(
        Turn("done", tracker, cache, number, writer, now),
        lambda block: final_block(
            block, now=now, pr=pr, followups=followups, shipped=shipped, done_steps=done_steps
        ),
        dry_run=dry_run,
        take=take,
        required=required,
        mirror=mirror,
        release_lease=release_lease,
    )


def lease_release(
    github: Any, env: Mapping[str, str], workspace: Path, note: Callable[[str], None]
) -> LeaseHook:
    """The `release_lease` hook of handoff and done; the lease job is imported only once a block
    has landed, so a dry run or a refused write never loads it."""

    def release(issue: Issue, actor: str) -> None:
        from ai_context.jobs.lease import release_after_handoff  # noqa: PLC0415

        release_after_handoff(github, issue, actor, env=env, workspace=workspace, note=note)

    return release
