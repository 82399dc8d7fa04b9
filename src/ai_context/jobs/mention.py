"""The one mention of a stale task's owner: the note in the sticky comment, and the short
comment that tells the owner when the sticky comment already existed (planned with it by
jobs/comments.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ai_context.core.block.model import Block, format_timestamp
from ai_context.core.models import Comment
from ai_context.jobs.settle import ours
from ai_context.rules.stale import Verdict
from ai_context.rules.sticky import Op, sticky_comment


def seen_begin(verdict: Verdict, sticky_since: datetime | None) -> bool:
    """Whether ai-context watched the task before its stale episode began (the scheduled runs
    had seen the tasks, or its sticky comment existed), or `mention-owners: all`."""
    if verdict.mention_all:
        return True
    witnesses = [t for t in (verdict.seen, sticky_since) if t is not None]
    return (
        verdict.stale_since is not None and bool(witnesses) and verdict.stale_since > min(witnesses)
    )


def mention_note(login: str) -> str:
    """The mention of a stale task's owner: its text never changes while the task stays
    stale, so the comment is not re-edited for it and GitHub does not notify again."""
    return f"@{login}: this task looks stale (see above). Nudge its Active actor or hand it off."


MENTION_MARKER = "<!-- ai-context:mention "
MENTIONED = "mentioned"  # the sticky comment's key for the episode its owner was told of


def plan_mention(
    number: int,
    *,
    block: Block | None,
    verdict: Verdict | None,
    listed: Sequence[Comment],
    remembered: Mapping[str, Any] | None,
    bot_login: str,
) -> tuple[tuple[str, ...], dict[str, Any] | None, list[Op]]:
    """The sticky comment's notes and hidden state, and the comment telling a stale task's owner:
    an edit's mention may not notify, so the owner is told by a new comment once per episode
    (owner and Last updated), and never of one that began before ai-context saw the task."""
    state = verdict.state() if verdict else None
    if verdict is None or not verdict.mention or block is None:
        return (), state, []
    login = verdict.mention
    stamp = format_timestamp(block.last_updated) if block.last_updated else "never"
    episode = f"{login} {stamp}"
    head = f"{MENTION_MARKER}{episode} -->"
    told = (remembered or {}).get(MENTIONED) == episode or bool(ours(listed, bot_login, head))
    sticky = sticky_comment(listed, bot_login)
    if not told and not seen_begin(verdict, sticky.created_at if sticky else None):
        return (), state, []
    state = {**(state or {}), MENTIONED: episode}
    notes = (mention_note(login),)
    if told or sticky is None:  # a created comment notifies
        return notes, state, []
    body = (
        f"{head}\n@{login}: task #{number} looks stale (no update since {stamp}); see the "
        "ai-context comment above. Nudge its Active actor or hand it off."
    )
    return notes, state, [Op(kind="create_comment", issue=number, body=body)]
