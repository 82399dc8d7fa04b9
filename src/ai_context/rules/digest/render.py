"""A Digest, a TaskSummary or an actor's Plate as Markdown for GitHub (pure).

What every renderer reads the same way is computed here once: the sections in reading order
(Stuck first), each with its count, its change, its colour, and how many rows fit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from jinja2 import Environment
from pydantic import BaseModel, ConfigDict

from ai_context.core.durations import format_duration
from ai_context.core.markdown import escape_text
from ai_context.rules.digest.model import (
    CATEGORY_COLOURS,
    CATEGORY_EMOJI,
    CATEGORY_TITLES,
    DISPLAY_ORDER,
    Category,
    Digest,
    Entry,
    Plate,
    TaskSummary,
)
from ai_context.rules.digest.state import base_line, state_line
from ai_context.rules.digest.trends import Trends
from ai_context.rules.templating import render

GITHUB_COMMENT_LIMIT = 65_536
PROBE_ROWS = 8

Caps = Mapping[Category, int | None]


def human_date(stamp: datetime | None) -> str:
    """`Monday 30 November 2026`: the date as people say it (the time is in UTC)."""
    return "-" if stamp is None else f"{stamp:%A} {stamp.day} {stamp:%B %Y}"


def human_time(stamp: datetime | None) -> str:
    """`Monday 30 November 2026, 09:00 UTC`."""
    return "-" if stamp is None else f"{human_date(stamp)}, {stamp:%H:%M} UTC"


def signed(delta: int | None) -> str:
    """`+2`, `−1` (a minus sign, not a hyphen), '' for no change or nothing to compare with."""
    if not delta:
        return ""
    return f"+{delta}" if delta > 0 else f"−{-delta}"


class Section(BaseModel):
    """One category as a template shows it: its entries, and how many did not fit."""

    model_config = ConfigDict(frozen=True)

    key: Category
    title: str
    emoji: str
    colour: str
    count: int
    delta: str  # "+2", "−1" or ""
    entries: tuple[Entry, ...]
    omitted: int


def sections(digest: Digest, caps: Caps | int | None = None) -> list[Section]:
    """The categories in reading order; `caps` bounds the rows each shows (None: all)."""
    deltas = digest.deltas
    out = []
    for key in DISPLAY_ORDER:
        entries = digest.entries.get(key, ())
        cap = caps if caps is None or isinstance(caps, int) else caps.get(key)
        shown = entries if cap is None else entries[:cap]
        out.append(
            Section(
                key=key,
                title=CATEGORY_TITLES[key],
                emoji=CATEGORY_EMOJI[key],
                colour=CATEGORY_COLOURS[key],
                count=len(entries),
                delta=signed(deltas[key]),
                entries=shown,
                omitted=len(entries) - len(shown),
            )
        )
    return out


def digest_vars(
    digest: Digest,
    caps: Caps | int | None = None,
    full_url: str = "",
    lines: tuple[str, str] | None = None,
    changes: int | None = None,
) -> dict[str, Any]:
    """The variables every digest template gets (documented at the top of digest.md.j2).
    `lines` are the hidden lines when the caller has them; `changes` bounds the changes shown."""
    state, base = lines or hidden_lines(digest)
    shown = digest.changes[:changes]
    return {
        "digest": digest,
        "sections": sections(digest, caps),
        "changes": shown,
        "changes_omitted": len(digest.changes) - len(shown),
        "titles": CATEGORY_TITLES,
        "multi_repo": digest.multi_repo,
        "date": human_date(digest.generated_at),
        "previous_date": human_time(digest.previous.state.generated_at),
        "state_line": state,
        "base_line": base,
        "full_url": full_url,
    }


def hidden_lines(digest: Digest) -> tuple[str, str]:
    """The state line, and the baseline line ('' when there is nothing to compare with)."""
    return state_line(digest.state), "" if digest.first else base_line(digest.previous.state)


def _caps_within(
    digest: Digest, budget: float, per_row: Mapping[Category, float]
) -> dict[Category, int | None]:
    """Rows per category by the estimate, in reading order: Stuck is kept whole before any
    row of In review, and so on down to Shipped."""
    caps: dict[Category, int | None] = {}
    for key in DISPLAY_ORDER:
        n = len(digest.entries.get(key, ()))
        fits = max(0, int(budget // per_row[key]))
        caps[key] = None if fits >= n else fits
        budget -= per_row[key] * min(n, fits)
    return caps


def _shown(digest: Digest, caps: Mapping[Category, int | None]) -> dict[Category, int]:
    return {
        key: len(digest.entries.get(key, ())) if caps[key] is None else caps[key] or 0
        for key in DISPLAY_ORDER
    }


def _shrink(digest: Digest, caps: dict[Category, int | None], over: float, per_row: float) -> bool:
    """Cut the rows OVER characters take (PER_ROW each, as the last render measured, and a
    tenth more), from the least needed category up; False when nothing is left to cut."""
    rows = math.ceil(over / per_row * 1.1) if per_row > 0 else 1
    cut = False
    for key, shown in reversed(_shown(digest, caps).items()):
        if shown and rows > 0:
            take = min(shown, max(rows, 1))
            caps[key], rows, cut = shown - take, rows - take, True
    return cut


def _changes_within(digest: Digest, room: int, size: Callable[[int | None], int]) -> int | None:
    """How many changes fit in ROOM characters (None: all), SIZE measuring a render with
    that many."""
    if not digest.changes:
        return None
    bare = size(0)
    each = (size(None) - bare) / len(digest.changes)
    return None if each * len(digest.changes) <= room else int(room // each)


def render_markdown(
    digest: Digest,
    env: Environment,
    *,
    max_chars: int = GITHUB_COMMENT_LIMIT,
    full_url: str = "",
    lines: tuple[str, str] | None = None,
) -> str:
    """The digest as GitHub Markdown, no longer than `max_chars` (a comment holds 65,536).

    When everything does not fit, the changes keep at most a quarter of it and the categories
    are cut in reverse reading order (Shipped first, Stuck last), each cut saying how many it
    left out and linking `full_url`; the hidden state line always covers every task. `lines`
    are `hidden_lines(digest)` when the caller renders the digest more than once.
    """
    lines = lines or hidden_lines(digest)

    def at(caps: Caps | int | None, changes: int | None) -> str:
        return render(env, "digest.md.j2", **digest_vars(digest, caps, full_url, lines, changes))

    sizes = {k: len(digest.entries.get(k, ())) for k in DISPLAY_ORDER}
    if max(sizes.values(), default=0) <= PROBE_ROWS:
        text = at(None, None)  # the common case: one render
        if len(text) <= max_chars:
            return text
    none: dict[Category, int | None] = dict.fromkeys(DISPLAY_ORDER, 0)
    changes = _changes_within(digest, max_chars // 4, lambda n: len(at(none, n)))
    skeleton = len(at(none, changes))
    if skeleton + 400 * sum(sizes.values()) <= max_chars:
        text = at(None, changes)  # a step summary's megabyte: everything fits, one more render
        if len(text) <= max_chars:
            return text
    # Estimate each category's row size from a few of its rows (rows of Stuck carry reasons
    # and are longer), so a 1,000-task digest is rendered once more, not whole and then cut.
    per_row: dict[Category, float] = {}
    for key, n in sizes.items():
        shown = min(n, PROBE_ROWS)
        probe = len(at({**none, key: shown}, changes)) if shown else skeleton
        # The first rows have the shortest numbers and links: three tenths more, so that the
        # render these estimates ask for fits and is the last one.
        per_row[key] = max(1.0, (probe - skeleton) / max(shown, 1)) * 1.3
    caps = _caps_within(digest, max_chars - skeleton, per_row)
    while True:
        text = at(caps, changes)
        if len(text) <= max_chars:
            return text
        rows = sum(_shown(digest, caps).values())
        measured = (len(text) - skeleton) / rows if rows else 0.0
        if not _shrink(digest, caps, len(text) - max_chars, measured):
            return text


def render_task(summary: TaskSummary, env: Environment) -> str:
    """One task's progress summary (`/daily-summary <task>`)."""
    return render(env, "task.md.j2", task=summary, titles=CATEGORY_TITLES)


def render_status(
    plates: Sequence[Plate], env: Environment, *, known_actors: Sequence[str] = ()
) -> str:
    """Actors' plates by urgency (`/status`)."""
    return render(
        env,
        "status.md.j2",
        plates=list(plates),
        titles=CATEGORY_TITLES,
        emoji=CATEGORY_EMOJI,
        known_actors=list(known_actors),
        multi_repo=len({e.repository for p in plates for e in p.entries}) > 1,
    )


def render_trends(trends: Trends, multi_repo: bool) -> str:
    """The period's figures as a Markdown section, above the digest (`digest --since D`)."""
    from ai_context.rules.digest.text import trends_lines  # noqa: PLC0415 - text imports us

    days = format_duration(trends.until - trends.since)
    lines = [f"## The last {days}, since {human_time(trends.since)}", ""]
    lines += [f"- {escape_text(line)}" for line in trends_lines(trends, multi_repo)]
    return "\n".join(lines) + "\n\n"
