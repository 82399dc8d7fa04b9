"""The ClickUp mirror over what changed: a scheduled run reads and writes only the tasks whose
issue changed since the last run; a value changed by hand in ClickUp is healed by the bounded
full rebuild (a week after the last, or `full: true` on dispatch). `python -m ai_context` as
the Action against the GitHub and ClickUp fakes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.actionrun import ActionRun, run_action
from tests.conftest import SEED_BLOCK
from tests.fakes import ClickUpFake, GitHubFake
from tests.test_mirror_e2e import REPO, expected

DAY_AGO = datetime.now(UTC).replace(microsecond=0) - timedelta(days=1)
TASKS = {n: f"86c00{n}" for n in range(1, 6)}
TASK_GET = "/task/{task_id}"
FIELD_POST = "/task/{task_id}/field/{field_id}"


@pytest.fixture
def fakes(github_fake: GitHubFake, clickup_fake: ClickUpFake) -> tuple[GitHubFake, ClickUpFake]:
    for n, task in TASKS.items():
        when = DAY_AGO - timedelta(minutes=n)
        body = f"{SEED_BLOCK}\n\nClickUp: https://app.clickup.com/t/{task}\n"
        github_fake.add_issue(REPO, f"Task {n}", body, number=n, created_at=when, updated_at=when)
        clickup_fake.add_task(f"Task {n}", task_id=task, values={"ai_context": "an older state"})
    return github_fake, clickup_fake


def run(
    gh: GitHubFake,
    cu: ClickUpFake,
    tmp: Path,
    name: str,
    now: str = "2026-05-26T15:00:00Z",
    **inputs: str,
) -> ActionRun:
    result = run_action(
        tmp / name,
        gh.url,
        "schedule",
        {},
        repository=REPO,
        inputs={
            "jobs": "mirror,check",
            "clickup-token": cu.token,
            "clickup-api-url": cu.url,
            **inputs,
        },
        extra_env={"AI_CONTEXT_NOW": now},
    )
    assert result.code == 0, result.stdout + result.stderr
    return result


def test_drift_made_by_hand_in_clickup_is_healed_by_the_full_rebuild(
    fakes: tuple[GitHubFake, ClickUpFake], tmp_path: Path
) -> None:
    gh, cu = fakes
    run(gh, cu, tmp_path, "1")  # no state yet: a full rebuild
    assert all(cu.value(task) == expected(gh, n) for n, task in TASKS.items())
    run(gh, cu, tmp_path, "2")
    cu.task(TASKS[3]).values["f-ai"] = "typed over by hand in ClickUp"

    gh.edit_issue(REPO, 2, body=gh.issue(REPO, 2).body.replace("(in progress)", "(done)"))
    cu.reset_requests()
    changed = run(gh, cu, tmp_path, "3")  # only #2 changed: one read, one write
    assert "listed only what changed" in changed.stdout
    assert cu.count("GET", TASK_GET) == 1 and cu.count("POST", FIELD_POST) == 1
    assert cu.value(TASKS[2]) == expected(gh, 2)
    assert cu.value(TASKS[3]) == "typed over by hand in ClickUp"  # not seen: not read

    cu.reset_requests()
    healed = run(gh, cu, tmp_path, "4", full="true")  # the dispatch's full rebuild
    assert "asked for (full: true)" in healed.stdout
    assert cu.value(TASKS[3]) == expected(gh, 3)
    assert cu.count("POST", FIELD_POST) == 1  # only the drifted value is written
    assert healed.outputs["mirrored"] == "1"


def test_a_week_after_the_last_full_listing_the_rebuild_is_full_again(
    fakes: tuple[GitHubFake, ClickUpFake], tmp_path: Path
) -> None:
    gh, cu = fakes
    run(gh, cu, tmp_path, "1")
    cu.task(TASKS[4]).values["f-ai"] = "typed over by hand in ClickUp"
    run(gh, cu, tmp_path, "2")
    cu.reset_requests()
    run(gh, cu, tmp_path, "3", now="2026-05-27T10:00:00Z")  # the next day: what changed
    assert cu.count() == 0 and cu.value(TASKS[4]) == "typed over by hand in ClickUp"
    week = run(gh, cu, tmp_path, "4", now="2026-06-03T15:00:00Z")  # eight days on: all
    assert "listed only what changed" not in week.stdout
    assert cu.value(TASKS[4]) == expected(gh, 4)
