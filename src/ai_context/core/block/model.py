"""The block model: one task's working state, normalised so parse(render(m)) == m (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from functools import partial
from typing import Any

from ai_context.core.block.syntax import (
    ALIASES,
    CHUNK_RE,
    STEP_STATUSES,
    StepStatus,
    canon_label,
    is_placeholder,
    normalise_status,
    one_line,
    split_status,
)
from ai_context.core.fields import FieldError, as_text, as_time, as_whole

_LIMIT = 10**9


class BlockError(FieldError):
    """A Block or PlanStep built from values the format cannot hold (`block` names a rule
    across fields)."""


_text = partial(as_text, error=BlockError)
_number = partial(as_whole, error=BlockError)


@dataclass(frozen=True, slots=True)
class PlanStep:
    """One plan step; a text ending in "(done)" with no status is read as that status."""

    number: int
    text: str
    status: StepStatus | None = None

    def __post_init__(self) -> None:
        # Built for every plan step of every body: the checks are written out, not called.
        number, text, status = self.number, self.text, self.status
        if type(number) is not int:
            number = as_whole("number", number, BlockError)
            object.__setattr__(self, "number", number)
        if not 0 <= number < _LIMIT:
            raise BlockError("number", "a plan step number is between 0 and 999999999")
        if type(text) is not str:
            text = _text("text", text)
        text = text.strip() if "\n" not in text and "\r" not in text else one_line(text)
        if not text:
            raise BlockError("text", "a plan step needs text")
        if status is None:
            # A step whose text ends in "(done)" but has no status is the same step as the one
            # the parser would read back, so normalise it here.
            head, word = split_status(text)
            status = normalise_status(word) if word is not None else None
            if status is not None:
                text = head
        elif status not in STEP_STATUSES:
            raise BlockError("status", "must be one of " + ", ".join(map(repr, STEP_STATUSES)))
        if text is not self.text:
            object.__setattr__(self, "text", text)
        if status is not self.status:
            object.__setattr__(self, "status", status)


@dataclass(frozen=True, slots=True)
class Block:
    """One task's working state as its agent declared it. Built directly, by `block_from_data`
    (a mapping, plan steps as mappings too) or `dataclasses.replace`: each runs the same checks
    and normalisation (`__post_init__`), so every Block is a valid, canonical one."""

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
    extra: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Field by field in declaration order (the first problem is the one reported), then
        # the rules across fields.
        put = object.__setattr__
        if self.actor is not None:
            put(self, "actor", _actor(self.actor))
        if self.actor_description is not None:
            put(
                self, "actor_description", _single_line("actor_description", self.actor_description)
            )
        if self.phase is not None:
            put(self, "phase", _single_line("phase", self.phase))
        if self.chunk is not None:
            put(self, "chunk", _chunk(self.chunk))
        if self.last_updated is not None:
            put(self, "last_updated", _utc(self.last_updated))
        put(self, "plan", _steps(self.plan))
        if self.files_touched is not None:
            put(self, "files_touched", _single_line("files_touched", self.files_touched))
        put(self, "decisions", _items("decisions", self.decisions))
        put(self, "blockers", _items("blockers", self.blockers))
        if self.next_step is not None:
            put(self, "next_step", _single_line("next_step", self.next_step))
        put(self, "extra", _extra(self.extra))
        _across(self)

    @property
    def paths(self) -> tuple[str, ...]:
        """Files touched as paths, braces expanded; prose such as "plus 4 test files" dropped."""
        return expand_paths(self.files_touched or "")


FIELDS = tuple(f.name for f in fields(Block))


def block_from_data(data: Mapping[str, Any]) -> Block:
    """A Block from a mapping (pydantic's `model_validate`): unknown keys are ignored, plan
    steps may be mappings; a bad value is a BlockError naming its field."""
    return Block(**{name: data[name] for name in FIELDS if name in data})


def block_data(block: Block) -> dict[str, Any]:
    """The Block as a JSON-ready dict, `paths` included: lists for tuples, the timestamp as
    `2026-05-26T14:32:00Z`."""
    return {
        "actor": block.actor,
        "actor_description": block.actor_description,
        "phase": block.phase,
        "chunk": list(block.chunk) if block.chunk is not None else None,
        "last_updated": format_timestamp(block.last_updated) or None,
        "plan": [asdict(step) for step in block.plan],
        "files_touched": block.files_touched,
        "decisions": list(block.decisions),
        "blockers": list(block.blockers),
        "next_step": block.next_step,
        "extra": dict(block.extra),
        "paths": list(block.paths),
    }


# --- the checks, one per field (each called only for a value that is not None) -------------


def _actor(value: str) -> str:
    value = value if type(value) is str else _text("actor", value)
    value = value.strip().strip("`")  # agents often write the id as code
    if len(value.split()) != 1:  # empty, or more than one word
        raise BlockError("actor", "the actor id is one word, e.g. cc-ariel-laptop")
    return value


def _single_line(name: str, value: str) -> str | None:
    return one_line(value if type(value) is str else _text(name, value)) or None


def _chunk(value: object) -> tuple[int, int]:
    if not isinstance(value, tuple | list) or len(value) != 2:
        raise BlockError("chunk", "must be two numbers, e.g. [3, 5]")
    first, second = value
    if type(first) is not int or type(second) is not int:  # the check written out: hot
        first, second = _number("chunk.0", first), _number("chunk.1", second)
    if not (0 <= first < _LIMIT and 0 <= second < _LIMIT):
        raise BlockError("chunk", "chunk numbers are between 0 and 999999999")
    return first, second


def _utc(value: object) -> datetime:
    if isinstance(value, datetime):
        if value.tzinfo is UTC and not value.microsecond:
            return value  # what the parser reads: already normal
        if value.tzinfo is None:
            raise BlockError(
                "last_updated", "Last updated must carry a timezone (UTC, written with Z)"
            )
    return as_time("last_updated", value, BlockError).replace(microsecond=0)


def _steps(value: object) -> tuple[PlanStep, ...]:
    if not isinstance(value, tuple | list):
        raise BlockError("plan", "must be a list of plan steps")
    for step in value:
        if type(step) is not PlanStep:
            return tuple(_step(i, step) for i, step in enumerate(value))
    return tuple(value)  # every step already a PlanStep (checked when it was built)


def _step(i: int, step: object) -> PlanStep:
    if isinstance(step, PlanStep):
        return step
    if not isinstance(step, Mapping):
        raise BlockError(f"plan.{i}", "must be a plan step (number, text, status)")
    try:
        return PlanStep(**{k: step[k] for k in ("number", "text", "status") if k in step})
    except BlockError as exc:
        raise BlockError(f"plan.{i}.{exc.loc}", exc.msg) from None
    except TypeError:
        raise BlockError(f"plan.{i}", "a plan step needs a number and text") from None


def _items(name: str, value: object) -> tuple[str, ...]:
    if not isinstance(value, tuple | list):
        raise BlockError(name, "must be a list of text")
    if not value:
        return ()
    # "none" (or a dash placeholder, which Markdown would read as a rule) is no item. The
    # location is spelt only for a value that is not text (every decision of every body).
    items: list[str] = []
    for i, v in enumerate(value):
        item = one_line(v if type(v) is str else _text(f"{name}.{i}", v))
        if item and not is_placeholder(item):
            items.append(item)
    return tuple(items)


def _extra(value: object) -> dict[str, str]:
    if type(value) is not dict and not isinstance(value, Mapping):  # a dict: no ABC check
        raise BlockError("extra", "must be a mapping of field label to text")
    if not value:
        return {}
    clean: dict[str, str] = {}
    for label, text in value.items():
        name = one_line(_text("extra", label))
        if not name or "**" in name or name.endswith(":"):
            raise BlockError("extra", f"unusable field label {label!r}")
        if canon_label(name) in ALIASES:
            raise BlockError("extra", f"{name!r} is a known field, not an extra one")
        lines = [
            ln.rstrip() for ln in _text(f"extra.{label}", text).replace("\r", "\n").split("\n")
        ]
        first, rest = lines[0].strip(), [ln.strip() for ln in lines[1:] if ln.strip()]
        if any(ln.startswith("<!-- ai-context:") for ln in rest):
            raise BlockError("extra", f"field {name!r} holds an ai-context marker line")
        # Four spaces: no continuation line can then read as a heading, rule or fence.
        rest = ["    " + ln for ln in rest]
        clean[name] = "\n".join([first, *rest])
    return clean


def _across(block: Block) -> None:
    """The rules across fields: "implementing (chunk 3 of 5)" is a phase and its chunk."""
    if block.phase is not None and block.chunk is None:
        match = CHUNK_RE.search(block.phase)
        head = block.phase[: match.start()].rstrip() if match else ""
        if match and head:
            object.__setattr__(block, "phase", head)
            object.__setattr__(block, "chunk", (int(match.group(1)), int(match.group(2))))
    if block.chunk is not None and block.phase is None:
        raise BlockError("block", "a chunk needs a phase")
    if block.actor is None and block.actor_description is not None:
        raise BlockError("block", "an actor description needs an actor id")


# --- brace expansion --------------------------------------------------------------------

_MAX_BRACES = 100
_MAX_PATHS = 1000


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


def expand_braces(item: str) -> list[str]:
    """Bash-style `a/{b,c}.ts` expansion, nested, capped so a hostile body cannot explode: more
    than _MAX_BRACES braces (no real path list) is kept as written, which bounds the recursion."""
    opening = item.find("{")
    if opening < 0 or item.count("{") > _MAX_BRACES:
        return [item]
    closed = _split_top(item[opening + 1 :], "}")  # the first "}" at depth 0 closes it
    if len(closed) < 2:
        return [item]
    head, body, tail = item[:opening], closed[0], item[opening + len(closed[0]) + 2 :]
    options = _split_top(body, ",")
    if len(options) < 2:
        return [head + "{" + body + "}" + t for t in expand_braces(tail)]
    out: list[str] = []
    tails = expand_braces(tail)
    for option in options:
        for expanded in expand_braces(option):
            for t in tails:
                out.append(head + expanded + t)
                if len(out) >= _MAX_PATHS:
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


def format_timestamp(stamp: datetime | None) -> str:
    if stamp is None:
        return ""
    s = stamp.astimezone(UTC)
    return f"{s.year:04d}-{s.month:02d}-{s.day:02d}T{s.hour:02d}:{s.minute:02d}:{s.second:02d}Z"
