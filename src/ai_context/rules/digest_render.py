"""Turn a Digest, a TaskSummary or an actor's Plate into text for people (pure).

Markdown comes straight from a template. Slack is different: the Block Kit structure is built
here, in Python, and the template (`digest.slack.j2`) only supplies the mrkdwn snippets as
macros. Emitting JSON from Jinja would make every quote and backslash in issue text a way to
break or forge the payload, and the size limits (3,000 characters a section, 50 blocks a
message) can only be met by measuring the final text; `json.dumps` and a packer do both exactly.
A user's own `digest.slack.j2` still controls what each line says.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jinja2 import Environment, TemplateRuntimeError
from pydantic import BaseModel, ConfigDict

from ai_context.rules.digest import (
    CATEGORIES,
    CATEGORY_TITLES,
    Category,
    Digest,
    Entry,
    Plate,
    TaskSummary,
    state_line,
)
from ai_context.rules.templating import ELLIPSIS, make_env, render

GITHUB_COMMENT_LIMIT = 65_536
PROBE_ROWS = 8
SLACK_SECTION_LIMIT = 3_000
SLACK_BLOCKS_LIMIT = 50
SLACK_HEADER_LIMIT = 150
# Slack truncates a message's text past 40,000 characters; a message of blocks is kept under
# the same figure so no workspace setting or client can cut it.
SLACK_MESSAGE_CHARS = 40_000


class Section(BaseModel):
    """One category as a template shows it: its entries, and how many did not fit."""

    model_config = ConfigDict(frozen=True)

    key: Category
    title: str
    count: int
    entries: tuple[Entry, ...]
    omitted: int


def sections(digest: Digest, row_limit: int | None = None) -> list[Section]:
    out = []
    for key in CATEGORIES:
        entries = digest.entries.get(key, ())
        shown = entries if row_limit is None else entries[:row_limit]
        out.append(
            Section(
                key=key,
                title=CATEGORY_TITLES[key],
                count=len(entries),
                entries=shown,
                omitted=len(entries) - len(shown),
            )
        )
    return out


def _digest_vars(digest: Digest, row_limit: int | None) -> dict[str, Any]:
    return {
        "digest": digest,
        "sections": sections(digest, row_limit),
        "changes": digest.changes,
        "titles": CATEGORY_TITLES,
        "multi_repo": len(digest.repositories) > 1,
        "state_line": state_line(digest.state()),
        "row_limit": row_limit,
    }


def render_markdown(
    digest: Digest,
    env: Environment | None = None,
    *,
    max_chars: int = GITHUB_COMMENT_LIMIT,
    template: str = "digest.md.j2",
) -> str:
    """The digest as GitHub Markdown, no longer than `max_chars` (a comment holds 65,536).

    When every row does not fit, each category shows its first rows and says how many it left
    out; the hidden state line always covers every task.
    """
    env = env or make_env(None)

    def at(limit: int | None) -> str:
        return render(env, template, **_digest_vars(digest, limit))

    sizes = [len(v) for v in digest.entries.values()]
    longest = max(sizes, default=0)
    probe_rows = min(PROBE_ROWS, longest)
    probe = at(probe_rows)
    if probe_rows == longest:
        if len(probe) <= max_chars:
            return probe  # every row fits: the common case, one render
        limit = longest
    else:
        # Estimate the rows that fit from the size of a skeleton and of a few rows per category,
        # so a 1,000-task digest is not rendered whole only to be cut down.
        skeleton = len(at(0))
        shown = sum(min(n, probe_rows) for n in sizes)
        per_row = max(1.0, (len(probe) - skeleton) / shown) * 1.1
        low, high = 0, longest  # the most rows a category may show, by the estimate
        while low < high:
            middle = (low + high + 1) // 2
            if skeleton + per_row * sum(min(n, middle) for n in sizes) <= max_chars:
                low = middle
            else:
                high = middle - 1
        limit = low
        text = at(None if limit >= longest else limit)
        if len(text) <= max_chars:
            return text
    while True:  # shrink until it fits; at 0 rows only the skeleton and the state are left
        limit = int(limit * 0.8)
        text = at(limit)
        if len(text) <= max_chars or limit == 0:
            return text


def render_task(summary: TaskSummary, env: Environment | None = None) -> str:
    """One task's progress summary (`/daily-summary <task>`)."""
    return render(env or make_env(None), "task.md.j2", task=summary, titles=CATEGORY_TITLES)


def render_status(
    plates: Sequence[Plate], env: Environment | None = None, *, known_actors: Sequence[str] = ()
) -> str:
    """Actors' plates by urgency (`/status`)."""
    return render(
        env or make_env(None),
        "status.md.j2",
        plates=list(plates),
        titles=CATEGORY_TITLES,
        known_actors=list(known_actors),
    )


# --- Slack Block Kit ----------------------------------------------------------------------


def _fit(text: str, limit: int) -> str:
    """Cut mrkdwn to `limit` characters without leaving half an escape or half a link."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if cut.rfind("<") > cut.rfind(">"):
        cut = cut[: cut.rfind("<")]
    amp = cut.rfind("&")
    if amp >= 0 and ";" not in cut[amp:]:
        cut = cut[:amp]
    return cut + ELLIPSIS


def _mrkdwn(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": _fit(text, SLACK_SECTION_LIMIT)}}


def _pack(heading: str, lines: Sequence[str]) -> list[dict[str, Any]]:
    """Lines under a heading, as few sections as the 3,000-character limit allows."""
    blocks: list[dict[str, Any]] = []
    current = heading.strip()
    for raw in lines:
        line = _fit(raw.strip(), SLACK_SECTION_LIMIT)
        if not line:
            continue
        if current and len(current) + 1 + len(line) > SLACK_SECTION_LIMIT:
            blocks.append(_mrkdwn(current))
            current = line
        else:
            current = f"{current}\n{line}" if current else line
    if current:
        blocks.append(_mrkdwn(current))
    return blocks


def _block_chars(block: dict[str, Any]) -> int:
    text = block.get("text", {})
    if text:
        return len(text.get("text", ""))
    return sum(len(e.get("text", "")) for e in block.get("elements", []))


def slack_messages(
    digest: Digest, env: Environment | None = None, *, template: str = "digest.slack.j2"
) -> list[dict[str, Any]]:
    """Incoming-webhook payloads (`{"text", "blocks"}`), as many as the Block Kit limits need.

    Every section stays within 3,000 characters and every message within 50 blocks (and
    40,000 characters); later messages open with a "part i of n" context line.
    """
    env = env or make_env(None)
    module = env.get_template(template).make_module(
        {"titles": CATEGORY_TITLES, "multi_repo": len(digest.repositories) > 1}
    )

    def snippet(name: str, *args: Any) -> str:
        macro = getattr(module, name, None)
        if not callable(macro):
            raise TemplateRuntimeError(
                f"{template} defines no macro '{name}'; copy the bundled digest.slack.j2 and "
                "keep every macro it defines"
            )
        return str(macro(*args)).strip()

    title = _fit(snippet("title", digest), SLACK_HEADER_LIMIT)
    fallback = _fit(snippet("fallback", digest), SLACK_SECTION_LIMIT)
    content: list[dict[str, Any]] = [_mrkdwn(snippet("summary", digest))]
    change_lines = [snippet("change", c) for c in digest.changes] or [snippet("no_changes", digest)]
    content += _pack(snippet("changes_heading", digest), change_lines)
    for key in CATEGORIES:
        entries = digest.entries.get(key, ())
        if entries:
            heading = snippet("category", CATEGORY_TITLES[key], len(entries))
            content += _pack(heading, [snippet("entry", e) for e in entries])

    room = SLACK_BLOCKS_LIMIT - 1  # one block per message is the header or the context line
    groups: list[list[dict[str, Any]]] = [[]]
    used = 0
    for block in content:
        size = _block_chars(block)
        if groups[-1] and (len(groups[-1]) >= room or used + size > SLACK_MESSAGE_CHARS - 500):
            groups.append([])
            used = 0
        groups[-1].append(block)
        used += size
    messages = []
    for index, group in enumerate(groups):
        if index == 0:
            head: dict[str, Any] = {
                "type": "header",
                "text": {"type": "plain_text", "text": title, "emoji": False},
            }
        else:
            part = snippet("continued", digest, index + 1, len(groups))
            head = {"type": "context", "elements": [{"type": "mrkdwn", "text": _fit(part, 300)}]}
        messages.append({"text": fallback, "blocks": [head, *group]})
    return messages
