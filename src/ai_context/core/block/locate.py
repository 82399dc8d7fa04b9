"""Locating blocks in an issue body: headings outside code fences, markers, the block's end.

Only lines that could open a fence, an HTML comment or a block are looked at, so the human text
around a block costs almost nothing; the scan is linear in the body's size.

A heading is recognised as GitHub shows it: `## AI Context` (levels 2-4) or the setext form
(`AI Context` over a line of dashes), zero-width characters inside the title ignored, after a
byte order mark at the start of the body. What GitHub does not show is no block: one inside a
code fence, or inside an HTML comment (`<!--` at the start of a line, up to the line holding
`-->`); the ai-context markers are one-line comments and end where they start.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from ai_context.core.block.syntax import BEGIN_MARKER, END_MARKER, continues_block, indent_width

BOM = "\ufeff"
# Zero-width characters GitHub renders as nothing: a title holding them still reads "AI Context".
# Possessive (`*+`), so no backtracking: the scan stays linear.
_ZW = "[\u200b\u200c\u200d\u2060\ufeff]*+"
_TITLE = _ZW + "(?i:" + _ZW.join("ai context") + ")" + _ZW + "(?![A-Za-z0-9])"
# The title line of a block: an ATX heading (group 1: its hashes) or a setext title (no group
# 1). One pattern, each of them compiled once: compiling _TITLE is a millisecond of start-up.
_TITLE_LINE_RE = re.compile(r" {0,3}(?:(#{2,4})[ \t]+)?" + _TITLE)
_SETEXT_UNDERLINE_RE = re.compile(r" {0,3}-+[ \t]*")
_COMMENT_OPEN = "<!--"
_ANY_HEADING_RE = re.compile(r" {0,3}(#{1,6})(?:[ \t]|$)")
_FENCE_RE = re.compile(r" {0,3}(`{3,}|~{3,})")


# --- locating blocks --------------------------------------------------------------------


class Line(NamedTuple):
    """One line of a body. A named tuple: immutable, and built for every line of every block
    at about half the cost of a frozen dataclass."""

    number: int  # 1-based
    start: int  # offset of the first character
    text: str  # without the line terminator


_new_tuple = tuple.__new__


def _is_rule(text: str) -> bool:
    stripped = text.strip()
    if not stripped or stripped[0] not in "-*_":
        return False
    if stripped.strip(stripped[0] + " \t"):  # anything else on the line: a bullet, not a rule
        return False
    return len(text) - len(text.lstrip(" ")) <= 3 and stripped.count(stripped[0]) >= 3


def _heading_level(text: str) -> int:
    if "#" not in text[:4]:
        return 0
    match = _ANY_HEADING_RE.match(text)
    return len(match.group(1)) if match else 0


@dataclass
class Region:
    """Where one block sits in a body: lines [first, last] and offsets [start, end)."""

    heading: Line
    level: int
    lines: list[Line]  # content lines after the heading, up to the block's end
    start: int
    end: int
    begin_marker: Line | None = None
    end_marker: Line | None = None
    resume: int = 0  # where scanning for further blocks goes on

    @property
    def first_line(self) -> int:
        return (self.begin_marker or self.heading).number


def _fence_closes(text: str, fence: str) -> bool:
    stripped = text.lstrip(" ")
    if len(text) - len(stripped) > 3:
        return False
    run = len(stripped) - len(stripped.lstrip(fence[0]))
    return run >= len(fence) and not stripped[run:].strip()


# Only lines that open or close a fence or could start a block matter to `find`; one C-level
# scan finds them, so the human text around a block costs almost nothing.
# Anchored on the newline (a literal) rather than `^` with MULTILINE: the regex engine then
# skips ahead to each newline instead of trying every position, about five times faster.
_CANDIDATE_RE = re.compile(r"\n {0,3}(?:`{3,}|~{3,}|<!--|(?:#{2,4}[ \t]+)?" + _TITLE + ")")


def _candidate_starts(body: str) -> Iterator[int]:
    first = body.find("\n")
    # The first line, behind the newline the pattern starts with (no match crosses a line).
    if _CANDIDATE_RE.match("\n" + (body if first < 0 else body[:first])):
        yield 0
    for match in _CANDIDATE_RE.finditer(body):
        yield match.start() + 1


def _line_at(body: str, start: int, number: int) -> Line:
    end = body.find("\n", start)
    raw = body[start:] if end < 0 else body[start:end]
    return Line(number, start, raw[:-1] if raw.endswith("\r") else raw)


def find(body: str) -> list[Region]:
    """Every AI Context block GitHub would show (outside code fences and HTML comments)."""
    if body.startswith(BOM):  # the offsets stay the body's own; the mark stays outside
        return [_shifted(region, len(BOM)) for region in _find(body[len(BOM) :])]
    return _find(body)


def _find(body: str) -> list[Region]:
    regions: list[Region] = []
    fence: str | None = None
    skip_to = 0
    line_no, counted_to = 1, 0
    for pos in _candidate_starts(body):
        if pos < skip_to:
            continue
        line_no += body.count("\n", counted_to, pos)
        counted_to = pos
        line = _line_at(body, pos, line_no)
        if fence is not None:
            if _fence_closes(line.text, fence):
                fence = None
            continue
        opened = _FENCE_RE.match(line.text)
        if opened:
            fence = opened.group(1)
            continue
        if line.text.lstrip(" ").startswith(_COMMENT_OPEN):
            skip_to = _comment_end(body, line)
            continue
        region = _block_at(body, line)
        if region is not None:
            regions.append(region)
            skip_to = region.resume
    return regions


def _comment_end(body: str, line: Line) -> int:
    """Where scanning goes on after the HTML comment LINE opens: the next line when it closes
    on its own line (the ai-context markers), else past the line holding `-->`."""
    opening = line.start + line.text.index(_COMMENT_OPEN)
    close = body.find("-->", opening + 2)  # `<!-->` and `<!--->` close where they open
    if close < 0:
        return len(body) + 1  # never closed: the rest of the body is hidden
    return close + 1


def _block_at(body: str, line: Line) -> Region | None:
    """The block whose heading is LINE (ATX or setext), or None."""
    title = _TITLE_LINE_RE.match(line.text)
    if title is None:
        return None
    if title.group(1):
        return _collect(body, line, len(title.group(1)))
    if not _starts_paragraph(body, line):
        return None
    end = body.find("\n", line.start)
    if end < 0:
        return None
    underline = _line_at(body, end + 1, line.number + 1)
    if not _SETEXT_UNDERLINE_RE.fullmatch(underline.text):
        return None
    return _collect(body, line, 2, underline=underline)


def _starts_paragraph(body: str, line: Line) -> bool:
    """LINE starts a paragraph (so a dashed line under it makes it a setext heading): it is the
    first line, or the line above is blank, a heading, or closes an HTML comment."""
    if line.start == 0:
        return True
    begin = body.rfind("\n", 0, line.start - 1) + 1
    above = body[begin : line.start - 1].rstrip("\r")
    return not above.strip() or "-->" in above or _heading_level(above) > 0


def _shifted(region: Region, by: int) -> Region:
    def move(line: Line | None) -> Line | None:
        return None if line is None else Line(line.number, line.start + by, line.text)

    heading = move(region.heading)
    assert heading is not None
    return Region(
        heading,
        region.level,
        [Line(ln.number, ln.start + by, ln.text) for ln in region.lines],
        region.start + by,
        region.end + by,
        move(region.begin_marker),
        move(region.end_marker),
        region.resume + by,
    )


def _opens_comment(stripped: str) -> bool:
    return stripped.startswith(_COMMENT_OPEN) and "-->" not in stripped[2:]


def _previous_nonblank(body: str, start: int, number: int) -> Line | None:
    end = start - 1  # the newline ending the previous line
    while end >= 0:
        begin = body.rfind("\n", 0, end) + 1
        number -= 1
        text = body[begin:end].rstrip("\r")
        if text.strip():
            return Line(number, begin, text)
        end = begin - 1
    return None


def _collect(body: str, heading: Line, level: int, underline: Line | None = None) -> Region:
    before = _previous_nonblank(body, heading.start, heading.number)
    begin = before if before and before.text.strip().startswith(BEGIN_MARKER) else None
    content: list[Line] = []
    end_marker = None
    after_blank = False
    resume = len(body) + 1
    title = underline or heading  # a setext heading's underline is part of it
    # The lines after the title, walked here rather than through a generator: this loop
    # runs for every line of every block, and the generator's calls were most of its cost.
    number, cut = title.number, body.find("\n", title.start)
    while cut >= 0:
        start, number = cut + 1, number + 1
        cut = body.find("\n", start)
        text = body[start:] if cut < 0 else body[start:cut]
        if text[-1:] == "\r":
            text = text[:-1]
        line = _new_tuple(Line, (number, start, text))  # Line(...) without its Python __new__
        stripped = text.strip()
        if not stripped:
            after_blank = True
            content.append(line)
            continue
        first = stripped[0]
        if first == "<" and stripped == END_MARKER:
            end_marker = line
            resume = line.start + len(line.text)
            break
        # Cheap first-character tests keep the common line (a bullet) to a few operations.
        if (
            (first == "#" and 0 < _heading_level(text) <= level)
            # a rule ends in its own character; a field's bullet line does not
            or (first in "-*_" and stripped[-1] == first and _is_rule(text))
            or (first == "<" and stripped.startswith(BEGIN_MARKER))
            # an HTML comment spanning lines is hidden text, never the block's
            or (first == "<" and _opens_comment(stripped))
            or (first in "`~" and _FENCE_RE.match(text))
            # a new top-level paragraph after a blank line is human text, not the block's
            or (after_blank and indent_width(text) < 2 and not continues_block(text))
        ):
            resume = line.start
            break
        after_blank = False
        content.append(line)
    last = end_marker or next((ln for ln in reversed(content) if ln.text.strip()), title)
    start = (begin or heading).start
    end = last.start + len(last.text)
    return Region(heading, level, content, start, end, begin, end_marker, resume)
