"""What the last scheduled run left on each task, so the next one reads only what changed (pure).

The issue listing says how many comments an issue has and which of our labels it wears, but
not what our sticky comment says; without help, every task with findings costs one comment
read per run just to learn that nothing changed. The run state remembers, per task whose
sticky comment exists: the comment's id, the issue's comment count after that run's writes,
and a digest of the comment's text. When the count still matches, the comment is still there
(or a write to it answers 404, and the task is read after all), so a plan can compare digests
instead of reading, and edit the comment by its id.

The state heals itself: absent, garbled (a checksum guards every entry), foreign (another
repository or bot) or of another version, it reads as None and the run reads as it always
did. It holds numbers, digests, the repository's name and the bot's login: never a body,
a title or a token. It is bounded: entries that do not fit in MAX_ENCODED characters are left
out (their tasks cost a read), tasks whose comments carry findings first.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ai_context.core.findings import Finding
from ai_context.core.hidden import find_hidden, hide
from ai_context.core.models import Issue
from ai_context.rules.sticky import MARKER, Op, read_state, render_findings

VERSION = 1
PREFIX = "<!-- ai-context:run-state "
MAX_ENCODED = 60_000  # characters of the hidden line; an issue body holds 65,536
DIGEST_CHARS = 5
FIELDS = ("v", "repo", "bot", "n", "id", "c", "d")  # the state's keys, in their order


@dataclass(frozen=True)
class Known:
    """One task's sticky comment as the last run left it."""

    sticky_id: int
    comments: int  # the issue's comment count once that run's writes were made
    digest: str  # body_digest of the comment's text

    def usable(self, issue: Issue) -> bool:
        """The listing agrees: the same number of comments, so no comment came or went."""
        return issue.comments is not None and issue.comments == self.comments


@dataclass(frozen=True)
class RunState:
    repository: str
    bot: str
    tasks: Mapping[int, Known]
    # When the first scheduled run saw the repository's tasks: a stale episode that began
    # before it was not seen beginning, so its owner is not mentioned (mention-owners: new).
    since: datetime | None = None


def body_digest(body: str) -> str:
    """30 bits of SHA-256 over the text as compared (stripped): 5 characters. A collision
    could only keep an outdated comment (never write a wrong one), at odds of 2**-30."""
    raw = hashlib.sha256(body.strip().encode("utf-8")).digest()[:6]
    return base64.urlsafe_b64encode(raw).decode("ascii")[:DIGEST_CHARS]


ALL_CLEAR = body_digest(render_findings(()))


def _checksum(columns: Sequence[Any]) -> str:
    data = json.dumps(columns, separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()[:6]).decode("ascii")


def _deltas(values: Sequence[int]) -> list[int]:
    return [b - a for a, b in zip([0, *values], values, strict=False)]


def _sums(deltas: Sequence[int]) -> list[int]:
    out, total = [], 0
    for d in deltas:
        total += d
        out.append(total)
    return out


def encode_state(state: RunState, limit: int = MAX_ENCODED) -> str:
    """The hidden line for STATE; entries that do not fit in LIMIT characters are left out
    (all-clear comments first: a full scan does not read them). Columns, sorted by issue,
    numbers and ids as differences (a run posts its comments in issue order, so ids grow
    with the numbers), deflate what repeats."""
    ranked = sorted(state.tasks.items(), key=lambda kv: (kv[1].digest == ALL_CLEAR, kv[0]))
    keep = len(ranked)
    while True:
        rows = sorted(ranked[:keep])
        columns = [
            VERSION,
            state.repository.lower(),
            state.bot.lower(),
            _deltas([n for n, _ in rows]),
            _deltas([k.sticky_id for _, k in rows]),
            [k.comments for _, k in rows],
            "".join(k.digest for _, k in rows),
        ]
        payload: dict[str, Any] = dict(zip(FIELDS, columns, strict=True))
        since = _since_text(state.since)
        if since:
            payload["s"] = since
        payload["sum"] = _checksum(columns + ([since] if since else []))
        line = hide(payload, prefix=PREFIX, compress=True)
        if len(line) <= limit or keep == 0:
            return line
        keep = min(keep - 1, int(keep * limit / len(line) * 0.98))


def decode_state(body: str | None, repository: str, bot: str) -> RunState | None:
    """The run state in BODY for this repository and bot; None when absent, garbled, foreign
    or of another version (never raises)."""
    data = find_hidden(body, prefix=PREFIX)
    if data is None or data.get("v") != VERSION:
        return None
    columns: list[Any] = [data.get(name) for name in FIELDS]
    since = data.get("s")
    signed = columns + ([since] if since else [])
    if columns[1:3] != [repository.lower(), bot.lower()] or data.get("sum") != _checksum(signed):
        return None
    numbers, ids, counts, digests = columns[3:]
    if not (_ints(numbers) and _ints(ids) and _ints(counts) and isinstance(digests, str)):
        return None
    size = len(numbers)
    if not len(ids) == len(counts) == size or len(digests) != size * DIGEST_CHARS:
        return None
    rows = list(zip(_sums(numbers), _sums(ids), counts, strict=True))
    if any(min(row) < 1 for row in rows):
        return None
    width = DIGEST_CHARS
    tasks = {
        n: Known(sticky_id=i, comments=c, digest=digests[k * width : (k + 1) * width])
        for k, (n, i, c) in enumerate(rows)
    }
    return RunState(repository, bot, tasks, _since_time(since))


def _since_text(when: datetime | None) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if when is not None else ""


def _since_time(text: Any) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None


def _ints(values: Any) -> bool:
    return isinstance(values, list) and all(type(v) is int for v in values)


def replace_line(body: str, line: str) -> str:
    """BODY with its run-state line replaced by LINE (appended when it has none); the rest of
    the text, a human's included, is kept as it is."""
    start = body.rfind(PREFIX)
    if start < 0:
        return f"{body.rstrip()}\n\n{line}" if body.strip() else line
    end = body.find(" -->", start)
    end = len(body) if end < 0 else end + len(" -->")
    return body[:start] + line + body[end:]


def current_line(body: str) -> str | None:
    start = body.rfind(PREFIX)
    if start < 0:
        return None
    end = body.find(" -->", start)
    return None if end < 0 else body[start : end + len(" -->")]


def plan_known(
    issue: int,
    findings: Sequence[Finding],
    known: Known,
    *,
    notes: Sequence[str] = (),
    state: Mapping[str, Any] | None = None,
) -> list[Op]:
    """plan_comment without the read: the comment KNOWN remembers is kept or edited by id."""
    wanted = render_findings(findings, notes=notes, state=state)
    if body_digest(wanted) == known.digest:
        return []
    return [Op(kind="edit_comment", issue=issue, comment_id=known.sticky_id, body=wanted)]


def after_run(
    issue: Issue,
    ops: Iterable[Op],
    *,
    sticky: tuple[int, str] | None,
    known: Known | None,
    created: int | None,
) -> Known | None:
    """What to remember of ISSUE once OPS were made: STICKY is the (id, text) a read found,
    KNOWN what the state said, CREATED the id of a comment this run posted. None when there
    is nothing to remember (no comment) or the comment carries its own memory (the stale
    rules' evidence: such a task is read each run)."""
    if issue.comments is None:
        return None
    count = issue.comments
    where: tuple[int, str] | None = None
    if sticky is not None:
        where = (sticky[0], body_digest(sticky[1]))
        if read_state(sticky[1]) is not None:
            where = None
    elif known is not None:
        where = (known.sticky_id, known.digest)
    for op in ops:
        if op.kind == "delete_comment":
            count -= 1
        elif op.kind == "create_comment" and op.body is not None:
            count += 1  # the sticky comment, or a mention of a stale task's owner
            if op.body.startswith(MARKER):
                where = (created, body_digest(op.body)) if created is not None else None
        elif op.kind == "edit_comment" and op.body is not None and op.comment_id is not None:
            where = (op.comment_id, body_digest(op.body))
        if op.body is not None and read_state(op.body) is not None:
            where = None
    if where is None or count < 1:
        return None
    return Known(sticky_id=where[0], comments=count, digest=where[1])
