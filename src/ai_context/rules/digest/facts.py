"""The digest's memory of each task: what its category and row are made of, without the body
(pure).

A run that read only what changed takes the unchanged tasks from here. `facts_of` keeps what
the digest reads of a task (nothing of it depends on the time); `restore` gives back an issue
and check result that classify exactly as the originals would at any time. Rows are stored
compressed in chunks of issue numbers (`chunks`), so a change rewrites only its own chunk.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from ai_context.core import hidden
from ai_context.core.block.model import Block, PlanStep
from ai_context.core.fields import time_after
from ai_context.core.findings import Finding
from ai_context.core.models import Issue
from ai_context.core.phases import current_step, is_terminal
from ai_context.rules.checks import CheckResult
from ai_context.rules.digest.build import DigestConfig

Row = list[Any]  # one task's facts, as stored
PREFIX = "<!-- ai-context:digest-facts "
SUFFIX = " -->"
CHUNK_NUMBERS = 256  # issue numbers per chunk, halved while a chunk is too long
MAX_CHUNK = 60_000  # characters of a chunk's comment
_STATUS = {"done": "d", "in progress": "i", "pending": "p", "blocked": "b", "skipped": "s"}
_STATUS_OF = {v: k for k, v in _STATUS.items()}
PLACEHOLDER = "-"  # the text of a plan step the digest never shows
BASE = 9  # the issue's part of a row; a task's block follows
OUTCOME = ("Pull request", "Follow-ups")  # the block's extra fields the digest shows


def _epoch(when: datetime | None) -> int | None:
    return None if when is None else int(when.timestamp())


def _time(value: Any) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(int(value), UTC)


def facts_of(issue: Issue, result: CheckResult, review_label: str) -> Row:
    """What the digest reads of ISSUE (checked as RESULT), as one row."""
    block = result.block
    row: Row = [
        issue.number,
        issue.title,
        issue.html_url,
        issue.state,
        issue.state_reason,
        _epoch(issue.closed_at),
        _epoch(issue.updated_at),
        int(review_label in issue.labels),
        list(issue.assignees),
    ]
    if block is None:
        return row
    step = current_step(block)
    at = next((k for k, s in enumerate(block.plan) if s is step), -1)
    errors = [[f.code, f.line, f.message] for f in result.findings if f.severity == "error"]
    return [
        *row,
        block.actor,
        block.phase,
        list(block.chunk) if block.chunk else None,
        _epoch(block.last_updated),
        "".join(_STATUS.get(s.status or "", "u") for s in block.plan),
        at,
        step.text if step is not None else None,
        block.next_step,
        list(block.blockers),
        errors,
        {k: v for k, v in block.extra.items() if k in OUTCOME},
    ]


def restore(row: Row, repository: str, review_label: str) -> tuple[Issue, CheckResult]:
    """The issue and check result ROW was made from, as far as the digest reads them.
    Raises ValueError (or TypeError, KeyError) on a row that is not one `facts_of` wrote."""
    number, title, url, state, reason, closed, updated, review, assignees = row[:BASE]
    if state not in ("open", "closed") or type(number) is not int:
        raise ValueError("not a row of facts")
    issue = Issue(
        number=number,
        title=str(title),
        html_url=str(url),
        state=state,
        state_reason=reason if isinstance(reason, str) else None,
        closed_at=_time(closed),
        updated_at=_time(updated),
        labels=(review_label,) if review else (),
        assignees=tuple(str(a) for a in assignees),
        repository=repository,
    )
    if len(row) == BASE:
        return issue, CheckResult(block=None, findings=(), complete=False)
    actor, phase, chunk, stamp, statuses, at, text, next_step, blockers, errors, extra = row[BASE:]
    plan = tuple(
        PlanStep(
            number=k + 1,
            text=str(text) if k == at and text else PLACEHOLDER,
            status=_STATUS_OF.get(code),  # type: ignore[arg-type]
        )
        for k, code in enumerate(str(statuses))
    )
    block = Block(
        actor=actor,
        phase=phase,
        chunk=(int(chunk[0]), int(chunk[1])) if chunk else None,
        last_updated=_time(stamp),
        plan=plan,
        blockers=tuple(str(b) for b in blockers),
        next_step=next_step,
        extra={str(k): str(v) for k, v in extra.items() if k in OUTCOME},
    )
    findings = tuple(
        Finding(code=str(code), severity="error", message=str(message), line=line)
        for code, line, message in errors
    )
    return issue, CheckResult(block=block, findings=findings, complete=True)


# --- chunks ------------------------------------------------------------------------------------


def chunks(repository: str, rows: Mapping[int, Row]) -> dict[str, str]:
    """ROWS (by issue number) in chunks of CHUNK_NUMBERS numbers, each halved until its line
    fits MAX_CHUNK: key ("from-to") -> the comment's text. The same rows give the same chunks,
    so a run rewrites only the chunks whose rows changed."""
    out: dict[str, str] = {}
    starts = sorted({n - n % CHUNK_NUMBERS for n in rows})
    todo = [(s, s + CHUNK_NUMBERS) for s in starts]
    while todo:
        start, end = todo.pop()
        inside = [rows[n] for n in sorted(rows) if start <= n < end]
        if not inside:
            continue
        payload = {"repo": repository.lower(), "from": start, "to": end, "rows": inside}
        line = f"{PREFIX}{hidden.encode(payload, compress=True)}{SUFFIX}"
        if len(line) > MAX_CHUNK and end - start > 1:
            middle = (start + end) // 2
            todo += [(start, middle), (middle, end)]
            continue
        out[f"{start}-{end}"] = line
    return out


def read_chunk(text: str, repository: str) -> tuple[str, list[Row]] | None:
    """(key, rows) of a chunk comment of REPOSITORY; None for anything else."""
    if not text.startswith(PREFIX):
        return None
    data = hidden.decode(text[len(PREFIX) :].split(SUFFIX, 1)[0].strip())
    if data is None or data.get("repo") != repository.lower():
        return None
    start, end, rows = data.get("from"), data.get("to"), data.get("rows")
    if type(start) is not int or type(end) is not int or not isinstance(rows, list):
        return None
    if not all(isinstance(r, list) and len(r) >= BASE and type(r[0]) is int for r in rows):
        return None
    if not all(start <= r[0] < end for r in rows):
        return None
    return f"{start}-{end}", rows


def restore_all(
    rows: Iterable[Row], repository: str, review_label: str
) -> list[tuple[Issue, CheckResult]] | None:
    """Every row restored; None when one cannot be (the caller then lists every issue)."""
    try:
        return [restore(row, repository, review_label) for row in rows]
    except (ValueError, TypeError, KeyError, IndexError, OverflowError, OSError):  # bad times too
        return None


def next_change(
    checked: Iterable[tuple[Issue, CheckResult]], now: datetime, config: DigestConfig
) -> datetime | None:
    """When time alone next moves a task of the digest: an open task grows older than
    stale-after (it is then stuck), a shipped one leaves the window; None when none will."""
    times = []
    for issue, result in checked:
        block = result.block
        if issue.state == "closed":
            stamp = issue.closed_at or issue.updated_at
            times.append(time_after(stamp, config.window) if stamp else None)
        elif block is not None and block.last_updated is not None:
            span = config.window if is_terminal(block.phase) else config.stale_after
            times.append(time_after(block.last_updated, span))
    later = [t for t in times if t is not None and t >= now]
    return min(later) if later else None
