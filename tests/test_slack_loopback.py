"""The digest's Slack messages through the adapter to the loopback Slack fake (real HTTP)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ai_context.adapters.slack import post_messages
from ai_context.rules.digest import build_digest
from ai_context.rules.digest_slack import slack_messages
from tests.conftest import BUNDLED
from tests.digest_samples import NOW, block, issue
from tests.fakes import SlackFake
from tests.test_slack import FakeTime


@pytest.fixture
def slack() -> Iterator[SlackFake]:
    with SlackFake() as fake:
        yield fake


def big_digest_messages() -> list[dict[str, object]]:
    issues = [
        issue(n, f"<!channel> task {n} " + "t" * 200, block(hours_ago=n % 40))
        for n in range(1, 501)
    ]
    return slack_messages(build_digest(issues, NOW), BUNDLED)


def test_a_500_task_digest_is_accepted_whole(slack: SlackFake) -> None:
    messages = big_digest_messages()
    clock = FakeTime()
    result = post_messages(slack.webhook_url, messages, sleep=clock.sleep, clock=clock.clock)
    assert result.ok and result.sent == len(messages) > 1
    assert slack.messages == messages and slack.rejected == []
    assert clock.sleeps == [1.0] * (len(messages) - 1)


def test_an_archived_channel_fails_clearly(slack: SlackFake) -> None:
    slack.fail_next("POST", status=410)
    clock = FakeTime()
    result = post_messages(
        slack.webhook_url, big_digest_messages(), sleep=clock.sleep, clock=clock.clock
    )
    assert not result.ok and result.sent == 0 and result.calls == 1
    assert result.error is not None and "HTTP 410 channel_is_archived" in result.error
    assert slack.webhook_path not in result.error


def test_rate_limited_then_delivered(slack: SlackFake) -> None:
    slack.rate_limit_next(retry_after=3)
    clock = FakeTime()
    result = post_messages(
        slack.webhook_url, [{"text": "hi"}], sleep=clock.sleep, clock=clock.clock
    )
    assert result.ok and result.calls == 2 and clock.sleeps == [3.0]
    assert slack.messages == [{"text": "hi"}]
