"""The memory a digest comment carries for the next digest, in hidden lines (pure).

Two Markdown link reference definitions (they render as nothing, on GitHub, in Slack and in the
step summary), their payloads through core.hidden:

    [//]: # (ai-context-digest:v2:<state>)       every task of this digest: category, steps done
    [//]: # (ai-context-digest-base:v2:<state>)  the state this digest was compared with

A same-day rerun compares with the baseline of the day's comment, so an edited comment keeps
the changes it showed; the day's first digest ever has no baseline, its own state is one. The
next day compares with the state of the last comment.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from datetime import datetime
from itertools import pairwise
from typing import Any

from pydantic import ValidationError

from ai_context.core import hidden
from ai_context.core.block.model import format_timestamp
from ai_context.core.fields import utc
from ai_context.rules.digest.model import Category, DigestState, StateRead, TaskState

VERSION = 2
STATE_PREFIX = f"ai-context-digest:v{VERSION}:"
BASE_PREFIX = f"ai-context-digest-base:v{VERSION}:"
STATE_LINE_RE, BASE_LINE_RE = (
    re.compile(rf"^\[//\]: # \({name}:([A-Za-z0-9]+):([A-Za-z0-9_=.-]*)\)[ \t]*$", re.M)
    for name in ("ai-context-digest", "ai-context-digest-base")
)
_CODES: dict[Category, str] = {"shipped": "s", "in_review": "r", "in_progress": "p", "stuck": "k"}
_CATEGORY_BY_CODE: dict[str, Category] = {v: k for k, v in _CODES.items()}


def encode_state(state: DigestState) -> str:
    """The state as compressed JSON (core.hidden), per repository in columns:
    `{"v":2,"at":..,"r":{repo:[[number deltas],"categories",[steps done]]}}`, about a
    character a task (50,000 tasks fit in a comment's 65,536)."""
    by_repo: dict[str, dict[int, TaskState]] = {}
    for (repo, number), task in state.tasks.items():
        by_repo.setdefault(repo, {})[number] = task
    columns = {}
    for repo in sorted(by_repo):  # numbers sort within each: faster than (repo, number) pairs
        tasks = by_repo[repo]
        numbers = sorted(tasks)
        columns[repo] = [
            [b - a for a, b in pairwise([0, *numbers])],
            "".join(_CODES[tasks[n].category] for n in numbers),
            [tasks[n].done for n in numbers],
        ]
    at = format_timestamp(state.generated_at) or None
    return hidden.encode({"v": VERSION, "at": at, "r": columns}, compress=True)


def state_line(state: DigestState) -> str:
    """The hidden line, `[//]: # (...)`: the Markdown comment idiom, after a blank line (a
    definition cannot interrupt a paragraph); unlike an HTML comment it never shows in Slack."""
    return f"[//]: # ({STATE_PREFIX}{encode_state(state)})"


def base_line(state: DigestState) -> str:
    """The hidden line of the baseline a digest was compared with (see the module's doc)."""
    return f"[//]: # ({BASE_PREFIX}{encode_state(state)})"


def _unreadable(why: str) -> StateRead:
    return StateRead(
        status="unreadable",
        detail=f"the previous digest's state is unreadable: {why}; treated as the first digest",
    )


def _tasks(repos: Any) -> dict[tuple[str, int], TaskState]:
    if not isinstance(repos, dict):
        raise TypeError("r is not an object")
    tasks: dict[tuple[str, int], TaskState] = {}
    for repo, (deltas, codes, done) in repos.items():
        number = 0
        for delta, code, steps in zip(deltas, codes, done, strict=True):  # ValueError if uneven
            if type(delta) is not int or type(steps) is not int:
                raise TypeError("numbers and steps done are integers")
            number += delta
            tasks[(str(repo), number)] = TaskState(_CATEGORY_BY_CODE[code], steps)
    return tasks


def decode_state(encoded: str) -> StateRead:
    """The state from its base64 text; garbled text is a first digest, not an error."""
    if len(encoded) > hidden.MAX_ENCODED:
        return _unreadable("too long")
    payload = hidden.decode(encoded)  # the one codec of hidden state; None when garbled
    if payload is None:
        return _unreadable("not base64 JSON")
    if payload.get("v") != VERSION:
        return _unreadable("unknown version")
    try:
        at = payload.get("at")
        generated = utc(datetime.fromisoformat(at)) if isinstance(at, str) else None
        state = DigestState(generated_at=generated, tasks=_tasks(payload.get("r", {})))
    except (TypeError, ValueError, KeyError, ValidationError):
        return _unreadable("unexpected content")
    when = f" of {format_timestamp(generated)}" if generated else ""
    return StateRead(
        status="restored",
        state=state,
        detail=f"compared with the digest{when} ({len(state.tasks)} tasks)",
    )


def _read_line(text: str, pattern: re.Pattern[str]) -> StateRead | None:
    # The last line wins: a comment edited by hand may keep an older one above it.
    matches = list(pattern.finditer(text))
    if not matches:
        return None
    match = matches[-1]
    if match.group(1) != f"v{VERSION}":
        return StateRead(
            status="unreadable",
            detail=f"the previous digest's state has version {match.group(1)}, not "
            f"v{VERSION}; treated as the first digest",
        )
    return decode_state(match.group(2))


def find_state(text: str | None) -> StateRead:
    """The state carried by a digest comment's body; absent or garbled is a first digest."""
    if not text:
        return StateRead(status="absent", detail="no previous digest found")
    found = _read_line(text, STATE_LINE_RE)
    if found is not None:
        return found
    if "ai-context-digest:" in text:
        return StateRead(
            status="unreadable",
            detail="the previous digest's state line is damaged; treated as the first digest",
        )
    return StateRead(status="absent", detail="the previous digest carries no state")


# "| 3h 5m ago |": format_duration's, in a table cell of its own as the bundled template writes
# it; the same words inside a title are the title's, and a user's template that writes ages
# elsewhere compares unequal, so its comment is rewritten (never left wrong).
_AGES = re.compile(r"(?<=\| )(?:closed )?\d+[dhm](?: \d+[hm])? ago(?= \|)")


def same_digest(old: str, new: str) -> bool:
    """NEW says what OLD says but for its ages ("3h ago") and its state's time: a rerun need not
    write it again (the old ages are right as of the old comment's time)."""

    def said(text: str) -> str:
        return _AGES.sub("ago", STATE_LINE_RE.sub("", text)).strip()

    return said(old) == said(new) and find_state(old).state.tasks == find_state(new).state.tasks


def find_baseline(text: str | None) -> StateRead:
    """What a rerun of the digest in `text` compares with: its baseline, else its own state
    (the day's first digest ever had nothing to compare with)."""
    found = _read_line(text or "", BASE_LINE_RE)
    if found is not None and found.status == "restored":
        return found
    own = find_state(text)
    if own.status != "restored":
        return own
    return own.model_copy(update={"own": True, "detail": "no previous digest found"})


# What Slack last received today, as a digest of the tasks it showed: a same-day rerun posts
# again when it is absent (never posted today, the post failed, or Slack became a target
# since) or when the tasks changed since.
SLACK_LINE_RE = re.compile(r"^\[//\]: # \(ai-context-digest-slack:([A-Za-z0-9_-]+)\)[ \t]*$", re.M)


def tasks_digest(state: DigestState) -> str:
    """Twelve characters naming the tasks of STATE (categories and steps; times aside)."""
    rows = sorted((repo, n, t.category, t.done) for (repo, n), t in state.tasks.items())
    return hashlib.sha256(repr(rows).encode("utf-8")).hexdigest()[:12]


def slack_line(tasks: str) -> str:
    """The hidden line saying Slack received the tasks whose digest is TASKS."""
    return f"[//]: # (ai-context-digest-slack:{tasks})"


def slack_posted(text: str | None) -> str | None:
    """The tasks digest a day's comment says Slack received, or None."""
    found = list(SLACK_LINE_RE.finditer(text or ""))
    return found[-1].group(1) if found else None


def merge_previous(reads: Sequence[tuple[str, StateRead]]) -> StateRead:
    """One baseline from several repositories' previous digests, the first (the digest's own
    repository) first: a repository the first one's state does not cover takes its tasks from
    its own digest, so each repository is compared with the digest that last showed it."""
    restored = [(repo, read) for repo, read in reads if read.status == "restored"]
    if not restored:
        return (
            reads[0][1] if reads else StateRead(status="absent", detail="no previous digest found")
        )
    first_repo, first = restored[0]
    tasks = dict(first.state.tasks)
    covered = {repo.lower() for repo, _ in tasks} | {first_repo.lower()}
    used = [first]
    for repo, read in restored[1:]:
        if repo.lower() in covered:
            continue
        mine = {key: t for key, t in read.state.tasks.items() if key[0].lower() == repo.lower()}
        tasks.update(mine)
        covered.add(repo.lower())
        used.append(read)
    if len(used) == 1:
        return first
    stamps = [r.state.generated_at for r in used if r.state.generated_at is not None]
    return StateRead(
        status="restored",
        state=DigestState(generated_at=min(stamps, default=None), tasks=tasks),
        detail=f"compared with {len(used)} repositories' digests ({len(tasks)} tasks)",
    )
