"""The memory a digest comment carries for the next digest, in hidden lines (pure).

The payloads go through core.hidden, the one codec of the bot's hidden state.

Two lines, both Markdown link reference definitions (they render as nothing):

    [//]: # (ai-context-digest:v2:<state>)       every task of this digest: category, steps done
    [//]: # (ai-context-digest-base:v2:<state>)  the state this digest was compared with

A same-day rerun compares with the baseline of the day's comment, so an edited comment keeps
the changes it showed and adds new ones; the day's first digest ever has no baseline line, and
then its own state is the baseline. The next day compares with the state of the last comment.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from ai_context.core import hidden
from ai_context.core.block import format_timestamp
from ai_context.rules.digest_model import Category, DigestState, StateRead, TaskState

VERSION = 2
STATE_PREFIX = f"ai-context-digest:v{VERSION}:"
BASE_PREFIX = f"ai-context-digest-base:v{VERSION}:"
STATE_LINE_RE = re.compile(
    r"^\[//\]: # \(ai-context-digest:([A-Za-z0-9]+):([A-Za-z0-9_=.-]*)\)[ \t]*$", re.M
)
BASE_LINE_RE = re.compile(
    r"^\[//\]: # \(ai-context-digest-base:([A-Za-z0-9]+):([A-Za-z0-9_=.-]*)\)[ \t]*$", re.M
)
MAX_STATE_CHARS = hidden.MAX_ENCODED
_CODES: dict[Category, str] = {"shipped": "s", "in_review": "r", "in_progress": "p", "stuck": "k"}
_CATEGORY_BY_CODE: dict[str, Category] = {v: k for k, v in _CODES.items()}


def encode_state(state: DigestState) -> str:
    """The state as compressed JSON in url-safe base64 (core.hidden), per repository in
    columns: `{"v":2,"at":..,"r":{repo:[[number deltas],"categories",[steps done]]}}`.

    Numbers are close together and categories few, so a task costs about a character: the
    50,000 tasks of an organisation's digest fit in the 65,536 a GitHub comment may hold.
    """
    repos: dict[str, list[tuple[int, TaskState]]] = {}
    for (repo, number), task in sorted(state.tasks.items()):
        repos.setdefault(repo, []).append((number, task))
    columns = {
        repo: [
            [b - a for a, b in zip([0] + [n for n, _ in rows], [n for n, _ in rows], strict=False)],
            "".join(_CODES[t.category] for _, t in rows),
            [t.done for _, t in rows],
        ]
        for repo, rows in repos.items()
    }
    at = format_timestamp(state.generated_at) or None
    return hidden.encode({"v": VERSION, "at": at, "r": columns}, compress=True)


def state_line(state: DigestState) -> str:
    """The hidden line: a Markdown link reference definition, which renders as nothing.

    `[//]: # (...)` is the well-known Markdown comment idiom; it must be preceded by a blank
    line (a definition cannot interrupt a paragraph) and it survives GitHub's sanitiser, which
    an HTML comment would too, but a definition also never shows in the Slack or step summary
    copies of the same text.
    """
    return f"[//]: # ({STATE_PREFIX}{encode_state(state)})"


def base_line(state: DigestState) -> str:
    """The hidden line of the baseline a digest was compared with (see the module's doc)."""
    return f"[//]: # ({BASE_PREFIX}{encode_state(state)})"


def same_tasks(a: DigestState, b: DigestState) -> bool:
    """The same tasks in the same categories with the same steps done (times aside)."""
    return a.tasks == b.tasks


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
        if not (len(deltas) == len(codes) == len(done)):
            raise ValueError("columns of different lengths")
        number = 0
        for delta, code, steps in zip(deltas, codes, done, strict=True):
            if type(delta) is not int or type(steps) is not int:
                raise TypeError("numbers and steps done are integers")
            number += delta
            tasks[(str(repo), number)] = TaskState(category=_CATEGORY_BY_CODE[code], done=steps)
    return tasks


def decode_state(encoded: str) -> StateRead:
    """The state from its base64 text; garbled text is a first digest, not an error."""
    if len(encoded) > MAX_STATE_CHARS:
        return _unreadable("too long")
    payload = hidden.decode(encoded)  # the one codec of hidden state; None when garbled
    if payload is None:
        return _unreadable("not base64 JSON")
    if payload.get("v") != VERSION:
        return _unreadable("unknown version")
    try:
        at = payload.get("at")
        generated = datetime.fromisoformat(at).astimezone(UTC) if isinstance(at, str) else None
        tasks = _tasks(payload.get("r", {}))
    except (TypeError, ValueError, KeyError, ValidationError):
        return _unreadable("unexpected content")
    when = f" of {format_timestamp(generated)}" if generated else ""
    return StateRead(
        status="restored",
        state=DigestState(generated_at=generated, tasks=tasks),
        detail=f"compared with the digest{when} ({len(tasks)} tasks)",
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
