"""The Slack fake answers like an incoming webhook: `ok`, or a plain-text error code."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from tests.fakes import SlackFake


@pytest.fixture
def slack() -> Iterator[SlackFake]:
    with SlackFake() as fake:
        yield fake


def post(fake: SlackFake, payload: Any, url: str | None = None) -> requests.Response:
    return requests.post(url or fake.webhook_url, json=payload, timeout=10)


def section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def test_accepts_and_records_a_message(slack: SlackFake) -> None:
    payload = {"text": "Daily digest", "blocks": [section("*Shipped*: 3")]}

    answer = post(slack, payload)

    assert (answer.status_code, answer.text) == (200, "ok")
    assert answer.headers["content-type"].startswith("text/plain")
    assert slack.messages == [payload]
    assert slack.webhook_url.startswith(slack.root + "/services/")


def test_unknown_webhook_is_no_service(slack: SlackFake) -> None:
    answer = post(slack, {"text": "x"}, url=slack.root + "/services/T1/B1/wrong")
    assert (answer.status_code, answer.text) == (404, "no_service")
    assert slack.messages == []


def test_block_kit_limits(slack: SlackFake) -> None:
    assert post(slack, {"blocks": [section("x" * 3000)] * 50}).text == "ok"

    too_many = post(slack, {"text": "t", "blocks": [section("x")] * 51})
    assert (too_many.status_code, too_many.text) == (400, "invalid_blocks")
    too_long = post(slack, {"text": "t", "blocks": [section("x" * 3001)]})
    assert (too_long.status_code, too_long.text) == (400, "invalid_blocks")
    untyped = post(slack, {"text": "t", "blocks": [{"text": "no type"}]})
    assert untyped.text == "invalid_blocks"
    header = {"type": "header", "text": {"type": "plain_text", "text": "h" * 151}}
    assert post(slack, {"blocks": [header]}).text == "invalid_blocks"
    assert post(slack, {"text": ""}).text == "no_text"
    assert len(slack.messages) == 1
    assert [reason for reason, _ in slack.rejected][:2] == [
        "blocks must be a list of at most 50",
        "block 0: section text longer than 3000",
    ]


def test_scripted_failures(slack: SlackFake) -> None:
    slack.fail_next(status=410, body="channel_is_archived")
    archived = post(slack, {"text": "x"})
    assert (archived.status_code, archived.text) == (410, "channel_is_archived")

    slack.fail_next(status=404, times=None)  # a deleted webhook, until cleared
    assert [post(slack, {"text": "x"}).text for _ in range(2)] == ["no_service"] * 2
    slack.clear_faults()
    assert post(slack, {"text": "x"}).text == "ok"
    assert slack.count("POST") == 4


def test_rate_limits(slack: SlackFake) -> None:
    slack.rate_limit_next(retry_after=2)
    limited = post(slack, {"text": "x"})
    assert (limited.status_code, limited.headers["Retry-After"]) == (429, "2")

    with SlackFake(min_interval=0.3) as paced:
        assert post(paced, {"text": "1"}).status_code == 200
        too_soon = post(paced, {"text": "2"})
        assert too_soon.status_code == 429 and too_soon.headers["Retry-After"] == "1"
        time.sleep(0.3)
        assert post(paced, {"text": "3"}).status_code == 200
        assert [m["text"] for m in paced.messages] == ["1", "3"]
