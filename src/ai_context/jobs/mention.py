"""The one mention of a stale task's owner: the note in the sticky comment, and the
short comment that tells the owner when the sticky comment already existed. Planned with the
sticky comment (jobs/comments.py); kept apart so each module reads as one concern."""

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
    """Whether ai-context watched the task before its stale episode began: the scheduled runs
    had seen the repository's tasks by then (verdict.seen), or the task's sticky comment
    existed. With `mention-owners: all`, every episode counts."""
    if verdict.mention_all:
        return True
    witnesses = [t for t in (verdict.seen, sticky_since) if t is not None]
    return (
        verdict.stale_since is not None and bool(witnesses) and verdict.stale_since > min(witnesses)
    )


def mention_note(login: str) -> str:
    """The one mention of a stale task's owner. Its text never changes while the task stays
    stale, so the comment is not re-edited for it and GitHub does not notify again; it leaves
    when the task is fresh, and comes back (one new notification) if it goes stale again."""
    return f"@{login}: this task looks stale (see above). Nudge its Active actor or hand it off."


MENTION_MARKER = "<!-- ai-context:mention "
MENTIONED = "mentioned"  # the sticky comment's memory of the episode its owner was told of


def plan_mention(
    number: int,
    *,
    block: Block | None,
    verdict: Verdict | None,
    listed: Sequence[Comment],
    memory: Mapping[str, Any] | None,
    bot_login: str,
) -> tuple[tuple[str, ...], dict[str, Any] | None, list[Op]]:
    """The sticky comment's notes and memory, and the comment that tells a stale task's owner.

    GitHub may not notify a mention added by editing a comment, so the owner is told in a
    newly created comment once per staleness episode (the owner and the block's Last updated):
    by the sticky comment itself when this run creates it, else by a short comment of its own,
    found again by its marker. The sticky comment remembers the episode, so neither is
    repeated while the task stays stale; a refreshed block that goes stale again is a new one.
    An episode that began before ai-context first saw the task (seen_begin) is not announced,
    so a first run over an old repository mentions nobody; once told, the note stays.
    """
    state = verdict.state() if verdict else None
    if verdict is None or not verdict.mention or block is None:
        return (), state, []
    login = verdict.mention
    stamp = format_timestamp(block.last_updated) if block.last_updated else "never"
    episode = f"{login} {stamp}"
    head = f"{MENTION_MARKER}{episode} -->"
    told = (memory or {}).get(MENTIONED) == episode or bool(ours(listed, bot_login, head))
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
