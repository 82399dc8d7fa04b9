"""Session files: the v2.0 schema, each consolidation rule, merge vs overwrite, every error."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from ai_context.rules.session.consolidation import ConsolidationRules, consolidate
from ai_context.rules.session.merge import parse_input
from ai_context.rules.session.model import (
    ContextBlock,
    SessionError,
    SessionFile,
    Task,
    check_session_file,
    dumps,
    loads,
)
from ai_context.rules.session.saving import save
from ai_context.rules.session.summary import GitState, counts, render_load, render_save, summarize

NOW = datetime(2025, 11, 26, 14, 0, tzinfo=UTC)
OLD = NOW - timedelta(days=10)

SEED_FILE = {
    "metadata": {
        "version": "2.0",
        "created": "2025-11-26T10:00:00Z",
        "updated": "2025-11-26T14:00:00Z",
        "git_branch": "feature/auth",
        "git_commit": "abc123f5d2e8a1b4c6e9f3a7",
    },
    "tasks": [
        {
            "id": "TASK_001",
            "title": "Fix auth middleware",
            "status": "pending",
            "priority": "P1",
            "category": "BUGFIX",
            "created": "2025-11-26T10:00:00Z",
            "completed": None,
            "consolidated": False,
            "consolidated_count": 0,
            "context": "JWT RS256 validation fails. PEM format req. See: src/auth/middleware.ts:45",
            "files": ["src/auth/middleware.ts:45", "config/jwt.ts:12"],
        },
        {
            "id": "TASK_010",
            "title": "Redesign homepage",
            "status": "completed",
            "priority": "P2",
            "category": "FEATURE",
            "created": "2025-11-20T09:00:00Z",
            "completed": "2025-11-24T18:00:00Z",
            "consolidated": True,
            "consolidated_count": 12,
            "context": "Redesigned nav, hero, footer (12 tasks). Pitfall: CSS grid Safari compat "
            "fixed with -webkit-. Plan: docs/homepage-plan.md",
            "files": ["docs/homepage-plan.md"],
        },
    ],
    "context_blocks": [
        {
            "title": "JWT Auth Setup",
            "content": "RS256 algo. Pub key: ~/config/jwt-keys/public.pem. TTL: 1h access",
            "updated": "2025-11-26T14:00:00Z",
            "related_tasks": ["TASK_001"],
        }
    ],
}


def task(number: int, status: str = "completed", **fields: Any) -> Task:
    data: dict[str, Any] = {
        "id": f"TASK_{number:03d}",
        "title": f"Task {number}",
        "status": status,
        "created": OLD - timedelta(days=1),
        "completed": OLD + timedelta(minutes=number) if status == "completed" else None,
    }
    data.update(fields)
    return Task.model_validate(data)


def area(numbers: range | list[int], name: str | None = "Homepage", **fields: Any) -> list[Task]:
    return [task(n, area=name, **fields) for n in numbers]


def run(tasks: list[Task], blocks: list[ContextBlock] | None = None) -> Any:
    return consolidate(tasks, blocks or [], now=NOW)


def folded(result: Any) -> set[str]:
    return {i for d in result.decisions for i in (*d.folded, *d.forced)}


# --- schema -----------------------------------------------------------------------------


def test_the_seed_example_loads_and_round_trips() -> None:
    session = loads(json.dumps(SEED_FILE))
    assert session.tasks[1].consolidated_count == 12
    assert session.context_blocks[0].related_tasks == ("TASK_001",)
    assert json.loads(dumps(session)) == SEED_FILE


def test_minified_single_line() -> None:
    text = dumps(loads(json.dumps(SEED_FILE, indent=2)))
    assert "\n" not in text
    assert text == json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False)
    assert text.startswith('{"metadata":{"version":"2.0","created":"2025-11-26T10:00:00Z"')


def test_timestamps_are_utc_with_z() -> None:
    data = json.loads(json.dumps(SEED_FILE))
    data["metadata"]["created"] = "2025-11-26T12:00:00+02:00"
    data["tasks"][0]["created"] = "2025-11-26T10:00:00.123456Z"
    text = dumps(loads(json.dumps(data)))
    assert '"created":"2025-11-26T10:00:00Z"' in text
    assert ".123" not in text and "+02:00" not in text


def test_ids_are_normalised() -> None:
    assert task(1, id="TASK1").id == "TASK_001"
    assert task(1, id="TASK_0042").id == "TASK_042"


def bad(path: list[Any], value: Any) -> str:
    data = json.loads(json.dumps(SEED_FILE))
    target = data
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return json.dumps(data)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"metadata": ', "Cannot load: invalid JSON (line 1, column 14"),
        ("", "Cannot load: invalid JSON"),
        ("[1, 2]", "Cannot load: not a session file"),
        (bad(["metadata"], KeyError), "Cannot load: missing metadata"),
        (bad(["metadata"], "2.0"), "Cannot load: missing metadata"),
        (bad(["tasks"], KeyError), "Cannot load: missing tasks"),
        (bad(["tasks"], []), "Cannot load: tasks: a session file holds at least one task"),
        (bad(["metadata", "version"], "1.0"), "session format version '1.0'; this tool reads 2.0"),
        (bad(["tasks", 0, "status"], "doing"), "Cannot load: tasks.0.status"),
        (bad(["tasks", 0, "id"], "T-1"), "task id 'T-1' is not TASK_ followed by digits"),
        (bad(["tasks", 1, "id"], "TASK_001"), "task id TASK_001 is used twice"),
        (bad(["tasks", 0, "created"], "2025-11-26T10:00:00"), "needs a timezone"),
        (bad(["metadata", "updated"], "soon"), "Cannot load: metadata.updated"),
    ],
)
def test_load_errors_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(SessionError) as exc:
        loads(text)
    assert message in str(exc.value)


# --- consolidation criteria: three of four consolidate, two do not ---------------------


def test_three_criteria_consolidate() -> None:
    result = run(area(range(1, 4)))  # same area, no critical, quiet; only 3 tasks
    (decision,) = result.decisions
    assert (decision.same_area, decision.many_related, decision.no_critical, decision.quiet) == (
        True,
        False,
        True,
        True,
    )
    assert decision.folded == ("TASK_001", "TASK_002", "TASK_003")
    (group,) = result.tasks
    assert group.consolidated and group.consolidated_count == 3 and group.id == "TASK_001"
    assert group.title == "Homepage" and group.completed == OLD + timedelta(minutes=3)
    assert group.context.startswith("Summary: Task 1; Task 2; Task 3.")


def test_same_area_criterion() -> None:
    result = run(area(range(1, 4), name=None))  # no area: only 2 criteria
    assert result.decisions[0].met == 2 and folded(result) == set()


def test_quiet_criterion() -> None:
    recent = task(4, area="Homepage", completed=NOW - timedelta(days=1))
    result = run([*area(range(1, 4)), recent])
    assert not result.decisions[0].quiet and folded(result) == set()


def test_no_critical_criterion() -> None:
    critical = task(4, area="Homepage", category="BUGFIX", priority="P1")
    result = run([*area(range(1, 4)), critical])
    assert not result.decisions[0].no_critical and folded(result) == set()


def test_many_related_criterion() -> None:
    result = run(area(range(1, 7), name=None))  # 6 > 5, no critical, quiet: 3 without area
    decision = result.decisions[0]
    assert decision.many_related and not decision.same_area
    assert len(decision.folded) == 6
    assert result.tasks[0].title == "Earlier completed work" and result.tasks[0].area is None
    assert not run(area(range(1, 6), name=None)).decisions[0].many_related  # 5 is not > 5


# --- keep individual ---------------------------------------------------------------------


def test_critical_bug_is_never_consolidated() -> None:
    critical = task(9, area="Homepage", category="BUGFIX", priority="P1")
    result = run([*area(range(1, 7)), critical])  # same area, >5, quiet: 3 met
    assert result.kept == {"TASK_009": "critical bug"}
    assert "TASK_009" not in folded(result) and len(folded(result)) == 6
    assert critical in result.tasks


def test_p2_bug_is_not_critical() -> None:
    result = run([*area(range(1, 3)), task(9, area="Homepage", category="BUGFIX", priority="P2")])
    assert result.kept == {} and len(folded(result)) == 3


def test_unique_pitfall_is_kept_shared_pitfall_is_summarised() -> None:
    tasks = [
        *area(range(1, 3), context="Pitfall: CSS grid Safari compat."),
        *area(range(3, 7)),
        task(9, area="Homepage", context="Lesson: never cache the CSRF token"),
    ]
    result = run(tasks)
    assert result.kept == {"TASK_009": "unique pitfall"}
    group = next(t for t in result.tasks if t.consolidated)
    assert group.consolidated_count == 6
    assert "Pitfall: CSS grid Safari compat." in group.context
    assert "CSRF" not in group.context


def test_recent_completed_is_kept() -> None:
    recent = task(9, area="Homepage", completed=NOW - timedelta(days=2, hours=23))
    result = run([*area(range(1, 7)), recent])  # same area, >5, no critical: 3 met
    assert result.kept == {"TASK_009": "recent"}
    assert "TASK_009" not in folded(result) and len(folded(result)) == 6


def test_referenced_by_open_work_is_kept() -> None:
    pending = task(20, "pending", context="Builds on TASK_002 and task_3 is unrelated")
    result = run([*area(range(1, 5)), pending])
    assert result.kept == {"TASK_002": "referenced by open work"}
    assert folded(result) == {"TASK_001", "TASK_003", "TASK_004"}


def test_referenced_beside_open_work_in_a_context_block() -> None:
    pending = task(20, "pending")
    block = ContextBlock(
        title="Auth", content="c", updated=NOW, related_tasks=("TASK_020", "TASK_001")
    )
    result = run([*area(range(1, 5)), pending], [block])
    assert result.kept == {"TASK_001": "referenced by open work"}
    assert result.context_blocks[0].related_tasks == ("TASK_020", "TASK_001")


def test_context_blocks_follow_consolidated_tasks() -> None:
    block = ContextBlock(title="Home", content="c", updated=NOW, related_tasks=("TASK_003",))
    result = run(area(range(1, 4)), [block])
    assert result.context_blocks[0].related_tasks == ("TASK_001",)


def test_open_tasks_are_never_consolidated() -> None:
    tasks = [*area(range(1, 4)), task(4, "pending", area="Homepage"), task(5, "in_progress")]
    result = run(tasks)
    assert {t.id for t in result.tasks if t.is_open} == {"TASK_004", "TASK_005"}


def test_folds_into_the_areas_existing_group() -> None:
    existing = task(1, consolidated=True, consolidated_count=12, area="homepage", title="Home")
    result = run([existing, *area(range(2, 4))])
    (group,) = result.tasks
    assert group.id == "TASK_001" and group.title == "Home" and group.consolidated_count == 14


# --- at most five individual completed tasks ---------------------------------------------


def test_at_most_five_individual_completed() -> None:
    tasks = [task(n, area=f"Area {n}") for n in range(1, 9)]  # 8 areas of one task each
    result = run(tasks)
    individual = [t for t in result.tasks if not t.consolidated]
    assert len(individual) == 5
    assert {t.id for t in individual} == {f"TASK_{n:03d}" for n in range(4, 9)}  # newest kept
    (group,) = [t for t in result.tasks if t.consolidated]
    assert group.consolidated_count == 3 and group.title == "Earlier completed work"
    assert result.over_limit == ()


def test_tasks_that_must_stay_are_kept_past_the_limit() -> None:
    tasks = [task(n, completed=NOW - timedelta(hours=n)) for n in range(1, 8)]
    result = run(tasks)
    assert len(result.tasks) == 7 and not folded(result)
    assert set(result.kept.values()) == {"recent"}
    assert len(result.over_limit) == 7


def test_rules_are_settings() -> None:
    rules = ConsolidationRules(keep_individual=2)
    result = consolidate([task(n, area=f"A{n}") for n in range(1, 5)], [], now=NOW, rules=rules)
    assert sum(1 for t in result.tasks if not t.consolidated) == 2


# --- save: merge vs overwrite --------------------------------------------------------------


def existing_file() -> SessionFile:
    return loads(json.dumps(SEED_FILE))


def test_merge_keeps_the_file_and_applies_the_agent() -> None:
    incoming = parse_input(
        json.dumps(
            {
                "tasks": [
                    {"id": "TASK_001", "title": "Fix auth middleware", "status": "completed"},
                    {"title": "Add refresh tokens", "status": "pending", "priority": "p2"},
                ],
                "context_blocks": [{"title": "jwt auth setup", "content": "rotated"}],
            }
        )
    )
    result = save(existing_file(), incoming, now=NOW, overwrite=False)
    session = result.session
    assert result.mode == "merge"
    by_id = {t.id: t for t in session.tasks}
    assert by_id["TASK_001"].status == "completed" and by_id["TASK_001"].completed == NOW
    assert by_id["TASK_001"].context.startswith("JWT RS256")  # kept from the file
    assert by_id["TASK_010"].consolidated_count == 12  # untouched
    assert by_id["TASK_011"].title == "Add refresh tokens" and by_id["TASK_011"].priority == "P2"
    assert session.metadata.created == datetime(2025, 11, 26, 10, tzinfo=UTC)
    assert session.metadata.updated == NOW
    assert [b.content for b in session.context_blocks] == ["rotated"]


def test_merge_matches_by_title_without_an_id() -> None:
    incoming = parse_input('[{"title": "fix  AUTH middleware", "status": "in_progress"}]')
    session = save(existing_file(), incoming, now=NOW, overwrite=False).session
    assert [(t.id, t.status) for t in session.tasks if t.is_open] == [("TASK_001", "in_progress")]


def test_overwrite_replaces_the_file() -> None:
    incoming = parse_input('[{"title": "Only this", "status": "pending"}]')
    result = save(existing_file(), incoming, now=NOW, overwrite=True)
    assert result.mode == "overwrite"
    assert [(t.id, t.title) for t in result.session.tasks] == [("TASK_001", "Only this")]
    assert result.session.context_blocks == ()
    assert result.session.metadata.created == NOW


def test_new_file() -> None:
    incoming = parse_input(
        '[{"title": "a", "status": "pending"}, {"title": "b", "status": "done"}]'
    )
    result = save(None, incoming, now=NOW, overwrite=False, git_branch="main", git_commit="f" * 40)
    assert result.mode == "new"
    assert [t.id for t in result.session.tasks] == ["TASK_001", "TASK_002"]
    assert result.session.tasks[1].status == "completed"
    assert result.session.metadata.git_branch == "main"


def test_save_keeps_open_work_first_in_the_order_given() -> None:
    """Issue 21: seeds/004's Next is the first pending or in-progress task in saved order."""
    incoming = parse_input(
        json.dumps(
            [
                {"title": "done", "status": "completed"},
                {"title": "p3", "status": "pending", "priority": "P3"},
                {"title": "p1", "status": "pending", "priority": "P1"},
                {"title": "doing", "status": "in_progress"},
            ]
        )
    )
    session = save(None, incoming, now=NOW, overwrite=False).session
    assert [t.title for t in session.tasks] == ["p3", "p1", "doing", "done"]
    assert summarize(session, now=NOW, git=None).next_task.title == "p3"  # type: ignore[union-attr]


def test_save_scrubs_everything_it_writes() -> None:
    token = "gh" + "p_" + "R8xK2mQ7vLp4Wn9Zt3Hc6Yb1Fd5Gs0Ja8Ue2"
    incoming = parse_input(
        json.dumps(
            {
                "tasks": [
                    {
                        "title": "Fix /home/ann/app",
                        "status": "pending",
                        "context": f"token {token}, ask ann@example.com",
                        "files": ["/Users/ann/app/src/a.ts:4"],
                    }
                ],
                "context_blocks": [{"title": "t", "content": "C:\\Users\\ann\\app"}],
            }
        )
    )
    result = save(None, incoming, now=NOW, overwrite=False)
    text = dumps(result.session)
    assert "ann" not in text and token not in text
    assert result.scrubbed == {"home-path": 3, "github-token": 1, "email": 1}
    assert "~/app/src/a.ts:4" in text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "Cannot save: the task list is not JSON"),
        ('"a string"', "Cannot save: expected"),
        ('[{"status": "pending"}]', "tasks.0.title: Field required"),
        ('[{"title": "x", "status": "later"}]', "tasks.0.status"),
        ('[{"title": "x", "status": "pending", "colour": "red"}]', "tasks.0.colour"),
        ('[{"title": "x", "status": "pending", "created": "2025-01-01"}]', "needs a timezone"),
    ],
)
def test_input_errors(text: str, message: str) -> None:
    with pytest.raises(SessionError) as exc:
        parse_input(text)
    assert message in str(exc.value)


def test_save_refuses_nothing_and_duplicates() -> None:
    with pytest.raises(SessionError, match="no tasks given"):
        save(None, parse_input("[]"), now=NOW, overwrite=False)
    twice = parse_input(
        '[{"id": "TASK_5", "title": "a", "status": "pending"},'
        ' {"id": "TASK_005", "title": "b", "status": "pending"}]'
    )
    with pytest.raises(SessionError, match="appears twice"):
        save(None, twice, now=NOW, overwrite=False)
    with pytest.raises(SessionError, match="appears twice"):
        save(existing_file(), twice, now=NOW, overwrite=False)


# --- reports -------------------------------------------------------------------------------


def test_save_report() -> None:
    incoming = parse_input(
        json.dumps(
            [
                {"title": "Fix JWT validation", "status": "pending", "priority": "P1"},
                {"title": "Other", "status": "pending", "priority": "P2"},
                *[
                    {
                        "title": f"Old {n}",
                        "status": "completed",
                        "area": "Homepage",
                        "completed": "2025-11-01T10:00:00Z",
                    }
                    for n in range(3)
                ],
            ]
        )
    )
    result = save(
        None,
        incoming,
        now=NOW,
        overwrite=False,
        git_branch="feature/auth",
        git_commit="abc123f5d2e8a1b4c6e9f3a7",
    )
    assert render_save("sp.json", result).splitlines() == [
        "Saved → sp.json",
        "- 2 pend (1 P1, 1 P2)",
        "- 3 done (0 individual, 1 consolidated from 3)",
        "- Consolidated 3 into TASK_003 'Homepage' (same area, no critical findings, "
        ">3 days quiet)",
        "- Git: feature/auth @ abc123f",
        "Next: TASK_001 - Fix JWT validation",
    ]


def test_load_summary_and_report() -> None:
    session = existing_file()
    git = GitState(branch="main", head="f" * 40, ahead=2)
    summary = summarize(session, now=NOW + timedelta(days=2), git=git)
    assert counts(session).done == 12
    assert render_load("sp.json", session, summary).splitlines() == [
        "Loaded sp.json (2d old)",
        "- 1 pend, 0 prog, 12 done (0 individual, 1 consolidated from 12)",
        "- Git: feature/auth @ abc123f (2 commits ahead)",
        "- Warning: Git state changed",
        "- Warning: Branch: feature/auth → main",
        "- Context: JWT Auth Setup",
        "Next: TASK_001 - Fix auth middleware",
    ]


def test_load_git_drift_cases() -> None:
    session = existing_file()
    commit = session.metadata.git_commit
    same = GitState(branch="feature/auth", head=commit)
    assert summarize(session, now=NOW, git=same).warnings == ()
    gone = GitState(branch="feature/auth", head="f" * 40, saved_known=False)
    assert "(saved commit not in this clone)" in str(summarize(session, now=NOW, git=gone).git_line)
    rewritten = GitState(branch="feature/auth", head="f" * 40, ahead=3, descends=False)
    line = summarize(session, now=NOW, git=rewritten).git_line
    assert line == "feature/auth @ abc123f (history rewritten since the save)"
    assert summarize(session, now=NOW, git=None).warnings == ()  # no checkout: no git check


def test_load_age_and_nothing_open() -> None:
    data = json.loads(json.dumps(SEED_FILE))
    data["tasks"] = data["tasks"][1:]
    data["metadata"]["created"] = "2025-11-17T14:00:00Z"
    data["metadata"]["git_branch"] = data["metadata"]["git_commit"] = None
    session = loads(json.dumps(data))
    summary = summarize(session, now=NOW + timedelta(hours=5), git=None)
    lines = render_load("sp.json", session, summary).splitlines()
    assert lines[0] == "Loaded sp.json (5h old, first saved 9d ago)"
    assert lines[-1] == "Next: nothing open"


# --- committed session files (push) -------------------------------------------------------


def test_check_session_file() -> None:
    assert check_session_file("sp.json", json.dumps(SEED_FILE)) == []
    (invalid,) = check_session_file("a/sp.json", "{oops")
    assert invalid.code == "AIC520" and invalid.severity == "error"
    assert invalid.message.startswith("a/sp.json: Cannot load: invalid JSON")
    (missing,) = check_session_file("sp.json", "{}")
    assert missing.code == "AIC521" and "missing metadata" in missing.message


def test_check_session_file_finds_secrets_without_printing_them() -> None:
    key = "AK" + "IA" + "IOSFODNN7" + "EXAMPLE"
    data = json.loads(json.dumps(SEED_FILE))
    data["tasks"][0]["context"] = f"use {key}"
    text = json.dumps(data, indent=1)
    findings = check_session_file("sp.json", text)
    assert [(f.code, f.severity) for f in findings] == [("AIC530", "error")]
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if key in ln)
    assert findings[0].line == line and key not in findings[0].message
    assert findings[0].message.startswith(f"sp.json:{line}:")
