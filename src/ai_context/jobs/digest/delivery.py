"""Where the digest lands: the day's comment, Slack, and what the step summary says of both.

The day's comment is created once and edited by every rerun that day. Slack gets the digest
when the comment is new, and on a same-day rerun only when the tasks changed, so a channel
never sees the same digest twice. Every outcome is a line of the step summary, with a
one-line reason on failure (never a library's internals).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ai_context.adapters import clients
from ai_context.adapters.config import Config
from ai_context.adapters.github import GitHub, GitHubError
from ai_context.adapters.slack import SlackResult
from ai_context.core.markdown import escape_text
from ai_context.core.models import Comment
from ai_context.jobs.scan import DIGEST_LABEL
from ai_context.rules.digest.model import Digest
from ai_context.rules.digest.state import same_digest
from ai_context.rules.sticky import WriteBudget, text_or_diff

DIGEST_TITLE = "ai-context daily digest"
MARKER_PREFIX = "<!-- ai-context:digest "
# What requests and urllib3 append to a connection failure: a reader needs none of it.
_INTERNALS = re.compile(
    r"\s*[(:]?\s*(?:HTTPS?ConnectionPool|Max retries exceeded|<urllib3|urllib3\.|"
    r"NewConnectionError|ConnectionResetError|\[Errno).*$",
    re.S,
)


def one_line(error: object, limit: int = 200) -> str:
    """An error as one short line for a person: the first line, library internals cut."""
    text = " ".join(str(error).split())
    text = _INTERNALS.sub("", text).rstrip(" (:;,")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def marker(day: str) -> str:
    return f"{MARKER_PREFIX}{day} -->"


def day_of(comment: Comment, bot_login: str) -> str | None:
    if comment.author.lower() != bot_login.lower() or not comment.body.startswith(MARKER_PREFIX):
        return None
    head = comment.body[len(MARKER_PREFIX) :].split(" ", 1)[0]
    return head if len(head) == 10 else None


def todays_comment(comments: Sequence[Comment], today: str, bot_login: str) -> Comment | None:
    same_day = [c for c in comments if day_of(c, bot_login) == today]
    return min(same_day, key=lambda c: c.id) if same_day else None


@dataclass
class Delivery:
    """What the digest job did, for outputs, the exit code and the step summary."""

    digest: Digest | None  # None: the day's comment stood, nothing was rendered
    markdown: str  # the step summary's: every task
    comment: str = ""  # the comment's: cut to fit 65,536 characters when it must
    url: str = ""
    errors: list[str] = field(default_factory=list)
    slack: SlackResult | None = None
    writes: list[str] = field(default_factory=list)
    report: list[str] = field(default_factory=list)  # the delivery section's lines
    slack_mark: str = ""  # the comment's hidden line of what Slack got today ('' none)
    comment_id: int | None = None  # the day's comment, once written or found

    def body(self, today: str) -> str:
        """The day's comment: its marker, the digest, and what Slack got today."""
        mark = f"\n\n{self.slack_mark}" if self.slack_mark else ""
        return f"{marker(today)}\n{(self.comment or self.markdown).rstrip()}{mark}\n"

    def section(self) -> str:
        """The step summary's delivery section (Markdown)."""
        lines = self.report or ["nothing was delivered"]
        return "### Delivery\n\n" + "\n".join(f"- {line}" for line in lines) + "\n"


def deliver_comment(
    out: Delivery,
    *,
    github: GitHub,
    settings: Config,
    digest_issue: int | None,
    existing: Comment | None,
    today: str,
    log: Callable[[str], None],
    budget: WriteBudget,
) -> None:
    """Create the day's comment, or edit it; say which, with its link. BUDGET (max-writes)
    may leave it for the next run; a dry run prints its text (or its diff)."""
    body = out.body(today)
    if existing is not None:
        out.comment_id = existing.id
    current = existing is not None and same_digest(existing.body, body)
    needed = (digest_issue is None) + (not current)
    if needed and not budget.allows(needed):
        out.report.append(
            f"comment: not posted: max-writes {budget.limit} reached; the next run posts it"
        )
        log(f"ai-context: the digest comment waits for the next run (max-writes {budget.limit})")
        return
    budget.spend(needed)
    try:
        if digest_issue is None:
            if settings.dry_run:
                log(f"[dry-run] would create the digest issue (label {DIGEST_LABEL}) and comment")
                log(text_or_diff(body, None, "digest comment"))
                out.writes.append("create digest issue")
                out.report.append("comment: would create the digest issue and comment (dry run)")
                return
            created = github.create_issue(
                DIGEST_TITLE,
                "ai-context posts the daily digest of AI tasks here, one comment a day.",
                [DIGEST_LABEL],
            )
            digest_issue = created.number
            log(f"created digest issue #{digest_issue}")
        where = f"{github.repository}#{digest_issue}"
        if existing is not None and current:
            out.url = existing.html_url
            log(f"digest comment on #{digest_issue} is already current")
            out.report.append(f"comment: [unchanged]({out.url}) on {where}")
            return
        if settings.dry_run:
            verb = "edit today's" if existing else "create a"
            log(f"[dry-run] would {verb} digest comment on #{digest_issue} ({len(body)} chars)")
            log(text_or_diff(body, existing.body if existing else None, "digest comment"))
            out.writes.append(f"{verb} digest comment")
            out.report.append(f"comment: would {verb} digest comment on {where} (dry run)")
            return
        if existing is not None:
            out.url = github.edit_comment(existing.id, body).html_url
            log(f"edited today's digest comment on #{digest_issue}")
            out.report.append(f"comment: [edited]({out.url}) on {where} (a rerun today)")
        else:
            made = github.create_comment(digest_issue, body)
            out.url, out.comment_id = made.html_url, made.id
            log(f"posted the digest comment on #{digest_issue}")
            out.report.append(f"comment: [created]({out.url}) on {where}")
        out.writes.append("digest comment")
    except GitHubError as exc:
        reason = one_line(exc)
        out.errors.append(f"digest comment failed: {reason}")
        out.report.append(f"comment: **failed**: {escape_text(reason)}")


def rewrite_comment(
    out: Delivery,
    *,
    github: GitHub,
    today: str,
    log: Callable[[str], None],
    budget: WriteBudget,
) -> None:
    """Write the day's comment again after its Slack line changed (the post failed, so the
    line says what Slack had before): one more write, only then."""
    if out.comment_id is None or not out.url:
        return
    budget.spend(1)
    try:
        github.edit_comment(out.comment_id, out.body(today))
    except GitHubError as exc:
        reason = one_line(exc)
        out.errors.append(f"digest comment failed: {reason}")
        out.report.append(f"comment: **failed** to note the Slack failure: {escape_text(reason)}")
        return
    log("noted in today's digest comment that Slack did not get it (a rerun posts again)")


def deliver_slack(
    out: Delivery,
    *,
    settings: Config,
    messages: Sequence[dict[str, Any]],
    log: Callable[[str], None],
) -> None:
    """Post the messages; say how many went, or why they did not."""
    assert settings.slack_webhook_url is not None
    if settings.dry_run:
        out.writes.append(f"post {len(messages)} Slack message(s)")
        log(f"[dry-run] would post {len(messages)} Slack message(s)")
        out.report.append(f"Slack: would post {len(messages)} message(s) (dry run)")
        return
    try:
        result = clients.slack(settings.slack_webhook_url).post(list(messages))
    except ValueError as exc:  # an unusable webhook URL
        out.errors.append(f"Slack delivery failed: {one_line(exc)}")
        out.report.append(f"Slack: **failed**: {escape_text(one_line(exc))}")
        return
    out.slack = result
    if result.ok:
        log(f"posted {result.sent} Slack message(s)")
        out.report.append(f"Slack: sent {result.sent} message(s)")
        return
    reason = one_line(result.error or "unknown error")
    out.errors.append(
        f"Slack delivery failed after {result.sent} of {result.total} message(s): {reason}"
    )
    out.report.append(
        f"Slack: **failed** after {result.sent} of {result.total} message(s): {escape_text(reason)}"
    )
