"""The run state's carrier: a hidden line in the body of the digest issue (imperative shell).

Why there: a scheduled run lists every open issue anyway, and the digest issue (labelled
`ai-context:digest`, or `digest-issue`) is one of them, so reading the state costs no call; a
comment would cost a read of the digest issue's comments, one page per 100 daily digests.
Writing it costs one re-read (so a human's edit of the text around it is never lost), one
PATCH and one read of the edit history (jobs/bodywrite.py: an edit that landed during the
write is put back), and only when something changed. No carrier yet and something to
remember: the run creates the issue the digest job would create (same title, same label), once.
Issue events neither read nor write it: their one comment read is as cheap as reading the
state, and the next scheduled run sees from the listing that the task moved.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

from ai_context.adapters.config import Config
from ai_context.adapters.github import GitHub
from ai_context.core.models import Issue
from ai_context.jobs.bodywrite import commit_body
from ai_context.jobs.comments import CheckReport
from ai_context.jobs.digest_delivery import DIGEST_LABEL, DIGEST_TITLE
from ai_context.rules.memory import (
    MAX_ENCODED,
    Known,
    RunState,
    after_run,
    current_line,
    decode_state,
    encode_state,
    replace_line,
)
from ai_context.rules.overwrite import Region
from ai_context.rules.sticky import MAX_COMMENT as MAX_BODY

MEMORY_TEXT = (
    "A hidden line below remembers what the last scheduled run wrote, so the next run reads "
    "only what changed; deleting it costs one full run."
)
CARRIER_TEXT = (
    f"ai-context posts the daily digest of AI tasks here, one comment a day. {MEMORY_TEXT}"
)
# With the digest off (`digest: false`), the issue that holds the run state says only that.
STATE_TITLE = "ai-context run state"
STATE_TEXT = f"ai-context keeps its run state here (the digest is off). {MEMORY_TEXT}"


def carrier(settings: Config, open_issues: Sequence[Issue]) -> Issue | None:
    """The digest issue as the listing shows it; None when it is not among the open issues."""
    labelled = [i for i in open_issues if DIGEST_LABEL in i.labels]
    if settings.digest_issue is not None:
        labelled = [i for i in open_issues if i.number == settings.digest_issue]
    return min(labelled, key=lambda i: i.number) if labelled else None


def load(settings: Config, open_issues: Sequence[Issue], repository: str) -> RunState | None:
    """The run state; None (a full read) when it is absent or not ours."""
    found = carrier(settings, open_issues)
    return decode_state(found.body if found else None, repository, settings.bot_login)


def remember(report: CheckReport) -> dict[int, Known]:
    """What this run leaves on each task, from its plans and writes."""
    out: dict[int, Known] = {}
    for check in report.checks:
        if check.deferred or check.failed:  # writes not made: the next run reads it again
            continue
        sticky = (check.sticky.id, check.sticky.body) if check.sticky else None
        known = after_run(
            check.issue, check.ops, sticky=sticky, known=check.known, created=check.created
        )
        if known is not None:
            out[check.issue.number] = known
    return out


def save(
    github: GitHub,
    settings: Config,
    open_issues: list[Issue],
    tasks: Mapping[int, Known],
    log: Callable[[str], None],
    *,
    since: datetime,
    digest: bool,
) -> int:
    """Write the state when it changed: re-read the carrier, replace only our line. SINCE is
    when the scheduled runs first saw the tasks (kept from the state read); DIGEST: the run
    posts the digest comment, so a carrier it creates is the digest issue (else it is titled
    as the run state's alone). Returns the writes made."""
    found = carrier(settings, open_issues)
    if found is None and settings.digest_issue is not None:
        return 0  # the configured issue is closed: no issue made for it
    state = RunState(github.repository, settings.bot_login, tasks, since)
    limit = MAX_ENCODED
    if found is not None:  # the body holds 65,536 characters, the text around ours included
        rest = len(found.body) - len(current_line(found.body) or "")
        limit = min(limit, MAX_BODY - rest - 4)
    line = encode_state(state, limit)
    if found is not None and current_line(found.body) == line:
        return 0
    if settings.dry_run:
        log("[dry-run] would write the run state to the digest issue")
        return 1
    if found is None:
        title, text = (DIGEST_TITLE, CARRIER_TEXT) if digest else (STATE_TITLE, STATE_TEXT)
        created = github.create_issue(title, f"{text}\n\n{line}", [DIGEST_LABEL])
        open_issues.append(created)  # the digest job of this run finds it
        log(f"created issue #{created.number} ({title}) to hold the run state")
        return 1
    # A human may have edited the text around it since the listing: a conditional re-read
    # (304, free of rate limit, when nothing changed; the fresh issue when something did),
    # after the write spacing; an edit that lands before the PATCH all the same is put back.
    github.pace_write()
    fresh = github.get_issue(found.number, known=found)
    region = Region(own=current_line, put=lambda body: replace_line(body, line))
    done = commit_body(
        github, found.number, read=fresh.body, planned=replace_line(fresh.body, line), region=region
    )
    if not done.landed:
        log(f"run state not written on #{found.number}: {done.problem}")
        return done.writes
    log(f"run state: {len(tasks)} task(s) remembered on #{found.number}")
    return done.writes
