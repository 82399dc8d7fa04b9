"""The mirror job against the ClickUp fake (in process): reads, compares, writes what changed."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from ai_context.adapters.clickup import ClickUp
from ai_context.adapters.templates import Templates
from ai_context.core.block.parse import parse
from ai_context.core.models import Issue
from ai_context.core.secret import Secret
from ai_context.jobs.comments import plan_check
from ai_context.jobs.mirror.job import summary
from ai_context.jobs.mirror.run import MirrorReport, run_mirror
from ai_context.rules.checks import CheckConfig
from ai_context.rules.mirror.targets import MirrorConfig
from ai_context.rules.mirror.text import mirror_text
from ai_context.rules.sticky import LABEL_INVALID
from tests.conftest import BUNDLED, SEED_BLOCK
from tests.fakes import ClickUpFake

TEAM = "9000"
TASK_GET = "/task/{task_id}"
FIELD_POST = "/task/{task_id}/field/{field_id}"
PAGES = "/team/{team_id}/task"
NOW = datetime(2026, 5, 26, 15, 0, tzinfo=UTC)


@pytest.fixture
def cu() -> Iterator[ClickUpFake]:
    with ClickUpFake(team_id=TEAM) as fake:
        fake.add_field("901", "ai_context", field_id="f-ai")
        yield fake


def issue(number: int, link: str, block: str = SEED_BLOCK) -> Issue:
    return Issue(
        number=number,
        title=f"Task {number}",
        body=f"{block}\n\nClickUp: {link}\n",
        html_url=f"https://github.com/acme/shop/issues/{number}",
        repository="acme/shop",
        author_association="MEMBER",
    )


def wanted(item: Issue) -> str:
    block = parse(item.body).block
    assert block is not None
    return mirror_text(item, block, BUNDLED)


def run(
    fake: ClickUpFake, issues: list[Issue], log: list[str] | None = None, **kw: object
) -> tuple[MirrorReport, ClickUp]:
    store = ClickUp(Secret("pk_test_token"), api_url=fake.url, backoff=0, retries=1)
    options: dict[str, object] = {"config": MirrorConfig(), "templates": Templates()}
    options.update(kw)
    sink = log if log is not None else []
    report = run_mirror(issues, store, log=sink.append, **options)  # type: ignore[arg-type]
    return report, store


def test_a_changed_block_is_written_and_an_unchanged_one_is_not(cu: ClickUpFake) -> None:
    first, second = issue(1, "https://app.clickup.com/t/tk1"), issue(2, "CU-tk2")
    cu.add_task("one", task_id="tk1", values={"ai_context": "stale text"})
    cu.add_task("two", task_id="tk2", values={"ai_context": wanted(second)})

    report, store = run(cu, [first, second])

    assert [(i.number, i.result) for i in report.items] == [(1, "written"), (2, "unchanged")]
    assert cu.value("tk1") == wanted(first) and cu.value("tk2") == wanted(second)
    assert cu.count("POST", FIELD_POST) == 1
    assert (store.counter.reads, store.counter.writes) == (2, 1)
    assert report.exit_code == 0 and not report.findings


def test_the_field_is_found_by_name_on_the_list_when_the_task_does_not_list_it(
    cu: ClickUpFake,
) -> None:
    cu.add_task("one", task_id="tk1")
    cu.add_task("two", task_id="tk2")
    original = cu._task_json

    def without_fields(task):  # type: ignore[no-untyped-def]
        return {**original(task), "custom_fields": []}

    cu._task_json = without_fields  # type: ignore[method-assign]
    report, _ = run(cu, [issue(1, "CU-tk1"), issue(2, "CU-tk2")])
    assert [i.result for i in report.items] == ["written", "written"]
    assert cu.count("GET", "/list/{list_id}/field") == 1  # cached per list for the run


def test_a_missing_field_is_one_note_per_list_and_no_failure(cu: ClickUpFake) -> None:
    for n in (1, 2):
        cu.add_task(f"tk{n}", task_id=f"tk{n}", list_id="555")
    report, _ = run(cu, [issue(1, "CU-tk1"), issue(2, "CU-tk2")])
    assert report.notes == [
        "ClickUp field ai_context not found on list 555: create a Text field named ai_context "
        "at the space level, or name your field in the config file's `mirror.field`"
    ]
    assert [i.result for i in report.items] == ["no_field", "no_field"]
    assert report.exit_code == 0 and not report.errors and not report.findings
    assert cu.count("POST", FIELD_POST) == 0


def test_a_field_of_another_type_is_a_note(cu: ClickUpFake) -> None:
    cu.add_field("700", "ai_context", type="drop_down", field_id="f-dd")
    cu.add_task("t", task_id="tk1", list_id="700")
    report, _ = run(cu, [issue(1, "CU-tk1")])
    assert report.notes == [
        "ClickUp field ai_context on list 700 is a drop_down field: make it a Text field named "
        "ai_context"
    ]


def test_two_fields_with_the_name_is_an_error_finding(cu: ClickUpFake) -> None:
    cu.add_field("901", "ai_context", field_id="f-ai-2")
    cu.add_task("t", task_id="tk1")
    report, _ = run(cu, [issue(1, "CU-tk1")])
    (finding,) = report.findings[1]
    assert (finding.code, finding.severity) == ("AIC702", "error")
    assert "f-ai, f-ai-2" in finding.message and finding.line == 19
    assert cu.count("POST", FIELD_POST) == 0


def test_deleted_and_never_existing_tasks_are_findings_and_the_run_goes_on(
    cu: ClickUpFake,
) -> None:
    cu.add_task("gone", task_id="tk1")
    cu.delete_task("tk1")
    cu.add_task("ok", task_id="tk3")
    report, _ = run(cu, [issue(1, "CU-tk1"), issue(2, "CU-tk2"), issue(3, "CU-tk3")])
    assert [i.result for i in report.items] == ["not_found", "not_found", "written"]
    assert report.findings[1][0].code == "AIC701"
    assert "404 ITEM_013" in report.findings[1][0].message
    assert "401 OAUTH_027" in report.findings[2][0].message
    assert report.exit_code == 0


def test_a_task_deleted_between_read_and_write_is_a_finding(cu: ClickUpFake) -> None:
    cu.add_task("t", task_id="tk1")
    cu.after("GET", "/api/v2/task/tk1", lambda _req: cu.delete_task("tk1"))
    report, _ = run(cu, [issue(1, "CU-tk1")])
    assert report.items[0].result == "not_found" and report.findings[1][0].code == "AIC701"


def test_field_033_stops_every_further_write_in_the_run(cu: ClickUpFake) -> None:
    cu.field_write_cap = 1
    for n in (1, 2, 3):
        cu.add_task("t", task_id=f"tk{n}")
    report, store = run(cu, [issue(n, f"CU-tk{n}") for n in (1, 2, 3)])
    assert [i.result for i in report.items] == ["written", "skipped", "skipped"]
    assert store.counter.writes == 2  # one accepted, one refused, none after
    (error,) = report.errors
    assert "FIELD_033" in error and "60" in error
    assert report.exit_code == 2


def test_a_custom_id_is_read_with_the_workspace_and_written_by_task_id(cu: ClickUpFake) -> None:
    cu.add_task("t", task_id="tk1", custom_id="DEV-12")
    report, _ = run(cu, [issue(1, f"https://app.clickup.com/t/{TEAM}/DEV-12")])
    assert report.items[0].result == "written"
    (get,) = cu.requests_to("GET", TASK_GET)
    assert get.arg("custom_task_ids") == "true" and get.arg("team_id") == TEAM
    assert cu.requests_to("POST", FIELD_POST)[0].path.endswith("/task/tk1/field/f-ai")


def test_dry_run_prints_the_diff_and_writes_nothing(cu: ClickUpFake) -> None:
    item = issue(1, "CU-tk1")
    old = wanted(item).replace("Plan: 2/5 done", "Plan: 1/5 done")
    cu.add_task("t", task_id="tk1", values={"ai_context": old})
    log: list[str] = []
    report, store = run(cu, [item], log, dry_run=True)
    assert report.items[0].result == "would_write" and store.counter.writes == 0
    chars = len(wanted(item))
    assert (
        log[0] == f"[dry-run] would set ClickUp task tk1 field ai_context from #1 ({chars} chars):"
    )
    assert "| -Plan: 1/5 done\n| +Plan: 2/5 done" in "\n".join(log[1:])
    assert cu.value("tk1") == old


def test_an_unavailable_clickup_stops_the_job_with_exit_3(cu: ClickUpFake) -> None:
    cu.add_task("t", task_id="tk1")
    cu.fail_next("GET", TASK_GET, status=503, times=None)
    report, _ = run(cu, [issue(1, "CU-tk1")])
    assert report.exit_code == 3 and "503" in report.errors[0]


def test_a_bad_token_stops_the_job_with_exit_2(cu: ClickUpFake) -> None:
    cu.token = "pk_other"
    cu.add_task("t", task_id="tk1")
    report, _ = run(cu, [issue(1, "CU-tk1")])
    assert report.exit_code == 2 and "OAUTH_025" in report.errors[0]


def test_other_refusals_are_reported_per_issue(cu: ClickUpFake) -> None:
    cu.add_task("t", task_id="tk1")
    cu.add_task("t", task_id="tk2")
    body = {"err": "Invalid Value", "ECODE": "FIELD_342"}
    cu.fail_next("POST", "/api/v2/task/tk1/field/f-ai", status=400, body=body)
    report, _ = run(cu, [issue(1, "CU-tk1"), issue(2, "CU-tk2")])
    assert [i.result for i in report.items] == ["skipped", "written"]
    assert report.errors == [
        "#1: ClickUp refused to set field f-ai on task tk1 (400 FIELD_342 Invalid Value)"
    ]


def test_a_refused_read_skips_that_issue_only(cu: ClickUpFake) -> None:
    cu.add_task("t", task_id="tk1")
    cu.add_task("t", task_id="tk2")
    body = {"err": "Something odd", "ECODE": "ITEM_999"}
    cu.fail_next("GET", "/api/v2/task/tk1", status=400, body=body)
    report, _ = run(cu, [issue(1, "CU-tk1"), issue(2, "CU-tk2")])
    assert [i.result for i in report.items] == ["skipped", "written"]
    assert report.errors == ["#1: ClickUp refused to read task tk1 (400 ITEM_999 Something odd)"]
    assert report.exit_code == 0


def test_a_refused_listing_stops_the_rebuild_with_exit_3(cu: ClickUpFake) -> None:
    issues = seed(cu, 3, changed={2})
    cu.fail_next("GET", PAGES, status=400, body={"err": "Bad filter", "ECODE": "ITEM_015"})
    report, _ = run(cu, issues, full=True, team_id=TEAM, config=MirrorConfig(lists=("901",)))
    assert report.exit_code == 3 and "400 ITEM_015 Bad filter" in report.errors[0]


def test_a_dry_run_diff_cannot_smuggle_a_workflow_command(cu: ClickUpFake) -> None:
    hostile = SEED_BLOCK.replace("Finish unit tests", "::error::pwned")
    cu.add_task("t", task_id="tk1", values={"ai_context": "  ::warning::old\nx"})
    log: list[str] = []
    run(cu, [issue(1, "CU-tk1", hostile)], log, dry_run=True)
    assert all(line.startswith("| ") for line in log[1].splitlines())
    assert not any(line.lstrip().startswith("::") for entry in log for line in entry.splitlines())


# --- the full rebuild reads pages -------------------------------------------------------


def seed(cu: ClickUpFake, n: int, changed: set[int], list_id: str = "901") -> list[Issue]:
    issues = []
    for k in range(1, n + 1):
        item = issue(k, f"CU-tk{k}")
        value = "old" if k in changed else wanted(item)
        cu.add_task(f"tk{k}", task_id=f"tk{k}", list_id=list_id, values={"ai_context": value})
        issues.append(item)
    return issues


def test_full_rebuild_by_list_reads_only_pages(cu: ClickUpFake) -> None:
    issues = seed(cu, 150, changed={3, 120})
    cu.add_task("unlinked", task_id="zz")
    report, store = run(cu, issues, full=True, team_id=TEAM, config=MirrorConfig(lists=("901",)))
    assert report.count("written") == 2 and report.count("unchanged") == 148
    assert cu.count("GET", TASK_GET) == 0
    assert cu.count("GET", PAGES) == 2
    assert {r.arg("list_ids[]") for r in cu.requests_to("GET", PAGES)} == {"901"}
    assert (store.counter.reads, store.counter.writes) == (2, 2)


def test_full_rebuild_by_field_learns_field_and_workspace_from_one_task(cu: ClickUpFake) -> None:
    issues = seed(cu, 120, changed={7})
    for k in range(500):  # tasks without a mirror value are not in the filtered pages
        cu.add_task(f"other {k}", task_id=f"o{k}")
    cu.add_task("new", task_id="fresh")  # linked, never mirrored: read on its own
    issues.append(issue(121, "CU-fresh"))
    report, store = run(cu, issues, full=True)  # no team id set: taken from the first task

    assert report.count("written") == 2 and report.count("unchanged") == 119
    pages = cu.requests_to("GET", PAGES)
    assert len(pages) == 2
    assert pages[0].arg("custom_fields") == '[{"field_id":"f-ai","operator":"IS NOT NULL"}]'
    assert [r.path.rsplit("/", 1)[1] for r in cu.requests_to("GET", TASK_GET)] == ["tk1", "fresh"]
    assert store.counter.reads == 4


def test_full_rebuild_stops_paging_when_reading_tasks_singly_is_cheaper(cu: ClickUpFake) -> None:
    for k in range(400):  # a big workspace where the linked tasks sit at the end
        cu.add_task(f"other {k}", task_id=f"o{k}")
    issues = seed(cu, 2, changed={1})
    report, _ = run(cu, issues, full=True, team_id=TEAM, config=MirrorConfig(lists=("901",)))
    assert report.count("written") == 1
    # Two linked tasks sit behind 400 others: after two pages, two single reads beat 3 pages.
    assert cu.count("GET", PAGES) == 2 and cu.count("GET", TASK_GET) == 2


def test_full_rebuild_matches_custom_ids_in_pages(cu: ClickUpFake) -> None:
    cu.add_task("a", task_id="tk1", custom_id="DEV-1")
    cu.add_task("b", task_id="tk2", custom_id="DEV-2")
    issues = [issue(1, f"https://app.clickup.com/t/{TEAM}/DEV-1"), issue(2, "DEV-2")]
    report, _ = run(cu, issues, full=True, team_id=TEAM, config=MirrorConfig(lists=("901",)))
    assert [i.result for i in report.items] == ["written", "written"]
    assert cu.count("GET", TASK_GET) == 0


def test_full_rebuild_finds_deleted_tasks_by_reading_them(cu: ClickUpFake) -> None:
    issues = seed(cu, 3, changed=set())
    cu.delete_task("tk2")
    report, _ = run(cu, issues, full=True, team_id=TEAM, config=MirrorConfig(lists=("901",)))
    assert [i.result for i in report.items] == ["unchanged", "not_found", "unchanged"]
    assert cu.count("GET", TASK_GET) == 1


def test_full_rebuild_by_list_learns_the_workspace_from_the_first_task(cu: ClickUpFake) -> None:
    issues = seed(cu, 3, changed={2})
    report, _ = run(cu, issues, full=True, config=MirrorConfig(lists=("901",)))
    assert cu.count("GET", TASK_GET) == 1 and cu.count("GET", PAGES) == 1
    assert cu.requests_to("GET", PAGES)[0].path.endswith(f"/team/{TEAM}/task")
    assert report.count("written") == 1


def test_full_rebuild_without_any_workspace_reads_each_task(cu: ClickUpFake) -> None:
    issues = seed(cu, 3, changed={2})
    original = cu._task_json
    cu._task_json = lambda task: {**original(task), "team_id": None}  # type: ignore[method-assign]
    report, _ = run(cu, issues, full=True, config=MirrorConfig(lists=("901",)))
    assert cu.count("GET", PAGES) == 0 and cu.count("GET", TASK_GET) == 3
    assert report.count("written") == 1


# --- the report -------------------------------------------------------------------------


def test_summary_lists_what_changed(cu: ClickUpFake) -> None:
    cu.add_task("t", task_id="tk1")
    report, store = run(cu, [issue(1, "CU-tk1"), issue(2, "CU-gone")])
    text = summary(report, store.counter, dry_run=False)
    assert "2 linked issue(s): 1 written, 0 unchanged, 1 task(s) not found" in text
    assert "ClickUp calls: 2 reads, 1 writes" in text
    assert "| [\\#1 Task 1](https://github.com/acme/shop/issues/1) | tk1 | written |" in text
    assert "| [\\#2 Task 2](https://github.com/acme/shop/issues/2) | gone | not found |" in text


def test_mirror_findings_join_the_sticky_comment_but_not_the_labels(cu: ClickUpFake) -> None:
    cu.add_field("901", "ai_context", field_id="f-ai-2")
    cu.add_task("t", task_id="tk1")
    item = issue(1, "CU-tk1")
    report, _ = run(cu, [item])
    planned = plan_check(
        item,
        now=NOW,
        config=CheckConfig(),
        bot_login="github-actions[bot]",
        comments=lambda _n: [],
        extra_findings=lambda _issue, _result: report.findings[1],
    )
    (comment,) = [op for op in planned.ops if op.kind == "create_comment"]
    assert comment.body is not None and "AIC702" in comment.body
    assert all(LABEL_INVALID not in op.labels for op in planned.ops)
