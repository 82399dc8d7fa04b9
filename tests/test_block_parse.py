"""The parser: the seed example, every tolerated variant, and every structural finding."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from ai_context.core.block.locate import find
from ai_context.core.block.model import Block, PlanStep, expand_paths
from ai_context.core.block.parse import parse
from ai_context.core.block.render import render
from tests.conftest import SEED_BLOCK

SEED_SOURCE = Path(__file__).resolve().parents[1] / "docs" / "seeds"


def codes(body: str) -> list[str]:
    return [f.code for f in parse(body).findings]


def test_seed_example_parses_to_exactly_the_expected_model() -> None:
    parsed = parse(SEED_BLOCK)
    assert parsed.findings == []
    assert parsed.block == Block(
        actor="cc-ariel-laptop",
        actor_description="Claude Code on Ariel's laptop",
        phase="implementing",
        chunk=(3, 5),
        last_updated=datetime(2026, 5, 26, 14, 32, tzinfo=UTC),
        plan=(
            PlanStep(number=1, text="Add UserBookingRepository", status="done"),
            PlanStep(number=2, text="Wire into BookingService", status="done"),
            PlanStep(number=3, text="Add unit tests for repository", status="in progress"),
            PlanStep(number=4, text="Add integration test", status="pending"),
            PlanStep(number=5, text="Open PR", status="pending"),
        ),
        files_touched=(
            "apps/api/src/booking/{repository,service,booking.module}.ts, plus 4 test files"
        ),
        decisions=(
            "Chose Mongo over Aurora for booking history (volume + write patterns)",
            "Single-document booking model with embedded changes array",
        ),
        blockers=(),
        next_step="Finish unit tests in booking.repository.spec.ts",
    )
    assert parsed.block is not None
    assert parsed.block.paths == (
        "apps/api/src/booking/repository.ts",
        "apps/api/src/booking/service.ts",
        "apps/api/src/booking/booking.module.ts",
    )


def test_seed_file_block_is_the_fixture() -> None:
    """The fixture is the seed's own text, not a paraphrase of it."""
    text = (SEED_SOURCE / "000-state-management.md").read_text(encoding="utf-8")
    assert parse(text).block == parse(SEED_BLOCK).block


def test_render_of_seed_is_canonical() -> None:
    block = parse(SEED_BLOCK).block
    assert block is not None
    assert render(block) == SEED_BLOCK


FIELD_VARIANTS = [
    "- **Phase:** testing",
    "- **Phase**: testing",
    "- **phase:** testing",
    "- **PHASE** : testing",
    "- Phase: testing",
    "* Phase: testing",
    "+ Phase: testing",
    "- __Phase:__ testing",
    "Phase: testing",
    "- **Phase:** testing   ",
]


@pytest.mark.parametrize("line", FIELD_VARIANTS)
def test_label_variants(line: str) -> None:
    parsed = parse(f"## AI Context\n\n{line}\n")
    assert parsed.block is not None
    assert parsed.block.phase == "testing"


@pytest.mark.parametrize("level", ["##", "###", "####"])
@pytest.mark.parametrize("suffix", ["", " (updated by Claude — do not edit manually)", " — v2"])
def test_heading_levels_and_any_text_after(level: str, suffix: str) -> None:
    parsed = parse(f"{level} AI Context{suffix}\n- **Phase:** x\n")
    assert parsed.block is not None and parsed.block.phase == "x"


@pytest.mark.parametrize(
    "heading", ["# AI Context", "##### AI Context", "## AI Contexts", "AI Context"]
)
def test_not_a_block_heading(heading: str) -> None:
    assert parse(f"{heading}\n- **Phase:** x\n").block is None


def test_plan_step_styles() -> None:
    body = """## AI Context
- **Plan:**
  1. one (done)
  2) two (In-Progress)
  - [x] three
  - [ ] four
  - [X] five (skipped)
  * six (blocked)
"""
    block = parse(body).block
    assert block is not None
    assert [(s.number, s.text, s.status) for s in block.plan] == [
        (1, "one", "done"),
        (2, "two", "in progress"),
        (3, "three", "done"),
        (4, "four", "pending"),
        (5, "five", "skipped"),
        (6, "six", "blocked"),
    ]


def test_crlf_and_trailing_spaces() -> None:
    body = SEED_BLOCK.replace("\n", "  \r\n") + "\r\n"
    parsed = parse(body)
    assert parsed.findings == []
    assert parsed.block == parse(SEED_BLOCK).block


@pytest.mark.parametrize(
    "terminator",
    ["## Description\nhuman", "# Title\nhuman", "---\nhuman", "***\n", "<!-- ai-context:end -->"],
)
def test_block_ends(terminator: str) -> None:
    body = f"## AI Context\n- **Phase:** x\n{terminator}\n- **Next step:** not in the block\n"
    block = parse(body).block
    assert block is not None and block.next_step is None


def test_lower_level_heading_stays_inside() -> None:
    body = "## AI Context\n- **Phase:** x\n### Sub\n- **Next step:** y\n"
    parsed = parse(body)
    assert parsed.block is not None and parsed.block.next_step == "y"
    assert "AIC103" in [f.code for f in parsed.findings]


def test_human_paragraph_after_a_blank_line_ends_the_block() -> None:
    body = "## AI Context\n- **Phase:** x\n\nA human wrote this.\n- **Next step:** no\n"
    parsed = parse(body)
    assert parsed.findings == []
    assert parsed.region is not None
    assert body[parsed.region.start : parsed.region.end] == "## AI Context\n- **Phase:** x"


@pytest.mark.parametrize("fence", ["```", "~~~", "````md"])
def test_block_inside_code_fence_is_not_a_block(fence: str) -> None:
    closing = fence.rstrip("md")
    body = f"Example:\n{fence}\n{SEED_BLOCK}\n{closing}\n"
    assert parse(body).block is None
    assert codes(body) == ["AIC101"]


def test_fenced_example_after_real_block_is_not_a_second_block() -> None:
    body = f"{SEED_BLOCK}\n\n## Notes\n```\n{SEED_BLOCK}\n```\n"
    assert codes(body) == []


def test_unknown_fields_kept_in_order() -> None:
    body = "## AI Context\n- **PR:** #12\n- **Phase:** x\n- **Risk**: low\n  more detail\n"
    block = parse(body).block
    assert block is not None
    assert list(block.extra.items()) == [("PR", "#12"), ("Risk", "low\n    more detail")]


def test_actor_id_is_first_word() -> None:
    block = parse("## AI Context\n- **Active actor:** `bot-7` running in CI\n").block
    assert block is not None
    assert (block.actor, block.actor_description) == ("bot-7", "running in CI")


def test_blockers_none_and_list() -> None:
    none = parse("## AI Context\n- **Blockers:** None\n").block
    listed = parse("## AI Context\n- **Blockers:**\n  - a\n  - b\n").block
    inline = parse("## AI Context\n- **Blockers:** waiting on QA\n").block
    assert none is not None and none.blockers == ()
    assert listed is not None and listed.blockers == ("a", "b")
    assert inline is not None and inline.blockers == ("waiting on QA",)


def test_brace_expansion() -> None:
    assert expand_paths("src/{a,b/{c,d}}.ts, README.md, plus 3 more") == (
        "src/a.ts",
        "src/b/c.ts",
        "src/b/d.ts",
        "README.md",
    )
    assert expand_paths("`lib/x.py`") == ("lib/x.py",)
    assert len(expand_paths("{" + ",".join("abcdefghij") + "}/x.y")) == 10


def test_brace_expansion_is_capped() -> None:
    bomb = "".join("{a,b,c,d}" for _ in range(12)) + ".ts"
    assert len(expand_paths(bomb)) <= 1000


# --- one test per structural finding code -------------------------------------------------


def test_aic101_no_block() -> None:
    parsed = parse("Just a description.")
    assert [f.code for f in parsed.findings] == ["AIC101"]
    assert parsed.findings[0].severity == "error"


def test_aic102_two_blocks() -> None:
    body = f"{SEED_BLOCK}\n\n## AI Context\n- **Phase:** other\n"
    parsed = parse(body)
    assert [f.code for f in parsed.findings] == ["AIC102"]
    assert parsed.findings[0].line == SEED_BLOCK.count("\n") + 3
    assert parsed.block is not None and parsed.block.phase == "implementing"


def test_aic103_unparseable_line() -> None:
    parsed = parse("## AI Context\n- **Phase:** x\n- just a bullet\n")
    assert [(f.code, f.line) for f in parsed.findings] == [("AIC103", 3)]


def test_aic104_duplicate_field() -> None:
    parsed = parse("## AI Context\n- **Phase:** x\n- **Phase:** y\n")
    assert [(f.code, f.line) for f in parsed.findings] == [("AIC104", 3)]
    assert parsed.block is not None and parsed.block.phase == "x"


def test_aic105_step_without_status() -> None:
    parsed = parse("## AI Context\n- **Plan:**\n  1. do it\n")
    assert [(f.code, f.line) for f in parsed.findings] == [("AIC105", 3)]


def test_aic106_status_not_in_vocabulary() -> None:
    parsed = parse("## AI Context\n- **Plan:**\n  1. do it (wip)\n")
    assert [(f.code, f.line) for f in parsed.findings] == [("AIC106", 3)]
    assert parsed.block is not None
    assert parsed.block.plan[0].text == "do it (wip)" and parsed.block.plan[0].status is None


def test_aic301_not_iso() -> None:
    parsed = parse("## AI Context\n- **Last updated:** yesterday\n")
    assert [(f.code, f.severity) for f in parsed.findings] == [("AIC301", "error")]


@pytest.mark.parametrize("stamp", ["2026-05-26T16:32:00+02:00", "2026-05-26T14:32:00"])
def test_aic302_not_utc(stamp: str) -> None:
    parsed = parse(f"## AI Context\n- **Last updated:** {stamp}\n")
    assert [f.code for f in parsed.findings] == ["AIC302"]
    assert parsed.block is not None
    assert parsed.block.last_updated == datetime(2026, 5, 26, 14, 32, tzinfo=UTC)


def test_find_reports_regions_in_order() -> None:
    body = f"{SEED_BLOCK}\n\n```\n## AI Context\n```\n\n### AI Context\n- **Phase:** y\n"
    assert [r.level for r in find(body)] == [2, 3]


def test_replace_block_keeps_lines_the_block_could_not_read() -> None:
    from ai_context.core.block.render import replace_block

    body = (
        "## AI Context\n- **Phase:** x\n- **Phase:** y\n  - its sub-item\n"
        "- a human bullet in the block\n\n- Note: ask Dana\n- second human bullet\n"
        "    $ make test\n\nTail."
    )
    new = Block(phase="z")
    result = replace_block(body, new, markers=False)
    for text in (
        "- **Phase:** y",
        "  - its sub-item",
        "- a human bullet in the block",
        "ask Dana",
        "- second human bullet",
        "    $ make test",
        "Tail.",
    ):
        assert text in result, text
    assert parse(result).block is not None
    again = replace_block(result, new, markers=False)
    assert again.count("- second human bullet") == 1  # stable: not duplicated on the next save


def test_a_plan_step_wrapped_over_two_lines_keeps_its_status() -> None:
    body = (
        "## AI Context\n- **Plan:**\n  1. Add the repository\n     and its tests (done)\n"
        "  2. PR (pending)\n"
    )
    parsed = parse(body)
    assert parsed.findings == []
    assert parsed.block is not None
    assert [(s.text, s.status) for s in parsed.block.plan] == [
        ("Add the repository and its tests", "done"),
        ("PR", "pending"),
    ]


@pytest.mark.parametrize(
    ("actor_line", "actor", "description"),
    [
        ("cc-x\u00a0(laptop)", "cc-x", "laptop"),  # a no-break space, as editors paste
        ("cc-x\t(laptop)", "cc-x", "laptop"),
        ("`` (laptop)", None, None),  # an id of backticks alone: no id, so no description
    ],
)
def test_an_odd_actor_line_is_a_finding_never_an_exception(
    actor_line: str, actor: str | None, description: str | None
) -> None:
    body = f"## AI Context\n- **Active actor:** {actor_line}\n- **Phase:** planning\n"
    parsed = parse(body)
    assert parsed.block is not None
    assert (parsed.block.actor, parsed.block.actor_description) == (actor, description)
    if actor is None:
        [dropped] = [f for f in parsed.findings if f.code == "AIC103"]
        assert dropped.line == 2 and "actor description needs an actor id" in dropped.message


def test_an_extra_field_holding_a_marker_line_is_left_out_alone() -> None:
    body = (
        "## AI Context\n- **Phase:** planning\n- **Notes:** first\n"
        "  <!-- ai-context:hash=abc -->\n- **Reviewer:** ana\n"
    )
    parsed = parse(body)
    assert parsed.block is not None
    assert parsed.block.extra == {"Reviewer": "ana"}  # the other extra field stays
    [dropped] = [f for f in parsed.findings if f.code == "AIC103"]
    assert dropped.line == 3 and "Notes" in dropped.message
