"""The digest's tasks in a scheduled run: from the scan, and from the facts the digest stored
for the tasks that did not change (imperative shell; rules/digest/facts.py is the codec).

The facts are the bot's comments on the repository's carrier issue (jobs/scan.py), one per
chunk; the run state holds a digest of them, so facts changed since by anyone else are not
used (the repository is then listed in full, as when there are none).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from ai_context.adapters.github import GitHubError
from ai_context.core.models import Comment, Issue
from ai_context.jobs.scan import Scan, ensure_carrier
from ai_context.rules.checks import CheckResult, check_body
from ai_context.rules.digest import facts
from ai_context.rules.digest.build import DigestConfig
from ai_context.rules.digest.facts import Row
from ai_context.rules.sticky import WriteBudget


@dataclass
class Source:
    """One repository's part of the digest: its issues checked, and its facts."""

    scan: Scan
    checked: list[tuple[Issue, CheckResult]] = field(default_factory=list)
    rows: dict[int, Row] = field(default_factory=dict)
    stored: dict[str, list[Comment]] = field(default_factory=dict)  # the facts comments read


def facts_key(chunks: Sequence[str]) -> str:
    """What the run state remembers of the stored facts: 54 bits of their SHA-256."""
    data = "\n".join(sorted(chunks)).encode("utf-8")
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()[:9]).decode("ascii")


def quiet(scan: Scan) -> bool:
    """Nothing the digest shows of SCAN's repository can have changed since the last run:
    the listing showed no change, the stored facts are known, and no task's category moves
    with time before now. (Closed issues: `closed_since` says.)"""
    prev = scan.previous
    return (
        not scan.changed
        and prev is not None
        and bool(prev.facts)
        and (prev.changes is None or prev.changes > scan.now)
    )


def closed_since(scan: Scan, since: datetime | None = None) -> list[Issue]:
    """The issues closed since SINCE (default: the last run's listing): from the scan's
    listing when it showed them (another repository's, listed open and closed), else one
    listing."""
    if since is None:
        since = scan.previous.listed if scan.previous else scan.now
    if scan.closed is not None:
        return list(scan.closed)
    return scan.github.list_issues("closed", since=since)


def gather(
    scan: Scan,
    *,
    now: datetime,
    config: DigestConfig,
    since: datetime,
    bot: str,
    closed: Sequence[Issue] | None = None,
) -> Source:
    """Every issue of SCAN's repository the digest looks at (open tasks, and issues closed
    since SINCE), checked, and their facts. CLOSED: the closed issues, when already read."""
    out = Source(scan)
    checks = config.checks()
    label = config.review_label
    stored = _stored(scan, bot, out)
    if stored is None:  # every open issue, from the scan or one listing of them
        open_tasks = scan.tasks if scan.full else _listed(scan)
        fresh = [*open_tasks, *(closed if closed is not None else closed_since(scan, since))]
        for issue in fresh:
            result = check_body(issue.body, now=now, config=checks)
            out.checked.append((issue, result))
            out.rows[issue.number] = facts.facts_of(issue, result, label)
        return out
    rows = stored
    prev_since = scan.previous.listed if scan.previous else since
    for issue in scan.others:  # no task any more: the digest says it left
        rows.pop(issue.number, None)
    read_closed = closed if closed is not None else closed_since(scan, prev_since)
    for issue in [*scan.tasks, *read_closed]:
        result = check_body(issue.body, now=now, config=checks)
        rows[issue.number] = facts.facts_of(issue, result, label)
    cutoff = int(since.timestamp())
    out.rows = {n: r for n, r in rows.items() if r[3] == "open" or (r[5] or 0) >= cutoff}
    restored = facts.restore_all(out.rows.values(), scan.repository, label)
    if restored is None:  # a row that cannot be read: as without stored facts
        scan.previous = None
        return gather(scan, now=now, config=config, since=since, bot=bot, closed=closed)
    out.checked = restored
    return out


def _listed(scan: Scan) -> list[Issue]:
    ours = {i.number for i in scan.ours} | ({scan.carrier.number} if scan.carrier else set())
    return [i for i in scan.github.list_issues("open") if i.number not in ours]


def _stored(scan: Scan, bot: str, out: Source) -> dict[int, Row] | None:
    """The rows the last run stored, when the run state vouches for them; None else."""
    prev = scan.previous
    if scan.full or prev is None or not prev.facts or scan.carrier is None:
        return None
    rows, texts = _read_stored(out, bot)
    return rows if facts_key(texts) == prev.facts else None


def _read_stored(source: Source, bot: str) -> tuple[dict[int, Row], list[str]]:
    """The rows of the bot's facts comments on the carrier, and their texts; each comment
    noted in SOURCE.stored under its chunk."""
    scan = source.scan
    assert scan.carrier is not None
    rows: dict[int, Row] = {}
    texts: list[str] = []
    for comment in scan.home.list_comments(scan.carrier.number):
        found = facts.read_chunk(comment.body, scan.repository)
        if found is None or comment.author.lower() != bot.lower():
            continue
        key, chunk = found
        source.stored.setdefault(key, []).append(comment)
        texts.append(comment.body.strip())
        rows.update((row[0], row) for row in chunk)
    return rows, texts


def store(
    source: Source,
    config: DigestConfig,
    *,
    dry_run: bool,
    log: Callable[[str], None],
    budget: WriteBudget | None = None,
) -> None:
    """Write the facts chunks that changed (edit in place, create, delete what is no longer a
    chunk), and tell the scan their key for the run state. A failed write, or writes BUDGET
    (max-writes) has no room for, leave the scan without facts: the next run lists this
    repository in full for the digest."""
    scan = source.scan
    chunks = facts.chunks(scan.repository, source.rows)
    if not source.stored and scan.carrier is not None:
        # Facts a run left whose state is not this one's: replace them.
        _read_stored(source, scan.bot)
    plan = _plan(chunks, source.stored)
    # The writes: the chunks, the carrier when there is none yet; and room kept for the run
    # state after them.
    writes = len(plan) + (bool(plan) and scan.carrier is None)
    if budget is not None and writes and not budget.allows(writes + 1):
        log(f"ai-context: the digest's facts of {scan.repository} are left (max-writes)")
        scan.facts = ""
        return
    if plan:
        verb = "would write" if dry_run else "writes"
        log(f"ai-context: {verb} {len(plan)} chunk(s) of the digest's facts of {scan.repository}")
        if budget is not None:
            budget.spend(writes)
    try:
        for kind, comment_id, text in [] if dry_run else plan:
            if kind == "create":
                scan.home.create_comment(ensure_carrier(scan, log=log).number, text)
            elif kind == "edit" and comment_id is not None:
                scan.home.edit_comment(comment_id, text)
            elif comment_id is not None:
                scan.home.delete_comment(comment_id)
    except GitHubError as exc:
        log(f"ai-context: the digest's facts of {scan.repository} were not stored ({exc})")
        scan.facts = ""
        return
    scan.facts = facts_key(list(chunks.values()))
    scan.changes = facts.next_change(source.checked, scan.now, config)


def _plan(
    chunks: Mapping[str, str], stored: Mapping[str, list[Comment]]
) -> list[tuple[str, int | None, str]]:
    """The writes that make the STORED chunk comments say CHUNKS: (create, edit or delete,
    the comment's id, the text), a duplicate of a chunk deleted."""
    plan: list[tuple[str, int | None, str]] = []
    left = dict(stored)
    for key, text in sorted(chunks.items()):
        have = left.pop(key, [])
        plan += [("delete", extra.id, "") for extra in have[1:]]
        if not have:
            plan.append(("create", None, text))
        elif have[0].body.strip() != text:
            plan.append(("edit", have[0].id, text))
    return plan + [("delete", c.id, "") for rest in left.values() for c in rest]
