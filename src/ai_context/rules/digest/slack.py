"""The digest as Slack Block Kit messages (pure).

The structure is built here and `digest.slack.j2` only supplies the mrkdwn snippets as macros:
JSON from Jinja would let a quote in issue text break or forge the payload, and the limits
(3,000 characters a section, 50 blocks a message) can only be met by measuring the final text.
A message that continues a category repeats its heading ("Stuck (continued)").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jinja2 import Environment, TemplateRuntimeError

from ai_context.rules.digest.model import CATEGORY_EMOJI, CATEGORY_TITLES, DISPLAY_ORDER, Digest
from ai_context.rules.digest.render import digest_vars, signed
from ai_context.rules.templating import ELLIPSIS

SLACK_SECTION_LIMIT = 3_000
SLACK_BLOCKS_LIMIT = 50
SLACK_HEADER_LIMIT = 150
# Slack truncates a message's text past 40,000 characters; a message of blocks is kept under
# the same figure so no workspace setting or client can cut it.
SLACK_MESSAGE_CHARS = 40_000

Block = dict[str, Any]


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
    if cut.count("`") % 2:
        cut = cut[: cut.rfind("`")]
    return cut + ELLIPSIS


def _mrkdwn(text: str) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": _fit(text, SLACK_SECTION_LIMIT)}}


def _pack(heading: str, lines: Sequence[str]) -> list[tuple[str, Block]]:
    """Lines under a heading, as few sections as the 3,000-character limit allows; each
    section comes with the heading it continues ('' for the one that opens with it)."""
    blocks: list[tuple[str, Block]] = []
    current = heading.strip()
    opened = True
    for raw in lines:
        line = _fit(raw.strip(), SLACK_SECTION_LIMIT)
        if not line:
            continue
        if current and len(current) + 1 + len(line) > SLACK_SECTION_LIMIT:
            blocks.append(("" if opened else heading, _mrkdwn(current)))
            current, opened = line, False
        else:
            current = f"{current}\n{line}" if current else line
    if current:
        blocks.append(("" if opened else heading, _mrkdwn(current)))
    return blocks


def _block_chars(block: Block) -> int:
    text = block.get("text", {})
    if text:
        return len(text.get("text", ""))
    return sum(len(e.get("text", "")) for e in block.get("elements", []))


def _group(content: Sequence[tuple[str, Block]], again: Any) -> list[list[Block]]:
    """Blocks into messages within 50 blocks and 40,000 characters; a message that starts
    inside a category opens with its heading again (`again(heading)`)."""
    room = SLACK_BLOCKS_LIMIT - 2  # the header or context line, and a repeated heading
    groups: list[list[Block]] = [[]]
    used = 0
    for heading, block in content:
        size = _block_chars(block)
        if groups[-1] and (len(groups[-1]) >= room or used + size > SLACK_MESSAGE_CHARS - 500):
            groups.append([])
            used = 0
            if heading:
                groups[-1].append(_mrkdwn(again(heading)))
        groups[-1].append(block)
        used += size
    return groups


def slack_messages(
    digest: Digest,
    env: Environment,
    *,
    comment_url: str = "",
    mentions: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Incoming-webhook payloads (`{"text", "blocks"}`), as many as the Block Kit limits need.

    `comment_url` links the digest comment; `mentions` maps an actor id (lower case) to its
    owner's Slack id, mentioned beside that actor's stuck tasks.
    """
    variables = digest_vars(digest, lines=("", ""))  # the hidden lines are the comment's
    module = env.get_template("digest.slack.j2").make_module(
        {**variables, "titles": CATEGORY_TITLES, "comment_url": comment_url}
    )

    macros: dict[str, Any] = {}

    def snippet(name: str, *args: Any) -> str:
        macro = macros.get(name) or getattr(module, name, None)
        if not callable(macro):
            raise TemplateRuntimeError(
                f"digest.slack.j2 defines no macro '{name}'; copy the bundled digest.slack.j2 "
                "and keep every macro it defines"
            )
        macros[name] = macro
        return str(macro(*args)).strip()

    title = _fit(snippet("title", digest), SLACK_HEADER_LIMIT)
    fallback = _fit(snippet("fallback", digest), SLACK_SECTION_LIMIT)
    mentions = mentions or {}

    def entry(e: Any) -> str:
        line = snippet("entry", e)
        who = mentions.get((e.actor or "").lower()) if e.category == "stuck" else None
        return f"{line} {snippet('mention', who)}" if who else line

    content: list[tuple[str, Block]] = [("", _mrkdwn(snippet("summary", digest)))]
    if comment_url:
        content.append(("", _mrkdwn(snippet("link", comment_url))))
    change_lines = [snippet("change", c) for c in digest.changes] or [snippet("no_changes", digest)]
    content += _pack(snippet("changes_heading", digest), change_lines)
    for key in DISPLAY_ORDER:
        entries = digest.entries.get(key, ())
        if entries:
            # the category's colour, as in the comment's headings and chart
            heading = f"{CATEGORY_EMOJI[key]} " + snippet(
                "category", CATEGORY_TITLES[key], len(entries)
            )
            heading += f" {signed(digest.deltas[key])}" if digest.deltas[key] else ""
            content += _pack(heading, [entry(e) for e in entries])

    groups = _group(content, lambda h: snippet("category_continued", h))
    messages = []
    for index, group in enumerate(groups):
        if index == 0:
            head: Block = {
                "type": "header",
                "text": {"type": "plain_text", "text": title, "emoji": False},
            }
        else:
            part = snippet("continued", digest, index + 1, len(groups))
            head = {"type": "context", "elements": [{"type": "mrkdwn", "text": _fit(part, 300)}]}
        messages.append({"text": fallback, "blocks": [head, *group]})
    return messages
