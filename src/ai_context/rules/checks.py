"""Validation, completeness and sanity rules over a parsed block -> Findings (pure).

Codes are stable (users filter on them, tools read them):
  AIC1xx structure (from the parser), AIC2xx completeness, AIC3xx sanity, AIC4xx tamper.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from ai_context.core.block.model import Block, block_data, format_timestamp
from ai_context.core.block.parse import Parsed, parse
from ai_context.core.block.syntax import LABELS
from ai_context.core.durations import format_duration
from ai_context.core.fields import time_after
from ai_context.core.findings import Finding
from ai_context.core.phases import FINISHED_STEPS, is_terminal, mentions_review

_OPEN_STEPS = frozenset({"pending", "in progress", None})  # a step left open (None: unmarked)
REQUIRED_DEFAULT = ("actor", "phase", "last_updated", "plan", "files_touched", "next_step")
# How long a block may go without an update before its task is stale: the one default of the
# stale-after setting, the checks', the stale rules' and the digest's.
STALE_AFTER = timedelta(hours=24)


def required_fields(value: object) -> tuple[str, ...]:
    """The config's `required:` (a list, or one comma-separated text) as field keys (`Files
    touched` and `files_touched` alike): the Action and the agent commands read it here."""
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list | tuple):
        raise ValueError("must be a list of block fields, e.g. [actor, phase, plan]")
    return tuple(str(v).strip().lower().replace(" ", "_") for v in items if str(v).strip())


@dataclass(frozen=True, slots=True)
class CheckConfig:
    """What the checks require and tolerate (a dataclass: `validate` imports no pydantic).
    An unknown `required` field is a ValueError naming the known ones."""

    required: tuple[str, ...] = REQUIRED_DEFAULT
    stale_after: timedelta = STALE_AFTER
    clock_skew: timedelta = timedelta(minutes=5)

    def __post_init__(self) -> None:
        required = tuple(self.required)
        unknown = [v for v in required if v not in LABELS]
        if unknown:
            raise ValueError(
                f"unknown required field(s) {', '.join(unknown)}; choose from " + ", ".join(LABELS)
            )
        object.__setattr__(self, "required", required)


_DEFAULT_CONFIG = CheckConfig()


@dataclass(frozen=True, slots=True)
class CheckResult:
    """A body's block (if any) and every finding about it, sorted by line."""

    block: Block | None
    findings: tuple[Finding, ...]
    complete: bool

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity == "error")


def missing_fields(block: Block, required: tuple[str, ...] = REQUIRED_DEFAULT) -> list[str]:
    """Required fields the block lacks, by key, in canonical order."""
    # Blockers "none" is a complete answer; Block never holds a field set but empty.
    return [
        key for key in LABELS if key in required and key != "blockers" and not getattr(block, key)
    ]


def completeness(parsed: Parsed, missing: list[str]) -> list[Finding]:
    """AIC201 for each required field MISSING (missing_fields' answer)."""
    if parsed.block is None or parsed.region is None:
        return []
    unreadable = {"last_updated"} if "last_updated" in parsed.field_lines else set()
    out = []
    for key in missing:
        if key in unreadable:
            continue  # already an AIC301 error on its own line
        out.append(
            Finding(
                code="AIC201",
                severity="error",
                message=f"required field '{LABELS[key]}' is missing or empty",
                line=parsed.field_lines.get(key, parsed.region.heading.number),
                hint=f"Add '- **{LABELS[key]}:** ...' to the block; a half-state gives the "
                "next session false confidence.",
            )
        )
    return out


def sanity(parsed: Parsed, now: datetime | None, config: CheckConfig) -> list[Finding]:
    """The AIC3xx warnings: what the block says against the clock and against itself."""
    block = parsed.block
    if block is None or parsed.region is None:
        return []
    heading = parsed.region.heading.number
    out: list[Finding] = []

    def warn(code: str, field: str, message: str, hint: str, line: int | None = None) -> None:
        """A warning on FIELD's line (LINE when the block has no such field)."""
        out.append(Finding(code, "warning", message, parsed.field_lines.get(field, line), hint))

    stamp = block.last_updated
    if stamp is not None and now is not None:
        age = now.astimezone(UTC) - stamp
        if -age > config.clock_skew:
            warn(
                "AIC303",
                "last_updated",
                f"Last updated {format_timestamp(stamp)} is in the future "
                f"(more than {format_duration(config.clock_skew)} ahead of the clock)",
                "Check the agent machine's clock; write the time in UTC with Z.",
            )
        elif age > config.stale_after and not is_terminal(block.phase):
            # No relative age here: the message must not change from run to run, or the
            # sticky comment would be rewritten every time.
            warn(
                "AIC304",
                "last_updated",
                f"Last updated {format_timestamp(stamp)} is older than the stale "
                f"threshold ({format_duration(config.stale_after)})",
                "Have the active actor save a checkpoint, or hand the task off.",
            )
    if block.chunk is not None and not 1 <= block.chunk[0] <= block.chunk[1]:
        warn(
            "AIC307",
            "phase",
            f"Phase says chunk {block.chunk[0]} of {block.chunk[1]}",
            "Write '(chunk N of M)' with 1 <= N <= M.",
        )
    statuses = {step.status for step in block.plan}
    if (
        block.plan
        and statuses <= FINISHED_STEPS
        and block.phase is not None
        and not is_terminal(block.phase)
        and not mentions_review(block.phase)  # all steps done is what review looks like
    ):
        warn(
            "AIC305",
            "phase",
            f"every plan step is done but Phase is '{block.phase}'",
            "Set Phase to done (or add the remaining steps to the plan).",
            heading,
        )
    if not statuses.isdisjoint(_OPEN_STEPS) and not block.next_step:
        warn(
            "AIC306",
            "next_step",
            "plan steps are still open but Next step is empty",
            "Say what the next session should do first.",
            heading,
        )
    if len({step.number for step in block.plan}) != len(block.plan):
        warn(
            "AIC308",
            "plan",
            "plan step numbers repeat",
            "Number the steps 1, 2, 3, ... once each.",
            heading,
        )
    return out


def next_change(block: Block | None, now: datetime, config: CheckConfig) -> datetime | None:
    """When time alone next changes what `sanity` finds in BLOCK: a future Last updated comes
    within the clock skew (AIC303 ends), or grows older than stale-after (AIC304 begins)."""
    if block is None or block.last_updated is None:
        return None
    now = now.astimezone(UTC)
    stamp = block.last_updated
    ahead = time_after(stamp, -config.clock_skew)
    if ahead is not None and now < ahead:
        return ahead
    stale = time_after(stamp, config.stale_after)
    return stale if stale is not None and now <= stale and not is_terminal(block.phase) else None


def check_body(
    body: str, *, now: datetime | None = None, config: CheckConfig | None = None
) -> CheckResult:
    """Every finding about one issue body, sorted by line."""
    parsed = parse(body)
    config = config or _DEFAULT_CONFIG
    missing = missing_fields(parsed.block, config.required) if parsed.block is not None else []
    findings = [*parsed.findings, *completeness(parsed, missing), *sanity(parsed, now, config)]
    findings.sort(key=lambda f: (f.line or 0, f.code))
    complete = parsed.block is not None and not missing
    return CheckResult(block=parsed.block, findings=tuple(findings), complete=complete)


def result_json(path: str, result: CheckResult) -> dict[str, Any]:
    """The stable JSON shape of one checked body (`validate --format json`, the MCP tool):
    keys may be added, never renamed."""
    return {
        "path": path,
        "complete": result.complete,
        "block": None if result.block is None else block_data(result.block),
        "findings": [finding_json(f) for f in result.findings],
    }


def finding_json(f: Finding) -> dict[str, Any]:
    """One finding in the JSON outputs (`validate`, `derive`), keys in this order."""
    return {
        "code": f.code,
        "severity": f.severity,
        "line": f.line,
        "message": f.message,
        "hint": f.hint,
    }
