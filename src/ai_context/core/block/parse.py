"""The tolerant parser: every problem of a block is a Finding, never an exception (pure)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, NamedTuple

from ai_context.core.block.locate import Line, Region, find, nested_titles
from ai_context.core.block.markers import Marker, check_marker
from ai_context.core.block.model import Block, BlockError, PlanStep, format_timestamp
from ai_context.core.block.syntax import (
    ALIASES,
    BULLET_RE,
    CHUNK_RE,
    EMPTY_WORDS,
    LABELLED_RE,
    NUMBERED_RE,
    STEP_START_RE,
    STEP_STATUSES,
    StepStatus,
    canon_label,
    field_of,
    is_placeholder,
    normalise_status,
    one_line,
    split_status,
)
from ai_context.core.fields import utc
from ai_context.core.findings import Finding, make_finding


@dataclass
class Parsed:
    """What parsing a body found: the block (if any), its findings and where things are."""

    block: Block | None
    findings: list[Finding]
    region: Region | None = None
    field_lines: dict[str, int] = field(default_factory=dict)
    marker: Marker | None = None
    # Lines inside the block that the model does not hold (unreadable lines, a field given
    # twice): replace_block keeps their text after the new block, so no human text is lost.
    dropped: list[Line] = field(default_factory=list)


class _RawField(NamedTuple):
    """A field line as written, and the lines under it (made once per field of every body: a
    named tuple is the cheapest record to build; only its list of children grows)."""

    label: str
    key: str | None
    value: str
    line: int
    children: list[Line]


def parse(body: str) -> Parsed:
    """Find and parse the block of a whole issue body; never raises on any text."""
    regions = find(body)
    findings: list[Finding] = []
    if not regions:
        findings.append(
            make_finding(
                "AIC101",
                "error",
                "no AI Context block found",
                None,
                "Add a '## AI Context' heading with the fields at the top of the issue body.",
            )
        )
        findings.extend(_nested(body))
        return Parsed(None, findings)
    for extra in regions[1:]:
        findings.append(
            make_finding(
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
    marker = check_marker(region, findings)
    dropped = _dropped(region, raw_fields, findings)
    return Parsed(block, findings, region, field_lines, marker, dropped)


def _nested(body: str) -> list[Finding]:
    """AIC107 for each AI Context heading GitHub shows inside a block quote or a list item: a
    quotation (GitHub's "Quote reply" writes one) or part of an item, never the block, so a
    quoted old or foreign block cannot steer the tools; said, so nobody wonders where it went."""
    return [
        make_finding(
            "AIC107",
            "warning",
            f"this AI Context heading is inside a {container}: "
            + ("a quotation" if container == "block quote" else "part of the item")
            + ", not the block",
            line,
            "To make it the block, move it to the top level (without the '>' or the list "
            "marker); a quotation can stay as it is.",
        )
        for line, container in nested_titles(body)
    ]


def _dropped(region: Region, raw_fields: list[_RawField], findings: list[Finding]) -> list[Line]:
    """The lines the model does not hold: unreadable ones (AIC103), repeated fields (AIC104)."""
    if not any(f.code in ("AIC103", "AIC104") for f in findings):
        return []  # the common case: every line is in the model
    dropped_numbers = {f.line for f in findings if f.code == "AIC103"}
    seen: set[str] = set()
    for raw in raw_fields:
        name = raw.key or canon_label(raw.label)
        if name in seen:  # the AIC104 duplicate: its line and its sub-items are not in the model
            dropped_numbers.update([raw.line, *(c.number for c in raw.children)])
        seen.add(name)
    return [line for line in region.lines if line.number in dropped_numbers]


_new_field = tuple.__new__  # _RawField(...) without its Python __new__
_labelled = LABELLED_RE.match


@lru_cache(maxsize=256)  # the same few labels on every field line of every body
def _field_key(label: str) -> str | None:
    """The known field a label names (an alias, any case), or None for an extra field."""
    return ALIASES.get(canon_label(label))


def _raw_fields(region: Region, findings: list[Finding]) -> list[_RawField]:
    fields: list[_RawField] = []
    current: _RawField | None = None
    for line in region.lines:
        number, _, text = line
        stripped = text.strip()
        if not stripped:
            continue
        # Top level (indent_width < 2), inline: no space or tab first, or one space then neither.
        lead = text[0]
        if lead not in " \t" or (lead == " " and text[1] not in " \t"):
            labelled = _labelled(stripped)  # `- **Label:** value`: field_of's first, inline
            pair = labelled.groups() if labelled is not None else field_of(stripped)
            if pair is not None:
                label, value = pair
                current = _new_field(_RawField, (label, _field_key(label), value, number, []))
                fields.append(current)
                continue
            current = None
            _warn(
                findings,
                "AIC103",
                f"cannot read this line as a field: {_clip(stripped)}",
                line.number,
                "Write fields as '- **Label:** value'; indent sub-items under their field.",
            )
            continue
        if current is None:
            _warn(
                findings,
                "AIC103",
                f"indented line outside any field: {_clip(stripped)}",
                line.number,
                "Indent sub-items under the field they belong to.",
            )
            continue
        current.children.append(line)
    return fields


def _warn(findings: list[Finding], code: str, message: str, line: int | None, hint: str) -> None:
    findings.append(make_finding(code, "warning", message, line, hint))


def _clip(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _strip_item(text: str) -> str:
    stripped = text.strip()
    marker = BULLET_RE.match(stripped) or NUMBERED_RE.match(stripped)
    return stripped[marker.end() :].strip() if marker else stripped


def _list_items(raw: _RawField) -> list[str]:
    items: list[str] = []
    if raw.value and not is_placeholder(raw.value):
        items.append(raw.value)
    for child in raw.children:
        stripped = child.text.strip()
        marker = BULLET_RE.match(stripped) or NUMBERED_RE.match(stripped)
        if marker or not items:
            item = stripped[marker.end() :].strip() if marker else stripped  # as _strip_item
            if item and not is_placeholder(item):
                items.append(item)
        else:
            items[-1] = items[-1] + " " + stripped
    return items


def _joined(raw: _RawField) -> str:
    if not raw.children:
        return raw.value  # a field on one line: most of them
    parts = [raw.value] + [_strip_item(c.text) for c in raw.children]
    return " ".join(p for p in parts if p)


def _plan(raw: _RawField, findings: list[Finding]) -> list[PlanStep]:
    lines = raw.children
    if raw.value and raw.value.lower() not in EMPTY_WORDS:
        lines = [Line(raw.line, 0, raw.value), *lines]
    # (line, number, text, checkbox): a line that starts no step continues the one before it,
    # so a step wrapped over two lines keeps the status written at its end.
    pending: list[tuple[int, int, str, str | None]] = []
    step: tuple[int, int, str, str | None]
    for number, _, text in lines:
        stripped = text.strip()
        start = STEP_START_RE.match(stripped)
        if start is None:
            if pending:
                at, written, before, box = pending[-1]
                pending[-1] = (at, written, f"{before} {stripped}", box)
                continue
            step = (number, 1, stripped, None)
        elif (digits := start.group(2)) is not None:
            step = (number, int(digits), stripped[start.end() :], None)
        else:  # a checkbox (group 1: its mark) or a bullet
            step = (number, len(pending) + 1, stripped[start.end() :], start.group(1))
        pending.append(step)
    steps: list[PlanStep] = []
    for step in pending:
        body, word = split_status(step[2])
        status = normalise_status(word) if word is not None else None
        if status is not None:  # the common step: its text, then a known status
            steps.append(PlanStep(step[1], body, status))
        else:
            _add_step(steps, findings, step, body, word)
    return steps


def _add_step(
    steps: list[PlanStep],
    findings: list[Finding],
    step: tuple[int, int, str, str | None],
    body: str,
    word: str | None,
) -> None:
    """STEP is (line, number, text, checkbox mark or None), its TEXT split into BODY and a
    status WORD that names no status (or None): a finding, or a status from the checkbox."""
    line, number, text, box = step
    status: StepStatus | None = None
    if word is not None:
        _warn(
            findings,
            "AIC106",
            f"plan step {number}: status '{_clip(word, 30)}' is not one of "
            f"{', '.join(STEP_STATUSES)}",
            line,
            "End each step with (done), (in progress), (pending), (blocked) or (skipped).",
        )
        body = text.strip()
    elif box is not None:
        status = "done" if box in "xX" else "pending"
    if not body.strip():
        _warn(findings, "AIC103", f"plan step {number} has no text", line, "Describe the step.")
        return
    if status is None and word is None:
        _warn(
            findings,
            "AIC105",
            f"plan step {number} has no status",
            line,
            "End the step with (done), (in progress), (pending), (blocked) or (skipped).",
        )
    steps.append(PlanStep(number, body, status))


def parse_timestamp(value: str) -> tuple[datetime | None, str | None]:
    """ISO 8601 -> (UTC datetime, problem code). AIC301 unreadable; AIC302 not in UTC."""
    text = value.strip().strip("`").strip()
    if not text or len(text) > 64:
        return None, "AIC301"
    try:
        stamp = datetime.fromisoformat(text)
    except ValueError:
        return None, "AIC301"
    if stamp.tzinfo is UTC and not stamp.microsecond:
        return stamp, None  # written with Z, as the format asks: already what is returned
    if stamp.tzinfo is None:
        return stamp.replace(tzinfo=UTC, microsecond=0), "AIC302"
    offset = stamp.utcoffset()
    problem = None if offset is not None and not offset else "AIC302"
    try:
        return utc(stamp).replace(microsecond=0), problem
    except ValueError:  # an offset past the calendar's edge: 0001-01-01T00:00:00+01:00
        return None, "AIC301"


def _build(raw_fields: list[_RawField], findings: list[Finding]) -> tuple[Block, dict[str, int]]:
    values: dict[str, Any] = {}  # the readers give field names and values: Block checks them
    extra: dict[str, str] = {}
    field_lines: dict[str, int] = {}  # also the fields seen so far
    for raw in raw_fields:
        name = raw.key or canon_label(raw.label)
        if name in field_lines:
            _warn(
                findings,
                "AIC104",
                f"field '{raw.label}' appears again (first on line {field_lines[name]}); "
                "this one is ignored",
                raw.line,
                "Keep each field once.",
            )
            continue
        field_lines[name] = raw.line
        if raw.key is None:
            lines = [raw.value] + [c.text.rstrip() for c in raw.children]
            label = one_line(raw.label)
            if label and "**" not in label and not label.endswith(":"):
                extra[label] = "\n".join(lines)
            continue
        reader = _READERS.get(raw.key)  # each known field has its own reader
        if reader is not None:
            reader(raw, findings, values)
    return _block(values, extra, field_lines, findings), field_lines


# The fields a rule across fields (BlockError "block") can refuse: each needs a partner.
_PARTNERED = ("chunk", "actor_description")
_LINE_OF = {"chunk": "phase", "actor_description": "actor"}  # read from that field's line


def _block(
    values: dict[str, Any], extra: dict[str, str], lines: dict[str, int], findings: list[Finding]
) -> Block:
    """The Block of VALUES. A value the model refuses is left out with AIC103, its line kept
    as written (never an exception: this parser's promise, and a scheduled run must not stop
    at one odd block)."""
    for _ in range(len(values) + 2):
        try:
            return Block(**values, extra=extra)
        except BlockError as exc:
            name = exc.loc.split(".", 1)[0]
            if name == "extra":
                bad = [k for k in extra if not _extra_ok(k, extra[k])]
                extra = {k: v for k, v in extra.items() if k not in bad}
                dropped = [(lines.get(canon_label(k)), f"{k}: {exc.msg}") for k in bad]
            else:
                keys = [k for k in _PARTNERED if k in values] if name == "block" else [name]
                dropped = [(lines.get(_LINE_OF.get(k, k)), exc.msg) for k in keys]
                for key in keys:
                    values.pop(key, None)
            findings.extend(
                make_finding(
                    "AIC103",
                    "warning",
                    f"{message}; the field is left out",
                    line=line,
                    hint="Write the field as the format shows it (README, The block).",
                )
                for line, message in dropped
            )
    return Block()


def _extra_ok(label: str, text: str) -> bool:
    try:
        Block(extra={label: text})
    except BlockError:
        return False
    return True


def _actor_values(raw: _RawField, findings: list[Finding], values: dict[str, Any]) -> None:
    text = _joined(raw)
    if not text.strip("`"):
        return
    word, rest = (*text.split(None, 1), "")[:2]  # any whitespace: a tab, a no-break space
    rest = rest.strip()
    if rest.startswith("(") and rest.endswith(")"):
        rest = rest[1:-1].strip()
    values["actor"] = word.strip("`") or None
    values["actor_description"] = rest or None


def _phase_values(raw: _RawField, findings: list[Finding], values: dict[str, Any]) -> None:
    text = _joined(raw)
    match = CHUNK_RE.search(text)
    head = text[: match.start()].rstrip() if match else text
    if match and head:
        values["phase"], values["chunk"] = head, (int(match.group(1)), int(match.group(2)))
    elif text:
        values["phase"] = text


def _updated_values(raw: _RawField, findings: list[Finding], values: dict[str, Any]) -> None:
    text = _joined(raw)
    stamp, problem = parse_timestamp(text)
    if problem == "AIC301":
        findings.append(
            make_finding(
                "AIC301",
                "error",
                f"Last updated '{_clip(text, 40)}' is not an ISO 8601 timestamp",
                raw.line,
                "Write it as 2026-05-26T14:32:00Z (UTC, with Z).",
            )
        )
    elif problem == "AIC302":
        _warn(
            findings,
            "AIC302",
            f"Last updated '{_clip(text, 40)}' is not in UTC; read as {format_timestamp(stamp)}",
            raw.line,
            "Write timestamps in UTC with a Z suffix.",
        )
    values["last_updated"] = stamp


def _files_values(raw: _RawField, findings: list[Finding], values: dict[str, Any]) -> None:
    if not raw.children:
        values["files_touched"] = raw.value  # a field on one line: most of them
        return
    parts = [raw.value] + [_strip_item(c.text) for c in raw.children]
    values["files_touched"] = ", ".join(p for p in parts if p)


# Each known field's reader: it reads the raw field into the values Block is built from.
_READERS: dict[str, Callable[[_RawField, list[Finding], dict[str, Any]], None]] = {
    "actor": _actor_values,
    "phase": _phase_values,
    "last_updated": _updated_values,
    "plan": lambda raw, findings, values: values.__setitem__("plan", _plan(raw, findings)),
    "files_touched": _files_values,
    "decisions": lambda raw, findings, values: values.__setitem__("decisions", _list_items(raw)),
    "blockers": lambda raw, findings, values: values.__setitem__("blockers", _list_items(raw)),
    "next_step": lambda raw, findings, values: values.__setitem__("next_step", _joined(raw)),
}
