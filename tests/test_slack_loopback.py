"""The digest's Slack messages through the adapter to the loopback Slack fake (real HTTP)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ai_context.adapters.slack import SlackWebhook
from ai_context.rules.digest.build import build_digest
from ai_context.rules.digest.slack import slack_messages
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
    result = SlackWebhook(slack.webhook_url, sleep=clock.sleep, clock=clock.clock).post(messages)
    assert result.ok and result.sent == len(messages) > 1
    assert slack.messages == messages and slack.rejected == []
    assert clock.sleeps == [1.0] * (len(messages) - 1)


def test_an_archived_channel_fails_clearly(slack: SlackFake) -> None:
    slack.fail_next("POST", status=410)
    clock = FakeTime()
    hook = SlackWebhook(slack.webhook_url, sleep=clock.sleep, clock=clock.clock)
    result = hook.post(big_digest_messages())
    assert not result.ok and result.sent == 0 and result.calls == 1
    assert result.error is not None and "HTTP 410 channel_is_archived" in result.error
    assert slack.webhook_path not in result.error


def test_rate_limited_then_delivered(slack: SlackFake) -> None:
    slack.rate_limit_next(retry_after=3)
    clock = FakeTime()
    hook = SlackWebhook(slack.webhook_url, sleep=clock.sleep, clock=clock.clock)
    result = hook.post([{"text": "hi"}])
    assert result.ok and result.calls == 2 and clock.sleeps == [3.0]
    assert slack.messages == [{"text": "hi"}]


@pytest.mark.parametrize(("status", "delay"), [(200, 1.0), (500, 0.0), (502, 0.0)])
def test_a_post_that_may_have_landed_is_sent_once(
    slack: SlackFake, status: int, delay: float
) -> None:
    """The no-duplicate rule through urllib3's retries: an answer that came too late (a read
    timeout) or a 5xx other than 503 leaves the POST at one request."""
    slack.fail_next("POST", status=status, delay=delay)
    clock = FakeTime()
    hook = SlackWebhook(slack.webhook_url, sleep=clock.sleep, clock=clock.clock, timeout=(2, 0.3))
    result = hook.post([{"text": "hi"}])
    assert not result.ok and result.calls == 1 and clock.sleeps == []
    assert "may have been posted" in (result.error or "")
    assert slack.count("POST") == 1


def test_a_503_is_retried_until_delivered(slack: SlackFake) -> None:
    slack.fail_next("POST", status=503, times=2)
    clock = FakeTime()
    result = SlackWebhook(slack.webhook_url, sleep=clock.sleep, clock=clock.clock).post(
        [{"text": "hi"}]
    )
    assert result.ok and result.calls == 3 and clock.sleeps == [2.0, 4.0]
    assert slack.messages == [{"text": "hi"}] and slack.count("POST") == 3
