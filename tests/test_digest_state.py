"""The state a digest carries for the next one, the changes since the last digest, /status and
one task's summary."""

from __future__ import annotations

import base64
import re
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from ai_context.core import hidden
from ai_context.rules.digest.build import build_digest, summarize_task
from ai_context.rules.digest.facts import restore_all
from ai_context.rules.digest.model import CATEGORIES, DigestState, StateRead, TaskState
from ai_context.rules.digest.plate import plate, urgency_tier
from ai_context.rules.digest.render import render_markdown
from ai_context.rules.digest.state import (
    VERSION,
    decode_state,
    encode_state,
    find_state,
    same_digest,
    state_line,
)
from tests.conftest import BUNDLED
from tests.digest_samples import INFRA, NOW, SHOP, block, issue, sample_issues, sample_previous

states = st.builds(
    DigestState,
    generated_at=st.none() | st.just(NOW),
    tasks=st.dictionaries(
        st.tuples(st.text(max_size=30), st.integers(min_value=1, max_value=10**9)),
        st.builds(TaskState, category=st.sampled_from(CATEGORIES), done=st.integers(0, 500)),
        max_size=40,
    ),
)


@given(states)
def test_state_round_trips(state: DigestState) -> None:
    read = find_state("Some digest text\n\n" + state_line(state) + "\n")
    assert read.status == "restored"
    assert read.state == state


@given(st.text(max_size=300))
def test_decoding_any_text_never_raises(text: str) -> None:
    assert find_state(text).status in ("restored", "absent", "unreadable")
    assert decode_state(text).status in ("restored", "unreadable")


def test_the_state_line_is_a_markdown_link_reference_definition() -> None:
    line = state_line(DigestState(tasks={(SHOP, 1): TaskState(category="stuck", done=2)}))
    # CommonMark: [label]: destination (title); such a definition renders as nothing.
    assert re.fullmatch(r"\[//\]: # \(ai-context-digest:v2:z\.[A-Za-z0-9_=-]+\)", line)


def test_the_encoding_is_compressed_columns_of_json() -> None:
    state = DigestState(
        generated_at=NOW,
        tasks={
            (SHOP, 1): TaskState(category="stuck", done=2),
            (SHOP, 4): TaskState(category="shipped", done=5),
            (INFRA, 7): TaskState(category="in_review", done=0),
        },
    )
    assert hidden.decode(encode_state(state)) == {
        "v": 2,
        "at": "2026-05-27T09:00:00Z",
        "r": {INFRA: [[7], "r", [0]], SHOP: [[1, 3], "ks", [2, 5]]},
    }
    assert decode_state(encode_state(state)).state == state
    # An organisation's 50 repositories of 1,000 tasks fit in one 65,536-character comment.
    big = DigestState(
        tasks={
            (f"acme/repo-{r}", n): TaskState(category=CATEGORIES[n % 4], done=n % 6)
            for r in range(50)
            for n in range(1, 1001)
        }
    )
    assert len(state_line(big)) < 60_000


# Written by the code before the state was built from plain values.
OLDER_LINE = (
    "[//]: # (ai-context-digest:v2:z.eNpdyrEKwkAQhOF3mXoO9zaewX2OVB5XBEklkmMjaULe3e0E-a"
    "cavgM7TIn5A4OK3pKUpOMkdxOJPUA47MD8fC8XX_qaMqzWgcqs1KERfdscrFdKVFo8P6z_-OXeAxfmSFo7zy-GOSIX)"
)


def test_a_state_line_written_by_the_older_code_reads_back_and_encodes_the_same() -> None:
    expected = DigestState(
        generated_at=NOW,
        tasks={
            (f"acme/repo-{r}", n): TaskState(category=CATEGORIES[(n * 7 + r) % 4], done=(n + r) % 6)
            for r in (2, 1)
            for n in (40, 3, 17, 5)
        },
    )
    read = find_state(f"digest text\n\n{OLDER_LINE}\n")
    assert read.status == "restored"
    assert read.state == expected
    assert state_line(read.state) == OLDER_LINE


def test_a_digests_own_state_is_the_validated_state_and_reads_back() -> None:
    digest = build_digest(sample_issues(), NOW, previous=sample_previous())
    own = digest.state  # built from the digest's entries, not validated again
    validated = DigestState.model_validate(own.model_dump())
    assert own == validated
    assert state_line(own) == state_line(validated)
    assert find_state(state_line(own)).state == own


def test_a_negative_count_of_steps_in_a_comment_is_unreadable() -> None:
    forged = hidden.encode({"v": 2, "at": None, "r": {SHOP: [[1], "p", [-1]]}}, compress=True)
    read = decode_state(forged)
    assert read.status == "unreadable"
    assert read.detail.endswith("unexpected content; treated as the first digest")


def test_no_previous_digest_is_a_first_digest() -> None:
    assert find_state(None).status == "absent"
    read = find_state("A comment that was never a digest")
    assert read.status == "absent" and "no state" in read.detail


def test_a_garbled_state_is_a_first_digest_and_says_so() -> None:
    for text in (
        "[//]: # (ai-context-digest:v1:!!!not-base64)",
        "[//]: # (ai-context-digest:v1:" + base64.urlsafe_b64encode(b"[1,2]").decode() + ")",
        "[//]: # (ai-context-digest:v2:"
        + base64.urlsafe_b64encode(b'{"v":2,"r":{"a/b":[[1],"z",[0]]}}').decode()
        + ")",
        "[//]: # (ai-context-digest:v1:"
        + base64.urlsafe_b64encode(b'{"v":1,"r":{"a/b":[[1,"k",0]]}}').decode()
        + ")",
        "[//]: # (ai-context-digest:v9:eyJ2Ijo5fQ==)",
    ):
        read = find_state(text)
        assert read.status == "unreadable", text
        assert "treated as the first digest" in read.detail
        digest = build_digest(sample_issues(), NOW, previous=read)
        assert digest.first and digest.changes == ()


def test_the_last_state_line_wins() -> None:
    old = state_line(DigestState(tasks={(SHOP, 1): TaskState(category="stuck", done=0)}))
    new = state_line(DigestState(tasks={(SHOP, 2): TaskState(category="stuck", done=0)}))
    assert set(find_state(f"{old}\n\ntext\n\n{new}\n").state.tasks) == {(SHOP, 2)}


def test_changes_since_the_last_digest() -> None:
    digest = build_digest(sample_issues(), NOW, previous=sample_previous())
    changes = {c.number: c for c in digest.changes}
    assert set(changes) == {1, 2, 4, 6, 12}
    assert (changes[1].moved_from, changes[1].category, changes[1].steps_completed) == (
        "in_progress",
        "shipped",
        1,
    )
    assert (changes[2].moved_from, changes[2].steps_completed) == ("in_progress", 1)
    assert (changes[4].moved_from, changes[4].steps_completed, changes[4].new) == (None, 1, False)
    assert (changes[6].moved_from, changes[6].category) == ("in_progress", "stuck")
    assert changes[12].new and changes[12].repository == INFRA


def test_a_plan_rewritten_shorter_is_not_negative_progress() -> None:
    previous = StateRead(
        status="restored",
        state=DigestState(tasks={(SHOP, 1): TaskState(category="in_progress", done=5)}),
    )
    digest = build_digest([issue(1, "t", block())], NOW, previous=previous)
    assert digest.changes == ()


def test_a_digest_state_feeds_the_next_digest() -> None:
    first = build_digest(sample_issues(), NOW)
    later = build_digest(
        sample_issues(), NOW + timedelta(minutes=5), previous=find_state(state_line(first.state))
    )
    assert later.previous.status == "restored" and later.changes == ()


def test_the_plate_orders_by_urgency() -> None:
    issues = [
        issue(1, "review", block(actor="me", phase="in review", hours_ago=3)),
        issue(2, "fresh", block(actor="me", hours_ago=1)),
        issue(3, "older", block(actor="me", hours_ago=8)),
        issue(4, "stale", block(actor="me", hours_ago=30)),
        issue(
            5, "blocked step", block(actor="me", plan=("a (done)", "b (blocked)"), hours_ago=0.5)
        ),
        issue(6, "shipped", block(actor="me", phase="done")),
        issue(7, "stuck, fresher", block(actor="Me", blockers=("x",), hours_ago=2)),
        issue(8, "someone else", block(actor="you")),
    ]
    mine = plate(build_digest(issues, NOW), "ME")
    assert [e.number for e in mine.entries] == [4, 7, 5, 3, 2, 1, 6]
    assert [urgency_tier(e) for e in mine.entries][:3] == ["stuck", "stuck", "blocked step"]
    assert mine.counts["stuck"] == 2


def test_a_task_summary_has_the_whole_block_and_its_findings() -> None:
    summary = summarize_task(issue(7, "Half", block(next_step=None)), NOW)
    assert summary.category == "stuck" and summary.has_block and not summary.complete
    assert [s.status for s in summary.plan] == ["done", "in progress", "pending"]
    assert summary.current_step == "Test it" and summary.plan_done == 1
    assert any(f.code == "AIC201" for f in summary.findings)
    outside = summarize_task(issue(8, "Plain", "no block"), NOW)
    assert outside.category is None and outside.reasons == ("no AI Context block",)


def test_a_rerun_later_is_the_same_digest_but_an_age_in_a_title_is_the_title_s() -> None:
    def text(title: str, at: timedelta) -> str:
        issues = [*sample_issues(), issue(30, title, block())]
        return render_markdown(build_digest(issues, NOW + at, previous=sample_previous()), BUNDLED)

    first = text("Revert what broke 3d ago", timedelta())
    assert same_digest(first, text("Revert what broke 3d ago", timedelta(hours=5)))
    assert not same_digest(first, text("Revert what broke 4d ago", timedelta()))


@given(epoch=st.integers())
def test_a_stored_epoch_of_any_size_restores_or_lists_in_full(epoch: int) -> None:
    restored = restore_all([[1, "t", "u", "open", None, None, epoch, 0, []]], "o/r", "x")
    assert restored is None or restored[0][0].number == 1


def test_a_state_time_without_an_offset_is_utc() -> None:
    payload = {"v": VERSION, "at": "2026-05-27T08:00:00", "r": {}}
    read = decode_state(hidden.encode(payload))
    assert read.status == "restored"
    assert read.state.generated_at == datetime(2026, 5, 27, 8, tzinfo=UTC)
