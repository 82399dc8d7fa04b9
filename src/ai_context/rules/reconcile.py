"""Reconciliation of a task's local copy with the issue's block (docs/seeds/000 steps 3-5), pure.

The seed orders the copies by their Last updated clocks; clocks drift, so each copy also has a
revision (SHA-256 of its canonical text) and the cache remembers the issue's revision it was
based on. A local copy newer by the clock is pushed only while the issue is still at that base,
and unpushed changes are never dropped on the clocks' say-so. A conflict is never merged: both
copies and their diff go to the user, who picks one.
"""

from __future__ import annotations

import difflib
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


@dataclass(frozen=True, slots=True)
class _Copies:
    """The two copies and the base, with the Decision makers every branch of `decide` uses."""

    local: Block | None
    remote: Block | None
    base: str | None
    local_rev: str | None
    remote_rev: str | None

    def make(self, kind: DecisionKind, *reasons: str, **fields: Any) -> Decision:
        fields |= {"local": self.local, "remote": self.remote, "base_revision": self.base}
        fields |= {"local_revision": self.local_rev, "remote_revision": self.remote_rev}
        return Decision(kind=kind, reasons=reasons, **fields)

    def theirs(self, kind: DecisionKind, *reasons: str) -> Decision:
        """Go on from the issue's copy, refreshing the cache."""
        return self.make(kind, *reasons, state=self.remote, write_local=True)

    def ours(self, kind: DecisionKind, *reasons: str) -> Decision:
        """Go on from the local copy, writing it to the issue."""
        return self.make(kind, *reasons, state=self.local, write_remote=True)


def decide(local: Block | None, remote: Block | None, *, base: str | None) -> Decision:
    """Seeds/000 step 3, with the revision rule. LOCAL is the cache's copy, REMOTE the issue's
    block (None or empty when the issue has none), BASE the remote revision LOCAL was based on.
    """
    remote = None if is_empty(remote) else remote
    local_rev = revision(local) if local is not None else None
    remote_rev = revision(remote) if remote is not None else None
    c = _Copies(local, remote, base, local_rev, remote_rev)
    if c.remote is None:
        if local is None:
            return c.make(
                "init", "no block on the issue and no local copy: a new task", state=Block()
            )
        return c.ours(
            "init", "the issue has no AI Context block; the local copy becomes its first state"
        )
    if local is None:
        return c.theirs(
            "take_remote",
            "no local copy (fresh machine, new session or wiped cache): the issue's copy",
        )
    if c.local_rev == c.remote_rev:
        same = "the local copy and the issue's block are identical"
        return c.make("equal", same, state=c.remote, write_local=base != c.remote_rev)
    return _by_clocks(c, local, c.remote)


def _by_clocks(c: _Copies, local: Block, remote: Block) -> Decision:
    """Two different copies: the clocks order them, the revisions overrule the clocks."""
    # Changes the issue never had: neither made from nor pushed as any revision we saw.
    dirty = c.local_rev != c.base
    lt, rt = local.last_updated, remote.last_updated
    clocks = f"remote Last updated {_stamp(remote)}, local {_stamp(local)}"
    unpushed = (
        f"the local copy has changes the issue never had (its revision {_short(c.local_rev)} "
        f"is not the base {_short(c.base)} it was made from)"
    )
    if lt is None or rt is None:
        if not dirty:
            return c.theirs(
                "take_remote",
                f"cannot order the copies by clock ({clocks}); the local copy has no "
                "unpushed changes, so the issue's copy wins",
            )
        return c.make("conflict", f"cannot order the copies by clock ({clocks})", unpushed)
    if rt > lt:
        if dirty:
            return c.make(
                "conflict",
                f"the issue's copy is newer by the clocks ({clocks})",
                unpushed + "; taking the issue's copy would drop them",
            )
        return c.theirs(
            "take_remote",
            f"the issue's copy is newer ({clocks}): updated from another machine or actor",
        )
    if lt > rt:
        return _local_newer(c, local, remote, clocks=clocks, dirty=dirty)
    if dirty:
        return c.make("conflict", f"both copies carry the same Last updated ({clocks})", unpushed)
    return c.theirs(
        "equal",
        f"both copies carry the same Last updated ({clocks}) but differ; the local copy has no "
        "unpushed changes, so the issue's copy (the authority) wins",
    )


def _local_newer(c: _Copies, local: Block, remote: Block, *, clocks: str, dirty: bool) -> Decision:
    """The local clock is ahead: push only if the issue is still where the copy started."""
    base, remote_rev = _short(c.base), _short(c.remote_rev)
    if c.remote_rev != c.base:  # the issue moved since the copy was based on it
        if not dirty:
            return c.theirs(
                "take_remote",
                f"the clocks say the local copy is newer ({clocks}), but it has no unpushed "
                f"changes and the issue moved from base {base} to {remote_rev}: a clock is "
                "behind; the issue's copy wins",
            )
        return c.make(
            "conflict",
            f"the clocks say the local copy is newer ({clocks}), but the issue's block "
            f"changed since this copy was based on it (base {base}, now {remote_rev}): both "
            "sides changed, whatever the clocks say",
        )
    if remote.actor != local.actor:
        return c.make(
            "conflict",
            f"the local copy is newer ({clocks}) but the issue's block was written by "
            f"{remote.actor or 'no actor'} and the local copy by {local.actor or 'no actor'}",
        )
    return c.ours(
        "push_local",
        f"the local copy is newer ({clocks}) and the issue is still at the revision it was "
        "based on: changes that never reached the issue (a crash before the save?)",
    )


def may_write(
    remote: Block | None,
    *,
    held: str | None,
    writer: str | None,
    hand_edited: bool = False,
    issue: int | str = "ISSUE",
) -> Decision:
    """The write guard of every block write (on the body read, again before the PATCH): WRITER
    may replace REMOTE when the issue has no block, or when this machine HELD its current
    revision and WRITER is its Active actor; else a conflict saying why and how to go on."""
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
        ours = f"this machine holds the issue's current block and {owner or 'no actor'}"
        return Decision(kind="push_local", reasons=(ours + " holds the task",), **common)
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
    before = render(remote) if remote is not None else ""
    after = render(local) if local is not None else ""
    where = f"issue #{issue}" if issue is not None else "issue"
    return _diff(before, after, f"remote ({where})", "local (cache)")


def body_diff(before: str, after: str) -> str:
    """A unified diff of an issue body before and after a write, for --dry-run."""
    return _diff(before, after, "issue body (now)", "issue body (after save)")


def _diff(before: str, after: str, old: str, new: str) -> str:
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    lines = difflib.unified_diff(a, b, old, new, n=2)
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def resolve(decision: Decision, take: Literal["local", "remote"]) -> Decision:
    """A person's answer to a conflict (docs/seeds/000 step 4): the chosen copy becomes the state.
    Taking the local copy pushes it over the issue's revision the person was shown."""
    if not decision.conflict:
        raise ValueError("only a conflict needs resolving")
    if take == "remote":
        taken = replace(decision, kind="take_remote", state=decision.remote, write_local=True)
    else:
        taken = replace(decision, kind="push_local", state=decision.local, write_remote=True)
    copy = "the issue's copy" if take == "remote" else "the local copy"
    return replace(taken, reasons=(*decision.reasons, f"resolved: {copy} was taken"))
