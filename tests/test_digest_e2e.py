"""The digest end to end: a scheduled `python -m ai_context` against loopback GitHub and Slack."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.actionrun import run_action
from tests.conftest import SEED_BLOCK
from tests.fakes import GitHubFake, SlackFake

TOKEN = "ghs_digestE2eToken0123456789abcdefABCDEF"
BOT = "github-actions[bot]"
T0 = datetime(2026, 5, 26, 15, 0, tzinfo=UTC)
NOW = {"AI_CONTEXT_NOW": "2026-05-26T15:00:00Z"}


@pytest.fixture
def gh() -> Iterator[GitHubFake]:
    with GitHubFake(token=TOKEN, now=T0) as fake:
        fake.add_issue("o/r", "Booking history", SEED_BLOCK, number=1)
        blocked = SEED_BLOCK.replace("- **Blockers:** none", "- **Blockers:**\n  - IdP metadata")
        fake.add_issue("o/r", "SSO <!channel> | @here", blocked, number=2)
        review = SEED_BLOCK.replace("implementing (chunk 3 of 5)", "in review")
        fake.add_issue("o/r", "Dark mode", review, number=3, labels=["in-review"])
        done = SEED_BLOCK.replace("implementing (chunk 3 of 5)", "done")
        fake.add_issue(
            "o/r",
            "Flaky test",
            done,
            number=4,
            state="closed",
            closed_at=datetime(2026, 5, 26, 12, tzinfo=UTC),
        )
        fake.add_issue("o/r", "Digest", "", number=9, labels=["ai-context:digest"])
        yield fake


@pytest.fixture
def slack() -> Iterator[SlackFake]:
    with SlackFake() as fake:
        yield fake


def run(gh: GitHubFake, tmp: Path, slack: SlackFake | None = None, **env: str) -> Any:
    inputs = {"slack-webhook-url": slack.webhook_url} if slack else {}
    return run_action(
        tmp, gh.url, "schedule", {}, token=TOKEN, inputs=inputs, extra_env={**NOW, **env}
    )


def digests(gh: GitHubFake) -> list[Any]:
    return [c for c in gh.comments("o/r", 9) if c.user == BOT]


def test_posts_one_comment_and_one_slack_set_then_edits_same_day(
    gh: GitHubFake, slack: SlackFake, tmp_path: Path
) -> None:
    first = run(gh, tmp_path / "1", slack)
    assert first.code == 0, first.stdout + first.stderr
    [comment] = digests(gh)
    assert comment.body.startswith("<!-- ai-context:digest 2026-05-26 -->")
    assert "Flaky test" in comment.body and "Dark mode" in comment.body
    assert first.outputs["digest-url"].endswith(f"#issuecomment-{comment.id}")
    assert len(slack.messages) >= 1 and slack.rejected == []
    text = str(slack.messages)
    assert "<!channel>" not in text and "@here" not in text  # escaped, cannot ping
    assert "Booking history" in first.summary  # the step summary carries the digest
    first_body = comment.body

    gh.edit_issue("o/r", 1, body=SEED_BLOCK.replace("(in progress)", "(done)"))
    second = run(gh, tmp_path / "2", slack, AI_CONTEXT_NOW="2026-05-26T16:00:00Z")
    assert second.code == 0, second.stdout + second.stderr
    [edited] = digests(gh)
    assert edited.id == comment.id and edited.body != first_body


def test_unchanged_rerun_writes_nothing(gh: GitHubFake, tmp_path: Path) -> None:
    run(gh, tmp_path / "1")
    gh.reset_requests()
    again = run(gh, tmp_path / "2")
    assert again.code == 0
    assert [r for r in gh.requests if r.method != "GET"] == []


def test_slack_410_fails_clearly_while_the_comment_lands(
    gh: GitHubFake, slack: SlackFake, tmp_path: Path
) -> None:
    slack.fail_next("POST", "*", status=410, body="channel_is_archived")
    result = run(gh, tmp_path, slack)
    assert result.code == 3
    assert "channel_is_archived" in result.stdout
    shown = result.stdout.replace(f"::add-mask::{slack.webhook_url}\n", "") + result.stderr
    assert slack.webhook_url not in shown
    assert len(digests(gh)) == 1


def test_digest_issue_is_created_when_absent(tmp_path: Path) -> None:
    with GitHubFake(token=TOKEN, now=T0) as gh:
        gh.add_issue("o/r", "Booking history", SEED_BLOCK, number=1)
        result = run(gh, tmp_path)
        assert result.code == 0, result.stdout + result.stderr
        created = gh.issue("o/r", 2)
        assert created.labels == ["ai-context:digest"]
        assert len([c for c in gh.comments("o/r", 2) if c.user == BOT]) == 1


def test_a_missing_digest_issue_is_a_config_error_with_a_summary(
    gh: GitHubFake, tmp_path: Path
) -> None:
    result = run_action(
        tmp_path,
        gh.url,
        "schedule",
        {},
        token=TOKEN,
        inputs={"digest-issue": "999"},
        extra_env=NOW,
    )
    assert result.code == 2
    assert "setting digest-issue: #999 does not exist in o/r" in result.stdout
    # Still written: the calls made, and no count the stopped run did not reach.
    assert result.outputs["errors"] == "" and "api-calls" in result.outputs
    assert "**Stopped:**" in result.summary


def test_a_webhook_url_without_scheme_fails_before_anything_is_posted(
    gh: GitHubFake, tmp_path: Path
) -> None:
    hook = "hooks.slack.com/services/T1/B1/secretpart"
    result = run_action(
        tmp_path,
        gh.url,
        "schedule",
        {},
        token=TOKEN,
        inputs={"slack-webhook-url": hook},
        extra_env=NOW,
    )
    assert result.code == 2 and "setting slack-webhook-url" in result.stdout
    assert "secretpart" not in result.stdout.replace(f"::add-mask::{hook}\n", "")
    assert [r for r in gh.requests if r.method != "GET"] == [] and gh.count() == 0


def test_a_same_day_rerun_edits_the_comment_and_keeps_its_baseline(
    gh: GitHubFake, slack: SlackFake, tmp_path: Path
) -> None:
    """A schedule run, three changes (a new task, a task that got stuck, a task closed as not
    planned), a rerun the same day: the same comment, edited, names all three; a third run
    with nothing new keeps them (same baseline) and posts nothing more to Slack."""
    yesterday = run(gh, tmp_path / "0", slack, AI_CONTEXT_NOW="2026-05-25T15:00:00Z")
    assert yesterday.code == 0, yesterday.stdout + yesterday.stderr
    first = run(gh, tmp_path / "1", slack)
    assert first.code == 0, first.stdout + first.stderr
    [_, today] = digests(gh)
    assert "### Delivery" in first.summary and "comment: [created](" in first.summary
    posted = len(slack.messages)

    gh.add_issue("o/r", "Audit log", SEED_BLOCK, number=5)
    stuck = SEED_BLOCK.replace("- **Blockers:** none", "- **Blockers:**\n  - `staging` is down")
    gh.edit_issue("o/r", 1, body=stuck)
    gh.edit_issue("o/r", 3, state="closed", state_reason="not_planned")
    second = run(gh, tmp_path / "2", slack, AI_CONTEXT_NOW="2026-05-26T16:00:00Z")
    assert second.code == 0, second.stdout + second.stderr
    [_, edited] = digests(gh)
    assert edited.id == today.id
    body = edited.body
    assert "(https://github.com/o/r/issues/5) Audit log: new, in progress" in body
    assert "(https://github.com/o/r/issues/1) Booking history: in progress → stuck" in body
    assert "Dark mode: left (closed as not planned), was in review" in body
    assert "comment: [edited](" in second.summary and "Slack: sent" in second.summary
    assert len(slack.messages) > posted
    assert "`staging`" in body and "\\`" not in body  # agent code shows as code
    posted = len(slack.messages)

    third = run(gh, tmp_path / "3", slack, AI_CONTEXT_NOW="2026-05-26T17:00:00Z")
    assert third.code == 0, third.stdout + third.stderr
    [_, again] = digests(gh)
    assert "Audit log: new" in again.body and "left (closed as not planned)" in again.body
    assert len(slack.messages) == posted  # nothing changed since the last post
    assert "Slack: not posted" in third.summary


def test_the_step_summary_says_why_slack_failed_in_one_line(gh: GitHubFake, tmp_path: Path) -> None:
    hook = "http://127.0.0.1:9/services/T1/B1/secret"  # nothing listens on the discard port
    result = run_action(
        tmp_path,
        gh.url,
        "schedule",
        {},
        token=TOKEN,
        inputs={"slack-webhook-url": hook},
        extra_env={**NOW, "AI_CONTEXT_HTTP_RETRIES": "0"},
    )
    assert result.code == 3
    [line] = [s for s in result.summary.splitlines() if s.startswith("- Slack:")]
    assert "failed" in line and "connecting to 127.0.0.1 failed" in line
    assert "HTTPConnectionPool" not in result.summary and "Max retries" not in result.summary
    assert "comment: [created](https://github.com/o/r/issues/9#issuecomment-" in result.summary
