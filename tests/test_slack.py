"""The Slack webhook adapter against `responses` (HTTP level): answers, retries, pacing, secrecy."""

from __future__ import annotations

import json

import pytest
import requests
import responses
from urllib3.exceptions import ProtocolError

from ai_context.adapters.slack import REMEDIES, SlackWebhook

URL = "https://hooks.slack.com/services/T000/B000/SECRETSECRET"
MESSAGES = [{"text": f"m{i}", "blocks": []} for i in range(3)]


class FakeTime:
    """A clock that only moves when the code under test sleeps."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 3))
        self.now += seconds


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


def post(fake_time: FakeTime, messages: list[dict[str, object]] = MESSAGES, **options: object):  # type: ignore[no-untyped-def]
    hook = SlackWebhook(URL, sleep=fake_time.sleep, clock=fake_time.clock, **options)  # type: ignore[arg-type]
    return hook.post(messages)


@responses.activate
def test_ok_sends_every_message_in_order_at_most_one_a_second(fake_time: FakeTime) -> None:
    responses.post(URL, body="ok")
    result = post(fake_time)
    assert result.ok and (result.sent, result.total, result.calls) == (3, 3, 3)
    assert [json.loads(c.request.body)["text"] for c in responses.calls] == ["m0", "m1", "m2"]
    assert responses.calls[0].request.headers["Content-Type"] == "application/json"
    assert fake_time.sleeps == [1.0, 1.0]  # nothing before the first, a second before each next


@responses.activate
def test_no_pause_when_a_second_has_already_passed(fake_time: FakeTime) -> None:
    def slow_ok(request: requests.PreparedRequest) -> tuple[int, dict[str, str], str]:
        fake_time.now += 1.5
        return 200, {}, "ok"

    responses.add_callback(responses.POST, URL, callback=slow_ok)
    assert post(fake_time).ok
    assert fake_time.sleeps == []


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (404, "no_service"),
        (410, "channel_is_archived"),
        (400, "invalid_blocks"),
        (403, "action_prohibited"),
        (200, "invalid_payload"),
    ],
)
@responses.activate
def test_slack_errors_fail_at_once_with_slacks_text(
    fake_time: FakeTime, status: int, body: str
) -> None:
    responses.post(URL, status=status, body=body)
    result = post(fake_time)
    assert not result.ok
    assert (result.sent, result.calls) == (0, 1)
    # Slack's own text, then what to do about it.
    assert result.error == f"Slack message 1 of 3: HTTP {status} {body}: {REMEDIES[body]}"


@responses.activate
def test_a_failure_midway_stops_and_counts_what_was_sent(fake_time: FakeTime) -> None:
    responses.post(URL, body="ok")
    responses.post(URL, status=410, body="channel_is_archived")
    result = post(fake_time)
    assert (result.sent, result.total, result.calls) == (1, 3, 2)
    assert result.error is not None and result.error.startswith("Slack message 2 of 3: HTTP 410")


@responses.activate
def test_429_honours_retry_after_then_succeeds(fake_time: FakeTime) -> None:
    responses.post(URL, status=429, body="rate_limited", headers={"Retry-After": "7"})
    responses.post(URL, body="ok")
    result = post(fake_time, MESSAGES[:1])
    assert result.ok and result.calls == 2
    assert fake_time.sleeps == [7.0]


@responses.activate
def test_429_retries_are_bounded(fake_time: FakeTime) -> None:
    responses.post(URL, status=429, body="rate_limited", headers={"Retry-After": "2"})
    result = post(fake_time, MESSAGES[:1], max_attempts=3)
    assert not result.ok and result.calls == 3
    assert result.error == (
        "Slack message 1 of 1 after 3 attempts: HTTP 429 rate_limited: Slack asked to wait: "
        "run again in a minute"
    )


@responses.activate
def test_a_retry_after_longer_than_max_wait_fails_without_waiting(fake_time: FakeTime) -> None:
    responses.post(URL, status=429, body="rate_limited", headers={"Retry-After": "3600"})
    result = post(fake_time, MESSAGES[:1], max_wait=60)
    assert not result.ok and result.calls == 1 and fake_time.sleeps == []
    assert "asked to wait 3600s" in (result.error or "")


@responses.activate
def test_503_is_retried_with_backoff(fake_time: FakeTime) -> None:
    responses.post(URL, status=503, body="service_unavailable")
    responses.post(URL, status=503, body="service_unavailable")
    responses.post(URL, body="ok")
    result = post(fake_time, MESSAGES[:1], backoff=2.0)
    assert result.ok and result.calls == 3
    assert fake_time.sleeps == [2.0, 4.0]


@pytest.mark.parametrize("status", [500, 502, 504])
@responses.activate
def test_other_5xx_may_have_posted_so_are_not_retried_by_default(
    fake_time: FakeTime, status: int
) -> None:
    responses.post(URL, status=status, body="internal_error")
    result = post(fake_time, MESSAGES[:1])
    assert not result.ok and result.calls == 1
    assert "may have been posted" in (result.error or "")


def test_a_refused_connection_is_retried_then_fails_clearly(fake_time: FakeTime) -> None:
    """On real sockets (urllib3 under requests): nothing listens on the discard port, so no
    request ever went out, and each attempt is retried."""
    hook = SlackWebhook(
        "http://127.0.0.1:9/services/T/B/SECRET", sleep=fake_time.sleep, max_attempts=2
    )
    result = hook.post(MESSAGES[:1])
    assert not result.ok and result.calls == 2
    assert result.error == "Slack message 1 of 1 after 2 attempts: connecting to 127.0.0.1 failed"
    assert fake_time.sleeps == [2.0]


@responses.activate
def test_a_read_timeout_may_have_posted_so_is_not_retried(fake_time: FakeTime) -> None:
    responses.post(URL, body=requests.exceptions.ReadTimeout("read timed out " + URL))
    result = post(fake_time, MESSAGES[:1])
    assert not result.ok and result.calls == 1
    assert "did not answer within 15s" in (result.error or "")
    assert "may have been posted" in (result.error or "")


@responses.activate
def test_a_connection_dropped_after_sending_is_not_retried(fake_time: FakeTime) -> None:
    dropped = requests.exceptions.ConnectionError(ProtocolError("Connection aborted.", URL))
    responses.post(URL, body=dropped)
    result = post(fake_time, MESSAGES[:1])
    assert not result.ok and result.calls == 1
    assert "broke after sending" in (result.error or "")


@responses.activate
def test_the_webhook_url_never_shows(fake_time: FakeTime) -> None:
    hook = SlackWebhook(URL, sleep=fake_time.sleep, clock=fake_time.clock)
    assert "SECRET" not in repr(hook) and "SECRET" not in str(hook)
    assert "hooks.slack.com" in repr(hook)
    responses.post(URL, body=requests.exceptions.ReadTimeout("timed out: " + URL))
    result = hook.post(MESSAGES[:1])
    assert "SECRET" not in repr(result) and "SECRET" not in (result.error or "")


@pytest.mark.parametrize("bad", ["", "hooks.slack.com/services/x", "ftp://x/y", "https://"])
def test_a_bad_webhook_url_is_refused_without_echoing_it(bad: str) -> None:
    with pytest.raises(ValueError, match="URL is not an http") as caught:
        SlackWebhook(bad)
    assert "services/x" not in str(caught.value)


def test_no_messages_means_no_calls(fake_time: FakeTime) -> None:
    result = post(fake_time, [])
    assert result.ok and result.calls == 0


@responses.activate
def test_a_retry_after_given_as_an_http_date_is_honoured(fake_time: FakeTime) -> None:
    from datetime import UTC, datetime, timedelta
    from email.utils import format_datetime

    when = format_datetime(datetime.now(UTC) + timedelta(hours=1), usegmt=True)
    responses.post(URL, status=429, body="rate_limited", headers={"Retry-After": when})
    result = post(fake_time, MESSAGES[:1], max_wait=60)
    assert not result.ok and result.calls == 1 and fake_time.sleeps == []
    assert "asked to wait 3" in (result.error or "")  # about 3600s, not the backoff
