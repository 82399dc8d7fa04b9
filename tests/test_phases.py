"""One vocabulary: the checks, the stale rules, the digest and the mirror agree on every phase."""

from __future__ import annotations

from datetime import timedelta

import pytest

from ai_context.core.block.parse import parse
from ai_context.core.phases import (
    CANCELLED_WORDS,
    SHIPPED_WORDS,
    TERMINAL_PHASES,
    current_step,
    is_terminal,
    meaning,
)
from ai_context.rules.actors import parse_actors
from ai_context.rules.checks import check_body
from ai_context.rules.digest.build import DigestConfig, categorise, current_step_text
from ai_context.rules.mirror.text import mirror_data
from ai_context.rules.stale import Evidence, judge
from ai_context.rules.stale_config import StaleConfig
from tests.digest_samples import NOW, block, issue

PHASES = sorted(
    {
        *SHIPPED_WORDS,
        *CANCELLED_WORDS,
        "Released to production",
        "done, shipped in #411",
        "CANCELLED: superseded by #9",
        "not done",
        "implementing",
        "handoff",
        "planning",
        "blocked on the API",
        "in review",
        "PR under review",
        "reviewing",
    }
)
OLD = 100  # hours since Last updated: stale for any task that can go stale


def verdicts(phase: str) -> tuple[bool, bool, str | None]:
    """(the checks call it stale, the stale rules call it stale, the digest's category)."""
    body = block(phase=phase, hours_ago=OLD)
    result = check_body(body, now=NOW)
    checks_stale = any(f.code == "AIC304" for f in result.findings)
    stale = judge(
        1,
        parse(body),
        Evidence(),
        now=NOW,
        config=StaleConfig(stale_after=timedelta(hours=24)),
        actors=parse_actors({}, "c.yml"),
    ).stale
    # A window wider than OLD: "shipped" in a digest also means "within the window" (issue 13);
    # what is compared here is what each phase means.
    window = DigestConfig(window=timedelta(hours=OLD + 1))
    category, _ = categorise(issue(1, "t", body), result, NOW, window)
    return checks_stale, stale, category


@pytest.mark.parametrize("phase", PHASES)
def test_the_checks_the_stale_rules_and_the_digest_agree(phase: str) -> None:
    checks_stale, stale, category = verdicts(phase)
    said = meaning(phase)
    assert checks_stale == stale == (not is_terminal(phase)), phase
    expected = {"shipped": "shipped", "cancelled": None}.get(said, "stuck")  # OLD: stuck
    assert category == expected, (phase, said)


def test_released_is_shipped_and_cancelled_is_left_out_never_stale() -> None:
    assert verdicts("released") == (False, False, "shipped")
    assert verdicts("cancelled") == (False, False, None)
    assert "released" in TERMINAL_PHASES and "cancelled" in TERMINAL_PHASES


@pytest.mark.parametrize(
    ("phase", "said"),
    [
        ("done", "shipped"),
        ("Merged", "shipped"),
        ("closed", "shipped"),
        ("canceled", "cancelled"),
        ("blocked on review", "blocked"),
        ("in review", "in_review"),
        ("not done", "in_progress"),
        ("", "in_progress"),
        (None, "in_progress"),
    ],
)
def test_meaning(phase: str | None, said: str) -> None:
    assert meaning(phase) == said


@pytest.mark.parametrize(
    ("plan", "step"),
    [
        (("A (done)", "B (pending)", "C (in progress)"), "C"),
        (("A (done)", "B (skipped)", "C (blocked)"), "C"),
        (("A (done)", "B"), "B"),
        (("A (done)", "B (skipped)"), None),
    ],
)
def test_one_current_step_for_the_digest_and_the_mirror(
    plan: tuple[str, ...], step: str | None
) -> None:
    body = block(plan=plan)
    parsed = parse(body).block
    assert parsed is not None
    found = current_step(parsed)
    assert (found.text if found else None) == step
    assert current_step_text(parsed) == step
    mirrored = mirror_data(issue(1, "t", body), parsed)["current_step"]
    assert (mirrored is None) == (step is None)
    assert step is None or step in mirrored
