"""Fixed issues, clock and previous state for the digest tests and their golden files."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from ai_context.core.models import Issue
from ai_context.rules.digest.model import DigestState, StateRead, TaskState

NOW = datetime(2026, 5, 27, 9, 0, tzinfo=UTC)
SHOP = "acme/shop"
INFRA = "acme/infra"


def stamp(hours_ago: float) -> str:
    moment = NOW - timedelta(hours=hours_ago)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def block(
    *,
    actor: str = "cc-ariel-laptop",
    phase: str = "implementing",
    hours_ago: float = 2,
    plan: tuple[str, ...] = ("Write it (done)", "Test it (in progress)", "Open PR (pending)"),
    blockers: tuple[str, ...] = (),
    next_step: str | None = "Finish the tests",
    files: str | None = "src/app.py",
) -> str:
    lines = [
        "## AI Context (updated by Claude — do not edit manually)",
        "",
        f"- **Active actor:** {actor}",
        f"- **Phase:** {phase}",
        f"- **Last updated:** {stamp(hours_ago)}",
        "- **Plan:**",
        *(f"  {i}. {step}" for i, step in enumerate(plan, start=1)),
    ]
    if files is not None:
        lines.append(f"- **Files touched:** {files}")
    lines.append("- **Decisions:** none")
    if blockers:
        lines.append("- **Blockers:**")
        lines.extend(f"  - {b}" for b in blockers)
    else:
        lines.append("- **Blockers:** none")
    if next_step is not None:
        lines.append(f"- **Next step:** {next_step}")
    return "\n".join(lines) + "\n"


def issue(number: int, title: str, body: str, repo: str = SHOP, **fields: object) -> Issue:
    data: dict[str, Any] = {
        "number": number,
        "title": title,
        "body": body,
        "repository": repo,
        "html_url": f"https://github.com/{repo}/issues/{number}",
    }
    data.update(fields)
    for name in ("updated_at", "closed_at"):  # stamps as a file would hold them
        if isinstance(data.get(name), str):
            data[name] = datetime.fromisoformat(data[name])
    return Issue(**data)


def sample_issues() -> list[Issue]:
    """One or more tasks per category, across two repositories, plus some left out."""
    return [
        issue(
            1,
            "Ship the booking history",
            block(phase="done", plan=("Write it (done)", "Test it (done)"))
            + "- **Pull request:** https://github.com/acme/shop/pull/411\n"
            + "- **Follow-ups:**\n  - Backfill `booking_history` | old rows\n  - Add a metric\n",
            state="closed",
            state_reason="completed",
            closed_at=stamp(3),
            assignees=["ariel"],
        ),
        issue(2, "Dark mode | themes", block(phase="in review", hours_ago=1), assignees=["ariel"]),
        issue(3, "Labelled for review", block(actor="cc-dana-desktop"), labels=("in-review",)),
        issue(
            4,
            "Rate-limit search",
            block(actor="cc-dana-desktop", hours_ago=5),
        ),
        issue(
            5,
            "SSO login",
            block(
                actor="cc-omer-laptop",
                phase="blocked",
                blockers=("Waiting for the IdP metadata",),
                plan=("Callback route (done)", "Map groups (blocked)"),
            ),
        ),
        issue(
            6, "Invoice export", block(actor="cc-dana-desktop", hours_ago=50), assignees=["dana"]
        ),
        issue(
            7,
            "Half-written block",
            block(actor="codex-runner-7", next_step=None, files=None),
        ),
        issue(
            12,
            "Terraform the queue",
            block(actor="cc-omer-laptop", hours_ago=0.5, plan=("Plan (done)", "Apply (pending)")),
            repo=INFRA,
        ),
        # Left out: no block; closed long ago; closed as not planned.
        issue(20, "A plain issue", "Just a description."),
        issue(
            21,
            "Old news",
            block(phase="done"),
            state="closed",
            state_reason="completed",
            closed_at=stamp(72),
        ),
        issue(
            22,
            "Dropped idea",
            block(),
            state="closed",
            state_reason="not_planned",
            closed_at=stamp(1),
        ),
    ]


def sample_previous() -> StateRead:
    """Yesterday's state: #1, #2 and #6 move, #1, #2 and #4 complete steps, #12 is new."""
    tasks = {
        (SHOP, 1): TaskState(category="in_progress", done=1),
        (SHOP, 2): TaskState(category="in_progress", done=0),
        (SHOP, 3): TaskState(category="in_review", done=1),
        (SHOP, 4): TaskState(category="in_progress", done=0),
        (SHOP, 5): TaskState(category="stuck", done=1),
        (SHOP, 6): TaskState(category="in_progress", done=1),
        (SHOP, 7): TaskState(category="stuck", done=1),
    }
    return StateRead(
        status="restored",
        state=DigestState(generated_at=NOW - timedelta(days=1), tasks=tasks),
        detail="compared with the digest of 2026-05-26T09:00:00Z (7 tasks)",
    )
