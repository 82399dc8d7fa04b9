"""The block locator against GitHub's renderer: cmark-gfm (`cmarkgfm`, with `data-sourcepos`)
says which AI Context headings a body shows and where; the locator must find a block at each
one GitHub shows at the top level, and nowhere else (issue 22, row 11).

Deliberate differences, each stated by a test here: a heading GitHub shows inside a block quote
or a list item is not the block (a quotation, or part of the item; AIC107 says so when the body
has no block); a deeper AI Context heading inside a block is one of the block's lines. Out of the
generated bodies, as cmark-gfm's extensions that cannot move a heading: inline markup in the
title, footnotes, link reference definitions over more than one line, a lone carriage return.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import NamedTuple

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ai_context.core.block.locate import BOM, _quick_titles, _scanned_titles, find, nested_titles
from ai_context.core.block.parse import parse
from ai_context.core.block.render import replace_block
from ai_context.core.block.structure import titles
from tests.conftest import SEED_BLOCK

_ZERO_WIDTH = re.compile("[\u200b\u200c\u200d\u2060\ufeff]")
_TITLE = re.compile(r"(?i)ai context(?![A-Za-z0-9])")


class Shown(NamedTuple):
    """An AI Context heading GitHub shows: its lines (0-based, first and last) and container."""

    first: int
    last: int
    container: str  # "", "block quote" or "list item"


class _Headings(HTMLParser):
    """The h1-h6 elements of cmark-gfm's HTML, with their source lines and containers."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.current: list[object] | None = None
        self.found: list[tuple[int, str, list[str], str]] = []

    VOID = ("br", "hr", "img", "input")  # no end tag (`<hr />` closes nothing else)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.current = [int(tag[1]), dict(attrs)["data-sourcepos"], list(self.open), ""]
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.VOID:
            return
        while self.open and self.open.pop() != tag:
            pass
        if self.current is not None and tag == f"h{self.current[0]}":
            level, where, around, text = self.current
            self.found.append((level, where, around, text))  # type: ignore[arg-type]
            self.current = None

    def handle_data(self, data: str) -> None:
        if self.current is not None:
            self.current[3] = str(self.current[3]) + data


def github(body: str) -> list[Shown]:
    """The AI Context headings (levels 2-4) cmark-gfm renders for BODY."""
    page = _Headings()
    page.feed(cmarkgfm.github_flavored_markdown_to_html(body, options=Options.CMARK_OPT_SOURCEPOS))
    page.close()
    shown = []
    for level, where, around, text in page.found:
        if 2 <= level <= 4 and _TITLE.match(_ZERO_WIDTH.sub("", text)):
            first, last = (int(end.split(":")[0]) - 1 for end in where.split("-"))
            container = "list item" if "li" in around else ""
            container = "block quote" if "blockquote" in around else container
            shown.append(Shown(first, last, container))
    return shown


def _lines(body: str) -> list[str]:
    body = body.removeprefix(BOM)
    return [text.removesuffix("\r") for text in body.split("\n")]


def assert_agrees(body: str) -> None:
    """The scanner, the locator and its quick path all agree with GitHub on BODY."""
    shown = github(body)
    scanned = titles(_lines(body))
    assert len(scanned) == len(shown), f"GitHub shows {shown}; the scanner {scanned}"
    for title, at in zip(scanned, shown, strict=True):
        assert title.container == at.container and at.first <= title.line <= at.last

    regions, covered = iter(find(body)), list[tuple[int, int]]()
    for at in (s for s in shown if not s.container):
        if any(first < at.first <= last for first, last in covered):
            continue  # a deeper heading inside the block before it: one of its lines
        region = next(regions, None)
        assert region is not None, f"GitHub shows a heading on line {at.first + 1}; no block"
        assert at.first <= region.heading.number - 1 <= at.last
        end = body.removeprefix(BOM)[: region.end - len(BOM) * body.startswith(BOM)]
        covered.append((region.heading.number - 1, end.count("\n")))
    assert next(regions, None) is None, "a block where GitHub shows no heading"

    nested = nested_titles(body)
    assert [(n - 1, c) for n, c in nested] == [
        (t.line, t.container) for t in scanned if t.container
    ]
    quick = _quick_titles(body.removeprefix(BOM))
    if quick is not None:
        assert quick == _scanned_titles(body.removeprefix(BOM))


# --- the three cases of the issue -----------------------------------------------------------

QUOTED = "Quoting the old state:\n\n> ## AI Context\n> - **Phase:** planning\n\nMore text.\n"
IN_DIV = "<div>\n## AI Context\n- **Phase:** planning\n</div>\n"
AFTER_BACKTICK_INFO = "``` not`a fence\n\n## AI Context\n- **Phase:** planning\n"


def test_a_heading_in_a_block_quote_is_a_quotation_and_said_so() -> None:
    """GitHub shows a heading inside the quote; it is quoted text, so it is not the block (a
    "Quote reply" of an old or foreign block must not steer the tools), and AIC107 says why
    there is no block."""
    assert github(QUOTED) == [Shown(2, 2, "block quote")]
    parsed = parse(QUOTED)
    assert parsed.block is None
    assert [(f.code, f.line) for f in parsed.findings] == [("AIC101", None), ("AIC107", 3)]
    assert "inside a block quote" in parsed.findings[1].message
    result = replace_block(QUOTED, parse(SEED_BLOCK).block)  # type: ignore[arg-type]
    assert result.endswith("\n\n" + QUOTED)  # the quotation is kept as it is


def test_a_heading_inside_an_html_block_is_no_block() -> None:
    """`<div>` opens an HTML block that runs to the next blank line: GitHub shows the lines as
    raw text, so there is no block, and save inserts one without touching them."""
    assert github(IN_DIV) == []
    assert find(IN_DIV) == []
    result = replace_block(IN_DIV, parse(SEED_BLOCK).block)  # type: ignore[arg-type]
    assert result.endswith("\n\n" + IN_DIV) and len(find(result)) == 1


def test_a_backtick_in_the_info_string_opens_no_fence() -> None:
    """A backtick fence's info string may not hold a backtick (CommonMark), so the line is
    text and the heading after it is shown, and is the block."""
    assert github(AFTER_BACKTICK_INFO) == [Shown(2, 2, "")]
    parsed = parse(AFTER_BACKTICK_INFO)
    assert parsed.block is not None and parsed.block.phase == "planning"
    assert parsed.region is not None and parsed.region.heading.number == 3


def test_a_block_ends_where_raw_html_starts() -> None:
    """A `</details>` under the block is an HTML block GitHub shows as raw HTML, not a field."""
    body = "<details>\n\n## AI Context\n- **Phase:** planning\n</details>\n"
    parsed = parse(body)
    assert parsed.block is not None and not parsed.dropped
    assert parsed.region is not None and body[parsed.region.end :] == "\n</details>\n"


# --- cases the differential test found, kept as examples --------------------------------------

FOUND = {
    "setext title inside a quote": "> AI Context\n> ---\n",
    "heading after a rule in a quote": " > ---\n > ## AI Context",
    "setext title continuing a quoted paragraph": "> a\nAI Context\n---\n",
    "setext title of two lines": "AI Context\nmore\n---\n",
    "setext title after link references": "[a]: /u\nAI Context\n---\n",
    "underline under link references only": "[a]: /u\n---\n<span>\n## AI Context\n",
    "type 7 tag ending a quote a lazy line would continue": "> x\n<span>\n## AI Context\n",
    "type 7 tag continuing a paragraph": "x\n<span>\n## AI Context\n",
    "type 7 tag after a blank line": "x\n\n<span>\n## AI Context\n",
    "heading in a list item's second paragraph": "- item\n\n  ## AI Context\n",
    "empty list item ended by a blank line": "-\n\n  ## AI Context\n",
    "blank line of spaces in an empty item": "-\n   \n  ## AI Context\n",
    "fence in a list item ended by the heading": "- a\n  ```\n## AI Context\n",
    "fence in a list item hiding the heading": "- a\n  ```\n  ## AI Context\n",
    "ordered list after a table": "x\n\x0c---\n10. ## AI Context\n",
    "vertical tab is no list marker's space": "-\x0b\n2) ## AI Context\n",
    "tab stops": "-\tx\n\n\t## AI Context\n",
    "indented code in a list item": "- a\n\n      ## AI Context\n",
    "textarea is a raw HTML block": "<textarea>\n\n## AI Context\n</textarea>\n",
    "lower-case declaration is no HTML block": "<!x\n## AI Context\n",
    "comment opened on a text line": "x\n<!-- a\n## AI Context\n",
}


@pytest.mark.parametrize("name", FOUND)
def test_agrees_with_github_on_what_the_differential_test_found(name: str) -> None:
    assert_agrees(FOUND[name])


# --- the differential test --------------------------------------------------------------------

_TITLES = [
    *("## AI Context", "## AI Context (updated by Claude — do not edit manually)"),
    *("### ai context", "#### AI Context ####", "# AI Context", "##### AI Context"),
    *("##AI Context", "## AI\u200b Con\u200dtext", "##\tAI Context", "## AI Contextual"),
    *("AI Context", "AI Context notes", "\u2060AI Context", "AI Contexts", "## Description"),
]
_LINES = [
    *_TITLES,
    *("---", "===", "- - -", "  ---", "***", "-", "```", "````", "~~~", "``` a`b", "```py"),
    *("~~~ a`b", "<div>", "</div>", "<details>", "<summary>AI Context</summary>", "<span>"),
    *("<img src=x>", '<a href="x">', "<!--", "-->", "<!-- x -->", "<!-->", "<pre>", "</pre>"),
    *("<?php", "?>", "<!DOCTYPE html>", "<![CDATA[", "]]>", "<script>", "</script>", "<br>"),
    *("<textarea>", "<div class=x>text", "<!-- ai-context:begin v=1 sha256=00 -->"),
    *("<!-- ai-context:end -->", "<http://x>", "text", "x  ", "a|b|c", "|-|-|", "[a]: /u"),
    *("- **Phase:** x", "**Plan:**", "1. step (done)", "a | b", "--|--", "-|-", "`code`"),
    *("\\## AI Context", "\x0c---", "|", "", "  "),
]
_PREFIXES = [
    *("", "", "", "> ", ">", "- ", "* ", "1. ", "2) ", " ", "  ", "   ", "    ", "\t"),
    *(" > ", "-", "+ ", "> > ", "- > ", "> - ", "\u00a0", "-\t", "1)\t", ">\t", "\t>"),
    *("     - ", "1.      ", "10. ", "0. ", "1234567890. ", " \t", "\x0c", "-\x0b"),
]
_BLOCK = SEED_BLOCK.rstrip("\n")
_CHUNKS = [
    *(_BLOCK, "<!-- ai-context:begin v=1 sha256=00 -->\n" + _BLOCK + "\n<!-- ai-context:end -->"),
    _BLOCK.replace("## AI Context (updated by Claude — do not edit manually)", "AI Context\n---"),
    *(_BLOCK.replace("## AI", "### AI"), "## AI Context\n- **Phase:** x", "Some words here."),
    *("A paragraph\nover two lines.", "- a\n- b", "1. x\n2. y", "- item\n\n  continued"),
    *("- ```\n  code\n  ```", "```\ncode\n```", "``` a`b\ntext", "~~~\n## AI Context\n~~~"),
    *("````\n```\n````", "<div>\ntext\n</div>", "<!--\n## AI Context\n-->", "<img src=x>"),
    "<details>\n<summary>AI Context</summary>\n\n## AI Context\n- **Phase:** x\n\n</details>",
    *("> ## AI Context\n> - **Phase:** x", "> quoted\ntext", "a | b\n--|--\n1 | 2", "---"),
    *("## AI Context", "AI Context\n---", "  ## AI Context", "   ```", "  <div>", "<div>"),
    *("## Description", "    indented code", "</details>", "AI Context, a heading?"),
]
_line = st.tuples(
    st.lists(st.sampled_from(_PREFIXES), max_size=2).map("".join), st.sampled_from(_LINES)
).map("".join)
_newline = st.sampled_from(["\n", "\r\n"])
# Line by line: every construct next to every other, containers nested two deep.
_mixed_lines = st.tuples(st.booleans(), _newline, st.lists(_line, max_size=14)).map(
    lambda t: BOM * t[0] + t[1].join(t[2])
)
# Chunk by chunk: bodies as people write them, a block among fences, HTML, quotes and lists.
_documents = st.tuples(
    st.lists(
        st.tuples(st.sampled_from(_CHUNKS), st.sampled_from(["\n", "\n\n", "\n\n\n"])), max_size=8
    ),
    _newline,
).map(lambda t: "".join(chunk + gap for chunk, gap in t[0]).replace("\n", t[1]))
bodies = st.one_of(
    _mixed_lines, _documents, st.tuples(_documents, _mixed_lines, _documents).map("\n".join)
)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bodies)
def test_the_locator_agrees_with_github(body: str) -> None:
    assert_agrees(body)
