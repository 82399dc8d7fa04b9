"""What one run mirrors: the `mirror:` settings, the findings (AIC70x) and the targets."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ai_context.core.block.parse import parse
from ai_context.core.errors import ConfigError
from ai_context.core.fields import explain
from ai_context.core.findings import Finding
from ai_context.core.models import Issue
from ai_context.rules.actors import ActorMap
from ai_context.rules.mirror.link import Link, find_link, trusted, untrusted
from ai_context.rules.mirror.text import (
    DEFAULT_FIELD,
    DEFAULT_MAX_LENGTH,
    MIN_MAX_LENGTH,
    TEMPLATE,
    mirror_text,
)

if TYPE_CHECKING:  # the settings load without Jinja; a run that mirrors renders with it
    from jinja2 import Environment

    from ai_context.rules.mirror.clickup import FieldMatch


class MirrorConfig(BaseModel):
    """The `mirror:` section of the config file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    field: str = Field(default=DEFAULT_FIELD, min_length=1, max_length=200)
    max_length: int = Field(default=DEFAULT_MAX_LENGTH, ge=MIN_MAX_LENGTH, le=1_000_000)
    template: str = Field(default=TEMPLATE, min_length=1)
    # ClickUp list ids whose tasks a full rebuild reads in pages (`list_ids[]`); empty: read
    # the pages filtered by the mirror field instead.
    lists: tuple[str, ...] = ()

    @field_validator("lists", mode="before")
    @classmethod
    def _lists(cls, value: Any) -> Any:
        if isinstance(value, (str, int)):
            value = str(value).split(",")
        if isinstance(value, list | tuple):
            return tuple(str(v).strip() for v in value if str(v).strip())
        return value

    @field_validator("field")
    @classmethod
    def _field(cls, value: str) -> str:
        if value != value.strip():
            raise ValueError(f"{value!r} has spaces around it; write the field name exactly")
        return value


def load_mirror_config(section: Any, where: str = "the config file") -> MirrorConfig:
    """The `mirror:` section, validated; a bad value is a ConfigError naming the key."""
    if section is None:
        return MirrorConfig()
    if not isinstance(section, dict):
        raise ConfigError(
            f"{where} section mirror: must be a mapping (field, max-length, template, lists)"
        )
    values = {str(k).replace("-", "_"): v for k, v in section.items()}
    try:
        return MirrorConfig.model_validate(values)
    except ValidationError as exc:
        known = "known: field, max-length, template, lists"
        problems = explain(exc, "mirror", known, lambda key: key.replace("_", "-"))
        raise ConfigError(f"{where}: {problems}") from exc


# --- findings ---------------------------------------------------------------------------


def not_found(link: Link, detail: str) -> Finding:
    return Finding(
        code="AIC701",
        severity="warning",
        message=f"linked ClickUp task not found: {link.text or link.task_id} ({detail})",
        line=link.line,
        hint="Fix or remove the ClickUp link in the issue body, or restore the task in ClickUp "
        "(the token's user must be able to see it).",
    )


def duplicate_field(link: Link, match: FieldMatch, name: str, list_id: str) -> Finding:
    ids = ", ".join(f.id for f in match.candidates)
    return Finding(
        code="AIC702",
        severity="error",
        message=f"ClickUp list {list_id} has {len(match.candidates)} fields named {name} "
        f"({ids}); the mirror cannot tell which one to write",
        line=link.line,
        hint=f"Keep one Text field named {name} (at the space level) and rename or delete "
        "the others.",
    )


def needs_workspace(link: Link) -> Finding:
    return Finding(
        code="AIC703",
        severity="warning",
        message=f"ClickUp custom task id {link.task_id} needs the workspace id to be found",
        line=link.line,
        hint="Link the task with its full URL (https://app.clickup.com/t/<workspace>/"
        f"{link.task_id}) or set the clickup-team-id input.",
    )


def shared_task(link: Link, others: Sequence[int]) -> Finding:
    names = ", ".join(f"#{n}" for n in others)
    return Finding(
        code="AIC704",
        severity="warning",
        message=f"ClickUp task {link.text or link.task_id} is also linked from {names}; "
        "none of them is mirrored, since each would overwrite the others",
        line=link.line,
        hint="Link each ClickUp task from one issue only.",
    )


class Target(BaseModel):
    """One issue whose block is mirrored to one ClickUp task, and the text the field wants."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    issue: Issue
    link: Link
    text: str


def targets(
    issues: Sequence[Issue],
    env: Environment,
    config: MirrorConfig,
    team_id: str | None = None,
    actors: ActorMap | None = None,
) -> tuple[list[Target], dict[int, list[Finding]]]:
    """The issues to mirror; an issue without a block or a link is left out without a word, and
    an untrusted link, a custom id without a workspace or a shared task is a finding on each."""
    findings: dict[int, list[Finding]] = {}
    by_task: dict[str, list[Target]] = {}
    for issue in issues:
        block = parse(issue.body).block
        if block is None:
            continue
        link = find_link(issue.body, team_id)
        if link is None:
            continue
        if not trusted(issue, block.actor, actors or ActorMap()):
            findings.setdefault(issue.number, []).append(untrusted(link, issue, block.actor))
            continue
        if not link.resolvable:
            findings.setdefault(issue.number, []).append(needs_workspace(link))
            continue
        text = mirror_text(issue, block, env, template=config.template, limit=config.max_length)
        by_task.setdefault(link.key, []).append(Target(issue=issue, link=link, text=text))
    for group in (group for group in by_task.values() if len(group) > 1):
        for target in group:
            others = [t.issue.number for t in group if t is not target]
            findings.setdefault(target.issue.number, []).append(shared_task(target.link, others))
    return [group[0] for group in by_task.values() if len(group) == 1], findings
