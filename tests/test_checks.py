"""One test per completeness, sanity and tamper rule."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from ai_context.core.block.parse import parse
from ai_context.core.block.render import render, replace_block
from ai_context.rules.checks import CheckConfig, check_body, missing_fields
from tests.conftest import SEED_BLOCK

NOW = datetime(2026, 5, 26, 15, 0, tzinfo=UTC)


def found(body: str, **kwargs: object) -> list[tuple[str, int | None]]:
    return [(f.code, f.line) for f in check_body(body, **kwargs).findings]  # type: ignore[arg-type]


def test_seed_block_is_complete_and_clean() -> None:
    result = check_body(SEED_BLOCK, now=NOW)
    assert result.complete and result.findings == ()


@pytest.mark.parametrize(
    ("label", "key"),
    [
        ("Active actor", "actor"),
        ("Phase", "phase"),
        ("Last updated", "last_updated"),
        ("Files touched", "files_touched"),
        ("Next step", "next_step"),
    ],
)
def test_aic201_each_required_field(label: str, key: str) -> None:
    body = "\n".join(ln for ln in SEED_BLOCK.splitlines() if f"**{label}:**" not in ln)
    result = check_body(body, now=NOW)
    assert not result.complete
    aic201 = [f for f in result.findings if f.code == "AIC201"]
    assert len(aic201) == 1 and label in aic201[0].message and aic201[0].severity == "error"
    block = parse(body).block
    assert block is not None and missing_fields(block) == [key]


def test_aic201_plan_missing() -> None:
    lines = SEED_BLOCK.splitlines()
    body = "\n".join(ln for ln in lines if not ln.startswith("  ") or "  - " in ln)
    body = body.replace("- **Plan:**\n", "")
    result = check_body(body, now=NOW)
    assert [f.message for f in result.findings if f.code == "AIC201"] == [
        "required field 'Plan' is missing or empty"
    ]


def test_empty_value_counts_as_missing() -> None:
    body = SEED_BLOCK.replace("Finish unit tests in booking.repository.spec.ts", "")
    assert ("AIC201", 17) in found(body, now=NOW)


def test_required_set_is_configurable() -> None:
    body = "## AI Context\n- **Phase:** x\n"
    config = CheckConfig(required=("phase",))
    assert check_body(body, config=config).complete
    with pytest.raises(ValueError, match="unknown required field"):
        CheckConfig(required=("phase", "mood"))


def test_unreadable_timestamp_is_not_also_missing() -> None:
    body = SEED_BLOCK.replace("2026-05-26T14:32:00Z", "last tuesday")
    codes = [c for c, _ in found(body, now=NOW)]
    assert codes == ["AIC301"]


def test_aic303_in_the_future_beyond_skew() -> None:
    assert ("AIC303", 5) in found(SEED_BLOCK, now=NOW - timedelta(hours=1))
    assert found(SEED_BLOCK, now=NOW.replace(hour=14, minute=29)) == []  # 3 minutes: skew


def test_aic304_stale() -> None:
    assert ("AIC304", 5) in found(SEED_BLOCK, now=NOW + timedelta(days=2))
    config = CheckConfig(stale_after=timedelta(days=3))
    assert found(SEED_BLOCK, now=NOW + timedelta(days=2), config=config) == []


def test_stale_does_not_apply_to_terminal_phase() -> None:
    body = SEED_BLOCK.replace("implementing (chunk 3 of 5)", "done")
    body = body.replace("(in progress)", "(done)").replace("(pending)", "(done)")
    assert found(body, now=NOW + timedelta(days=30)) == []


def test_no_staleness_without_a_clock() -> None:
    assert found(SEED_BLOCK) == []


def test_aic305_all_done_but_not_terminal() -> None:
    body = SEED_BLOCK.replace("(in progress)", "(done)").replace("(pending)", "(skipped)")
    assert ("AIC305", 4) in found(body, now=NOW)
    assert found(body.replace("implementing (chunk 3 of 5)", "in review"), now=NOW) == []


def test_aic306_next_step_empty_while_pending() -> None:
    body = "\n".join(ln for ln in SEED_BLOCK.splitlines() if "Next step" not in ln)
    assert ("AIC306", 1) in found(body, now=NOW)


def test_aic307_bad_chunk() -> None:
    assert ("AIC307", 4) in found(SEED_BLOCK.replace("chunk 3 of 5", "chunk 6 of 5"), now=NOW)


def test_aic308_repeated_step_numbers() -> None:
    assert ("AIC308", 6) in found(SEED_BLOCK.replace("2. Wire", "1. Wire"), now=NOW)


def test_aic401_hand_edit_detected() -> None:
    block = parse(SEED_BLOCK).block
    assert block is not None
    body = replace_block("Human text.", block)
    assert found(body, now=NOW) == []
    edited = body.replace("Open PR", "Open the PR")
    assert ("AIC401", 2) in found(edited, now=NOW)


def test_marker_hash_ignores_line_endings() -> None:
    block = parse(SEED_BLOCK).block
    assert block is not None
    body = render(block, markers=True).replace("\n", "  \r\n")
    assert found(body, now=NOW) == []


def test_aic402_unknown_format_version() -> None:
    block = parse(SEED_BLOCK).block
    assert block is not None
    body = render(block, markers=True).replace("v=1", "v=9")
    assert [c for c, _ in found(body, now=NOW)] == ["AIC402"]


def test_findings_sorted_by_line() -> None:
    body = "## AI Context\n- **Plan:**\n  1. a\n- **Phase:** x\n- just text\n"
    lines = [f.line or 0 for f in check_body(body).findings]
    assert lines == sorted(lines)
