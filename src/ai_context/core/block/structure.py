"""Where GitHub puts each line of a body (pure): cmark-gfm's block algorithm (blocks.c: open
containers, new blocks, lazy continuation), walked once line by line, for the bodies the
locator's quick scan cannot place alone. Says which AI Context headings GitHub shows and
whether each is at the top level or inside a block quote or list item. Left out, as none moves
a heading: inline syntax, footnotes, a lone carriage return as a line ending.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

from ai_context.core.block.syntax import (
    FENCE_CLOSE_RE,
    FENCE_OPEN_RE,
    TITLE_LINE_RE,
    html_end,
    html_tag_line,
    html_type,
)

# The block starts, as cmark-gfm's scanners (scanners.re) spell them, anchored at the line's
# first character that is not a space or tab.
ATX_RE = re.compile(r"(#{1,6})(?:[ \t]|$)")
_SETEXT_RE = re.compile(r"(?:(=+)|-+)[ \t]*$")
_BREAK_RE = re.compile(r"(?:(?:\*[ \t]*){3,}|(?:_[ \t]*){3,}|(?:-[ \t]*){3,})$")
_BULLET_RE = re.compile(r"[*+-]")
# A table's delimiter row (cmark-gfm's table extension): cells of dashes, colons at the ends.
_DELIMITER = r"[ \t\v\f]*+:?-+:?[ \t\v\f]*+"
_TABLE_START_RE = re.compile(r"\|?" + _DELIMITER + r"(?:\|" + _DELIMITER + r")*\|?[ \t\v\f]*$")
_CELL_RE = re.compile(r"(?:\\\||[^|])*+")
_PIPE_RE = re.compile(r"\|[ \t\v\f]*+")
# A link reference definition on one line: a paragraph of only these turns into no heading.
_REFERENCE_RE = re.compile(
    r"\[(?=[^\]]*?\S)(?:[^\[\]\\]|\\.){1,999}\]:[ \t]*(?:<[^<>]*>|[^ \t<][^ \t]*)"
    r"""(?:[ \t]+(?:"[^"]*"|'[^']*'|\([^()]*\)))?[ \t]*$"""
)
_ORDERED_RE = re.compile(r"([0-9]{1,9})([.)])")

_CONTAINERS = ("doc", "quote", "item", "list")


class Title(NamedTuple):
    """An AI Context heading GitHub shows: its first line, its setext underline (if any), its
    level, and the container it sits in ("" at the top level)."""

    line: int  # 0-based index of the heading's (first) line
    underline: int | None
    level: int
    container: str  # "", "block quote" or "list item"


@dataclass(slots=True)
class _Open:
    """One open block of the chain from the document to the line's deepest block."""

    kind: str  # doc, quote, list, item, para, table, fence, code, html, heading, break
    marker_offset: int = 0  # item: where its marker sits; with padding, its content column
    padding: int = 0
    has_child: bool = False  # item: a blank line after an empty item's marker ends it
    style: tuple[str, str] = ("", "")  # list: bullet character or ordered delimiter
    fence: str = ""  # fence: its character run
    html: int = 0  # html: its type
    first: int = 0  # para: its first line
    lines: list[str] = field(default_factory=list)  # para: its text, line by line
    tried: bool = False  # para: a delimiter row did not make it a table, and no later one will


@dataclass(slots=True)
class _Scanner:
    """cmark-gfm's per-line state (blocks.c): offset and column, with tabs as 4-column stops."""

    open: list[_Open] = field(default_factory=lambda: [_Open("doc")])
    titles: list[Title] = field(default_factory=list)
    number: int = 0
    text: str = ""
    offset: int = 0
    column: int = 0
    nonspace: int = 0
    nonspace_column: int = 0
    indent: int = 0
    blank: bool = False
    matched: int = 0  # depth of the deepest open block the line continues
    all_closed: bool = True

    def find_nonspace(self) -> None:
        i, col, text = self.offset, self.column, self.text
        while i < len(text):
            ch = text[i]
            if ch == " ":
                col += 1
            elif ch == "\t":
                col += 4 - col % 4
            else:
                break
            i += 1
        self.nonspace, self.nonspace_column = i, col
        self.indent = col - self.column
        self.blank = i >= len(text)

    def advance(self, count: int, columns: bool) -> None:
        text = self.text
        while count > 0 and self.offset < len(text):
            if text[self.offset] == "\t":
                to_tab = 4 - self.column % 4
                if columns:
                    step = min(count, to_tab)
                    self.column += step
                    self.offset += 0 if to_tab > count else 1
                    count -= step
                    continue
                self.column += to_tab
            else:
                self.column += 1
            self.offset += 1
            count -= 1

    def advance_to_nonspace(self) -> None:
        self.offset, self.column = self.nonspace, self.nonspace_column

    def peek(self, pos: int) -> str:
        return self.text[pos : pos + 1]

    # --- containers the line continues -------------------------------------------------

    def continues(self, block: _Open) -> bool | None:
        """Whether the line continues BLOCK; None when it closes BLOCK's fence (line used)."""
        kind = block.kind
        if kind in ("quote", "item", "code"):
            return self._prefix(block)
        if kind == "fence":
            return self._fence_continues(block)
        if kind == "html":
            return not (self.blank and block.html >= 6)
        if kind == "para":
            return not self.blank
        if kind == "table":
            return _cells(self.text, self.nonspace) > 0
        return kind in ("doc", "list")  # a heading or a rule holds one line

    def _prefix(self, block: _Open) -> bool:
        """Consume the prefix a block quote, list item or indented code block asks for."""
        if block.kind == "quote":
            if self.indent > 3 or self.peek(self.nonspace) != ">":
                return False
            self.advance(self.indent + 1, True)
            if self.peek(self.offset) in (" ", "\t"):
                self.advance(1, True)
            return True
        width = block.marker_offset + block.padding if block.kind == "item" else 4
        if self.indent >= width:
            self.advance(width, True)
            return True
        if self.blank and (block.kind == "code" or block.has_child):
            self.advance_to_nonspace()
            return True
        return False

    def _fence_continues(self, block: _Open) -> bool | None:
        fence = block.fence
        if self.indent <= 3 and self.peek(self.nonspace) == fence[0]:
            close = FENCE_CLOSE_RE.match(self.text, self.nonspace)
            if close and close.group(1)[0] == fence[0] and len(close.group(1)) >= len(fence):
                self.open.pop()
                return None
        return True

    # --- blocks the line opens ---------------------------------------------------------

    def close_unmatched(self) -> None:
        if not self.all_closed:
            del self.open[self.matched + 1 :]
            self.all_closed = True

    def add(self, block: _Open) -> _Open:
        """Append BLOCK under the deepest open block that can hold it (closing the others)."""
        while True:
            tip = self.open[-1].kind
            if tip in _CONTAINERS and (tip == "list") == (block.kind == "item"):
                break
            self.open.pop()
        if self.open[-1].kind == "item":
            self.open[-1].has_child = True
        self.open.append(block)
        return block

    def container(self) -> str:
        kinds = {b.kind for b in self.open[1:-1]}
        return "block quote" if "quote" in kinds else "list item" if "item" in kinds else ""

    def opens(self, maybe_lazy: bool) -> str:
        """Open the block the line starts at its first non-space: "container" (a block quote
        or list item: more may start after it), "leaf" (nothing can) or "" (none starts)."""
        self.find_nonspace()
        if self.blank:
            return ""
        container = self.open[-1] if self.all_closed else self.open[self.matched]
        if self.indent >= 4:
            if maybe_lazy:
                return ""
            self.advance(4, True)
            self.close_unmatched()
            self.add(_Open("code"))
            return "leaf"
        ch = self.peek(self.nonspace)
        if ch == ">":
            self.advance_to_nonspace()
            self.advance(1, False)
            if self.peek(self.offset) in (" ", "\t"):
                self.advance(1, True)
            self.close_unmatched()
            self.add(_Open("quote"))
            return "container"
        if self._leaf(container, ch):
            return "leaf"
        if self._list_item(container):
            return "container"
        return "leaf" if container.kind == "para" and self._table(container) else ""

    def _table(self, para: _Open) -> bool:
        """Turn PARA into a table when the line is a delimiter row with as many cells as the
        paragraph's last line (GFM)."""
        if para.tried or not _TABLE_START_RE.match(self.text, self.nonspace):
            return False
        if _cells(para.lines[-1], 0) != _cells(self.text, self.nonspace):
            para.tried = True
            return False
        self.open[-1] = _Open("table")
        return True

    def _leaf(self, container: _Open, ch: str) -> bool:
        """Open the heading, fence, HTML block, setext heading or rule the line starts."""
        text, at = self.text, self.nonspace
        if ch == "#" and (atx := ATX_RE.match(text, at)):
            self.close_unmatched()
            self.add(_Open("heading"))
            level = len(atx.group(1))
            title = TITLE_LINE_RE.match(text, at) if 2 <= level <= 4 else None
            if title is not None and title.group(1):
                self.titles.append(Title(self.number, None, level, self.container()))
            return True
        if ch in "`~" and (fence := FENCE_OPEN_RE.match(text, at)):
            self.close_unmatched()
            self.add(_Open("fence", fence=fence.group()))
            return True
        if ch == "<":
            kind = html_type(text, at)
            # Type 7 may not interrupt a paragraph, but cmark-gfm lets it end a block quote
            # or list item that a lazy line would have continued (GitHub shows raw HTML).
            if not kind and container.kind != "para":
                kind = 7 if html_tag_line(text, at) else 0
            if kind:
                self.close_unmatched()
                self.add(_Open("html", html=kind))
                return True
        if container.kind == "para" and ch in "=-" and (setext := _SETEXT_RE.match(text, at)):
            self._setext(container, level=1 if setext.group(1) else 2)
            return True
        if ch in "*_-" and _BREAK_RE.match(text, at):
            self.close_unmatched()
            self.add(_Open("break"))
            return True
        return False

    def _setext(self, para: _Open, level: int) -> None:
        """The underline turns PARA (the deepest block) into a heading, from its first line
        that is not a link reference definition; a paragraph of only those takes the line."""
        skip = 0
        while skip < len(para.lines) and _REFERENCE_RE.match(para.lines[skip]):
            skip += 1
        if skip == len(para.lines):  # the line is the paragraph's text (appended by _text)
            para.first, para.lines = self.number, []
            return
        self.open[-1] = _Open("heading")
        title = TITLE_LINE_RE.match(para.lines[skip].lstrip(" \t")) if level == 2 else None
        if title is not None and not title.group(1):
            self.titles.append(Title(para.first + skip, self.number, 2, self.container()))

    def _list_item(self, container: _Open) -> bool:
        """Open a list item (and its list) at the line's first non-space; False if none."""
        text, at = self.text, self.nonspace
        after, style = self._marker(container.kind == "para")
        if not after:
            return False
        marker_offset = self.indent
        self.advance_to_nonspace()
        self.advance(after - at, False)
        saved = (self.offset, self.column)
        while self.column - saved[1] <= 5 and self.peek(self.offset) in (" ", "\t"):
            self.advance(1, True)
        spaces = self.column - saved[1]
        if spaces >= 5 or spaces < 1 or self.offset >= len(text):
            padding = after - at + 1
            self.offset, self.column = saved
            if spaces > 0:
                self.advance(1, True)
        else:
            padding = after - at + spaces
        self.close_unmatched()
        if container.kind != "list" or container.style != style:
            self.add(_Open("list", style=style))
        self.add(_Open("item", marker_offset=marker_offset, padding=padding))
        return True

    def _marker(self, interrupts: bool) -> tuple[int, tuple[str, str]]:
        """(where the list marker at the first non-space ends, its style), or (0, ...)."""
        text, at = self.text, self.nonspace
        none = (0, ("", ""))
        if bullet := _BULLET_RE.match(text, at):
            end, style = bullet.end(), ("bullet", bullet.group())
        elif ordered := _ORDERED_RE.match(text, at):
            end, style = ordered.end(), ("ordered", ordered.group(2))
            if interrupts and int(ordered.group(1)) != 1:
                return none
        else:
            return none
        if end < len(text) and text[end] not in " \t":
            return none
        if interrupts and not text[end:].strip(" \t"):
            return none  # an empty item cannot interrupt a paragraph
        return end, style

    # --- the line, phase by phase --------------------------------------------------------

    def line(self, number: int, text: str) -> None:
        """One line: the open blocks it continues, the blocks it opens, then its text."""
        self.number, self.text, self.offset, self.column = number, text, 0, 0
        maybe_lazy = self.open[-1].kind == "para"
        depth = 0
        while depth + 1 < len(self.open):
            self.find_nonspace()
            went_on = self.continues(self.open[depth + 1])
            if went_on is None:
                return  # a closing fence: the line is used
            if not went_on:
                break
            depth += 1
        self.matched = depth
        self.all_closed = depth == len(self.open) - 1
        started = False
        if self.open[depth].kind not in ("fence", "code", "html"):
            while kind := self.opens(maybe_lazy):
                started, maybe_lazy = True, False
                if kind == "leaf":
                    break
        self._text(started)

    def _text(self, started: bool) -> None:
        """What is left of the line: a lazy continuation, a leaf's line or a paragraph's."""
        self.find_nonspace()
        tip = self.open[-1]
        if not started and not self.all_closed and not self.blank and tip.kind == "para":
            tip.lines.append(self.text[self.offset :])
            return  # a lazy continuation line: the open paragraph takes it
        self.close_unmatched()
        tip = self.open[-1]
        if tip.kind == "html":
            closing = html_end(tip.html)
            if closing is not None and closing.search(self.text, self.nonspace):
                self.open.pop()
            return
        if self.blank or tip.kind in ("fence", "code", "heading", "break", "table"):
            return
        if tip.kind == "para":
            tip.lines.append(self.text[self.nonspace :])
            return
        self.add(_Open("para", first=self.number, lines=[self.text[self.nonspace :]]))


def _cells(text: str, at: int) -> int:
    """How many cells a table row TEXT[AT:] has (cmark-gfm's row_from_string on one line)."""
    pipe = _PIPE_RE.match(text, at)
    at = pipe.end() if pipe else at
    count = 0
    while at < len(text):
        cell = _CELL_RE.match(text, at)
        end = cell.end() if cell else at
        pipe = _PIPE_RE.match(text, end)
        count += 1 if end > at or pipe else 0
        if pipe is None:
            break
        at = pipe.end()
    return count


def titles(lines: list[str]) -> list[Title]:
    """Every AI Context heading (levels 2-4) GitHub shows in LINES (without line endings)."""
    scanner = _Scanner()
    for number, text in enumerate(lines):
        scanner.line(number, text)
    return scanner.titles
