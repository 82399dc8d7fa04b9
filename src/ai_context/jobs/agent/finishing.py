"""`handoff` and `done`: reconcile, change the state, write it; the end of a task's turn."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, Literal

from ai_context.adapters.cache import Cache
from ai_context.core.block.model import Block, PlanStep
from ai_context.core.block.parse import parse
from ai_context.core.block.syntax import StepStatus
from ai_context.core.models import Issue
from ai_context.jobs.agent.model import AgentError, LeaseHook, MirrorHook, Outcome, Tracker
from ai_context.jobs.agent.write import (
    as_utc,
    conflict_outcome,
    guard,
    log_conflict,
    settle,
    with_changes,
    with_local,
    write_block,
)
from ai_context.rules.checks import REQUIRED_DEFAULT
from ai_context.rules.reconcile import decide, missing_labels, resolve


def _rewrite(
    command: Literal["handoff", "done"],
    tracker: Tracker,
    cache: Cache,
    number: int,
    change: Callable[[Block], Block],
    *,
    writer: str | None,
    now: datetime,
    dry_run: bool,
    required: tuple[str, ...],
    mirror: MirrorHook | None,
    release_lease: LeaseHook | None,
    take: Literal["local"] | None = None,
) -> Outcome:
    """Reconcile (as resume does), apply CHANGE to the state, and write it if the write guard
    allows (this machine holds the issue's current block and WRITER, by default the actor that
    wrote this machine's copy, is its Active actor; TAKE "local" writes over a refusal, logged):
    4 GitHub calls (read, re-read, PATCH, edit history). Once the block is written, the
    writer's lease is released through RELEASE_LEASE: a task handed off or done holds no
    one."""
    repository = tracker.repository
    entry = cache.load(repository, number)
    issue = tracker.get_issue(number)
    held = entry.base_revision if entry else None
    decision = decide(entry.block if entry else None, parse(issue.body).block, base=held)
    writer = writer or (entry.actor if entry else None)
    if decision.conflict and take == "local":
        decision = resolve(decision, "local")
    elif decision.conflict:
        return conflict_outcome(
            command,
            tracker,
            cache,
            number,
            decision,
            actor=writer,
            now=now,
            issue=issue,
            notes=(f"resolve it first with `ai-context resume {number} --take local|remote`",),
            dry_run=dry_run,
        )
    block = change(decision.state or Block())
    check, _ = guard(issue.body, number, base=held, writer=writer)
    if check.conflict and take != "local":
        return conflict_outcome(
            command,
            tracker,
            cache,
            number,
            with_local(check, block),
            actor=writer,
            now=now,
            issue=issue,
            dry_run=dry_run,
        )
    common: dict[str, Any] = {
        "command": command,
        "repository": repository,
        "issue": number,
        "title": issue.title,
        "html_url": issue.html_url,
        "state": block,
        "dry_run": dry_run,
    }
    missing = missing_labels(block, required)
    if missing:
        return Outcome(status="incomplete", missing=tuple(missing), **common)
    written = write_block(
        tracker,
        number,
        block,
        writer=writer,
        base=held,
        read_body=issue.body,
        dry_run=dry_run,
        force=take == "local",
    )
    if written.decision.conflict:
        return conflict_outcome(
            command,
            tracker,
            cache,
            number,
            with_local(written.decision, block),
            actor=writer,
            now=now,
            issue=issue,
            dry_run=dry_run,
        )
    if dry_run:
        return Outcome(diff=written.diff, **common)
    assert written.issue is not None
    notes = settle(cache, tracker, number, block, written, writer=writer, now=now, mirror=mirror)
    log = None
    if written.overridden is not None:
        log = log_conflict(
            cache,
            tracker,
            command,
            number,
            with_local(written.overridden, block),
            actor=writer,
            now=now,
            choice="local",
        )
        notes = (*notes, "--take local: the issue's block was replaced; both are in the log")
    outcome = Outcome(
        wrote_remote=written.changed,
        wrote_local=True,
        reapplied=written.reapplied,
        notes=notes,
        conflict_log=log,
        **common,
    )
    if release_lease is not None and writer:
        release_lease(written.issue, writer)
    return outcome


def handoff(
    tracker: Tracker,
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
        "handoff",
        tracker,
        cache,
        number,
        lambda block: with_changes(block, **changes),
        writer=writer,
        now=now,
        dry_run=dry_run,
        take=take,
        required=required,
        mirror=mirror,
        release_lease=release_lease,
    )


# What `done` makes of a step still open: the step being worked on is finished with the task;
# one never started (pending, blocked, or without a status) was left out of it, unless the
# agent names it among the steps the finish completed (`--done-step N`: "Open PR" with --pr).
CLOSED_STATUS: dict[StepStatus | None, StepStatus] = {
    "in progress": "done",
    "pending": "skipped",
    "blocked": "skipped",
    None: "skipped",
}


def close_steps(plan: Sequence[PlanStep], done: Collection[int] = ()) -> tuple[PlanStep, ...]:
    """The plan with no step left open, so no `(in progress)` stays under `Phase: done`; the
    steps numbered in DONE are done, whatever they were."""
    return tuple(
        replace(
            step,
            status="done" if step.number in done else CLOSED_STATUS.get(step.status, step.status),
        )
        for step in plan
    )


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
    and the plan closed (close_steps, DONE_STEPS done). Shipped defaults to the steps done."""
    unknown = sorted(set(done_steps) - {step.number for step in block.plan})
    if unknown:
        numbers = ", ".join(str(n) for n in unknown)
        raise AgentError(
            f"--done-step {numbers}: the plan has no such step (it has "
            f"{len(block.plan)}); name the steps by their numbers in the block"
        )
    plan = close_steps(block.plan, done_steps)
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
    tracker: Tracker,
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
    """The final block (docs/seeds/000 "Task complete"): Phase `done`, what shipped, the PR, and
    the follow-ups. A step still open is skipped, unless DONE_STEPS names it: the agent says
    which steps the finish completed ("Open PR" when it passes the PR). The finishing actor's
    lease is released through RELEASE_LEASE once the block is written, as a handoff does."""
    if pr is not None and not pr.startswith(("https://", "http://")):
        raise AgentError(f"--pr {pr!r} is not a URL; pass the pull request's https:// link")
    now = as_utc(now)
    return _rewrite(
        "done",
        tracker,
        cache,
        number,
        lambda block: final_block(
            block, now=now, pr=pr, followups=followups, shipped=shipped, done_steps=done_steps
        ),
        writer=writer,
        now=now,
        dry_run=dry_run,
        take=take,
        required=required,
        mirror=mirror,
        release_lease=release_lease,
    )


def lease_release(github: Any) -> LeaseHook:
    """The `release_lease` hook of handoff and done, for the CLI and the MCP server alike: it
    releases the actor's lease once the block has landed. The lease job (the settings file,
    the lease models) is imported only then: a dry run or a refused write never loads it."""

    def release(issue: Issue, actor: str) -> None:
        from ai_context.jobs.lease import handoff_release_hook  # noqa: PLC0415

        handoff_release_hook(github)(issue, actor)

    return release
