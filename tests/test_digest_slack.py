"""The Slack digest, validated with slack_sdk's Block Kit models: limits, Stuck first, headings
repeated in continuation messages, a link to the digest comment, owners mentioned."""

from __future__ import annotations

from typing import Any

import pytest
from slack_sdk.models.blocks import Block

from ai_context.rules.digest.build import build_digest
from ai_context.rules.digest.slack import SLACK_BLOCKS_LIMIT, slack_messages
from tests.conftest import BUNDLED
from tests.digest_samples import NOW, block, issue, sample_issues, sample_previous

COMMENT = "https://github.com/acme/shop/issues/9#issuecomment-1"


def valid(messages: list[dict[str, Any]]) -> list[str]:
    """Every block parsed and validated by slack_sdk, unchanged by the round trip; the texts."""
    texts = []
    for message in messages:
        assert message["text"] and len(message["blocks"]) <= SLACK_BLOCKS_LIMIT
        for raw in message["blocks"]:
            model = Block.parse(raw)
            assert model is not None, raw
            model.validate_json()  # raises SlackObjectFormationError past a limit
            assert model.to_dict() == raw, raw  # no field slack_sdk does not know
            text = raw.get("text", {}).get("text") or raw["elements"][0]["text"]
            texts.append(text)
    return texts


def test_the_sample_digest_is_valid_block_kit_with_stuck_first() -> None:
    digest = build_digest(sample_issues(), NOW, previous=sample_previous())
    texts = valid(slack_messages(digest, BUNDLED, comment_url=COMMENT))
    joined = "\n".join(texts)
    assert joined.index("*Stuck*") < joined.index("*In review*") < joined.index("*Shipped*")
    assert f"<{COMMENT}|The digest on GitHub>" in joined
    assert "🔴 *Stuck* (3) +1" in joined  # its colour, the count and its change


def test_code_spans_are_code_and_text_cannot_ping() -> None:
    item = issue(
        30,
        "Fix | pipes <!channel> {{7*7}} `a|b`",
        block(blockers=("`staging` is down",), next_step="Run `make test`"),
    )
    texts = valid(slack_messages(build_digest([item], NOW), BUNDLED))
    joined = "\n".join(texts)
    assert "`staging`" in joined and "&lt;!channel&gt;" in joined and "{{7*7}}" in joined
    assert "<!channel>" not in joined


def test_stuck_tasks_mention_their_owner() -> None:
    digest = build_digest(sample_issues(), NOW)
    texts = valid(slack_messages(digest, BUNDLED, mentions={"cc-omer-laptop": "U024BE7LH"}))
    stuck = [t for t in texts if "SSO login" in t]
    assert stuck and all("<@U024BE7LH>" in t for t in stuck)
    assert sum(t.count("<@U024BE7LH>") for t in texts) == 1  # #12 is not stuck: no mention


@pytest.mark.parametrize("count", [300, 1000])
def test_continuation_messages_repeat_their_heading(count: int) -> None:
    issues = [
        issue(n, f"Stuck task number {n} " + "t" * 80, block(blockers=("waiting on " + "x" * 60,)))
        for n in range(1, count + 1)
    ]
    messages = slack_messages(build_digest(issues, NOW), BUNDLED)
    assert len(messages) > 1
    texts = valid(messages)
    assert sum(t.count("Stuck task number") for t in texts) == count  # every task, once
    for message in messages[1:]:
        first = message["blocks"][1]["text"]["text"]
        assert first.startswith("🔴 *Stuck* (") and "_(continued)_" in first
