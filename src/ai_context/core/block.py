"""The AI Context block: model, tolerant parser and canonical renderer (pure).

Agents write what they write, so the parser accepts the variants of docs/design.md §3 and reports
every problem as a Finding instead of raising. The renderer writes one canonical form; the
model's validators normalise text so that parse(render(m)) == m holds for every valid model.
Parsing walks the body line by line with anchored, non-nested patterns: linear in its size.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, computed_field, field_validator, model_validator

from ai_context.core.findings import Finding

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
    "active actor": "actor",
    "actor": "actor",
    "phase": "phase",
    "last updated": "last_updated",
    "last update": "last_updated",
    "updated": "last_updated",
    "plan": "plan",
    "files touched": "files_touched",
    "files": "files_touched",
    "decisions": "decisions",
    "decision": "decisions",
    "blockers": "blockers",
    "blocker": "blockers",
    "next step": "next_step",
    "next steps": "next_step",
}

_HEADING_RE = re.compile(r" {0,3}(#{2,4})[ \t]+(ai context)(?![A-Za-z0-9])", re.IGNORECASE)
_ANY_HEADING_RE = re.compile(r" {0,3}(#{1,6})(?:[ \t]|$)")
_FENCE_RE = re.compile(r" {0,3}(`{3,}|~{3,})")
_BULLET_RE = re.compile(r"([-*+])[ \t]+")
_NUMBERED_RE = re.compile(r"(\d{1,9})[.)](?:[ \t]+|$)")
_CHECKBOX_RE = re.compile(r"[-*+][ \t]+\[([ xX])\](?:[ \t]+|$)")
_CHUNK_RE = re.compile(r"\(chunk[ \t]+(\d{1,9})[ \t]+of[ \t]+(\d{1,9})\)$", re.IGNORECASE)
_PLAIN_LABEL_RE = re.compile(r"[A-Za-z][A-Za-z0-9 _/'-]{0,40}")
_MARKER_ATTR_RE = re.compile(r"([a-z0-9]+)=([A-Za-z0-9]+)")


def _is_placeholder(item: str) -> bool:
    return item.lower() in EMPTY_WORDS or not item.replace("-", "").replace(" ", "")


def _one_line(value: str) -> str:
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


def normalise_status(word: str) -> StepStatus | None:
    canon = " ".join(word.lower().replace("-", " ").replace("_", " ").split())
    return _STATUS_BY_NAME.get(canon)


class PlanStep(BaseModel):
    model_config = ConfigDict(frozen=True)

    number: int
    text: str
    status: StepStatus | None = None

    @field_validator("text")
    @classmethod
    def _text(cls, value: str) -> str:
        value = _one_line(value)
        if not value:
            raise ValueError("a plan step needs text")
        return value

    @field_validator("number")
    @classmethod
    def _number(cls, value: int) -> int:
        if not 0 <= value < 10**9:
            raise ValueError("a plan step number is between 0 and 999999999")
        return value

    @model_validator(mode="after")
    def _status_in_text(self) -> PlanStep:
        # A step whose text ends in "(done)" but has no status is the same step as the one
        # the parser would read back, so normalise it here.
        if self.status is None:
            text, word = split_status(self.text)
            status = normalise_status(word) if word is not None else None
            if status is not None:
                object.__setattr__(self, "text", text)
                object.__setattr__(self, "status", status)
        return self


class Block(BaseModel):
    """One task's working state as its agent declared it."""

    model_config = ConfigDict(frozen=True)

    actor: str | None = None
    actor_description: str | None = None
    phase: str | None = None
    chunk: tuple[int, int] | None = None
    last_updated: datetime | None = None
    plan: tuple[PlanStep, ...] = ()
    files_touched: str | None = None
    decisions: tuple[str, ...] = ()
    blockers: tuple[str, ...] = ()
    next_step: str | None = None
    extra: dict[str, str] = {}

    @field_validator("actor")
    @classmethod
    def _actor(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip().strip("`")  # agents often write the id as code
        if not value or any(ch.isspace() for ch in value):
            raise ValueError("the actor id is one word, e.g. cc-ariel-laptop")
        return value

    @field_validator("actor_description", "phase", "files_touched", "next_step")
    @classmethod
    def _single_line(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = _one_line(value)
        return value or None

    @field_validator("decisions", "blockers")
    @classmethod
    def _items(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        # "none" (or a dash placeholder, which Markdown would read as a rule) is no item.
        items = (_one_line(v) for v in value)
        return tuple(item for item in items if item and not _is_placeholder(item))

    @field_validator("chunk")
    @classmethod
    def _chunk(cls, value: tuple[int, int] | None) -> tuple[int, int] | None:
        if value is not None and not all(0 <= n < 10**9 for n in value):
            raise ValueError("chunk numbers are between 0 and 999999999")
        return value

    @field_validator("last_updated")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("Last updated must carry a timezone (UTC, written with Z)")
        return value.astimezone(UTC).replace(microsecond=0)

    @field_validator("extra")
    @classmethod
    def _extra(cls, value: dict[str, str]) -> dict[str, str]:
        clean: dict[str, str] = {}
        for label, text in value.items():
            name = _one_line(label)
            if not name or "**" in name or name.endswith(":"):
                raise ValueError(f"unusable field label {label!r}")
            if _canon_label(name) in ALIASES:
                raise ValueError(f"{name!r} is a known field, not an extra one")
            lines = [ln.rstrip() for ln in text.replace("\r", "\n").split("\n")]
            first, rest = lines[0].strip(), [ln.strip() for ln in lines[1:] if ln.strip()]
            if any(ln.startswith("<!-- ai-context:") for ln in rest):
                raise ValueError(f"field {name!r} holds an ai-context marker line")
            # Four spaces: no continuation line can then read as a heading, rule or fence.
            rest = ["    " + ln for ln in rest]
            clean[name] = "\n".join([first, *rest])
        return clean

    @model_validator(mode="after")
    def _phase_chunk(self) -> Block:
        if self.phase is not None and self.chunk is None:
            match = _CHUNK_RE.search(self.phase)
            head = self.phase[: match.start()].rstrip() if match else ""
            if match and head:
                object.__setattr__(self, "phase", head)
                object.__setattr__(self, "chunk", (int(match.group(1)), int(match.group(2))))
        if self.chunk is not None and self.phase is None:
            raise ValueError("a chunk needs a phase")
        if self.actor is None and self.actor_description is not None:
            raise ValueError("an actor description needs an actor id")
        return self

    @computed_field  # type: ignore[prop-decorator]
    @property
    def paths(self) -> tuple[str, ...]:
        """Files touched as paths, braces expanded; prose such as "plus 4 test files" dropped."""
        return expand_paths(self.files_touched or "")


# --- brace expansion --------------------------------------------------------------------


def _split_top(text: str, sep: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "{":
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def expand_braces(item: str, limit: int = 1000) -> list[str]:
    """Bash-style `a/{b,c}.ts` expansion, nested, capped so a hostile body cannot explode."""
    opening = item.find("{")
    if opening < 0:
        return [item]
    depth = 0
    for i in range(opening, len(item)):
        if item[i] == "{":
            depth += 1
        elif item[i] == "}":
            depth -= 1
            if depth == 0:
                closing = i
                break
    else:
        return [item]
    head, body, tail = item[:opening], item[opening + 1 : closing], item[closing + 1 :]
    options = _split_top(body, ",")
    if len(options) < 2:
        return [head + "{" + body + "}" + t for t in expand_braces(tail, limit)]
    out: list[str] = []
    tails = expand_braces(tail, limit)
    for option in options:
        for expanded in expand_braces(option, limit):
            for t in tails:
                out.append(head + expanded + t)
                if len(out) >= limit:
                    return out
    return out


def _looks_like_path(item: str) -> bool:
    return bool(item) and (" " not in item) and ("/" in item or "." in item or "*" in item)


def expand_paths(files_touched: str) -> tuple[str, ...]:
    paths: list[str] = []
    for raw in _split_top(files_touched, ","):
        item = raw.strip().strip("`").strip()
        if _looks_like_path(item):
            paths.extend(p for p in expand_braces(item) if p not in paths)
    return tuple(paths)


# --- locating blocks --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Line:
    number: int  # 1-based
    start: int  # offset of the first character
    text: str  # without the line terminator


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
_CANDIDATE = r" {0,3}(?:`{3,}|~{3,}|#{2,4}[ \t]+(?i:ai context)(?![A-Za-z0-9]))"
# Anchored on the newline (a literal) rather than `^` with MULTILINE: the regex engine then
# skips ahead to each newline instead of trying every position, about five times faster.
_CANDIDATE_RE = re.compile(r"\n" + _CANDIDATE)
_CANDIDATE_AT_START = re.compile(_CANDIDATE)


def _candidate_starts(body: str) -> Iterator[int]:
    if _CANDIDATE_AT_START.match(body):
        yield 0
    for match in _CANDIDATE_RE.finditer(body):
        yield match.start() + 1


def _line_at(body: str, start: int, number: int) -> Line:
    end = body.find("\n", start)
    raw = body[start:] if end < 0 else body[start:end]
    return Line(number, start, raw[:-1] if raw.endswith("\r") else raw)


def _lines_from(body: str, start: int, number: int) -> Iterator[Line]:
    while start <= len(body):
        line = _line_at(body, start, number)
        yield line
        start = body.find("\n", start)
        if start < 0:
            return
        start += 1
        number += 1


def find(body: str) -> list[Region]:
    """Every AI Context block outside code fences, in order."""
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
        heading = _HEADING_RE.match(line.text)
        if heading:
            region = _collect(body, line, len(heading.group(1)))
            regions.append(region)
            skip_to = region.resume
    return regions


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


def _collect(body: str, heading: Line, level: int) -> Region:
    before = _previous_nonblank(body, heading.start, heading.number)
    begin = before if before and before.text.strip().startswith(BEGIN_MARKER) else None
    content: list[Line] = []
    end_marker = None
    after_blank = False
    resume = len(body) + 1
    for line in _lines_from(body, heading.start, heading.number):
        if line.number == heading.number:
            continue
        text = line.text
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
            or (first in "-*_" and _is_rule(text))
            or (first == "<" and stripped.startswith(BEGIN_MARKER))
            or (first in "`~" and _FENCE_RE.match(text))
            # a new top-level paragraph after a blank line is human text, not the block's
            or (after_blank and _indent(text) < 2 and not _continues_block(text))
        ):
            resume = line.start
            break
        after_blank = False
        content.append(line)
    last = end_marker or next((ln for ln in reversed(content) if ln.text.strip()), heading)
    start = (begin or heading).start
    end = last.start + len(last.text)
    return Region(heading, level, content, start, end, begin, end_marker, resume)


# --- parsing ----------------------------------------------------------------------------


@dataclass
class Marker:
    version: int | None
    sha256: str | None
    matches: bool


@dataclass
class Parsed:
    """What parsing a body found: the block (if any), its findings and where things are."""

    block: Block | None
    findings: list[Finding]
    region: Region | None = None
    field_lines: dict[str, int] = field(default_factory=dict)
    marker: Marker | None = None
    blocks_found: int = 0
    # Lines inside the block that the model does not hold (unreadable lines, a field given
    # twice): replace_block keeps their text after the new block, so no human text is lost.
    dropped: list[Line] = field(default_factory=list)


def _canon_label(label: str) -> str:
    return " ".join(label.lower().replace("_", " ").split())


def split_label(content: str) -> tuple[str, str] | None:
    """`**Label:** value`, `**Label**: value` or `Label: value` -> (label, value)."""
    if content[:2] in ("**", "__"):
        delim = content[:2]
        closing = content.find(delim, 2)
        if closing < 0:
            return None
        label = content[2:closing].strip()
        rest = content[closing + 2 :]
        if label.endswith(":"):
            label = label[:-1].strip()
        elif rest.lstrip().startswith(":"):
            rest = rest.lstrip()[1:]
        elif _canon_label(label) not in ALIASES:
            return None
        return (label, rest.strip()) if label else None
    colon = content.find(":")
    if colon <= 0:
        return None
    label, rest = content[:colon].strip(), content[colon + 1 :]
    if rest and not rest[0].isspace():
        return None  # "https://..." is a value, not a label
    if not _PLAIN_LABEL_RE.fullmatch(label):
        return None
    return label, rest.strip()


def field_of(text: str) -> tuple[str, str] | None:
    """(label, value) when the line starts a field: a labelled bullet, or a known plain label."""
    stripped = text.strip()
    bullet = _BULLET_RE.match(stripped)
    pair = split_label(stripped[bullet.end() :] if bullet else stripped)
    if pair is None or (bullet is None and _canon_label(pair[0]) not in ALIASES):
        return None
    return pair


def _continues_block(text: str) -> bool:
    """After a blank line, only a known field or a bold label (the agent's own style) is still
    the block; `- Note: ask Dana` there is a person's list, and stays theirs."""
    pair = field_of(text)
    if pair is None:
        return False
    stripped = text.strip()
    bullet = _BULLET_RE.match(stripped)
    content = stripped[bullet.end() :] if bullet else stripped
    return _canon_label(pair[0]) in ALIASES or content[:2] in ("**", "__")


def _indent(text: str) -> int:
    width = 0
    for ch in text:
        if ch == " ":
            width += 1
        elif ch == "\t":
            width += 4 - width % 4
        else:
            break
    return width


@dataclass
class _RawField:
    label: str
    key: str | None
    value: str
    line: int
    children: list[Line] = field(default_factory=list)


def _finding(code: str, severity: str, message: str, line: int | None, hint: str) -> Finding:
    return Finding.model_validate(
        {"code": code, "severity": severity, "message": message, "line": line, "hint": hint}
    )


def parse(body: str) -> Parsed:
    """Find and parse the block of a whole issue body; never raises on any text."""
    regions = find(body)
    findings: list[Finding] = []
    if not regions:
        findings.append(
            _finding(
                "AIC101",
                "error",
                "no AI Context block found",
                None,
                "Add a '## AI Context' heading with the fields at the top of the issue body.",
            )
        )
        return Parsed(None, findings)
    for extra in regions[1:]:
        findings.append(
            _finding(
                "AIC102",
                "error",
                f"a second AI Context block starts here (the first is on line "
                f"{regions[0].heading.number})",
                extra.heading.number,
                "Keep one block per issue: merge the two and delete the other heading.",
            )
        )
    region = regions[0]
    raw_fields = _raw_fields(region, findings)
    block, field_lines = _build(raw_fields, findings)
    marker = _check_marker(region, findings)
    dropped_numbers = {f.line for f in findings if f.code == "AIC103"}
    seen: set[str] = set()
    for raw in raw_fields:
        name = raw.key or _canon_label(raw.label)
        if name in seen:  # the AIC104 duplicate: its line and its sub-items are not in the model
            dropped_numbers.update([raw.line, *(c.number for c in raw.children)])
        seen.add(name)
    dropped = [line for line in region.lines if line.number in dropped_numbers]
    return Parsed(block, findings, region, field_lines, marker, len(regions), dropped)


def _raw_fields(region: Region, findings: list[Finding]) -> list[_RawField]:
    fields: list[_RawField] = []
    current: _RawField | None = None
    for line in region.lines:
        text = line.text
        if not text.strip():
            continue
        indent = _indent(text)
        stripped = text.strip()
        if indent < 2:
            pair = field_of(stripped)
            if pair is not None:
                label, value = pair
                current = _RawField(label, ALIASES.get(_canon_label(label)), value, line.number)
                fields.append(current)
                continue
            current = None
            findings.append(
                _finding(
                    "AIC103",
                    "warning",
                    f"cannot read this line as a field: {_clip(stripped)}",
                    line.number,
                    "Write fields as '- **Label:** value'; indent sub-items under their field.",
                )
            )
            continue
        if current is None:
            findings.append(
                _finding(
                    "AIC103",
                    "warning",
                    f"indented line outside any field: {_clip(stripped)}",
                    line.number,
                    "Indent sub-items under the field they belong to.",
                )
            )
            continue
        current.children.append(line)
    return fields


def _clip(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _strip_item(text: str) -> str:
    stripped = text.strip()
    bullet = _BULLET_RE.match(stripped)
    if bullet:
        return stripped[bullet.end() :].strip()
    numbered = _NUMBERED_RE.match(stripped)
    if numbered:
        return stripped[numbered.end() :].strip()
    return stripped


def _list_items(raw: _RawField) -> list[str]:
    items: list[str] = []
    if raw.value and not _is_placeholder(raw.value):
        items.append(raw.value)
    for child in raw.children:
        stripped = child.text.strip()
        if _BULLET_RE.match(stripped) or _NUMBERED_RE.match(stripped) or not items:
            item = _strip_item(stripped)
            if item and not _is_placeholder(item):
                items.append(item)
        else:
            items[-1] = items[-1] + " " + stripped
    return items


def _joined(raw: _RawField) -> str:
    parts = [raw.value] + [_strip_item(c.text) for c in raw.children]
    return " ".join(p for p in parts if p)


def _plan(raw: _RawField, findings: list[Finding]) -> list[PlanStep]:
    lines = list(raw.children)
    if raw.value and raw.value.lower() not in EMPTY_WORDS:
        lines.insert(0, Line(raw.line, 0, raw.value))
    # (line, number, text, checkbox): a line that starts no step continues the one before it,
    # so a step wrapped over two lines keeps the status written at its end.
    pending: list[tuple[int, int, str, str | None]] = []
    for line in lines:
        stripped = line.text.strip()
        checkbox = _CHECKBOX_RE.match(stripped)
        numbered = _NUMBERED_RE.match(stripped)
        bullet = _BULLET_RE.match(stripped)
        if checkbox:
            start = (len(pending) + 1, stripped[checkbox.end() :], checkbox.group(1))
        elif numbered:
            start = (int(numbered.group(1)), stripped[numbered.end() :], None)
        elif bullet:
            start = (len(pending) + 1, stripped[bullet.end() :], None)
        elif pending:
            at, number, text, box = pending[-1]
            pending[-1] = (at, number, f"{text} {stripped}", box)
            continue
        else:
            start = (1, stripped, None)
        pending.append((line.number, *start))
    steps: list[PlanStep] = []
    for at, number, text, box in pending:
        _add_step(steps, findings=findings, line=at, number=number, text=text, box=box)
    return steps


def _add_step(
    steps: list[PlanStep],
    *,
    findings: list[Finding],
    line: int,
    number: int,
    text: str,
    box: str | None,
) -> None:
    body, word = split_status(text)
    status = normalise_status(word) if word is not None else None
    if word is not None and status is None:
        findings.append(
            _finding(
                "AIC106",
                "warning",
                f"plan step {number}: status '{_clip(word, 30)}' is not one of "
                f"{', '.join(STEP_STATUSES)}",
                line,
                "End each step with (done), (in progress), (pending), (blocked) or (skipped).",
            )
        )
        body = text.strip()
    if status is None and box is not None and word is None:
        status = "done" if box in "xX" else "pending"
    if not body.strip():
        findings.append(
            _finding(
                "AIC103", "warning", f"plan step {number} has no text", line, "Describe the step."
            )
        )
        return
    if status is None and word is None:
        findings.append(
            _finding(
                "AIC105",
                "warning",
                f"plan step {number} has no status",
                line,
                "End the step with (done), (in progress), (pending), (blocked) or (skipped).",
            )
        )
    steps.append(PlanStep(number=number, text=body, status=status))


def parse_timestamp(value: str) -> tuple[datetime | None, str | None]:
    """ISO 8601 -> (UTC datetime, problem code). AIC301 unreadable; AIC302 not in UTC."""
    text = value.strip().strip("`").strip()
    if not text or len(text) > 64:
        return None, "AIC301"
    try:
        stamp = datetime.fromisoformat(text)
    except ValueError:
        return None, "AIC301"
    if stamp.tzinfo is None:
        return stamp.replace(tzinfo=UTC, microsecond=0), "AIC302"
    offset = stamp.utcoffset()
    problem = None if offset is not None and not offset else "AIC302"
    return stamp.astimezone(UTC).replace(microsecond=0), problem


def _build(raw_fields: list[_RawField], findings: list[Finding]) -> tuple[Block, dict[str, int]]:
    values: dict[str, object] = {}
    extra: dict[str, str] = {}
    field_lines: dict[str, int] = {}
    seen: dict[str, int] = {}
    for raw in raw_fields:
        name = raw.key or _canon_label(raw.label)
        if name in seen:
            findings.append(
                _finding(
                    "AIC104",
                    "warning",
                    f"field '{raw.label}' appears again (first on line {seen[name]}); "
                    "this one is ignored",
                    raw.line,
                    "Keep each field once.",
                )
            )
            continue
        seen[name] = raw.line
        field_lines[name] = raw.line
        if raw.key is None:
            lines = [raw.value] + [c.text.rstrip() for c in raw.children]
            label = _one_line(raw.label)
            if label and "**" not in label and not label.endswith(":"):
                extra[label] = "\n".join(lines)
            continue
        _set_known(raw, values, findings)
    return Block.model_validate({**values, "extra": extra}), field_lines


def _set_known(raw: _RawField, values: dict[str, object], findings: list[Finding]) -> None:
    key = raw.key
    if key == "actor":
        text = _joined(raw)
        if text.strip("`"):
            word, _, rest = text.partition(" ")
            rest = rest.strip()
            if rest.startswith("(") and rest.endswith(")"):
                rest = rest[1:-1].strip()
            values["actor"] = word.strip("`") or None
            values["actor_description"] = rest or None
    elif key == "phase":
        text = _joined(raw)
        match = _CHUNK_RE.search(text)
        head = text[: match.start()].rstrip() if match else text
        if match and head:
            values["phase"], values["chunk"] = head, (int(match.group(1)), int(match.group(2)))
        elif text:
            values["phase"] = text
    elif key == "last_updated":
        text = _joined(raw)
        stamp, problem = parse_timestamp(text)
        values["last_updated"] = stamp
        if problem == "AIC301":
            findings.append(
                _finding(
                    "AIC301",
                    "error",
                    f"Last updated '{_clip(text, 40)}' is not an ISO 8601 timestamp",
                    raw.line,
                    "Write it as 2026-05-26T14:32:00Z (UTC, with Z).",
                )
            )
        elif problem == "AIC302":
            findings.append(
                _finding(
                    "AIC302",
                    "warning",
                    f"Last updated '{_clip(text, 40)}' is not in UTC; read as "
                    f"{format_timestamp(stamp)}",
                    raw.line,
                    "Write timestamps in UTC with a Z suffix.",
                )
            )
    elif key == "plan":
        values["plan"] = _plan(raw, findings)
    elif key == "files_touched":
        values["files_touched"] = ", ".join(
            p for p in [raw.value] + [_strip_item(c.text) for c in raw.children] if p
        )
    elif key in ("decisions", "blockers"):
        values[key] = _list_items(raw)
    elif key == "next_step":
        values["next_step"] = _joined(raw)


# --- markers and hashing ----------------------------------------------------------------


def content_hash(text: str) -> str:
    """SHA-256 of the block text, blind to line endings and trailing spaces GitHub may add."""
    lines = [ln.rstrip() for ln in text.replace("\r\n", "\n").split("\n")]
    return hashlib.sha256("\n".join(lines).strip().encode("utf-8")).hexdigest()


def _check_marker(region: Region, findings: list[Finding]) -> Marker | None:
    if region.begin_marker is None:
        return None
    attrs = dict(_MARKER_ATTR_RE.findall(region.begin_marker.text))
    version = int(attrs["v"]) if attrs.get("v", "").isdigit() else None
    digest = attrs.get("sha256")
    if version != FORMAT_VERSION:
        findings.append(
            _finding(
                "AIC402",
                "warning",
                f"block marker has format version {attrs.get('v', 'none')}; this tool "
                f"writes version {FORMAT_VERSION}",
                region.begin_marker.number,
                "Re-save the block with `ai-context save` to rewrite it in the current format.",
            )
        )
    text = "\n".join([region.heading.text] + [ln.text for ln in region.lines])
    matches = digest is not None and digest == content_hash(text)
    if digest is not None and not matches:
        findings.append(
            _finding(
                "AIC401",
                "warning",
                "the block was edited by hand since the agent last wrote it (hash mismatch)",
                region.heading.number,
                "Ask the agent to make the change and save the block; hand edits are "
                "overwritten at its next checkpoint.",
            )
        )
    return Marker(version, digest, matches)


# --- rendering --------------------------------------------------------------------------


def format_timestamp(stamp: datetime | None) -> str:
    if stamp is None:
        return ""
    s = stamp.astimezone(UTC)
    return f"{s.year:04d}-{s.month:02d}-{s.day:02d}T{s.hour:02d}:{s.minute:02d}:{s.second:02d}Z"


def render(block: Block, *, markers: bool = False, newline: str = "\n") -> str:
    """The canonical text of a block, without a trailing newline."""
    lines = [f"## {HEADING_TITLE} {HEADING_NOTE}", ""]

    def add(key: str, value: str) -> None:
        lines.append(f"- **{LABELS[key]}:** {value}".rstrip())

    if block.actor is not None:
        desc = f" ({block.actor_description})" if block.actor_description else ""
        add("actor", block.actor + desc)
    if block.phase is not None:
        chunk = f" (chunk {block.chunk[0]} of {block.chunk[1]})" if block.chunk else ""
        add("phase", block.phase + chunk)
    if block.last_updated is not None:
        add("last_updated", format_timestamp(block.last_updated))
    if block.plan:
        add("plan", "")
        for step in block.plan:
            status = f" ({step.status})" if step.status else ""
            lines.append(f"  {step.number}. {step.text}{status}")
    if block.files_touched is not None:
        add("files_touched", block.files_touched)
    for key, items in (("decisions", block.decisions), ("blockers", block.blockers)):
        add(key, "" if items else "none")
        lines.extend(f"  - {item}" for item in items)
    if block.next_step is not None:
        add("next_step", block.next_step)
    for label, value in block.extra.items():
        lines.append(f"- **{label}:** {value}".rstrip())
    text = "\n".join(lines)
    if markers:
        head = f"{BEGIN_MARKER} v={FORMAT_VERSION} sha256={content_hash(text)} -->"
        text = f"{head}\n{text}\n{END_MARKER}"
    return text.replace("\n", newline) if newline != "\n" else text


def replace_block(body: str, block: Block, *, markers: bool = True) -> str:
    """The body with only its block replaced (or the block inserted at the top)."""
    if not find(body):
        first = body.find("\n")
        newline = "\r\n" if first > 0 and body[first - 1] == "\r" else "\n"
        text = render(block, markers=markers, newline=newline)
        return text + newline + newline + body if body else text
    parsed = parse(body)
    region = parsed.region
    assert region is not None  # find() found one, so parse() has it
    after_heading = region.heading.start + len(region.heading.text)
    newline = "\r\n" if body.startswith("\r\n", after_heading) else "\n"
    text = render(block, markers=markers, newline=newline)
    if parsed.dropped:  # lines the old block held but could not read: kept, below the block
        text += newline + newline + newline.join(line.text for line in parsed.dropped)
    return body[: region.start] + text + body[region.end :]
