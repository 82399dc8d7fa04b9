"""Slack and ClickUp as a new user meets them (issue 23, item 3): a hook fixed the same day
posts, a Slack target added after the day's digest is tried, a channel's address is refused
before anything is sent, each Slack error says what to do, `ai-context slack test` tries a
hook; ClickUp names the near miss of its field and a wrong workspace id. The Action and the
command line run as processes against the loopback GitHub, Slack and ClickUp."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.actionrun import ActionRun, run_action, scheduled
from tests.conftest import SEED_BLOCK, run_process
from tests.fakes import ClickUpFake, GitHubFake, SlackFake

ROOT = Path(__file__).resolve().parents[1]
NOW = {"AI_CONTEXT_NOW": "2026-05-26T15:00:00Z"}
LATER = {"AI_CONTEXT_NOW": "2026-05-26T16:30:00Z"}  # the same day


@pytest.fixture
def gh(github_fake: GitHubFake) -> GitHubFake:
    github_fake.add_repo("o/r")
    github_fake.add_issue("o/r", "Task", SEED_BLOCK, number=1)
    return github_fake


@pytest.fixture
def slack() -> Iterator[SlackFake]:
    with SlackFake() as fake:
        yield fake


def writes(gh: GitHubFake) -> list[Any]:
    return [r for r in gh.requests if r.method in ("POST", "PATCH", "PUT", "DELETE")]


def test_a_wrong_hook_fails_with_its_remedy_and_the_fixed_hook_posts_the_same_day(
    gh: GitHubFake, slack: SlackFake, tmp_path: Path
) -> None:
    wrong = slack.root + "/services/T000FAKE/B000FAKE/notTheSecret"
    first = scheduled(gh, tmp_path / "1", env=NOW, **{"slack-webhook-url": wrong})
    assert first.code == 3
    assert "no_service" in first.stdout and "copy it again" in first.stdout
    assert slack.messages == []

    fixed = scheduled(gh, tmp_path / "2", env=LATER, **{"slack-webhook-url": slack.webhook_url})
    assert fixed.code == 0, fixed.text
    assert len(slack.messages) == 1  # today's post had failed: the rerun posts
    again = scheduled(gh, tmp_path / "3", env=LATER, **{"slack-webhook-url": slack.webhook_url})
    assert again.code == 0 and len(slack.messages) == 1  # and only once
    assert "Slack: not posted" in again.summary


def test_a_slack_target_added_after_the_days_digest_is_tried_the_same_day(
    gh: GitHubFake, slack: SlackFake, tmp_path: Path
) -> None:
    assert scheduled(gh, tmp_path / "1", env=NOW).code == 0
    added = scheduled(gh, tmp_path / "2", env=LATER, **{"slack-webhook-url": slack.webhook_url})
    assert added.code == 0, added.text
    assert len(slack.messages) == 1


@pytest.mark.parametrize(
    "where", ["https://app.slack.com/client/T000FAKE/C000FAKE", "{root}/client/T000/C000"]
)
def test_a_channel_url_is_refused_before_anything_is_sent(
    gh: GitHubFake, slack: SlackFake, tmp_path: Path, where: str
) -> None:
    result = scheduled(
        gh, tmp_path, env=NOW, **{"slack-webhook-url": where.format(root=slack.root)}
    )
    assert result.code == 2
    assert "not an incoming webhook" in result.stdout and "hooks.slack.com" in result.stdout
    assert slack.count() == 0 and writes(gh) == []
    assert "C000" not in result.stdout  # the URL is a secret: never repeated


def slack_test(*argv: str, url: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {} if url is None else {"SLACK_WEBHOOK_URL": url}
    return run_process(["slack", "test", *argv], env)


def test_slack_test_posts_one_message_and_says_what_to_fix_when_refused(
    slack: SlackFake,
) -> None:
    done = slack_test(url=slack.webhook_url)
    assert done.returncode == 0, done.stderr
    assert "the webhook works" in done.stdout
    [message] = slack.messages
    assert "test message" in message["text"]

    slack.fail_next("POST", status=403, body="invalid_token")
    refused = slack_test(url=slack.webhook_url)
    assert refused.returncode == 2
    assert "invalid_token" in refused.stderr and "create a new incoming webhook" in refused.stderr

    slack.fail_next("POST", status=410, body="channel_is_archived")
    archived = slack_test(url=slack.webhook_url)
    assert archived.returncode == 2 and "unarchive it" in archived.stderr

    gone = slack_test(url=slack.root + "/services/T0/B0/wrong")
    assert gone.returncode == 2 and "no_service" in gone.stderr

    page = slack_test("--webhook-url", "https://app.slack.com/client/T0/C0")
    assert page.returncode == 2 and "not an incoming webhook" in page.stderr
    assert slack_test().returncode == 2  # no webhook at all: says which variable


LINKED = f"{SEED_BLOCK}\n\nClickUp: https://app.clickup.com/t/86c0abc\n"


def mirror(gh: GitHubFake, cu: ClickUpFake, tmp: Path, **inputs: str) -> ActionRun:
    gh.edit_issue("o/r", 1, body=LINKED)
    payload = {
        "action": "edited",
        "issue": gh._issue_json(gh.issue("o/r", 1)),
        "changes": {"body": {"from": SEED_BLOCK}},
        "sender": {"login": "ariel", "type": "User"},
        "repository": {"full_name": "o/r"},
    }
    inputs = {"clickup-token": cu.token, "clickup-api-url": cu.url, **inputs}
    return run_action(tmp, gh.url, "issues", payload, inputs=inputs, extra_env=NOW)


def test_clickup_names_the_near_miss_of_its_field_and_mirror_field(
    gh: GitHubFake, tmp_path: Path
) -> None:
    with ClickUpFake() as cu:
        cu.add_field("901", "AI Context", field_id="f-near")
        cu.add_task("Booking", task_id="86c0abc")
        result = mirror(gh, cu, tmp_path)
    assert result.code == 0, result.text
    assert "'AI Context'" in result.summary and "mirror.field: AI Context" in result.summary


def test_a_wrong_clickup_team_id_is_reported(gh: GitHubFake, tmp_path: Path) -> None:
    with ClickUpFake(team_id="9000") as cu:
        cu.add_field("901", "ai_context", field_id="f-ai")
        cu.add_task("Booking", task_id="86c0abc")
        result = mirror(gh, cu, tmp_path, **{"clickup-team-id": "1234"})
    assert result.code == 2
    assert (
        "clickup-team-id is 1234" in result.stdout
        and "set clickup-team-id to 9000" in result.stdout
    )
