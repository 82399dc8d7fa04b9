"""Reconciliation of a task's local copy with the issue's block (docs/seeds/000 steps 3-5), pure.

The seed orders the two copies by their Last updated clocks. Clocks on different machines
drift, so every copy also carries a revision: the SHA-256 of its canonical text. The cache
remembers the revision of the issue's block it was last based on (`base`), which settles what
the clocks cannot:
- "local is newer" only counts while the issue is still at `base`; if the issue moved on, both
  sides changed and it is a conflict, whatever the clocks say;
- a local copy with changes the issue never had (revision != base) is never dropped on the
  clocks' say-so; taking the remote then needs a person's choice too.
A conflict is never merged: both copies and their diff go to the user, who picks one.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal

from ai_context.core.block.markers import content_hash
from ai_context.core.block.model import Block, PlanStep, format_timestamp
from ai_context.core.block.render import render
from ai_context.core.block.syntax import LABELS
from ai_context.rules.checks import REQUIRED_DEFAULT, missing_fields

DecisionKind = Literal["init", "take_remote", "push_local", "conflict", "equal"]


def revision(block: Block) -> str:
    """The revision of a block: SHA-256 of its canonical text (markers not included)."""
    return content_hash(render(block))


def is_empty(block: Block | None) -> bool:
    """No field set at all: an empty template heading is no remote state yet."""
    return block is None or block == Block()


def initialize_empty(actor: str | None, now: datetime) -> Block:
    """Seeds/000's `initialize_empty()` for a task with no state anywhere: ACTOR holds it,
    Phase planning, and the plan is the first thing to write. Complete, so `save` takes it as
    it is once the agent has written its plan over the placeholder step."""
    return Block(
        actor=actor or "your-actor-id",
        phase="planning",
        last_updated=now,
        plan=(PlanStep(1, "Write the plan: this task's steps, each with its status", "pending"),),
        files_touched="none yet",
        next_step="Write the plan and save this block",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """What to do with the two copies, and why. `state` is the copy to proceed with. A plain
    dataclass (built from values `decide` checked): resume and the hooks load no pydantic."""

    kind: DecisionKind
    reasons: tuple[str, ...]
    state: Block | None = None
    write_local: bool = False  # refresh the cache with `state`
    write_remote: bool = False  # put `state` into the issue body
    local: Block | None = None
    remote: Block | None = None
    local_revision: str | None = None
    remote_revision: str | None = None
    base_revision: str | None = None
    remedy: str = ""  # a refused write: how to go on

    @property
    def conflict(self) -> bool:
        return self.kind == "conflict"


def _stamp(block: Block) -> str:
    return format_timestamp(block.last_updated) or "(no Last updated)"


def _short(rev: str | None) -> str:
    return rev[:12] if rev else "none"


def decide(local: Block | None, remote: Block | None, *, base: str | None) -> Decision:
    """Seeds/000 step 3, with the revision rule. LOCAL is the cache's copy, REMOTE the issue's
    block (None or empty when the issue has none), BASE the remote revision LOCAL was based on.
    """
    remote = None if is_empty(remote) else remote
    local_rev = revision(local) if local is not None else None
    remote_rev = revision(remote) if remote is not None else None
    common: dict[str, Any] = {
        "local": local,
        "remote": remote,
        "local_revision": local_rev,
        "remote_revision": remote_rev,
        "base_revision": base,
    }

    def make(kind: DecisionKind, *reasons: str, **fields: Any) -> Decision:
        return Decision(kind=kind, reasons=reasons, **common, **fields)

    if remote is None:
        if local is None:
            return make(
                "init", "no block on the issue and no local copy: a new task", state=Block()
            )
        return make(
            "init",
            "the issue has no AI Context block; the local copy becomes its first state",
            state=local,
            write_remote=True,
        )
    if local is None:
        return make(
            "take_remote",
            "no local copy (fresh machine, new session or wiped cache): the issue's copy",
            state=remote,
            write_local=True,
        )
    if local_rev == remote_rev:
        return make(
            "equal",
            "the local copy and the issue's block are identical",
            state=remote,
            write_local=base != remote_rev,
        )
    return _by_clocks(make, local, remote, local_rev=local_rev, remote_rev=remote_rev, base=base)


_Make = Callable[..., Decision]


def _by_clocks(
    make: _Make,
    local: Block,
    remote: Block,
    *,
    local_rev: str | None,
    remote_rev: str | None,
    base: str | None,
) -> Decision:
    """Two different copies: the clocks order them, the revisions overrule the clocks."""
    # Changes the issue never had: neither made from nor pushed as any revision we saw.
    dirty = local_rev != base
    lt, rt = local.last_updated, remote.last_updated
    clocks = f"remote Last updated {_stamp(remote)}, local {_stamp(local)}"
    unpushed = (
        f"the local copy has changes the issue never had (its revision {_short(local_rev)} "
        f"is not the base {_short(base)} it was made from)"
    )
    if lt is None or rt is None:
        if not dirty:
            return make(
                "take_remote",
                f"cannot order the copies by clock ({clocks}); the local copy has no "
                "unpushed changes, so the issue's copy wins",
                state=remote,
                write_local=True,
            )
        return make("conflict", f"cannot order the copies by clock ({clocks})", unpushed)
    if rt > lt:
        if dirty:
            return make(
                "conflict",
                f"the issue's copy is newer by the clocks ({clocks})",
                unpushed + "; taking the issue's copy would drop them",
            )
        return make(
            "take_remote",
            f"the issue's copy is newer ({clocks}): updated from another machine or actor",
            state=remote,
            write_local=True,
        )
    if lt > rt:
        return _local_newer(
            make, local, remote, clocks=clocks, remote_rev=remote_rev, base=base, dirty=dirty
        )
    if dirty:
        return make("conflict", f"both copies carry the same Last updated ({clocks})", unpushed)
    return make(
        "equal",
        f"both copies carry the same Last updated ({clocks}) but differ; the local copy has no "
        "unpushed changes, so the issue's copy (the authority) wins",
        state=remote,
        write_local=True,
    )


def _local_newer(
    make: _Make,
    local: Block,
    remote: Block,
    *,
    clocks: str,
    remote_rev: str | None,
    base: str | None,
    dirty: bool,
) -> Decision:
    """The local clock is ahead: push only if the issue is still where the copy started."""
    if remote_rev != base:  # the issue moved since the copy was based on it
        if not dirty:
            return make(
                "take_remote",
                f"the clocks say the local copy is newer ({clocks}), but it has no "
                f"unpushed changes and the issue moved from base {_short(base)} to "
                f"{_short(remote_rev)}: a clock is behind; the issue's copy wins",
                state=remote,
                write_local=True,
            )
        return make(
            "conflict",
            f"the clocks say the local copy is newer ({clocks}), but the issue's block "
            f"changed since this copy was based on it (base {_short(base)}, now "
            f"{_short(remote_rev)}): both sides changed, whatever the clocks say",
        )
    if remote.actor != local.actor:
        return make(
            "conflict",
            f"the local copy is newer ({clocks}) but the issue's block was written by "
            f"{remote.actor or 'no actor'} and the local copy by {local.actor or 'no actor'}",
        )
    return make(
        "push_local",
        f"the local copy is newer ({clocks}) and the issue is still at the revision it was "
        "based on: changes that never reached the issue (a crash before the save?)",
        state=local,
        write_remote=True,
    )


def may_write(
    remote: Block | None,
    *,
    held: str | None,
    writer: str | None,
    hand_edited: bool = False,
    issue: int | str = "ISSUE",
) -> Decision:
    """The write guard: may WRITER replace the issue's block REMOTE? Every command and MCP tool
    that writes a block asks it, on the body as read and again on the re-read before the PATCH.

    Yes when the issue has no block yet (the command's own read is then the read), or when both
    hold: this machine holds the current revision (HELD, the revision it last read through
    `resume`, the SessionStart hook or its own save, is REMOTE's), and WRITER is REMOTE's Active
    actor (after a handoff, the actor it was handed to). Anything else is a conflict whose
    reasons say why and how to go on: `resume` to read the issue's copy, `--take local` to write
    over it anyway. HAND_EDITED (the block's hash marker no longer matches its text) names a
    person's edit as the change."""
    remote = None if is_empty(remote) else remote
    remote_rev = revision(remote) if remote is not None else None
    common: dict[str, Any] = {
        "remote": remote,
        "remote_revision": remote_rev,
        "base_revision": held,
    }
    if remote is None:
        return Decision(kind="init", reasons=("the issue has no block yet",), **common)
    owner = remote.actor
    why = _refusal(remote, remote_rev, held=held, writer=writer, hand_edited=hand_edited)
    if why is None:
        return Decision(
            kind="push_local",
            reasons=(
                f"this machine holds the issue's current block and {owner or 'no actor'} "
                "holds the task",
            ),
            **common,
        )
    if why.startswith("the task is"):
        remedy = (
            f"to go on: ask {owner} to hand it over (`ai-context handoff {issue} --to "
            f"{writer or 'YOU'}`), or take it over with `--take local` (logged)"
        )
    else:
        remedy = (
            f"to go on: `ai-context resume {issue}` reads the issue's copy, then write again; "
            "`--take local` writes this copy over it anyway (logged)"
        )
    return Decision(kind="conflict", reasons=(why,), remedy=remedy, **common)


def _refusal(
    remote: Block,
    remote_rev: str | None,
    *,
    held: str | None,
    writer: str | None,
    hand_edited: bool,
) -> str | None:
    """Why the guard refuses a write over REMOTE, or None when it allows it."""
    owner = remote.actor
    if held is None:
        return (
            f"this machine has never read the issue's block (its Active actor is "
            f"{owner or 'no actor'})"
        )
    if held != remote_rev:
        if hand_edited:
            who = "a person, by hand on GitHub (the block's hash marker no longer matches it)"
        elif writer is not None and owner == writer:
            who = f"{owner} (this same actor, from another machine or session)"
        else:
            who = owner or "no actor"
        return (
            f"the issue's block was changed by {who} since this machine last read it "
            f"(base {_short(held)}, now {_short(remote_rev)})"
        )
    if owner is not None and writer != owner:
        return (
            f"the task is {owner}'s: the issue's block names {owner} as Active actor, and "
            f"this command writes as {writer or 'no actor (set AI_CONTEXT_ACTOR or --actor)'}"
        )
    return None


def missing_labels(block: Block | None, required: tuple[str, ...] = REQUIRED_DEFAULT) -> list[str]:
    """Seeds/000 step 5: the required fields STATE lacks, by their labels."""
    if block is None:
        return [label for key, label in LABELS.items() if key in required]
    return [LABELS[key] for key in missing_fields(block, required)]


def conflict_diff(local: Block | None, remote: Block | None, *, issue: int | None = None) -> str:
    """A unified diff from the issue's copy to the local one."""
    before = render(remote).splitlines(keepends=True) if remote is not None else []
    after = render(local).splitlines(keepends=True) if local is not None else []
    where = f"issue #{issue}" if issue is not None else "issue"
    lines = difflib.unified_diff(before, after, f"remote ({where})", "local (cache)", n=2)
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def body_diff(before: str, after: str, *, name: str = "issue body") -> str:
    """A unified diff of an issue body before and after a write, for --dry-run."""
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        f"{name} (now)",
        f"{name} (after save)",
        n=2,
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def resolve(decision: Decision, take: Literal["local", "remote"]) -> Decision:
    """A person's answer to a conflict (docs/seeds/000 step 4): the chosen copy becomes the state.
    Taking the local copy pushes it over the issue's revision the person was shown."""
    if not decision.conflict:
        raise ValueError("only a conflict needs resolving")
    if take == "remote":
        return replace(
            decision,
            kind="take_remote",
            reasons=(*decision.reasons, "resolved: the issue's copy was taken"),
            state=decision.remote,
            write_local=True,
        )
    return replace(
        decision,
        kind="push_local",
        reasons=(*decision.reasons, "resolved: the local copy was taken"),
        state=decision.local,
        write_remote=True,
    )
