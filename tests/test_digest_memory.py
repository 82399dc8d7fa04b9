"""What a digest remembers: the baseline of a same-day rerun, tasks that left, count deltas."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from ai_context.core.models import Comment
from ai_context.jobs.digest.delivery import marker, one_line
from ai_context.jobs.digest.job import previous_state
from ai_context.rules.digest.build import build_digest
from ai_context.rules.digest.model import DigestState, StateRead, TaskState
from ai_context.rules.digest.render import render_markdown
from ai_context.rules.digest.state import (
    find_baseline,
    find_state,
    slack_line,
    slack_posted,
    tasks_digest,
)
from tests.conftest import BUNDLED
from tests.digest_samples import NOW, SHOP, block, issue, sample_issues, sample_previous, stamp

BOT = "github-actions[bot]"


def comment(n: int, day: str, body: str) -> Comment:
    return Comment(id=n, body=f"{marker(day)}\n{body}", author=BOT)


def test_the_first_digest_ever_is_its_own_baseline_and_reads_the_same_when_unchanged() -> None:
    first = render_markdown(build_digest(sample_issues(), NOW), BUNDLED)
    baseline = find_baseline(first)
    assert baseline.status == "restored" and baseline.own
    rerun = build_digest(sample_issues(), NOW + timedelta(hours=1), previous=baseline)
    assert rerun.changes == () and rerun.first  # nothing new: it reads as the first did
    assert "Nothing to compare with" in render_markdown(rerun, BUNDLED)


def test_a_rerun_keeps_the_baseline_of_the_days_first_digest() -> None:
    morning = build_digest(sample_issues(), NOW, previous=sample_previous())
    today = comment(2, "2026-05-27", render_markdown(morning, BUNDLED))
    yesterday = comment(1, "2026-05-26", "[//]: # (ai-context-digest:v2:e30)")
    read = previous_state([yesterday, today], "2026-05-27", BOT)
    assert read.state == sample_previous().state  # not the morning's own state
    rerun = build_digest(sample_issues(), NOW + timedelta(hours=2), previous=read)
    assert {c.number for c in rerun.changes} == {c.number for c in morning.changes}


def test_the_next_day_compares_with_the_last_comment() -> None:
    text = render_markdown(build_digest(sample_issues(), NOW, previous=sample_previous()), BUNDLED)
    read = previous_state([comment(5, "2026-05-27", text)], "2026-05-28", BOT)
    assert read.state.generated_at == NOW and not read.own


def test_tasks_that_left_are_listed_with_why() -> None:
    before = StateRead(
        status="restored",
        state=DigestState(
            generated_at=NOW - timedelta(days=1),
            tasks={
                (SHOP, 22): TaskState(category="in_progress", done=0),  # closed as not planned
                (SHOP, 20): TaskState(category="stuck", done=0),  # its block was removed
                (SHOP, 30): TaskState(category="in_review", done=0),  # gone without a trace
                (SHOP, 21): TaskState(category="shipped", done=2),  # aged out: no news
            },
        ),
    )
    digest = build_digest(sample_issues(), NOW, previous=before)
    left = {c.number: c.left for c in digest.changes if c.left}
    assert left == {
        20: "no AI Context block",
        22: "closed as not planned",
        30: "no longer found (transferred or deleted?)",
    }
    text = render_markdown(digest, BUNDLED)
    assert "Dropped idea: left (closed as not planned), was in progress" in text


def test_counts_carry_deltas_and_the_date_compared_with() -> None:
    digest = build_digest(sample_issues(), NOW, previous=sample_previous())
    assert digest.deltas == {"shipped": 1, "in_review": 1, "in_progress": -2, "stuck": 1}
    text = render_markdown(digest, BUNDLED)
    assert "🔴 3 stuck (+1)" in text and "🔵 2 in progress (−2)" in text
    assert "Compared with the digest of Tuesday 26 May 2026, 09:00 UTC." in text


def test_shipped_means_within_the_window() -> None:
    recent = issue(1, "Fresh", block(phase="done", hours_ago=3))
    old = issue(2, "Stale done", block(phase="done", hours_ago=30))
    digest = build_digest([recent, old], NOW)
    assert [e.number for e in digest.entries["shipped"]] == [1]
    closed = issue(3, "Closed", block(), state="closed", closed_at=stamp(2))
    assert build_digest([closed], NOW).entries["shipped"][0].reasons == (
        "closed as completed 2h ago",
    )


def test_the_slack_line_names_the_tasks_and_changes_only_with_them() -> None:
    digest = build_digest(sample_issues(), NOW)
    text = render_markdown(digest, BUNDLED)
    posted = comment(2, "2026-05-27", f"{text}\n\n{slack_line(tasks_digest(digest.state))}")
    later = build_digest(sample_issues(), NOW + timedelta(hours=1))
    assert slack_posted(posted.body) == tasks_digest(later.state)
    moved = build_digest([*sample_issues(), issue(40, "New", block())], NOW)
    assert slack_posted(posted.body) != tasks_digest(moved.state)
    assert find_state(posted.body).status == "restored"
    # A day's comment that says Slack got nothing (its post failed, or Slack was no target
    # then): nothing is read as posted, so the rerun posts, whatever the tasks.
    assert slack_posted(comment(2, "2026-05-27", text).body) is None
    assert slack_posted(None) is None


def test_a_failure_is_one_line_without_library_internals() -> None:
    raw = (
        "cannot reach GitHub to create a comment: HTTPConnectionPool(host='x', port=80): Max "
        "retries exceeded with url: /x (Caused by NewConnectionError('<urllib3...>'))"
    )
    assert one_line(raw) == "cannot reach GitHub to create a comment"
    assert one_line("HTTP 410 channel_is_archived") == "HTTP 410 channel_is_archived"


def test_mention_owners_maps_actors_to_their_slack_ids(tmp_path: Path) -> None:
    from ai_context.adapters.config import load_config
    from ai_context.jobs.digest.job import mentions_of

    path = tmp_path / "c.yml"
    actors = "actors: {cc-omer-laptop: {owner: omer, slack: U024BE7LH}, quiet: {}}\n"
    path.write_text("digest: {mention-owners: true}\n" + actors, encoding="utf-8")
    settings = load_config({"INPUT_CONFIG": str(path)})
    assert settings.digest.mention_owners
    assert mentions_of(settings) == {"cc-omer-laptop": "U024BE7LH"}
    path.write_text(actors, encoding="utf-8")
    assert mentions_of(load_config({"INPUT_CONFIG": str(path)})) == {}
