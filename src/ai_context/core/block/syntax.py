"""The block's vocabulary and line syntax, shared by the model, locator, scanner and parser
(pure): labels, aliases, statuses, field lines, and the Markdown line starts GitHub reads."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import cache, lru_cache
from typing import Literal

FORMAT_VERSION = 1
HEADING_TITLE = "AI Context"
HEADING_NOTE = "(updated by Claude — do not edit manually)"
BEGIN_MARKER = "<!-- ai-context:begin"
END_MARKER = "<!-- ai-context:end -->"

StepStatus = Literal["done", "in progress", "pending", "blocked", "skipped"]
STEP_STATUSES: tuple[StepStatus, ...] = ("done", "in progress", "pending", "blocked", "skipped")
_STATUS_BY_NAME: dict[str, StepStatus] = {s: s for s in STEP_STATUSES}
EMPTY_WORDS = frozenset({"none", "n/a", "na", "-", "—", "nothing", "(none)", "no", "nil"})

# Canonical label of each known field, in canonical order, and the spellings agents use.
LABELS: dict[str, str] = {
    "actor": "Active actor",
    "phase": "Phase",
    "last_updated": "Last updated",
    "plan": "Plan",
    "files_touched": "Files touched",
    "decisions": "Decisions",
    "blockers": "Blockers",
    "next_step": "Next step",
}
ALIASES: dict[str, str] = {
    **{label.lower(): key for key, label in LABELS.items()},
    **{key.replace("_", " "): key for key in LABELS},
    "last update": "last_updated",
    "updated": "last_updated",
    "files": "files_touched",
    "decision": "decisions",
    "blocker": "blockers",
    "next steps": "next_step",
}

# --- the Markdown line starts GitHub reads (cmark-gfm's scanners.re), for the locator -----

# Zero-width characters GitHub renders as nothing: a title holding them still reads "AI Context".
# Possessive (`*+`), so no backtracking: the scans stay linear.
_ZW = "[\u200b\u200c\u200d\u2060\ufeff]*+"
TITLE = _ZW + "(?i:" + _ZW.join("ai context") + ")" + _ZW + "(?![A-Za-z0-9])"
# The title line of a block: an ATX heading (group 1: its hashes) or a setext title (no group
# 1). Every title test shares it: compiling TITLE (its eleven zero-width classes) is over a
# millisecond of start-up per pattern.
TITLE_LINE_RE = re.compile(r" {0,3}(?:(#{2,4})[ \t]+)?" + TITLE)


# Block starts, anchored at the line's first character that is not a space or tab.
# A backtick fence's info string may not hold a backtick; a tilde fence's may.
FENCE_OPEN_RE = re.compile(r"`{3,}+(?!.*`)|~{3,}+")
FENCE_CLOSE_RE = re.compile(r"(`{3,}+|~{3,}+)[ \t]*$")


def outside_fences(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """Each of LINES (with its index) that GitHub does not show as fenced code: a fence opens
    and closes by cmark-gfm's rule (the patterns above, at most three spaces before it, closed
    by a run of its character at least as long)."""
    fence = ""
    for index, line in enumerate(lines):
        at = len(line) - len(line.lstrip(" "))
        if not fence:
            if at <= 3 and (opened := FENCE_OPEN_RE.match(line, at)):
                fence = opened.group()
            else:
                yield index, line
        else:
            run = FENCE_CLOSE_RE.match(line.rstrip("\r"), at) if at <= 3 else None
            fence = "" if run and run[1].startswith(fence) else fence


_BLOCK_TAGS = (
    "address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|"
    "details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|"
    "h[1-6]|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav|noframes|ol|"
    "optgroup|option|p|param|section|source|summary|table|tbody|td|tfoot|th|thead|title|tr|"
    "track|ul"
)
_ATTRIBUTE = (
    r"(?:[ \t\v\f]+[a-zA-Z_:][a-zA-Z0-9:._-]*"
    r"""(?:[ \t\v\f]*=[ \t\v\f]*(?:[^ \t\v\f"'=<>`]+|'[^']*'|"[^"]*"))?)"""
)


# Types 1-6 of an HTML block (which may interrupt a paragraph), type 7 (which may not), and
# what ends a block of types 1-5 (anywhere on a line, its first line included). Compiled on
# the first `<` line: a millisecond of start-up that most bodies never need.
@cache
def _html() -> tuple[re.Pattern[str], re.Pattern[str], dict[int, re.Pattern[str]]]:
    opening = re.compile(
        r"<(?:(?i:script|pre|style|textarea)(?:[ \t\v\f]|>|$)()"
        r"|!--()|\?()|![A-Z]()|!\[CDATA\[()"
        r"|/?(?i:" + _BLOCK_TAGS + r")(?:[ \t\v\f]|/?>|$)())"
    )
    tag_line = re.compile(
        r"<(?:[A-Za-z][A-Za-z0-9-]*" + _ATTRIBUTE + r"*[ \t\v\f]*/?>"
        r"|/[A-Za-z][A-Za-z0-9-]*[ \t\v\f]*>)[ \t\f]*$"
    )
    closing = {
        1: re.compile(r"</(?:script|pre|style|textarea)>", re.IGNORECASE),
        2: re.compile("-->"),
        3: re.compile(r"\?>"),
        4: re.compile(">"),
        5: re.compile(r"\]\]>"),
    }
    return opening, tag_line, closing


def html_type(text: str, pos: int) -> int:
    """The type (1-6) of the HTML block TEXT starts at POS, or 0."""
    match = _html()[0].match(text, pos)
    return match.lastindex or 0 if match else 0


def html_tag_line(text: str, pos: int) -> bool:
    """TEXT[POS:] is one complete open or closing tag alone (an HTML block of type 7)."""
    return _html()[1].match(text, pos) is not None


def html_end(kind: int) -> re.Pattern[str] | None:
    """What ends an HTML block of type KIND (1-5); None for 6 and 7, which end at a blank line."""
    return _html()[2].get(kind)


# --- field lines ------------------------------------------------------------------------

BULLET_RE = re.compile(r"([-*+])[ \t]+")
NUMBERED_RE = re.compile(r"(\d{1,9})[.)](?:[ \t]+|$)")
# Where a plan step's text starts: its checkbox (group 1: the mark), number (group 2) or
# bullet, in that order of preference.
STEP_START_RE = re.compile(
    r"[-*+][ \t]+\[([ xX])\](?:[ \t]+|$)|(\d{1,9})[.)](?:[ \t]+|$)|[-*+][ \t]+"
)
CHUNK_RE = re.compile(r"\(chunk[ \t]+(\d{1,9})[ \t]+of[ \t]+(\d{1,9})\)$", re.IGNORECASE)
_PLAIN_LABEL_RE = re.compile(r"[A-Za-z][A-Za-z0-9 _/'-]{0,40}")


_LONGEST_EMPTY = max(map(len, EMPTY_WORDS))  # lower() never shortens a text


def is_placeholder(item: str) -> bool:
    """ "none", "n/a" and the like, or dashes and spaces alone."""
    return (len(item) <= _LONGEST_EMPTY and item.lower() in EMPTY_WORDS) or not item.strip("- ")


def one_line(value: str) -> str:
    if "\n" not in value and "\r" not in value:
        return value.strip()  # the common case, without building a list
    return " ".join(value.replace("\r", "\n").split("\n")).strip()


def split_status(text: str) -> tuple[str, str | None]:
    """Split a trailing "(status)" off a plan step; returns (text, the raw status word or None)."""
    stripped = text.rstrip()
    if not stripped.endswith(")"):
        return stripped, None
    opening = stripped.rfind("(")
    before = stripped[:opening].rstrip() if opening > 0 else ""
    if not before:
        return stripped, None
    return before, stripped[opening + 1 : -1].strip()


@lru_cache(maxsize=256)  # a handful of words, met on every plan step of every body
def normalise_status(word: str) -> StepStatus | None:
    canon = " ".join(word.lower().replace("-", " ").replace("_", " ").split())
    return _STATUS_BY_NAME.get(canon)


@lru_cache(maxsize=256)  # the same few labels on every field line of every body
def canon_label(label: str) -> str:
    return " ".join(label.lower().replace("_", " ").split())


def split_label(content: str) -> tuple[str, str] | None:
    """`**Label:** value`, `**Label**: value` or `Label: value` -> (label, value)."""
    if content[:2] in ("**", "__"):
        closing = content.find(content[:2], 2)
        return None if closing < 0 else _bold(content[2:closing], content[closing + 2 :])
    colon = content.find(":")
    if colon <= 0:
        return None
    label, rest = content[:colon].strip(), content[colon + 1 :]
    if rest and not rest[0].isspace():
        return None  # "https://..." is a value, not a label
    if not _PLAIN_LABEL_RE.fullmatch(label):
        return None
    return label, rest.strip()


def _bold(label: str, rest: str) -> tuple[str, str] | None:
    """The label between the bold marks and the REST after them -> (label, value): the colon
    inside or outside the bold, or none for a known label."""
    label = label.strip()
    if label.endswith(":"):
        label = label[:-1].strip()
    elif rest.lstrip().startswith(":"):
        rest = rest.lstrip()[1:]
    elif canon_label(label) not in ALIASES:
        return None
    return (label, rest.strip()) if label else None


# `- **Label:** value`, the line the renderer and most agents write: the label (no `*`, no
# space at either end) and the value (no space at either end, once the line is stripped) in
# one match; then any bullet and bold label (up to the first closing `**`, as split_label).
LABELLED_RE = re.compile(r"[-*+][ \t]+\*\*([^*\s:](?:[^*]*[^*\s])?):\*\*\s*(.*)", re.DOTALL)
_BOLD_BULLET = r"[-*+][ \t]+\*\*(.*?)\*\*(.*)"  # compiled by re when first needed


def field_of(text: str) -> tuple[str, str] | None:
    """(label, value) when the line starts a field: a labelled bullet, or a known plain label."""
    stripped = text.strip()
    labelled = LABELLED_RE.match(stripped)
    if labelled is not None:
        return labelled.group(1), labelled.group(2)
    bold = re.compile(_BOLD_BULLET, re.DOTALL).match(stripped)
    if bold is not None:
        return _bold(bold.group(1), bold.group(2))
    bullet = BULLET_RE.match(stripped)
    pair = split_label(stripped[bullet.end() :] if bullet else stripped)
    if pair is None or (bullet is None and canon_label(pair[0]) not in ALIASES):
        return None
    return pair


def continues_block(text: str) -> bool:
    """After a blank line, only a known field or a bold label (the agent's own style) is still
    the block; `- Note: ask Dana` there is a person's list, and stays theirs."""
    stripped = text.strip()
    if LABELLED_RE.match(stripped):
        return True  # a bold label: the agent's own style (and the renderer's)
    pair = field_of(stripped)
    if pair is None:
        return False
    bullet = BULLET_RE.match(stripped)
    content = stripped[bullet.end() :] if bullet else stripped
    return canon_label(pair[0]) in ALIASES or content[:2] in ("**", "__")


def indent_width(text: str) -> int:
    """The columns of TEXT's leading spaces and tabs (tab stops of 4)."""
    rest = text.lstrip(" \t")
    return len(text[: len(text) - len(rest)].expandtabs(4))
