"""One test per classification rule of the digest, plus the shape of an entry."""

from __future__ import annotations

from datetime import timedelta

import pytest

from ai_context.core.models import Issue
from ai_context.core.phases import is_review_phase, is_shipped_phase
from ai_context.rules.checks import check_body
from ai_context.rules.digest.build import (
    DigestConfig,
    build_digest,
    current_step_text,
    digest_from_checked,
)
from ai_context.rules.digest.json import digest_json
from ai_context.rules.digest.model import Entry
from tests.digest_samples import INFRA, NOW, SHOP, block, issue, sample_issues, stamp

CONFIG = DigestConfig()


def entry_of(item: Issue, config: DigestConfig = CONFIG) -> Entry | None:
    """ITEM's entry in a digest of ITEM alone, None when it is not in the digest."""
    result = check_body(item.body, now=NOW, config=config.checks())
    digest = digest_from_checked([(item, result)], NOW, config)
    return next((e for entries in digest.entries.values() for e in entries), None)


def category_of(item: Issue, config: DigestConfig = CONFIG) -> str | None:
    entry = entry_of(item, config)
    return entry.category if entry else None


# --- shipped ---------------------------------------------------------------------------------


def test_closed_as_completed_within_the_window_is_shipped() -> None:
    item = issue(1, "t", block(), state="closed", state_reason="completed", closed_at=stamp(23))
    entry = entry_of(item)
    assert entry is not None
    assert entry.category == "shipped"
    assert entry.reasons == ("closed as completed 23h ago",)


def test_closed_without_a_reason_counts_as_completed() -> None:
    item = issue(1, "t", block(), state="closed", closed_at=stamp(1))
    assert category_of(item) == "shipped"


def test_closed_without_a_block_within_the_window_is_shipped() -> None:
    item = issue(1, "t", "no block here", state="closed", closed_at=stamp(2))
    entry = entry_of(item)
    assert entry is not None and entry.category == "shipped"
    assert entry.actor is None and entry.age == timedelta(hours=2)


def test_closed_before_the_window_is_left_out() -> None:
    item = issue(1, "t", block(), state="closed", closed_at=stamp(25))
    assert category_of(item) is None
    assert category_of(item, DigestConfig(window=timedelta(hours=48))) == "shipped"


def test_closed_as_not_planned_is_left_out() -> None:
    item = issue(1, "t", block(), state="closed", state_reason="not_planned", closed_at=stamp(1))
    assert category_of(item) is None


@pytest.mark.parametrize("phase", ["done", "shipped", "Complete", "completed", "merged"])
def test_open_with_a_done_phase_is_shipped(phase: str) -> None:
    entry = entry_of(issue(1, "t", block(phase=phase, hours_ago=10)))
    assert entry is not None and entry.category == "shipped"
    assert "still open" in entry.reasons[0]


def test_open_with_a_done_phase_older_than_the_window_is_not_shipped() -> None:
    # "shipped within 1d" means it: a task finished four days ago is not news.
    item = issue(1, "t", block(phase="done", hours_ago=100))
    assert category_of(item) is None
    assert entry_of(item) is None


def test_shipped_wins_over_stuck() -> None:
    item = issue(1, "t", block(blockers=("x",)), state="closed", closed_at=stamp(1))
    assert category_of(item) == "shipped"


# --- stuck -----------------------------------------------------------------------------------


def test_blockers_make_a_task_stuck() -> None:
    entry = entry_of(issue(1, "t", block(blockers=("Waiting for keys",))))
    assert entry is not None and entry.category == "stuck"
    assert entry.reasons == ("blocker: Waiting for keys",)
    assert entry.blockers == ("Waiting for keys",)


@pytest.mark.parametrize("phase", ["blocked", "Blocked on the vendor"])
def test_a_blocked_phase_makes_a_task_stuck(phase: str) -> None:
    entry = entry_of(issue(1, "t", block(phase=phase)))
    assert entry is not None and entry.category == "stuck"
    assert entry.reasons == (f"phase is '{phase}'",)


def test_a_stale_task_is_stuck_and_stale_after_is_configurable() -> None:
    item = issue(1, "t", block(hours_ago=30))
    entry = entry_of(item)
    assert entry is not None and entry.category == "stuck"
    # In words; the age is the row's own column, said once there.
    assert entry.reasons == ("no update for over 1d (stale)",)
    assert category_of(item, DigestConfig(stale_after=timedelta(hours=48))) == "in_progress"


def test_just_under_stale_after_is_not_stale() -> None:
    assert category_of(issue(1, "t", block(hours_ago=23.9))) == "in_progress"


def test_error_findings_make_a_task_stuck() -> None:
    entry = entry_of(issue(1, "t", block(next_step=None)))
    assert entry is not None and entry.category == "stuck"
    assert entry.errors == 1
    # The finding in words, its code as a suffix.
    assert entry.reasons[0].endswith("(AIC201, line 1)")
    assert entry.reasons[0].startswith("required field 'Next step'")


def test_warnings_alone_do_not_make_a_task_stuck() -> None:
    # every step done but phase "implementing" is AIC305, a warning
    entry = entry_of(issue(1, "t", block(plan=("a (done)",))))
    assert entry is not None and entry.category == "in_progress"


def test_stuck_wins_over_in_review() -> None:
    item = issue(1, "t", block(phase="in review", hours_ago=40), labels=("in-review",))
    assert category_of(item) == "stuck"


def test_every_stuck_reason_is_listed() -> None:
    entry = entry_of(issue(1, "t", block(phase="blocked", blockers=("a", "b"), hours_ago=48)))
    assert entry is not None
    assert [r.split(":")[0] for r in entry.reasons] == [
        "blocker",
        "blocker",
        "phase is 'blocked'",
        "no update for over 1d (stale)",
    ]


# --- in review -------------------------------------------------------------------------------


@pytest.mark.parametrize("phase", ["in review", "Review", "awaiting code review", "reviewing"])
def test_a_phase_mentioning_review_is_in_review(phase: str) -> None:
    entry = entry_of(issue(1, "t", block(phase=phase)))
    assert entry is not None and entry.category == "in_review"
    assert entry.reasons == (f"phase is '{phase}'",)


def test_the_in_review_label_is_in_review_and_configurable() -> None:
    item = issue(1, "t", block(), labels=("in-review",))
    entry = entry_of(item)
    assert entry is not None and entry.category == "in_review"
    assert entry.reasons == ("label 'in-review'",)
    assert category_of(item, DigestConfig(review_label="needs-review")) == "in_progress"


# --- in progress and left out ------------------------------------------------------------------


def test_an_open_issue_with_a_fresh_block_is_in_progress() -> None:
    entry = entry_of(issue(1, "t", block()))
    assert entry is not None and entry.category == "in_progress" and entry.reasons == ()


def test_an_open_issue_without_a_block_is_left_out() -> None:
    assert category_of(issue(1, "t", "Just text")) is None


# --- what an entry carries -----------------------------------------------------------------


def test_an_entry_carries_everything_the_digest_shows() -> None:
    item = issue(
        9,
        "Title",
        block(
            actor="cc-x",
            phase="implementing (chunk 2 of 3)",
            hours_ago=1.5,
            plan=("A (done)", "B (skipped)", "C (in progress)", "D (blocked)", "E (pending)"),
        ),
        repo=INFRA,
    )
    entry = entry_of(item)
    assert entry is not None
    assert (entry.repository, entry.number, entry.title) == (INFRA, 9, "Title")
    assert entry.url == "https://github.com/acme/infra/issues/9"
    assert (entry.actor, entry.phase, entry.chunk) == ("cc-x", "implementing", (2, 3))
    assert (entry.plan_done, entry.plan_total, entry.progress) == (2, 5, "2/5")
    assert entry.current_step == "C"
    assert entry.next_step == "Finish the tests"
    assert entry.blocked_steps == 1
    assert entry.age == timedelta(hours=1, minutes=30)
    assert entry.phase_text == "implementing (2/3)"


def test_current_step_falls_back_to_the_first_unfinished_step() -> None:
    parsed = check_body(block(plan=("A (done)", "B (pending)", "C (pending)"))).block
    assert current_step_text(parsed) == "B"
    assert current_step_text(check_body(block(plan=("A (done)",))).block) is None


def test_phase_words() -> None:
    assert is_shipped_phase("done, shipped in #411") and not is_shipped_phase("not done")
    assert is_review_phase("PR under review") and not is_review_phase("implementing")


def test_build_digest_sorts_counts_and_deduplicates() -> None:
    issues = sample_issues()
    digest = build_digest([*issues, issues[3]], NOW)
    assert digest.counts == {"shipped": 1, "in_review": 2, "in_progress": 2, "stuck": 3}
    assert [e.number for e in digest.entries["in_progress"]] == [12, 4]  # infra sorts first
    assert digest.repositories == (INFRA, SHOP)
    assert digest.first and digest.changes == ()
    assert digest.previous.status == "absent"


def test_a_naive_now_is_refused_with_a_hint() -> None:
    with pytest.raises(ValueError, match="timezone"):
        build_digest([], NOW.replace(tzinfo=None))


def test_digest_json_has_the_documented_shape() -> None:
    data = digest_json(build_digest(sample_issues(), NOW))
    assert set(data) >= {"generated_at", "window_hours", "categories"}
    assert data["generated_at"] == "2026-05-27T09:00:00Z" and data["window_hours"] == 24
    assert set(data["categories"]) == {"shipped", "in_review", "in_progress", "stuck"}
    for entries in data["categories"].values():
        for entry in entries:
            assert {"repository", "number", "title", "actor", "phase", "reasons"} <= set(entry)


def test_an_update_from_the_future_counts_as_just_now() -> None:
    entry = entry_of(issue(1, "t", block(hours_ago=-2)))
    assert entry is not None and entry.age == timedelta(0)


def test_a_bare_reference_names_its_repository_in_a_multi_repository_digest() -> None:
    """`#411` in an agent's text would link to the digest's own repository on GitHub."""
    waiting = issue(
        5, "Waits", block(blockers=("waiting on #411",), next_step="see #12 and acme/x#3"), INFRA
    )
    other = issue(6, "Other", block(), SHOP)
    digest = build_digest([waiting, other], NOW)
    entries = {e.number: e for group in digest.entries.values() for e in group}
    assert entries[5].blockers == (f"waiting on {INFRA}#411",)
    assert entries[5].reasons[0] == f"blocker: waiting on {INFRA}#411"
    assert entries[5].next_step == f"see {INFRA}#12 and acme/x#3"
    [alone] = [e for group in build_digest([waiting], NOW).entries.values() for e in group]
    assert alone.blockers == ("waiting on #411",)  # one repository: #411 is already right
