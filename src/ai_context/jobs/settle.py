"""Racing runs end with one marked comment: the oldest stays, newer ones go, and the survivor
gets the text of the run that settles. A single-issue run applies it after each creation
(jobs/comments.py); a scan applies it to all its creations at the end, from one listing of
the repository's comments instead of one listing a creation."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from ai_context.adapters.github import GitHub
from ai_context.core.models import Comment

# How far before the run's start (and its first new comment) the closing listing looks: it
# covers racing runs' comments made since this run listed, and a runner clock off GitHub's.
MARGIN = timedelta(minutes=10)


@dataclass(frozen=True)
class Created:
    """A comment this run created whose race is settled at the end of the run."""

    issue: int
    body: str  # what this run meant it to say
    comment: Comment  # what GitHub answered to the POST


def head(body: str) -> str:
    """A marked comment's first line: the marker that names its kind."""
    return body.split("\n", 1)[0]


def ours(
    comments: Iterable[Comment], bot_login: str, first_line: str, *, also: str = ""
) -> list[Comment]:
    """Our comments (by BOT_LOGIN, or ALSO: the login this run's token wrote as) whose first
    line is FIRST_LINE (a marker), oldest first, each once."""
    logins = {bot_login.lower(), also.lower()} - {""}
    found = {c.id: c for c in comments if c.author.lower() in logins and head(c.body) == first_line}
    latest = datetime.max.replace(tzinfo=UTC)
    return sorted(found.values(), key=lambda c: (c.created_at or latest, c.id))


def settle(found: Sequence[Comment], created: Comment | None, body: str, writer: GitHub) -> None:
    """Keep the oldest of FOUND (our comments of one kind on one issue), delete the newer ones;
    when the survivor is another run's than CREATED (this run's), it gets BODY."""
    keep = found[0]
    for duplicate in found[1:]:
        writer.delete_comment(duplicate.id)
    if created is not None and keep.id != created.id and keep.body.strip() != body.strip():
        writer.edit_comment(keep.id, body)


def settle_all(
    writer: GitHub, created: Sequence[Created], started: datetime, bot_login: str
) -> None:
    """Settle every comment in CREATED from one listing of the repository's comments updated
    since the run started (a racing run's comment is newer than that)."""
    # From the earlier of the run's start (this machine's clock) and its first new comment
    # (GitHub's), less MARGIN.
    first = [c.comment.created_at for c in created if c.comment.created_at is not None]
    since = min([started.astimezone(UTC), *(t.astimezone(UTC) for t in first)]) - MARGIN
    listed: dict[int, list[Comment]] = defaultdict(list)
    for comment in writer.list_repo_comments(since):
        if comment.issue_number is not None:
            listed[comment.issue_number].append(comment)
    for item in created:
        mine = [*listed[item.issue], item.comment]
        found = ours(mine, bot_login, head(item.body), also=item.comment.author)
        settle(found, item.comment, item.body, writer)
