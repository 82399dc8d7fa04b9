"""The mirror text: the block rendered for the ClickUp field, cleaned and fitted to a limit.

It holds nothing that changes from run to run, so an unchanged block costs no write."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ai_context.core.block.model import Block, PlanStep, format_timestamp
from ai_context.core.errors import ConfigError
from ai_context.core.models import Issue
from ai_context.core.phases import current_step

if TYPE_CHECKING:
    from jinja2 import Environment

TEMPLATE = "mirror.txt.j2"
DEFAULT_FIELD = "ai_context"
DEFAULT_MAX_LENGTH = 4000
MIN_MAX_LENGTH = 200
TRUNCATION_MARK = "\n[… truncated by ai-context; the full AI Context is at {url}]"

_NEWLINE_RE = re.compile(r"\r\n|[\r\u2028\u2029]")
# Control characters (C0 but the newline, DEL, C1) and the bidi overrides and marks.
_UNSHOWN_RE = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def clean(text: str) -> str:
    """Text without control characters (C0, C1, DEL, bidi overrides); line breaks as \\n, \\t
    as a space."""
    return _UNSHOWN_RE.sub("", _NEWLINE_RE.sub("\n", text).replace("\t", " "))


def _line(value: str | None) -> str | None:
    if value is None:
        return None
    return " ".join(clean(value).split()) or None


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
    """TEXT cut to at most LIMIT characters, with a visible mark that carries the issue URL; the
    cut falls on a line break when one is near, so no line is left half-written."""
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


def mirror_text(
    issue: Issue,
    block: Block,
    env: Environment,
    *,
    template: str = TEMPLATE,
    limit: int = DEFAULT_MAX_LENGTH,
) -> str:
    """The text the ClickUp field should hold for ISSUE's block: rendered, cleaned, capped."""
    from jinja2 import TemplateError  # noqa: PLC0415 - the settings load without Jinja

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
