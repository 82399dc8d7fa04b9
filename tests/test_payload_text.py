"""Text from outside (a push's file names, labels, titles) reaches a comment, Slack and ClickUp
without NUL, control characters or lone surrogates: markdown.strip_controls on the sticky
comment's body and on every template's output."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai_context.core.block.parse import parse
from ai_context.core.events import Commit
from ai_context.core.markdown import REPLACEMENT, strip_controls
from ai_context.core.models import Issue
from ai_context.rules.digest.build import build_digest
from ai_context.rules.digest.render import render_markdown
from ai_context.rules.digest.slack import slack_messages
from ai_context.rules.gitlog.compare import files_drift
from ai_context.rules.mirror.text import mirror_text
from ai_context.rules.sticky import render_findings
from tests.conftest import BUNDLED, SEED_BLOCK
from tests.fakes import GitHubFake
from tests.test_action_e2e import BOT, T0, TOKEN, push_payload, run

ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=60)
BAD = {chr(c) for c in [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)]}


def clean(text: str) -> bool:
    """No control character but tab and newline, no surrogate; encodes as UTF-8."""
    text.encode("utf-8")  # raises on a lone surrogate
    return not (BAD & set(text))


@settings(max_examples=500, deadline=None)
@given(text=ANY_TEXT)
def test_strip_controls_leaves_only_what_any_sink_takes(text: str) -> None:
    out = strip_controls(text)
    assert clean(out)
    assert strip_controls(out) == out
    kept = [c for c in text if c not in BAD]
    assert out == "".join(REPLACEMENT if "\ud800" <= c <= "\udfff" else c for c in kept)


def test_strip_controls_keeps_tab_newline_and_everything_printable() -> None:
    text = "tab\there\nnext line: é 漢字 🎉 \u2028 `code` <b>"
    assert strip_controls(text) is text
    assert strip_controls("a\x00b\x1b[31mc\r\n\x85d\ud800") == "ab[31mc\nd" + REPLACEMENT


def test_every_code_point_is_kept_stripped_or_replaced_as_the_rule_says() -> None:
    """Each of the 1,114,112 code points alone, the edges of every range included."""
    for point in range(0x110000):
        c = chr(point)
        expected = REPLACEMENT if 0xD800 <= point <= 0xDFFF else "" if c in BAD else c
        assert strip_controls(c) == expected, hex(point)


BLOCK = parse(SEED_BLOCK).block
assert BLOCK is not None


@settings(max_examples=200, deadline=None)
@given(names=st.lists(ANY_TEXT.filter(bool), min_size=1, max_size=5))
def test_file_names_from_a_push_reach_the_sticky_comment_clean(names: list[str]) -> None:
    commit = Commit(sha="a" * 40, message="x", timestamp=T0, added=tuple(names))
    assert BLOCK is not None
    findings = files_drift(12, BLOCK, [commit])
    body = render_findings(findings)
    assert clean(body)


def issue(title: str, label: str) -> Issue:
    return Issue(
        number=4,
        title=title,
        body=SEED_BLOCK.replace("Finish unit tests", title),
        labels=("in-progress", label),
        repository="o/r",
        html_url="https://github.com/o/r/issues/4",
        updated_at=T0,
    )


@settings(max_examples=50, deadline=None)
@given(title=ANY_TEXT, label=ANY_TEXT)
def test_titles_and_labels_reach_the_digest_slack_and_clickup_clean(title: str, label: str) -> None:
    item = issue(title, label)
    digest = build_digest([item], datetime(2026, 5, 27, 9, 0, tzinfo=UTC))
    assert clean(render_markdown(digest, BUNDLED))
    assert clean(json.dumps(slack_messages(digest, BUNDLED), ensure_ascii=False))
    assert BLOCK is not None
    assert clean(mirror_text(item, parse(item.body).block or BLOCK, BUNDLED))


# --- end to end: the push payload of the report -----------------------------------------------


@pytest.fixture
def gh() -> Iterator[GitHubFake]:
    with GitHubFake(token=TOKEN, now=T0) as fake:
        fake.add_repo("o/r")
        yield fake


def test_a_push_with_nul_controls_and_surrogates_in_file_names_posts_a_clean_comment(
    gh: GitHubFake, tmp_path: Path
) -> None:
    gh.add_issue("o/r", "Behind", SEED_BLOCK, number=7)
    payload: dict[str, Any] = push_payload(
        (
            "Wire booking service\n\nRefs #7",
            "2026-05-26T17:45:00Z",
            ["apps/\x00nul.ts", "apps/\x1b[31mred.ts", "apps/\ud800lone.ts", "apps/\x7fdel\r.ts"],
        ),
    )
    result = run(
        gh,
        tmp_path,
        "push",
        copy.deepcopy(payload),
        extra_env={"AI_CONTEXT_NOW": "2026-05-26T18:05:00Z"},
    )
    assert result.code == 0, result.stdout + result.stderr
    posted = [json.loads(r.body)["body"] for r in gh.requests if r.method in ("POST", "PATCH")]
    assert posted and all(clean(body) for body in posted)
    [comment] = [c for c in gh.comments("o/r", 7) if c.user == BOT]
    assert "AIC502" in comment.body
    assert "apps/nul.ts" in comment.body and "apps/" + REPLACEMENT + "lone.ts" in comment.body
