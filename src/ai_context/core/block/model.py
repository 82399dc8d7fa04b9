"""The block model: one task's working state, normalised so parse(render(m)) == m (pure)."""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, computed_field, field_validator, model_validator

from ai_context.core.block.syntax import (
    ALIASES,
    CHUNK_RE,
    StepStatus,
    canon_label,
    is_placeholder,
    normalise_status,
    one_line,
    split_status,
)


class PlanStep(BaseModel):
    model_config = ConfigDict(frozen=True)

    number: int
    text: str
    status: StepStatus | None = None

    @field_validator("text")
    @classmethod
    def _text(cls, value: str) -> str:
        value = one_line(value)
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
        value = one_line(value)
        return value or None

    @field_validator("decisions", "blockers")
    @classmethod
    def _items(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        # "none" (or a dash placeholder, which Markdown would read as a rule) is no item.
        items = (one_line(v) for v in value)
        return tuple(item for item in items if item and not is_placeholder(item))

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
            name = one_line(label)
            if not name or "**" in name or name.endswith(":"):
                raise ValueError(f"unusable field label {label!r}")
            if canon_label(name) in ALIASES:
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
            match = CHUNK_RE.search(self.phase)
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


def format_timestamp(stamp: datetime | None) -> str:
    if stamp is None:
        return ""
    s = stamp.astimezone(UTC)
    return f"{s.year:04d}-{s.month:02d}-{s.day:02d}T{s.hour:02d}:{s.minute:02d}:{s.second:02d}Z"
