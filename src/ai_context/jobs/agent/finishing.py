"""`handoff` and `done`: reconcile, change the state, write it; the end of a task's turn."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, Literal

from ai_context.adapters.cache import Cache
from ai_context.core.block import Block, PlanStep, StepStatus, parse
from ai_context.core.models import Issue
from ai_context.jobs.agent.model import AgentError, LeaseHook, MirrorHook, Outcome, Tracker
from ai_context.jobs.agent.write import (
    as_utc,
    conflict_outcome,
    settle,
    with_changes,
    with_local,
    write_block,
)
from ai_context.rules.checks import REQUIRED_DEFAULT
from ai_context.rules.reconcile import (
    decide,
    missing_labels,
)


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
) -> Outcome:
    """Reconcile (as resume does), apply CHANGE to the state, write it: 3 GitHub calls. Once
    the block is written, the writer's lease is released through RELEASE_LEASE: a task handed
    off or done holds no one."""
    repository = tracker.repository
    entry = cache.load(repository, number)
    issue = tracker.get_issue(number)
    decision = decide(
        entry.block if entry else None,
        parse(issue.body).block,
        base=entry.base_revision if entry else None,
    )
    writer = writer or (entry.actor if entry else None)
    if decision.conflict:
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
    current = decision.state or Block()
    writer = writer or current.actor
    block = change(current)
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
        base=decision.remote_revision,
        read_body=issue.body,
        dry_run=dry_run,
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
    outcome = Outcome(
        wrote_remote=written.changed,
        wrote_local=True,
        reapplied=written.reapplied,
        notes=notes,
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
        required=required,
        mirror=mirror,
        release_lease=release_lease,
    )


# What `done` makes of a step still open: the step being worked on is finished with the task;
# one never started (pending, blocked, or without a status) was left out of it.
CLOSED_STATUS: dict[StepStatus | None, StepStatus] = {
    "in progress": "done",
    "pending": "skipped",
    "blocked": "skipped",
    None: "skipped",
}


def close_steps(plan: Sequence[PlanStep]) -> tuple[PlanStep, ...]:
    """The plan with no step left open, so no `(in progress)` stays under `Phase: done`."""
    return tuple(replace(step, status=CLOSED_STATUS.get(step.status, step.status)) for step in plan)


def final_block(
    block: Block,
    *,
    now: datetime,
    pr: str | None,
    followups: Sequence[str],
    shipped: str | None,
) -> Block:
    """The block managers and teammates see from now on: what shipped, the PR, follow-ups,
    and the plan closed (close_steps). Shipped defaults to the steps the agent marked done."""
    done_steps = [step.text for step in block.plan if step.status == "done"]
    summary = shipped or "; ".join(done_steps) or "see the pull request"
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
        plan=close_steps(block.plan),
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
    writer: str | None = None,
    now: datetime,
    dry_run: bool = False,
    required: tuple[str, ...] = REQUIRED_DEFAULT,
    release_lease: LeaseHook | None = None,
    mirror: MirrorHook | None = None,
) -> Outcome:
    """The final block (docs/seeds/000 "Task complete"): Phase `done`, what shipped, the PR, and
    the follow-ups. The finishing actor's lease is released through RELEASE_LEASE once the
    block is written, as a handoff does: a done task holds no one."""
    if pr is not None and not pr.startswith(("https://", "http://")):
        raise AgentError(f"--pr {pr!r} is not a URL; pass the pull request's https:// link")
    now = as_utc(now)
    return _rewrite(
        "done",
        tracker,
        cache,
        number,
        lambda block: final_block(block, now=now, pr=pr, followups=followups, shipped=shipped),
        writer=writer,
        now=now,
        dry_run=dry_run,
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
