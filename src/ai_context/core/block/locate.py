"""Locating blocks in an issue body: the AI Context headings GitHub shows at the top level
(levels 2-4 or setext; not in a fence, an HTML block, a block quote or a list item, nor
continuing a paragraph), and each block's end.

The quick scan looks only at lines that could open a fence or an HTML block or hold a title,
and decides alone for lines indented by at most one space; anything else hands the body to
`structure`, which walks every line as cmark-gfm does.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import partial
from itertools import accumulate, count
from operator import add
from typing import NamedTuple

from ai_context.core.block.syntax import (
    BEGIN_MARKER,
    END_MARKER,
    FENCE_CLOSE_RE,
    FENCE_OPEN_RE,
    TITLE,
    TITLE_LINE_RE,
    continues_block,
    html_end,
    html_tag_line,
    html_type,
    indent_width,
)

BOM = "\ufeff"
_SETEXT_UNDERLINE_RE = re.compile(r" {0,3}(?:(-+)|=+)[ \t]*")
_COMMENT_OPEN = "<!--"
_ANY_HEADING_RE = re.compile(r" {0,3}(#{1,6})(?:[ \t]|$)")
# The line after an HTML block of type 6 or 7, which ends at a blank line (compiled by re
# when first needed).
_BLANK_LINE = r"\n[ \t]*+\r?(?=\n|\Z)"


# --- locating blocks --------------------------------------------------------------------


class Line(NamedTuple):
    """One line of a body. A named tuple: immutable, and built for every line of every block
    at about half the cost of a frozen dataclass."""

    number: int  # 1-based
    start: int  # offset of the first character
    text: str  # without the line terminator


_new_tuple = tuple.__new__
_make_line = partial(_new_tuple, Line)  # Line(...) from a tuple, without its Python __new__


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


# The lines the quick scan looks at, found in C. Anchored on the newline (not `^` with
# MULTILINE: about five times faster); the first character alone rules out most lines.
_CANDIDATE_RE = re.compile(r"\n {0,3}(?:`{3,}|~{3,}|<|(?:#{2,4}[ \t]+)?" + TITLE + ")")
# A line that may hold a title inside containers: block quote and list marks, indentation.
_NESTED_TITLE = r"\n[ \t>*+\-0-9.)]*+(?:#{2,4}[ \t]+)?" + TITLE
_MAYBE_CANDIDATE_RE = re.compile("\n {0,3}[`~<#Aa\u200b\u200c\u200d\u2060\ufeff]")
_BAIL = -1  # the quick scan cannot place this line alone: the scanner decides


# A top-level title: its heading line, its level and its setext underline (or None).
_Title = tuple[Line, int, Line | None]


def _candidate_starts(body: str) -> Iterator[int]:
    first = body.find("\n")
    # The first line, behind the newline the pattern starts with (no match crosses a line).
    if _CANDIDATE_RE.match("\n" + (body if first < 0 else body[:first])):
        yield 0
    confirm = _CANDIDATE_RE.match
    for maybe in _MAYBE_CANDIDATE_RE.finditer(body):
        if confirm(body, maybe.start()):
            yield maybe.start() + 1


def _line_at(body: str, start: int, number: int) -> Line:
    end = body.find("\n", start)
    raw = body[start:] if end < 0 else body[start:end]
    return Line(number, start, raw[:-1] if raw.endswith("\r") else raw)


def find(body: str) -> list[Region]:
    """Every AI Context block GitHub shows at the top level of BODY, in order."""
    if body.startswith(BOM):  # the offsets stay the body's own; the mark stays outside
        return [_shifted(region, len(BOM)) for region in _find(body[len(BOM) :])]
    return _find(body)


def _find(body: str) -> list[Region]:
    found = _quick_titles(body)
    if found is None:
        found = _scanned_titles(body)
    regions: list[Region] = []
    resume = 0
    for heading, level, underline in found:
        if heading.start < resume:
            continue  # a deeper AI Context heading inside the block before: the block's line
        region = _collect(body, heading, level, underline)
        regions.append(region)
        resume = region.resume
    return regions


def nested_titles(body: str) -> list[tuple[int, str]]:
    """(line number, "block quote" or "list item") of each AI Context heading GitHub shows
    inside a block quote or a list item: quoted text, never the block."""
    if body.startswith(BOM):
        body = body[len(BOM) :]
    # Most bodies hold no title after container marks at all: one scan anchored on the
    # newlines (compiled once, by re, on the first body without a block) says so.
    if re.search(_NESTED_TITLE, "\n" + body) is None:
        return []
    from ai_context.core.block.structure import titles  # noqa: PLC0415 - rare: start-up

    lines = [text[:-1] if text[-1:] == "\r" else text for text in body.split("\n")]
    return [(title.line + 1, title.container) for title in titles(lines) if title.container]


def _scanned_titles(body: str) -> list[_Title]:
    """The top-level titles, every line walked as cmark-gfm walks it."""
    from ai_context.core.block.structure import titles  # noqa: PLC0415 - rare: start-up

    raw = body.split("\n")
    starts = list(accumulate((len(text) + 1 for text in raw), initial=0))
    lines = [text[:-1] if text[-1:] == "\r" else text for text in raw]

    def line(index: int) -> Line:
        return Line(index + 1, starts[index], lines[index])

    return [
        (line(t.line), t.level, None if t.underline is None else line(t.underline))
        for t in titles(lines)
        if not t.container
    ]


def _quick_titles(body: str) -> list[_Title] | None:
    """The top-level titles from the candidate lines alone, or None when a line needs the
    scanner (see the module's docstring)."""
    found: list[_Title] = []
    fence: str | None = None
    skip_to = 0
    line_no, counted_to = 1, 0
    for pos in _candidate_starts(body):
        if pos < skip_to:
            continue
        end = body.find("\n", pos)
        text = body[pos:] if end < 0 else body[pos:end]
        if text[-1:] == "\r":
            text = text[:-1]
        at = len(text) - len(text.lstrip(" "))
        if fence is not None:
            fence = None if _closes(text, at, fence) else fence
            continue
        if at > 1:
            return None  # a list item may hold this line
        first = text[at]
        if first in "`~":
            opened = FENCE_OPEN_RE.match(text, at)  # none: an info string with a backtick
            fence = opened.group() if opened else None
            continue
        if first == "<":
            skip_to = _html_end(body, pos, text, at)
            if skip_to == _BAIL:
                return None
            continue
        line_no += body.count("\n", counted_to, pos)
        counted_to = pos
        heading = _make_line((line_no, pos, text))
        title = TITLE_LINE_RE.match(text)
        assert title is not None  # the candidate pattern holds the title's
        if title.group(1):
            found.append((heading, len(title.group(1)), None))
            continue
        underline = _setext_underline(body, heading)
        if underline == _BAIL:
            return None
        if underline:
            found.append((heading, 2, _line_at(body, underline, line_no + 1)))
    return found


def _closes(text: str, at: int, fence: str) -> bool:
    close = FENCE_CLOSE_RE.match(text, at) if at <= 3 else None
    return close is not None and close.group(1)[0] == fence[0] and len(close.group(1)) >= len(fence)


def _blank_above(body: str, pos: int) -> bool:
    if pos == 0:
        return True
    begin = body.rfind("\n", 0, pos - 1) + 1
    return not body[begin : pos - 1].strip(" \t\r")


def _html_end(body: str, pos: int, text: str, at: int) -> int:
    """Where the quick scan goes on after the line at POS: past the HTML block it opens (to
    the line holding its end, or to the next blank line), or _BAIL."""
    kind = html_type(text, at)
    if not kind:
        if not html_tag_line(text, at):
            return pos  # no HTML block (an autolink, a `<` in prose)
        if not _blank_above(body, pos):
            return _BAIL  # the tag may continue a paragraph, or end a table
        kind = 7
    ending = html_end(kind)
    if ending is not None:  # ends on the line holding its closing text, the first included
        close = ending.search(body, pos + at)
        return len(body) + 1 if close is None else close.end()
    blank = re.compile(_BLANK_LINE).search(body, pos)
    return len(body) + 1 if blank is None else blank.start() + 1


def _setext_underline(body: str, title: Line) -> int:
    """Where the underline of the setext title TITLE starts, 0 when TITLE is no heading, or
    _BAIL when only the scanner can tell (a line of text above or below it)."""
    if title.start > 0 and not _blank_above(body, title.start):
        begin = body.rfind("\n", 0, title.start - 1) + 1
        above = body[begin : title.start - 1]
        at = len(above) - len(above.lstrip(" "))
        # A letter at most one space in starts no block: the title continues its paragraph.
        return 0 if at <= 1 and above[at].isalpha() else _BAIL
    end = body.find("\n", title.start)
    if end < 0:
        return 0
    below = _line_at(body, end + 1, title.number + 1).text
    underline = _SETEXT_UNDERLINE_RE.fullmatch(below)
    if underline:
        return end + 1 if underline.group(1) else 0  # `===` makes a level 1 heading
    return 0 if not below.strip(" \t") else _BAIL  # a paragraph of more lines may be one


def _shifted(region: Region, by: int) -> Region:
    def move(line: Line | None) -> Line | None:
        return None if line is None else line._replace(start=line.start + by)

    return replace(
        region,
        heading=region.heading._replace(start=region.heading.start + by),
        lines=[ln._replace(start=ln.start + by) for ln in region.lines],
        start=region.start + by,
        end=region.end + by,
        begin_marker=move(region.begin_marker),
        end_marker=move(region.end_marker),
        resume=region.resume + by,
    )


def _opens_comment(stripped: str) -> bool:
    return stripped.startswith(_COMMENT_OPEN) and "-->" not in stripped[2:]


def _raw_html(text: str) -> bool:
    """TEXT opens an HTML block outside the block's list items (a comment is hidden text,
    and one on a single line, such as a marker, is left to the block)."""
    at = len(text) - len(text.lstrip(" "))
    return at <= 1 and html_type(text, at) not in (0, 2)


def _opens_fence(text: str) -> bool:
    at = len(text) - len(text.lstrip(" "))
    return at <= 3 and FENCE_OPEN_RE.match(text, at) is not None


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


# The lines that may end a block: a heading, HTML (a marker, a comment, a tag), a fence, a rule,
# and a blank line (the line after it may start a paragraph of human text). One C-level search
# skips the block's other lines, so a field costs only its Line; `_ends` decides each one found.
_MAY_END_RE = re.compile(
    r"\n[^\S\n]*+(?:[#<`~]|(?:-[-\t ]*+|\*[*\t ]*+|_[_\t ]*+)[^\S\n]*+(?=\n|\Z)|(?=\n))"
)


def _collect(body: str, heading: Line, level: int, underline: Line | None = None) -> Region:
    before = _previous_nonblank(body, heading.start, heading.number)
    begin = before if before and before.text.strip().startswith(BEGIN_MARKER) else None
    title = underline or heading  # a setext heading's underline is part of it
    end_marker = None
    newline = body.find("\n", title.start)
    if newline < 0:
        content: list[Line] = []
        resume = len(body) + 1
    else:
        stop, marked = _block_end(body, newline, level)
        content = _lines(body, newline + 1, stop - 1, title.number + 1)
        resume = stop
        if marked:
            end_marker = _line_at(body, stop, title.number + 1 + len(content))
            resume = stop + len(end_marker.text)
    last = end_marker or next((ln for ln in reversed(content) if ln.text.strip()), title)
    start = (begin or heading).start
    end = last.start + len(last.text)
    return Region(heading, level, content, start, end, begin, end_marker, resume)


def _lines(body: str, start: int, stop: int, number: int) -> list[Line]:
    """The lines of BODY[START:STOP], the first numbered NUMBER: built in C, not line by line."""
    if stop < start:
        return []  # the title's next line ends the block
    raw = body[start:stop].split("\n")
    texts = [t[:-1] if t[-1:] == "\r" else t for t in raw] if "\r" in body else raw
    starts = map(add, accumulate(map(len, raw), initial=start), count())
    return list(map(_make_line, zip(count(number), starts, texts)))


def _block_end(body: str, newline: int, level: int) -> tuple[int, bool]:
    """Where the block whose title line ends at NEWLINE stops: the offset of the line that
    ends it (past the body, at len + 1, when none does), and whether that is the end marker."""
    after_blank = False
    at = newline
    while at >= 0:
        if after_blank:
            start = at + 1  # the line after a blank one is looked at whatever it holds
        else:
            found = _MAY_END_RE.search(body, at)
            if found is None:
                break
            start = found.start() + 1
        at = body.find("\n", start)
        text = body[start:] if at < 0 else body[start:at]
        if text[-1:] == "\r":
            text = text[:-1]
        stripped = text.strip()
        if not stripped:
            after_blank = True
            continue
        if stripped == END_MARKER:
            return start, True
        if _ends(text, stripped, level, after_blank):
            return start, False
        after_blank = False
    return len(body) + 1, False


def _ends(text: str, stripped: str, level: int, after_blank: bool) -> bool:
    """TEXT (STRIPPED, not blank) ends a block of LEVEL; AFTER_BLANK: a blank line is above."""
    first = stripped[0]
    return (
        (first == "#" and 0 < _heading_level(text) <= level)
        # a rule ends in its own character; a field's bullet line does not
        or (first in "-*_" and stripped[-1] == first and _is_rule(text))
        or (first == "<" and stripped.startswith(BEGIN_MARKER))
        # an HTML comment spanning lines is hidden text, never the block's
        or (first == "<" and _opens_comment(stripped))
        # raw HTML GitHub shows as it is (a tag such as <div> or <details> at the top)
        or (first == "<" and _raw_html(text))
        or (first in "`~" and _opens_fence(text))
        # a new top-level paragraph after a blank line is human text, not the block's
        or (after_blank and indent_width(text) < 2 and not continues_block(text))
    )
