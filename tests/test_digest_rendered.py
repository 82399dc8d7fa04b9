"""The digest, the task summary, the status and the sticky comment as GitHub renders them
(cmark-gfm): the columns a reader sees, code shown as code, and issue text shown as text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ai_context.core.findings import Finding
from ai_context.rules.digest.build import build_digest, summarize_task
from ai_context.rules.digest.model import Digest
from ai_context.rules.digest.plate import actors, plate
from ai_context.rules.digest.render import render_markdown, render_status, render_task
from ai_context.rules.sticky import render_findings
from tests.conftest import BUNDLED
from tests.digest_samples import NOW, block, issue, sample_issues, sample_previous, stamp
from tests.rendered import Page, github

TRICKY_TITLE = "Fix | pipes <!channel> {{7*7}} <script>alert(1)</script> @here"
COLUMNS = {
    "Stuck": ["Why", "Task", "Owner (actor)", "Updated"],
    "In review": ["Task", "Owner (actor)", "Phase", "Plan", "Updated"],
    "In progress": ["Task", "Owner (actor)", "Phase", "Plan", "Updated"],
    "Shipped": ["Task", "Owner (actor)", "Pull request", "Follow-ups", "How"],
}


def tricky_digest() -> Digest:
    issues = [
        *sample_issues(),
        issue(
            30,
            TRICKY_TITLE,
            block(
                blockers=("`staging` is down | see <b>ops</b>",),
                next_step="Finish tests in `booking.spec.ts`",
            ),
        ),
        issue(
            31,
            "Use `a|b` as the separator",
            block(next_step="Run `make test` then ``git log --format=`%H` ``", hours_ago=1),
        ),
        issue(32, TRICKY_TITLE, block(phase="done"), state="closed", closed_at=stamp(2)),
    ]
    return build_digest(issues, NOW, previous=sample_previous())


def _section(heading: str) -> str:
    """`🔴 Stuck (3, +1)` -> `Stuck`."""
    name = heading.split(" ", 1)[1] if heading[:1] in "🔴🟡🔵🟢" else heading
    return name.split(" (", 1)[0]


def _every_cell(page: Page) -> list[str]:
    return [cell for t in page.tables for row in [t.head, *t.rows] for cell in row]


def test_each_digest_table_has_its_columns_and_stuck_comes_first() -> None:
    page = github(render_markdown(tricky_digest(), BUNDLED))
    assert [_section(t.heading) for t in page.tables] == list(COLUMNS)
    for table in page.tables:
        assert table.head == COLUMNS[_section(table.heading)], table.heading
        for row in table.rows:
            assert len(row) == len(table.head), row  # nothing split a cell
    stuck = page.tables[0]
    # The reason comes first, in words (a broken block first: the worst kind of stuck).
    assert stuck.rows[0][0].startswith("required field ")
    assert stuck.rows[1][0].startswith("blocker: ")


def test_no_digest_cell_shows_a_backtick_or_a_backslash() -> None:
    page = github(render_markdown(tricky_digest(), BUNDLED))
    for cell in _every_cell(page):
        assert "`" not in cell.replace("`%H`", ""), cell  # only the code that holds one
        assert "\\" not in cell, cell


def test_agent_code_renders_as_code() -> None:
    page = github(render_markdown(tricky_digest(), BUNDLED))
    codes = [c for t in page.tables for row in t.codes for cell in row for c in cell]
    assert "staging" in codes  # a blocker's code span, in the Why cell
    assert "a|b" in codes  # a title's code span keeps its pipe, the cell stays whole


def test_no_raw_html_passes_and_titles_stay_text() -> None:
    page = github(render_markdown(tricky_digest(), BUNDLED))
    assert page.raw == []
    assert set(page.tags) <= Page.MARKDOWN_TAGS
    tasks = [row[1] for row in page.tables[0].rows] + [row[0] for row in page.tables[3].rows]
    shown = [t for t in tasks if "Fix | pipes" in t]
    assert len(shown) == 2
    for cell in shown:
        assert "Fix | pipes <!channel> {{7*7}} <script>alert(1)</script>" in cell
        assert "49" not in cell


def test_multi_repository_references_name_their_repository() -> None:
    page = github(render_markdown(tricky_digest(), BUNDLED))
    for table in page.tables:
        for row in table.rows:
            task = row[1] if _section(table.heading) == "Stuck" else row[0]
            assert task.startswith(("acme/shop#", "acme/infra#")), task


def test_the_state_lines_render_as_nothing() -> None:
    digest = tricky_digest()
    page = github(render_markdown(digest, BUNDLED))
    assert "ai-context-digest" not in page.all_text


def test_truncation_keeps_stuck_whole_and_cuts_shipped_first() -> None:
    many = [
        issue(n, f"Task {n}", block(blockers=("wait",) if n % 2 else ())) for n in range(1, 401)
    ]
    shipped = [
        issue(1000 + n, f"Done {n}", block(phase="done"), state="closed", closed_at=stamp(1))
        for n in range(100)
    ]
    digest = build_digest([*many, *shipped], NOW)
    text = render_markdown(
        digest, BUNDLED, max_chars=40_000, full_url="https://github.com/o/r/actions/runs/1"
    )
    page = github(text)
    rows = {_section(t.heading): len(t.rows) for t in page.tables}
    assert rows["Stuck"] == 200  # whole
    assert rows.get("Shipped", 0) < 100
    assert "the full list" in page.all_text and "actions/runs/1" in text


def test_task_and_status_render_code_as_code_and_text_as_text() -> None:
    item = issue(
        40,
        TRICKY_TITLE,
        block(next_step="Finish tests in `booking.spec.ts`", blockers=("`staging` down",)),
    )
    task = github(render_task(summarize_task(item, NOW), BUNDLED))
    assert task.raw == [] and "`" not in task.all_text and "\\" not in task.all_text
    assert "Fix | pipes <!channel> {{7*7}}" in task.all_text
    digest = build_digest([item, *sample_issues()], NOW)
    status = github(render_status([plate(digest, a) for a in actors(digest)], BUNDLED))
    assert status.raw == [] and "`" not in status.all_text and "\\" not in status.all_text


def test_the_sticky_comment_shows_hints_as_code_and_findings_as_text() -> None:
    findings = [
        Finding(
            code="AIC604",
            severity="warning",
            message=f"block says {TRICKY_TITLE}",
            line=3,
            hint="Have the agent save its block (run `ai-context derive 11` in the checkout).",
        ),
        Finding(code="AIC201", severity="error", message="required field `Next step` is missing"),
    ]
    page = github(render_findings(findings))
    [table] = page.tables
    assert table.head == ["severity", "line", "code", "finding", "what to do"]
    for row in table.rows:
        assert len(row) == 5
        for cell in row:
            assert "`" not in cell and "\\" not in cell, cell
    assert table.codes[0][4] == ["ai-context derive 11"]
    assert "Fix | pipes <!channel> {{7*7}}" in table.rows[0][3]
    # our own markers are the only HTML: the marker comment and the small print
    assert [r for r in page.raw if "ai-context:findings" not in r and r != "<sub>"] == []


@settings(max_examples=60)
@given(st.text(min_size=1, max_size=80))
def test_any_title_and_next_step_stay_in_their_cell(text: str) -> None:
    item = issue(50, text, block(next_step=text, blockers=(text,)))
    page = github(render_markdown(build_digest([item], NOW), BUNDLED))
    assert page.raw == []
    for table in page.tables:
        for row in table.rows:
            assert len(row) == len(table.head)
