"""Escaping issue text for GitHub Markdown: text from issues is data, never markup.

Escapes the characters that format inline text (emphasis, code, links, tables, strikethrough)
and HTML, a line-start marker (heading, list, quote), folds newlines, and breaks @mentions
with a zero-width joiner, so a title or block can neither format, inject HTML nor ping anyone.
Plain punctuation stays readable: `#123` still links the issue, `v1.2-rc` needs no backslash.
`strip_controls` is for every text from outside before it is shown anywhere.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# The characters that format inline text; the backslash first, so no added one is doubled.
_PUNCTUATION = "\\`*_[]|~"
_LINE_START = re.compile(r"^(\s*)(?:([#+\-])|(\d+)([.)]))")
_MENTION = re.compile(r"@(?=[A-Za-z0-9])")
ZWJ = "\u200d"
# The characters escape_text changes; text with none of them (most titles, actors, phases and
# `#12` references) needs at most its line-start marker escaped.
_SPECIAL = frozenset("\\`*_[]|~&<>@\r\n")


def escape_text(text: str) -> str:
    """One line of inline Markdown that renders as exactly the characters given."""
    if _SPECIAL.isdisjoint(text):  # the common case, fast
        start = _LINE_START.match(text)
        return text if start is None else _escape_marker(start) + text[start.end() :]
    flat = " ".join(text.replace("\r", "\n").split("\n"))
    html = flat.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    for mark in _PUNCTUATION:  # a backslash before each (str.replace: in C, no match objects)
        if mark in html:
            html = html.replace(mark, "\\" + mark)
    escaped = _LINE_START.sub(_escape_marker, html, count=1)
    return _MENTION.sub("@" + ZWJ, escaped) if "@" in escaped else escaped


def _escape_marker(match: re.Match[str]) -> str:
    # `# x`, `- x`, `+ x` need the backslash before the marker; `1. x` before the dot.
    if match.group(2):
        return f"{match.group(1)}\\{match.group(2)}"
    return f"{match.group(1)}{match.group(3)}\\{match.group(4)}"


def escape_cell(text: str) -> str:
    """A Markdown table cell: escape_text already escapes `|`, which would end the cell."""
    return escape_text(text) or " "


def code_span(text: str) -> str:
    """Inline code that cannot be broken out of, whatever backticks the text holds."""
    flat = " ".join(text.split())
    longest = max((len(m) for m in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


# A code span as a writer marks it: a run of backticks, text, the same run (CommonMark).
CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")


def escape_code_text(text: str, *, cell: bool = False) -> str:
    """Like `escape_text`, but the code spans the writer marked (``run `make test` ``) render
    as code instead of showing their backticks. In a table `cell` a `|` inside the code is
    escaped as GFM asks (it shows as `|`). Code cannot hold markup, so nothing turns live."""
    flat = " ".join(text.replace("\r", "\n").split("\n"))
    if "`" not in flat:
        return escape_text(flat)
    return map_code_spans(flat, escape_text, _cell_span if cell else code_span)


def _cell_span(text: str) -> str:
    return code_span(text).replace("|", "\\|")


def map_code_spans(text: str, prose: Callable[[str], str], code: Callable[[str], str]) -> str:
    """TEXT with PROSE applied to the text around its code spans and CODE to each span's text."""
    pieces: list[str] = []
    position = 0
    for match in CODE_SPAN.finditer(text):
        pieces += [prose(text[position : match.start()]), code(match.group(2))]
        position = match.end()
    pieces.append(prose(text[position:]))
    return "".join(pieces)


def escape_code_cell(text: str) -> str:
    """A table cell of text that may hold code spans (a hint: "run `ai-context derive 11`")."""
    return escape_code_text(text, cell=True) or " "


# NUL, the C0 controls but tab and newline, DEL, the C1 controls; and any surrogate code point,
# which in a str is always a lone one (JSON's "\ud83d\ude00" decodes to one character).
_CONTROL_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
# Its complement: one match over text with nothing to strip (most text) is faster than a
# search for a control character.
_KEPT_RE = re.compile("[\t\n\x20-\x7e\xa0-\ud7ff\ue000-\U0010ffff]*")
REPLACEMENT = "\ufffd"


def _unprintable(match: re.Match[str]) -> str:
    return REPLACEMENT if match.group() >= "\ud800" else ""


def strip_controls(text: str) -> str:
    """TEXT without control characters (tab and newline kept), a lone surrogate as U+FFFD:
    what no comment, Slack message, ClickUp field or log line can be broken by."""
    if _KEPT_RE.fullmatch(text):
        return text  # the usual case: nothing to change
    return _CONTROL_RE.sub(_unprintable, text)
