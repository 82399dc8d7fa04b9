"""The reports as plain text for a terminal: no Markdown, no escaping, colour on request (pure).

Text shows as written, control characters dropped and newlines folded so a title cannot forge
a line or move the cursor. Colour is ANSI, one per category, the hue of the digest's chart.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from ai_context.core.durations import format_duration
from ai_context.rules.digest.model import (
    CATEGORY_TITLES,
    Category,
    Change,
    Digest,
    Entry,
    Plate,
    TaskSummary,
)
from ai_context.rules.digest.render import human_date, human_time, sections
from ai_context.rules.digest.trends import StuckTime, Trends
from ai_context.rules.templating import clip

ANSI: dict[Category, str] = {
    "stuck": "31",  # red
    "in_review": "33",  # yellow
    "in_progress": "34",  # blue
    "shipped": "32",  # green
}
BOLD, DIM = "1", "2"


class Paint:
    """Wraps text in ANSI colour when `on`; a no-op otherwise."""

    def __init__(self, on: bool) -> None:
        self.on = on

    def __call__(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.on and text else text


def plain(value: object, limit: int = 200) -> str:
    """Issue text on one line, clipped, without control characters (no escape sequences)."""
    text = " ".join(str(value or "").split())
    return clip("".join(ch for ch in text if ch.isprintable()), limit)


def _ago(age: timedelta | None) -> str:
    return f"{format_duration(age)} ago" if age is not None else "no update time"


def ref(e: Entry | Change | StuckTime, multi_repo: bool) -> str:
    return f"{e.repository}#{e.number}" if multi_repo else f"#{e.number}"


def _entry(e: Entry, multi_repo: bool, paint: Paint) -> list[str]:
    head = f"  {paint(ref(e, multi_repo), BOLD)} {plain(e.title, 90)}"
    facts = [plain(e.who, 60), plain(e.phase_text, 40), f"plan {e.progress}"]
    lines = [head, "      " + paint(" · ".join([*facts, _ago(e.age)]), DIM)]
    if e.category == "stuck":
        lines += [f"      why: {plain(r, 160)}" for r in e.reasons[:3]]
    elif e.category == "shipped":
        lines += _outcome(e.pull_request, e.followups, "      ")
    elif e.next_step:
        lines.append(f"      next: {plain(e.next_step, 160)}")
    return lines


def _outcome(pr: str | None, followups: Sequence[str], indent: str) -> list[str]:
    """A shipped task's pull request and follow-ups, as `done` recorded them."""
    lines = [f"{indent}pull request: {plain(pr, 200)}"] if pr else []
    if followups:
        lines.append(f"{indent}follow-ups: " + "; ".join(plain(f, 120) for f in followups))
    return lines


def digest_text(digest: Digest, *, colour: bool = False) -> str:
    """The digest for a terminal: counts with deltas, changes, then Stuck first."""
    paint = Paint(colour)
    parts = [
        f"{paint(str(c.count), ANSI[c.key])} {c.title.lower()}"
        + (f" ({c.delta})" if c.delta else "")
        for c in sections(digest)
    ]
    lines = [paint(f"AI Context digest — {human_date(digest.generated_at)}", BOLD)]
    where = f" in {', '.join(digest.repositories)}" if digest.repositories else ""
    lines.append(" · ".join(parts) + where)
    if digest.first:
        lines.append(f"Nothing to compare with ({digest.previous.detail}).")
    else:
        lines.append(
            f"Compared with the digest of {human_time(digest.previous.state.generated_at)}."
        )
    lines += ["", paint("Since the last digest", BOLD)]
    lines += [f"  {change_text(c, digest.multi_repo)}" for c in digest.changes] or ["  none"]
    for s in sections(digest):
        lines += [
            "",
            paint(f"{s.title} ({s.count}{', ' + s.delta if s.delta else ''})", ANSI[s.key]),
        ]
        for e in s.entries:
            lines += _entry(e, digest.multi_repo, paint)
        if not s.entries:
            lines.append(f"  nothing {s.title.lower()}")
    return "\n".join(lines) + "\n"


def change_text(c: Change, multi_repo: bool) -> str:
    """One change as a sentence, in the words of the Markdown digest."""
    title = f" {plain(c.title, 80)}" if c.title else ""
    what: list[str] = []
    if c.left:
        what.append(f"left ({plain(c.left, 120)}), was {CATEGORY_TITLES[c.category].lower()}")
    elif c.new:
        what.append(f"new, {CATEGORY_TITLES[c.category].lower()}")
    elif c.moved_from:
        what.append(
            f"{CATEGORY_TITLES[c.moved_from].lower()} → {CATEGORY_TITLES[c.category].lower()}"
        )
    if c.steps_completed:
        s = "s" if c.steps_completed != 1 else ""
        what.append(f"{c.steps_completed} plan step{s} completed")
    return f"{ref(c, multi_repo)}{title}: {', '.join(what)}"


def task_text(task: TaskSummary, *, colour: bool = False) -> str:
    """One task's progress for a terminal."""
    paint = Paint(colour)
    where = f"{task.repository}#{task.number}" if task.repository else f"#{task.number}"
    category = (
        paint(CATEGORY_TITLES[task.category], ANSI[task.category])
        if task.category
        else "not in the digest"
    )
    lines = [
        paint(f"{where} {plain(task.title, 150)}", BOLD),
        f"issue {task.state} · {category}"
        + (f" ({'; '.join(plain(r, 200) for r in task.reasons)})" if task.reasons else ""),
        task.url,
        "",
    ]
    if not task.has_block:
        return "\n".join([*lines, "This issue has no AI Context block."]) + "\n"
    chunk = f" (chunk {task.chunk[0]} of {task.chunk[1]})" if task.chunk else ""
    updated = human_time(task.last_updated) if task.last_updated else "-"
    owners = ", ".join(task.owners) or "none (no assignee, no owner under actors: in the config)"
    lines += [
        f"Owner:        {plain(owners, 80)}",
        f"Actor:        {plain(task.actor or 'none', 80)}",
        f"Phase:        {plain(task.phase or 'none', 80)}{chunk}",
        f"Last updated: {updated}" + (f" ({_ago(task.age)})" if task.age is not None else ""),
        f"Plan:         {task.plan_done} of {len(task.plan)} done",
        *(f"  {s.number}. {plain(s.text, 160)} ({s.status})" for s in task.plan),
        f"Current step: {plain(task.current_step or 'none', 160)}",
        f"Next step:    {plain(task.next_step or 'none', 160)}",
        "Blockers:     " + ("; ".join(plain(b, 160) for b in task.blockers) or "none"),
        "Decisions:    " + ("; ".join(plain(d, 160) for d in task.decisions) or "none"),
        f"Files:        {plain(task.files_touched or 'none', 300)}",
    ]
    if task.pull_request or task.followups:
        lines += [
            f"Pull request: {plain(task.pull_request or 'none', 200)}",
            "Follow-ups:   " + ("; ".join(plain(f, 160) for f in task.followups) or "none"),
        ]
    for f in task.findings:
        line = f"  line {f.line}" if f.line else ""
        lines.append(f"{f.severity} {f.code}{line}: {plain(f.message, 200)}")
        lines.append(f"    what to do: {plain(f.hint, 200)}")
    return "\n".join(lines) + "\n"


def status_text(
    plates: Sequence[Plate], *, known_actors: Sequence[str] = (), colour: bool = False
) -> str:
    """Each actor's plate, most urgent first, for a terminal."""
    paint = Paint(colour)
    multi = len({e.repository for p in plates for e in p.entries}) > 1
    lines: list[str] = []
    for p in plates:
        n = len(p.entries)
        login = (
            f" (GitHub login {p.login})" if p.login and p.login.lower() != p.actor.lower() else ""
        )
        lines.append(paint(f"{plain(p.actor, 80)}{login}: {n} task{'s' if n != 1 else ''}", BOLD))
        if not p.entries:
            others = f" Actors with tasks: {', '.join(known_actors)}." if known_actors else ""
            lines.append(f"  Nothing on this plate.{others}")
        for i, e in enumerate(p.entries, start=1):
            label = paint(CATEGORY_TITLES[e.category], ANSI[e.category])
            lines.append(f"{i:>3}. {label} {ref(e, multi)} {plain(e.title, 90)}")
            facts = f"{plain(e.who, 60)} · {plain(e.phase_text, 40)} · plan {e.progress}"
            lines.append("       " + paint(f"{facts} · {_ago(e.age)}", DIM))
            if e.category == "stuck":
                lines += [f"       why: {plain(r, 160)}" for r in e.reasons[:3]]
            if e.next_step:
                lines.append(f"       next: {plain(e.next_step, 160)}")
            lines += _outcome(e.pull_request, e.followups, "       ")
        lines.append("")
    return "\n".join(lines) + ("" if lines else "\n")


def trends_lines(t: Trends, multi_repo: bool) -> list[str]:
    """The period's figures as lines of plain text (the terminal's; Markdown adds its marks)."""

    def label(item: StuckTime | Entry) -> str:
        return f"{ref(item, multi_repo)} {plain(item.title, 60)}".rstrip()

    lead = (
        f"median {format_duration(t.median_lead)} from the first block to done"
        if t.median_lead is not None
        else "no time from the first block to done known"
    )
    unknown = f"; {t.unknown_lead} not seen before they were done" if t.unknown_lead else ""
    stuck = ", ".join(f"{label(s)} {format_duration(s.time)}" for s in t.stuck[:5])
    more = f", and {len(t.stuck) - 5} more" if len(t.stuck) > 5 else ""
    throughout = "; ".join(label(e) for e in t.stuck_throughout)
    start = human_time(t.covered_from) if t.covered_from else "-"
    return [
        f"shipped: {len(t.shipped)} ({lead}{unknown})",
        f"time stuck: {format_duration(t.stuck_total) if t.stuck else 'none'}"
        + (f" across {len(t.stuck)} task(s): {stuck}{more}" if t.stuck else ""),
        f"stuck all period: {throughout or 'none'}",
        f"from {t.digests} digest(s) since {start}",
    ]


def trends_text(t: Trends, multi_repo: bool, *, colour: bool = False) -> str:
    paint = Paint(colour)
    days = format_duration(t.until - t.since)
    head = paint(f"The last {days}, since {human_time(t.since)}", BOLD)
    return "\n".join([head, *(f"  {line}" for line in trends_lines(t, multi_repo))]) + "\n\n"
