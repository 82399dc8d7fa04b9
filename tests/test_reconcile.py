"""The decision table of docs/seeds/000 step 3 with the revision rule: one test per branch, plus
properties over arbitrary copies (no unpushed change is dropped, no remote change overwritten)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai_context.core.block.model import Block, PlanStep
from ai_context.core.block.parse import parse
from ai_context.rules.reconcile import (
    conflict_diff,
    decide,
    initialize_empty,
    is_empty,
    may_write,
    missing_labels,
    resolve,
    revision,
)
from tests.conftest import SEED_BLOCK

T = datetime(2026, 5, 26, 14, 32, tzinfo=UTC)
SEED = parse(SEED_BLOCK).block
assert SEED is not None


def copy(
    actor: str = "cc-ariel-laptop", minutes: int = 0, next_step: str = "Finish unit tests"
) -> Block:
    return replace(
        SEED, actor=actor, last_updated=T + timedelta(minutes=minutes), next_step=next_step
    )


# --- docs/seeds/000 step 3, branch by branch -------------------------------------------------


def test_no_remote_no_local_is_a_new_empty_task() -> None:
    d = decide(None, None, base=None)
    assert (d.kind, d.write_local, d.write_remote) == ("init", False, False)
    assert d.state == Block()
    assert missing_labels(d.state) == [
        "Active actor",
        "Phase",
        "Last updated",
        "Plan",
        "Files touched",
        "Next step",
    ]


def test_no_remote_with_local_pushes_the_local_copy() -> None:
    local = copy()
    d = decide(local, None, base=None)
    assert (d.kind, d.state, d.write_remote, d.write_local) == ("init", local, True, False)


def test_an_empty_template_heading_counts_as_no_remote() -> None:
    empty = parse("## AI Context\n").block
    assert is_empty(empty)
    assert decide(copy(), empty, base=None).kind == "init"


def test_no_local_takes_the_remote() -> None:
    remote = copy()
    d = decide(None, remote, base=None)
    assert (d.kind, d.state, d.write_local, d.write_remote) == ("take_remote", remote, True, False)


def test_identical_copies_are_equal_and_only_refresh_a_stale_base() -> None:
    block = copy()
    same = decide(block, copy(), base=revision(block))
    assert (same.kind, same.write_local, same.write_remote) == ("equal", False, False)
    assert decide(block, copy(), base=None).write_local


def test_remote_newer_takes_the_remote() -> None:
    local, remote = copy(), copy("cc-ariel-phone", minutes=30, next_step="Open the PR")
    d = decide(local, remote, base=revision(local))
    assert (d.kind, d.state, d.write_local) == ("take_remote", remote, True)


def test_remote_newer_but_local_has_unpushed_changes_is_a_conflict() -> None:
    pushed = copy()
    local = copy(minutes=5, next_step="my unpushed step")
    remote = copy("cc-ariel-phone", minutes=30, next_step="Open the PR")
    d = decide(local, remote, base=revision(pushed))
    assert d.kind == "conflict" and d.state is None
    assert not d.write_local and not d.write_remote


def test_local_newer_same_actor_remote_unchanged_pushes_local() -> None:
    """The seed's crash case: the local copy never reached the issue."""
    remote = copy()
    local = copy(minutes=20, next_step="after the crash")
    d = decide(local, remote, base=revision(remote))
    assert (d.kind, d.state, d.write_remote) == ("push_local", local, True)


def test_local_newer_different_actor_is_a_conflict() -> None:
    remote = copy("cc-noa-desktop")
    local = copy(minutes=20, next_step="mine")
    d = decide(local, remote, base=revision(remote))
    assert d.kind == "conflict"
    assert "cc-noa-desktop" in d.reasons[0]


def test_clock_skew_remote_behind_but_changed_is_a_conflict_not_an_overwrite() -> None:
    """The other machine's clock runs 30 minutes slow: its newer write carries an older time.
    The seed alone would push the local copy over it; the revision says both sides changed."""
    base_block = copy()
    local = copy(minutes=10, next_step="laptop's unpushed work")
    remote = copy(minutes=-20, next_step="phone's newer work, stamped by a slow clock")
    assert local.last_updated and remote.last_updated and local.last_updated > remote.last_updated
    d = decide(local, remote, base=revision(base_block))
    assert d.kind == "conflict"
    assert not d.write_remote
    assert "whatever the clocks say" in d.reasons[0]


def test_clock_says_local_newer_but_local_clean_takes_the_moved_remote() -> None:
    local = copy(minutes=10)
    remote = copy(minutes=-20, next_step="changed elsewhere, slow clock")
    d = decide(local, remote, base=revision(local))
    assert (d.kind, d.state) == ("take_remote", remote)
    assert "a clock is behind" in d.reasons[0]


def test_equal_timestamps_different_content_takes_the_remote_when_local_is_clean() -> None:
    local = copy()
    remote = copy(next_step="a hand edit that kept the time")
    d = decide(local, remote, base=revision(local))
    assert (d.kind, d.state, d.write_local) == ("equal", remote, True)


def test_equal_timestamps_different_content_with_unpushed_local_is_a_conflict() -> None:
    local = copy(next_step="unpushed")
    remote = copy(next_step="other")
    assert decide(local, remote, base=revision(copy())).kind == "conflict"


@pytest.mark.parametrize("dirty", [False, True])
def test_a_copy_without_last_updated_is_ordered_by_revision_only(dirty: bool) -> None:
    local = copy(next_step="local")
    remote = replace(copy(next_step="remote"), last_updated=None)
    base = revision(copy()) if dirty else revision(local)
    assert decide(local, remote, base=base).kind == ("conflict" if dirty else "take_remote")


# --- writes -------------------------------------------------------------------------------


def test_write_allowed_without_remote_or_by_the_active_actor_at_the_current_revision() -> None:
    remote = copy("cc-noa-desktop")
    assert may_write(None, held=None, writer="x").kind == "init"
    assert may_write(remote, held=revision(remote), writer="cc-noa-desktop").kind == "push_local"


def test_write_over_a_block_this_machine_never_read_is_refused_even_its_own() -> None:
    """Issue 21: the same actor on a second machine, no resume first: its older copy must not
    replace the newer block the first machine saved."""
    remote = copy("cc-noa-desktop")
    never_read = may_write(remote, held=None, writer="cc-noa-desktop", issue=8)
    assert never_read.conflict and "never read" in never_read.reasons[0]
    assert "`ai-context resume 8`" in never_read.remedy
    assert "--take local" in never_read.remedy


def test_write_over_own_block_that_moved_since_the_base_is_a_conflict() -> None:
    """Issue 15 item 7: the same actor on two machines. Machine A read revision `base`;
    machine B has since saved a newer block; A's save must not replace it."""
    remote = copy("cc-noa-desktop")
    stale = may_write(remote, held="0" * 64, writer="cc-noa-desktop")
    assert stale.conflict
    assert "this same actor, from another machine" in stale.reasons[0]


def test_a_hand_edit_is_reported_as_a_person_s_edit() -> None:
    remote = copy("cc-noa-desktop")
    edited = may_write(remote, held="0" * 64, writer="cc-noa-desktop", hand_edited=True)
    assert edited.conflict and "a person, by hand on GitHub" in edited.reasons[0]
    assert "same actor" not in edited.reasons[0]


def test_write_over_a_block_another_actor_holds_is_a_conflict() -> None:
    remote = copy("cc-noa-desktop")
    changed = may_write(remote, held="0" * 64, writer="cc-ariel-laptop")
    handed = may_write(remote, held=revision(remote), writer="cc-ariel-laptop", issue=12)
    assert changed.conflict and "since this machine last read it" in changed.reasons[0]
    assert handed.conflict and "the task is cc-noa-desktop's" in handed.reasons[0]
    assert "ai-context handoff 12 --to cc-ariel-laptop" in handed.remedy


def test_initialize_empty_is_a_complete_planning_block_for_the_actor() -> None:
    block = initialize_empty("cc-ariel-laptop", T)
    assert (block.actor, block.phase, block.last_updated) == ("cc-ariel-laptop", "planning", T)
    assert missing_labels(block) == [] and block.plan[0].status == "pending"


# --- step 4 and 5 -------------------------------------------------------------------------


def test_resolve_takes_the_chosen_copy() -> None:
    local, remote = copy(minutes=5, next_step="l"), copy("cc-noa-desktop", minutes=9)
    conflict = decide(local, remote, base=revision(copy()))
    assert conflict.conflict
    mine = resolve(conflict, "local")
    theirs = resolve(conflict, "remote")
    assert (mine.kind, mine.state, mine.write_remote) == ("push_local", local, True)
    assert (theirs.kind, theirs.state, theirs.write_local) == ("take_remote", remote, True)
    with pytest.raises(ValueError, match="only a conflict"):
        resolve(mine, "local")


def test_conflict_diff_shows_both_sides() -> None:
    diff = conflict_diff(copy(next_step="mine"), copy("cc-noa-desktop"), issue=7)
    assert diff.startswith("--- remote (issue #7)\n+++ local (cache)\n")
    assert "-- **Active actor:** cc-noa-desktop" in diff
    assert "+- **Next step:** mine" in diff


def test_missing_labels_lists_required_fields_in_order() -> None:
    half = Block(actor="a", phase="p", plan=(PlanStep(number=1, text="x"),))
    assert missing_labels(half) == ["Last updated", "Files touched", "Next step"]
    assert missing_labels(copy()) == []


# --- properties ---------------------------------------------------------------------------

ACTORS = st.sampled_from(["cc-a", "cc-b", None])
STAMPS = st.one_of(st.none(), st.integers(-3, 3).map(lambda m: T + timedelta(minutes=m)))
blocks = st.builds(
    Block,
    actor=ACTORS,
    phase=st.sampled_from(["implementing", "review", None]),
    last_updated=STAMPS,
    next_step=st.sampled_from(["a", "b", "c", None]),
)


@settings(max_examples=400, deadline=None)
@given(local=st.one_of(st.none(), blocks), remote=st.one_of(st.none(), blocks), pick=st.data())
def test_no_unpushed_change_dropped_and_no_remote_change_overwritten(
    local: Block | None, remote: Block | None, pick: st.DataObject
) -> None:
    revs = [revision(b) for b in (local, remote) if b is not None]
    base = pick.draw(st.sampled_from([None, "f" * 64, *revs]))
    d = decide(local, remote, base=base)
    remote_now = None if is_empty(remote) else remote
    if d.conflict:
        assert d.state is None and not d.write_local and not d.write_remote
        return
    assert d.state is not None
    if local is not None and revision(local) not in (base, d.remote_revision):
        # the local copy has changes the issue never had: they are kept, never replaced
        assert d.state == local
    if d.write_remote and remote_now is not None:
        # the issue's block is only replaced when nobody changed it since our base
        assert d.remote_revision == base
