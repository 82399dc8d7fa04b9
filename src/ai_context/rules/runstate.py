"""What a scheduled run leaves for the next one, so the next one reads only what changed (pure).

The next run lists only the issues updated since `listed` (GitHub's clock) and judges the
others from the state: a block goes stale with time, not edits, so `due` keeps per open task
the minute time alone next changes its findings, and `seen` a fingerprint of each issue as the
run left it, so the run's own comments and labels do not make the next run read it again.

It holds no comment id, body, title or token: a forged or garbled state can cost calls, never
a wrong write. Absent, garbled (a checksum guards it), foreign, judged by other rules, older
than MAX_AGE or past its `until`, it means a full listing. Bounded by MAX_ENCODED characters:
the fingerprints give way first, then the dues furthest ahead (`until` says where they end).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from itertools import accumulate
from typing import Any

from ai_context.core.hidden import find_hidden, hide
from ai_context.core.models import Issue
from ai_context.rules.sticky import Op

VERSION = 2
PREFIX = "<!-- ai-context:run-state "
SUFFIX = " -->"
_LINE = re.compile(re.escape(PREFIX) + ".*?" + re.escape(SUFFIX), re.DOTALL)
MAX_ENCODED = 60_000  # characters of the hidden line; an issue body holds 65,536
MAX_AGE = timedelta(days=7)  # a full listing at least this often heals any drift
# How long before GitHub's answer an edit may still be in flight (saved, not yet listed): the
# next run lists again from the newest edit a listing showed, or from this long before the
# answer when that edit is more recent. What is listed again costs a fingerprint's compare.
MARGIN = timedelta(seconds=60)
FINGERPRINT_CHARS = 5
FIELDS = (
    "v",
    "repo",
    "bot",
    "jobs",
    "rules",
    "listed",
    "full",
    "until",
    "tasks",
    "first",
    "facts",
    "changes",
    "due",
    "seen",
    "marks",
)
STALE, CONFLICT = 1, 2  # bits of a mark's last number
# What the findings of an unchanged task add up to, for a run's outputs and exit code:
# (findings, errors, warnings, STALE | CONFLICT bits). Tasks without findings have none.
Mark = tuple[int, int, int, int]


@dataclass(frozen=True)
class RunState:
    """One repository's state, for one set of jobs (an hourly check and a daily digest keep
    their own: each must see every change since its own last run)."""

    repository: str
    bot: str
    jobs: str  # the run's jobs, sorted, comma-separated
    rules: str  # rules_key: the version and settings the findings were judged by
    listed: datetime  # list the issues updated at or after this next time (GitHub's clock)
    full: datetime  # when the last full listing was: the next is due MAX_AGE later
    until: datetime  # the dues are complete up to here; a run at or after it lists fully
    tasks: int = 0  # open tasks the last run knew of: what a full listing would cost
    # When the scheduled runs first saw the repository's tasks: a stale episode that began
    # before it was not seen beginning, so its owner is not mentioned (mention-owners: new).
    first: datetime | None = None
    facts: str = ""  # digest of the digest's stored facts (rules/digest/facts.py), if any
    changes: datetime | None = None  # when time alone next moves a task of the digest
    due: Mapping[int, datetime] = field(default_factory=dict)
    seen: Mapping[int, str] = field(default_factory=dict)
    marks: Mapping[int, Mark] = field(default_factory=dict)

    def due_now(self, now: datetime) -> list[int]:
        """The tasks whose minute has come: time alone may have changed their findings."""
        return sorted(n for n, when in self.due.items() if when <= now)


def rules_key(*parts: object) -> str:
    """A short digest of what the findings depend on besides the issues (the version, the
    settings, the config file's sections): a state judged by other rules is not reused."""
    return _checksum([str(p) for p in parts], size=9)


def fingerprint(issue: Issue) -> str:
    """What the checks, the mirror and the digest read of an issue from a listing, as 30 bits:
    title, body, state, labels, comment count. A collision could only skip an issue whose
    change the next full listing then sees, at odds of 2**-30."""
    text = "\0".join(
        [
            issue.title,
            issue.body,
            issue.state,
            issue.state_reason or "",
            "\x1f".join(sorted(label.lower() for label in issue.labels)),
            str(issue.comments),
        ]
    )
    raw = hashlib.sha256(text.encode("utf-8")).digest()[:6]
    return base64.urlsafe_b64encode(raw).decode("ascii")[:FINGERPRINT_CHARS]


def after_writes(issue: Issue, ops: Iterable[Op]) -> Issue:
    """ISSUE as the run's writes OPS leave it (labels, comment count), so that the next run,
    which lists it again because those writes moved its `updated_at`, knows it unchanged.
    After a comment is created the count is left unknown: the next run reads the issue's
    comments again, and a duplicate a missed read made (or a race) goes then."""
    labels = {label.lower(): label for label in issue.labels}
    count = issue.comments
    for op in ops:
        if op.kind == "add_labels":
            labels.update({label.lower(): label for label in op.labels})
        elif op.kind == "remove_label":
            labels.pop(op.labels[0].lower(), None)
        elif op.kind == "delete_comment" and count is not None:
            count -= 1
        elif op.kind == "create_comment":
            count = None
    return replace(issue, labels=tuple(labels.values()), comments=count)


def changed(issue: Issue, state: RunState | None) -> bool:
    """ISSUE, listed as updated since the state, is not as the last run left it."""
    return state is None or state.seen.get(issue.number) != fingerprint(issue)


def full_reason(
    state: RunState | None, *, now: datetime, asked: str, why_none: str = "no run state yet"
) -> str:
    """Why this run must list every open issue ('' when the state lets it list what changed).
    NOW is the run's clock (the one the findings are judged by)."""
    if asked:  # why the run itself wants every open issue
        return asked
    if state is None:
        return why_none
    if now >= state.until:
        return f"the run state's dues end at {_text(state.until)}"
    if now - state.full >= MAX_AGE:
        return f"the last full listing was over {MAX_AGE.days} days ago ({_text(state.full)})"
    return ""


# --- the hidden line ---------------------------------------------------------------------------


def _minutes(when: datetime) -> int:
    return int(when.astimezone(UTC).timestamp() // 60)


def _at(minutes: int) -> datetime:
    return datetime.fromtimestamp(minutes * 60, UTC)


def _text(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%MZ")


def _deltas(values: Sequence[int]) -> list[int]:
    return [b - a for a, b in zip([0, *values], values, strict=False)]


def _checksum(columns: Sequence[Any], size: int = 6) -> str:
    data = json.dumps(columns, separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()[:size]).decode("ascii")


def _columns(state: RunState) -> list[Any]:
    dues = sorted(state.due.items())
    base = _minutes(state.listed)
    seen = sorted(state.seen.items())
    marks = sorted(state.marks.items())
    return [
        VERSION,
        state.repository.lower(),
        state.bot.lower(),
        state.jobs,
        state.rules,
        int(state.listed.timestamp()),
        _minutes(state.full),
        _minutes(state.until),
        state.tasks,
        _minutes(state.first) if state.first else 0,
        state.facts,
        _minutes(state.changes) if state.changes else 0,
        [_deltas([n for n, _ in dues]), [_minutes(when) - base for _, when in dues]],
        [_deltas([n for n, _ in seen]), "".join(print_ for _, print_ in seen)],
        [_deltas([n for n, _ in marks]), [v for _, m in marks for v in m]],
    ]


def _line(state: RunState) -> str:
    columns = _columns(state)
    payload = dict(zip(FIELDS, columns, strict=True))
    payload["sum"] = _checksum(columns)
    return hide(payload, prefix=PREFIX, compress=True)


def encode(state: RunState, limit: int = MAX_ENCODED) -> tuple[str, RunState]:
    """The hidden line for STATE within LIMIT characters, and the state it holds: the
    fingerprints give way first, then the dues furthest ahead (`until` moves back to the
    first due left out)."""
    line = _line(state)
    if len(line) <= limit:
        return line, state
    state = replace(state, seen={})
    dues = sorted(state.due.items(), key=lambda item: (item[1], item[0]))
    keep = len(dues)
    while True:
        line = _line(state)
        if len(line) <= limit or keep == 0:
            return line, state
        keep = min(keep - 1, int(keep * limit / len(line) * 0.95))
        cut = dues[keep][1] if keep < len(dues) else state.until
        while keep and dues[keep - 1][1] >= cut:  # every due of the cut minute goes
            keep -= 1
        state = replace(state, due=dict(dues[:keep]), until=min(state.until, cut))


def decode(body: str | None, repository: str, bot: str, jobs: str) -> RunState | None:
    """The state in BODY for REPOSITORY, BOT and JOBS; None when absent, garbled or another's.
    Never raises: a state is text anyone with write access could have edited."""
    for line in lines(body):
        data = find_hidden(line, prefix=PREFIX)
        if data is None or data.get("v") != VERSION:
            continue
        columns = [data.get(name) for name in FIELDS]
        if columns[1:4] != [repository.lower(), bot.lower(), jobs]:
            continue
        if data.get("sum") != _checksum(columns):
            return None
        return _state(columns, repository, bot, jobs)
    return None


def _state(columns: list[Any], repository: str, bot: str, jobs: str) -> RunState | None:
    rules, listed, full, until, tasks, first, facts, changes, due, seen, marks = columns[4:]
    if not (isinstance(rules, str) and isinstance(facts, str)):
        return None
    if not _ints([listed, full, until, tasks, first, changes]):
        return None
    if not (isinstance(due, list) and isinstance(seen, list) and len(due) == len(seen) == 2):
        return None
    numbers, offsets = due
    seen_numbers, prints = seen
    if not (_ints(numbers) and _ints(offsets) and _ints(seen_numbers) and isinstance(prints, str)):
        return None
    if len(numbers) != len(offsets) or len(prints) != FINGERPRINT_CHARS * len(seen_numbers):
        return None
    found_marks = _marks(marks)
    if found_marks is None:
        return None
    due_numbers, seen_at = list(accumulate(numbers)), list(accumulate(seen_numbers))
    if min([*due_numbers, *seen_at, 1]) < 1:
        return None
    width = FINGERPRINT_CHARS
    try:
        listed_at = datetime.fromtimestamp(listed, UTC)
        base = _minutes(listed_at)
        return RunState(
            repository=repository,
            bot=bot,
            jobs=jobs,
            rules=rules,
            listed=listed_at,
            full=_at(full),
            until=_at(until),
            tasks=tasks,
            first=_at(first) if first else None,
            facts=facts,
            changes=_at(changes) if changes else None,
            due={n: _at(base + m) for n, m in zip(due_numbers, offsets, strict=True)},
            seen={n: prints[k * width : (k + 1) * width] for k, n in enumerate(seen_at)},
            marks=found_marks,
        )
    except (OverflowError, OSError, ValueError):  # a time beyond the calendar
        return None


def _marks(column: Any) -> dict[int, Mark] | None:
    if not (isinstance(column, list) and len(column) == 2):
        return None
    numbers, values = column
    if not (_ints(numbers) and _ints(values) and len(values) == 4 * len(numbers)):
        return None
    if min([*numbers[:1], *values, 1]) < 0:
        return None
    at = list(accumulate(numbers))
    return {
        n: (values[4 * k], values[4 * k + 1], values[4 * k + 2], values[4 * k + 3])
        for k, n in enumerate(at)
    }


def _ints(values: Any) -> bool:
    return isinstance(values, list) and all(type(v) is int for v in values)


def lines(body: str | None) -> list[str]:
    """Every run-state line in BODY, in order."""
    return _LINE.findall(body or "")


def line_of(body: str, jobs: str) -> str | None:
    """The run-state line of JOBS in BODY, None when it has none."""
    return next((line for line in lines(body) if named(line, "jobs") == jobs), None)


def named(line: str, key: str) -> str | None:
    """What a run-state line names under KEY: `jobs` (its job set) or `repo` (its repository,
    lower case); None when unreadable."""
    data = find_hidden(line, prefix=PREFIX)
    value = data.get(key) if data else None
    return value if isinstance(value, str) else None


def replace_line(body: str, line: str, jobs: str) -> str:
    """BODY with the run-state line of JOBS replaced by LINE (appended when it has none); the
    other lines and the text around them, a human's included, are kept as they are."""
    old = line_of(body, jobs)
    if old is not None:
        return body.replace(old, line, 1)
    return f"{body.rstrip()}\n\n{line}" if body.strip() else line
