"""The ClickUp mirror's pure core: the link, the mirror text, the field and what to write.

The issue body is the authority; the ClickUp field is a copy rebuilt from it (docs/design.md §1).
The mirror text holds nothing that changes from run to run (no "mirrored at" time), so an
unchanged block renders the same text and costs no write: on ClickUp's free plan every
custom-field write counts against a lifetime cap of 60.

Finding codes (AIC7xx, the mirror):
  AIC701 warning  the linked ClickUp task is not found (deleted, or the token cannot see it)
  AIC702 error    two or more ClickUp fields carry the mirror field's name on the task's list
  AIC703 warning  a custom task id (DEV-123) but no workspace id to resolve it with
  AIC704 warning  one ClickUp task is linked from several issues: none of them is mirrored
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from jinja2 import Environment, TemplateError
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ai_context.core.block import Block, PlanStep, format_timestamp, parse
from ai_context.core.errors import ConfigError
from ai_context.core.findings import Finding
from ai_context.core.models import Issue
from ai_context.core.phases import current_step
from ai_context.rules.templating import make_env

TEMPLATE = "mirror.txt.j2"
DEFAULT_FIELD = "ai_context"
DEFAULT_MAX_LENGTH = 4000
MIN_MAX_LENGTH = 200
TEXT_FIELD_TYPES = frozenset({"text", "short_text"})
TRUNCATION_MARK = "\n[… truncated by ai-context; the full AI Context is at {url}]"

# --- the link ---------------------------------------------------------------------------

# A custom task id is a prefix of letters (and digits) and a number: DEV-123.
_CUSTOM_ID = r"[A-Za-z][A-Za-z0-9]{0,15}-\d{1,12}"
_NATIVE_ID = r"[0-9a-z]{3,24}"
_URL_RE = re.compile(
    r"https?://app\.clickup\.com/t/(?:(?P<team>\d{1,20})/)?(?P<id>[A-Za-z0-9-]{1,40})(?![\w-])"
)
_LABEL_RE = re.compile(
    r"^\s{0,3}(?:[-*+]\s+)?(?:\*\*|__)?clickup(?:[ _-]task)?(?:\*\*|__)?\s*:\s*(?:\*\*|__)?"
    r"\s*(?P<value>.*)$",
    re.IGNORECASE,
)
# ClickUp's GitHub convention: CU-<id> in a title or message, CU-<id>_<name> in a branch.
_CU_TOKEN_RE = re.compile(r"(?<![\w/-])[Cc][Uu]-(?P<id>" + _NATIVE_ID + r")(?![A-Za-z0-9-])")
_CUSTOM_RE = re.compile(_CUSTOM_ID)
_NATIVE_RE = re.compile(_NATIVE_ID)
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


class Link(BaseModel):
    """Which ClickUp task an issue names, and where in its body (1-based line)."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    custom: bool = False  # a custom task id (DEV-123): needs custom_task_ids=true&team_id=
    team_id: str | None = None  # the workspace, from the URL or the clickup-team-id setting
    line: int = 1
    text: str = ""  # as written, for messages

    @property
    def key(self) -> str:
        """Identity of the task across issues: native ids as they are, custom ids per team."""
        return f"{self.team_id or '?'}/{self.task_id.upper()}" if self.custom else self.task_id

    @property
    def resolvable(self) -> bool:
        return not self.custom or self.team_id is not None


def _closes(line: str, run: str, fence: str) -> bool:
    return run[0] == fence[0] and len(run) >= len(fence) and not line.strip()[len(run) :]


def _outside_fences(body: str) -> Iterator[tuple[int, str]]:
    fence: str | None = None
    for number, line in enumerate(body.splitlines(), start=1):
        opened = _FENCE_RE.match(line)
        if fence is None:
            if opened:
                fence = opened.group(1)
                continue
            yield number, line
        elif opened and _closes(line, opened.group(1), fence):
            fence = None


def _from_url(match: re.Match[str], line: int, team_id: str | None) -> Link | None:
    task, team = match.group("id"), match.group("team")
    if _CUSTOM_RE.fullmatch(task):
        return Link(
            task_id=task.upper(), custom=True, team_id=team or team_id, line=line, text=match[0]
        )
    if _NATIVE_RE.fullmatch(task):
        return Link(task_id=task, team_id=team or team_id, line=line, text=match.group(0))
    return None


def _from_value(value: str, line: int, team_id: str | None) -> Link | None:
    """The value of a `ClickUp:` line: a URL, a CU- token, a custom id or a bare task id."""
    if url := _URL_RE.search(value):
        return _from_url(url, line, team_id)
    if token := _CU_TOKEN_RE.search(value):
        return Link(task_id=token.group("id"), team_id=team_id, line=line, text=token.group(0))
    word = value.strip().strip("`*_[]()<>#").strip()
    if _CUSTOM_RE.fullmatch(word):
        return Link(task_id=word.upper(), custom=True, team_id=team_id, line=line, text=word)
    if _NATIVE_RE.fullmatch(word):
        return Link(task_id=word, team_id=team_id, line=line, text=word)
    return None


def find_link(body: str, team_id: str | None = None) -> Link | None:
    """The ClickUp task an issue body names, outside code fences, or None.

    In order: a `ClickUp: <url or id>` line, the first app.clickup.com/t/ URL, the first
    `CU-<id>` token (ClickUp's own GitHub convention). TEAM_ID (the clickup-team-id setting)
    resolves custom ids when the URL does not carry the workspace.
    """
    url: Link | None = None
    token: Link | None = None
    for number, line in _outside_fences(body):
        labelled = _LABEL_RE.match(line)
        if labelled:
            found = _from_value(labelled.group("value"), number, team_id)
            if found is not None:
                return found
        if url is None and (match := _URL_RE.search(line)):
            url = _from_url(match, number, team_id)
        if token is None and (match := _CU_TOKEN_RE.search(line)):
            token = Link(task_id=match["id"], team_id=team_id, line=number, text=match[0])
    return url or token


# --- ClickUp as the mirror sees it ------------------------------------------------------


class CustomField(BaseModel):
    """A custom field on a task (with its value when set) or on a list (no value)."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    type: str = ""
    value: Any = None


class Task(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    custom_id: str | None = None
    name: str = ""
    url: str = ""
    list_id: str = ""
    team_id: str | None = None
    fields: tuple[CustomField, ...] = ()


class FieldMatch(BaseModel):
    """The mirror field on one list: found (with its id), missing, or ambiguous."""

    model_config = ConfigDict(frozen=True)

    status: Literal["found", "missing", "duplicate", "wrong_type"]
    field: CustomField | None = None
    candidates: tuple[CustomField, ...] = ()


def resolve_field(fields: Sequence[CustomField], name: str) -> FieldMatch:
    """The field named NAME (exact name; ClickUp names are case-sensitive in its UI)."""
    named = tuple(f for f in fields if f.name == name)
    if not named:
        return FieldMatch(status="missing")
    if len(named) > 1:
        return FieldMatch(status="duplicate", candidates=named)
    if named[0].type and named[0].type not in TEXT_FIELD_TYPES:
        return FieldMatch(status="wrong_type", field=named[0])
    return FieldMatch(status="found", field=named[0])


# --- the mirror text --------------------------------------------------------------------

_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f")


def clean(text: str, *, keep_newlines: bool = True) -> str:
    """Text without control characters (C0, C1, DEL, bidi overrides); \\t becomes a space.

    Newlines are kept as \\n when KEEP_NEWLINES, else folded into spaces."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\u2028", "\n")
    text = text.replace("\u2029", "\n").replace("\t", " ")
    out = []
    for ch in text:
        if ch == "\n":
            out.append("\n" if keep_newlines else " ")
        elif ch in _BIDI or unicodedata.category(ch) == "Cc":
            continue
        else:
            out.append(ch)
    return "".join(out)


def _line(value: str | None) -> str | None:
    if value is None:
        return None
    return " ".join(clean(value, keep_newlines=False).split()) or None


def _step(step: PlanStep | None) -> str | None:
    if step is None:
        return None
    status = f" ({step.status})" if step.status else ""
    return _line(f"{step.number}. {step.text}{status}")


def _web_url(url: str) -> str | None:
    """URL when it is an http(s) address without spaces; ClickUp may turn it into a link."""
    text = _line(url)
    if text and text.lower().startswith(("https://", "http://")) and " " not in text:
        return text
    return None


def mirror_data(issue: Issue, block: Block) -> dict[str, Any]:
    """The template's variables: plain one-line strings (or None), lists of them, counts."""
    done = sum(1 for s in block.plan if s.status == "done")
    skipped = sum(1 for s in block.plan if s.status == "skipped")
    total = len(block.plan)
    progress = f"{done}/{total} done" + (f" ({skipped} skipped)" if skipped else "")
    phase = block.phase
    if phase is not None and block.chunk is not None:
        phase = f"{phase} (chunk {block.chunk[0]} of {block.chunk[1]})"
    return {
        "actor": _line(block.actor),
        "actor_description": _line(block.actor_description),
        "phase": _line(phase),
        "last_updated": format_timestamp(block.last_updated) or None,
        "progress": progress if total else None,
        "done": done,
        "skipped": skipped,
        "total": total,
        "current_step": _step(current_step(block)),
        "next_step": _line(block.next_step),
        "blockers": [b for b in (_line(x) for x in block.blockers) if b],
        "issue_url": _web_url(issue.html_url) or f"{issue.repository}#{issue.number}",
        "issue_number": issue.number,
        "issue_title": _line(issue.title) or "",
        "repository": _line(issue.repository) or "",
    }


def fit(text: str, limit: int, url: str) -> str:
    """TEXT cut to at most LIMIT characters, with a visible mark that carries the issue URL.

    The cut falls on a line break when one is near, so no line is left half-written."""
    if len(text) <= limit:
        return text
    mark = TRUNCATION_MARK.format(url=url)
    if len(mark) >= limit:
        return mark.strip()[:limit]
    head = text[: limit - len(mark)]
    newline = head.rfind("\n")
    if newline >= len(head) - 200 and newline > 0:
        head = head[:newline]
    return head.rstrip() + mark


def _env(templates_dir: Path | None) -> Environment:
    """The project's one sandbox (templating.make_env); a missing directory is a ConfigError."""
    try:
        return make_env(templates_dir)
    except ValueError as exc:
        raise ConfigError(f"setting templates: {exc}") from exc


def template_env(templates_dir: Path | None = None) -> Environment:
    """The environment mirror texts render in: the user's directory first, then ours."""
    return _env(templates_dir)


def mirror_text(
    issue: Issue,
    block: Block,
    env: Environment,
    *,
    template: str = TEMPLATE,
    limit: int = DEFAULT_MAX_LENGTH,
) -> str:
    """The text the ClickUp field should hold for ISSUE's block: rendered, cleaned, capped."""
    data = mirror_data(issue, block)
    try:
        text = env.get_template(template).render(**data)
    except TemplateError as exc:
        raise ConfigError(
            f"mirror template {template}: {type(exc).__name__}: {exc}; fix the template in "
            "the `templates` directory (variables: " + ", ".join(sorted(data)) + ")"
        ) from exc
    text = "\n".join(line.rstrip() for line in clean(text).split("\n")).strip("\n")
    return fit(text, limit, data["issue_url"])


def same_value(current: Any, wanted: str) -> bool:
    """Whether the field already holds WANTED (ignoring line-ending and edge whitespace)."""
    if current is None:
        return not wanted.strip()
    if not isinstance(current, str):
        return False
    return current.replace("\r\n", "\n").strip() == wanted.replace("\r\n", "\n").strip()


# --- configuration ----------------------------------------------------------------------


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


def load_mirror_config(extras: Mapping[str, Any], where: str = "the config file") -> MirrorConfig:
    """The `mirror:` section, validated; a bad value is a ConfigError naming the key."""
    section = extras.get("mirror")
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
        problems = []
        for error in exc.errors():
            key = ".".join(str(p) for p in error["loc"]).replace("_", "-") or "mirror"
            message = str(error["msg"]).removeprefix("Value error, ")
            if error["type"] == "extra_forbidden":
                message = "unknown key; known: field, max-length, template, lists"
            problems.append(f"mirror.{key}: {message}")
        raise ConfigError(f"{where}: " + "; ".join(problems)) from exc


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


# --- what one run mirrors ---------------------------------------------------------------


class Target(BaseModel):
    """One issue whose block is mirrored to one ClickUp task, and the text the field wants."""

    model_config = ConfigDict(frozen=True)

    issue: Issue
    link: Link
    text: str


def targets(
    issues: Sequence[Issue],
    env: Environment,
    config: MirrorConfig,
    team_id: str | None = None,
) -> tuple[list[Target], dict[int, list[Finding]]]:
    """The issues to mirror, and findings for the links that cannot be used.

    An issue with no block or no link is left out without a word. A custom id without a
    workspace, or a task linked from several issues, is a finding on each issue concerned.
    """
    findings: dict[int, list[Finding]] = {}
    by_task: dict[str, list[Target]] = {}
    for issue in issues:
        block = parse(issue.body).block
        if block is None:
            continue
        link = find_link(issue.body, team_id)
        if link is None:
            continue
        if not link.resolvable:
            findings.setdefault(issue.number, []).append(needs_workspace(link))
            continue
        text = mirror_text(issue, block, env, template=config.template, limit=config.max_length)
        by_task.setdefault(link.key, []).append(Target(issue=issue, link=link, text=text))
    out: list[Target] = []
    for group in by_task.values():
        if len(group) == 1:
            out.append(group[0])
            continue
        for target in group:
            others = [t.issue.number for t in group if t is not target]
            findings.setdefault(target.issue.number, []).append(shared_task(target.link, others))
    return out, findings
