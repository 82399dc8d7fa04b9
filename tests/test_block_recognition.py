"""Block recognition as GitHub shows it (issue 15 item 10): a byte order mark, zero-width
characters in the title and a setext heading are still the block, so `save` replaces it instead
of adding a second visible block on top; a block inside an HTML comment is hidden, so it is no
block, and the text around it is kept byte for byte."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai_context.core.block.locate import find
from ai_context.core.block.model import Block
from ai_context.core.block.parse import parse
from ai_context.core.block.render import render, replace_block
from tests.conftest import SEED_BLOCK

HEADING = "## AI Context (updated by Claude — do not edit manually)"
SEED = parse(SEED_BLOCK).block
OTHER = Block(actor="cc-noa-desktop", phase="planning", next_step="Plan it")
HUMAN = "\nHuman text stays.\n"

VISIBLE = {
    "byte order mark": "\ufeff" + SEED_BLOCK,
    "zero-width space in the title": SEED_BLOCK.replace("AI Context", "AI\u200b Con\u200dtext", 1),
    "zero-width characters around the title": SEED_BLOCK.replace(
        HEADING, "## \u2060AI Context\u200b (updated)", 1
    ),
    "setext heading": SEED_BLOCK.replace(HEADING, "AI Context\n----------", 1),
    "setext heading after a marker": SEED_BLOCK.replace(
        HEADING, "<!-- ai-context:begin v=1 sha256=00 -->\nAI Context\n---", 1
    ),
    "byte order mark and setext": "\ufeff" + SEED_BLOCK.replace(HEADING, "AI Context\n---", 1),
}


@pytest.mark.parametrize("name", VISIBLE)
def test_a_visible_variant_is_the_block(name: str) -> None:
    body = VISIBLE[name] + HUMAN
    parsed = parse(body)
    assert parsed.block == SEED
    assert len(find(body)) == 1
    assert not {"AIC101", "AIC102"} & {f.code for f in parsed.findings}


@pytest.mark.parametrize("name", VISIBLE)
def test_replacing_a_visible_variant_leaves_one_block(name: str) -> None:
    body = VISIBLE[name] + HUMAN
    result = replace_block(body, OTHER)
    assert len(find(result)) == 1
    assert parse(result).block == OTHER
    assert result.endswith(HUMAN)
    assert result.startswith("\ufeff") == body.startswith("\ufeff")
    assert result.count("AI Context") == 1


def test_a_byte_order_mark_stays_first_when_a_block_is_inserted() -> None:
    body = "\ufeffJust a description.\n"
    result = replace_block(body, OTHER)
    assert result.startswith("\ufeff<!-- ai-context:begin")
    assert result.endswith("\n\nJust a description.\n")
    assert find(result)[0].start == 1


def test_a_setext_heading_needs_a_paragraph_start() -> None:
    """`Intro\\nAI Context\\n---` is one paragraph turned heading: "Intro AI Context"."""
    assert find("Intro line\nAI Context\n---\n- **Phase:** x\n") == []
    assert find("AI Contextual notes\n---\n") == []


HIDDEN = {
    "comment around the block": "<!--\n" + SEED_BLOCK + "-->\n",
    "comment opened after text": "Intro.\n\n<!-- old state, kept for reference\n"
    + SEED_BLOCK
    + "\n-->\n",
    "comment never closed": "<!--\n" + SEED_BLOCK,
    "indented comment": "   <!-- \n" + SEED_BLOCK + "  -->",
}


@pytest.mark.parametrize("name", HIDDEN)
def test_a_block_inside_an_html_comment_is_no_block(name: str) -> None:
    body = HIDDEN[name] + HUMAN
    parsed = parse(body)
    assert parsed.block is None and [f.code for f in parsed.findings] == ["AIC101"]
    result = replace_block(body, OTHER)
    assert result.endswith("\n\n" + body)  # the hidden text is kept byte for byte
    assert len(find(result)) == 1 and parse(result).block == OTHER


def test_one_line_comments_hide_nothing() -> None:
    body = "<!-- a note -->\n<!-->\n" + render(SEED, markers=True) if SEED else ""
    assert parse(body).block == SEED


def test_a_comment_opened_inside_the_block_ends_it() -> None:
    body = SEED_BLOCK + "\n<!--\n## AI Context\n- **Phase:** hidden\n-->\n" + HUMAN
    parsed = parse(body)
    assert parsed.block == SEED and len(find(body)) == 1
    result = replace_block(body, OTHER)
    assert result.endswith("<!--\n## AI Context\n- **Phase:** hidden\n-->\n" + HUMAN)


def test_a_block_after_a_closed_comment_is_found() -> None:
    body = "<!--\nhidden\n-->\n\n" + SEED_BLOCK
    assert parse(body).block == SEED


def test_a_comment_inside_a_fence_hides_nothing() -> None:
    body = "```\n<!--\n```\n\n" + SEED_BLOCK
    assert parse(body).block == SEED


hostile = st.lists(
    st.sampled_from(
        [
            *("<!--", "-->", "\u200b", "\ufeff", "AI Context", "## AI Context", "---", "```"),
            *("\n", " ", "x", "-", "#", ":", "*"),
        ]
    ),
    max_size=120,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(hostile)
def test_recognition_never_raises_and_replace_keeps_one_visible_block(body: str) -> None:
    parse(body)
    result = replace_block(body, OTHER)
    assert parse(result).block == OTHER


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0xDC80, max_codepoint=0xDCFF), max_size=5))
def test_parse_never_raises_on_undecoded_bytes(junk: str) -> None:
    """Bytes that were not UTF-8, read with surrogateescape, inside a marked block: the hash
    is defined for them, so parse (which checks it) never raises."""
    assert SEED is not None
    body = render(SEED, markers=True).replace("Finish", "Fin" + junk + "ish") + junk
    parsed = parse(body)
    assert parsed.block is not None and parsed.marker is not None
