"""The mirror end to end: `python -m ai_context` as the Action, against GitHub and ClickUp
fakes on the loopback interface."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ai_context.adapters.github import issue_from_json
from ai_context.core.block.parse import parse
from ai_context.rules.mirror.text import mirror_text
from ai_context.rules.sticky import MARKER
from tests.actionrun import ActionRun, run_action
from tests.conftest import BUNDLED, SEED_BLOCK
from tests.fakes import ClickUpFake, GitHubFake

REPO = "acme/shop"
TASK_GET = "/task/{task_id}"
FIELD_POST = "/task/{task_id}/field/{field_id}"
LINKED = f"{SEED_BLOCK}\n\nClickUp: https://app.clickup.com/t/86c0abc\n"


def expected(github_fake: GitHubFake, number: int) -> str:
    """What the field should hold, rendered in this process from the issue as GitHub has it."""
    issue = issue_from_json(github_fake._issue_json(github_fake.issue(REPO, number)), REPO)
    block = parse(issue.body).block
    assert block is not None
    return mirror_text(issue, block, BUNDLED)


def edited_payload(github_fake: GitHubFake, number: int) -> dict[str, Any]:
    data = github_fake._issue_json(github_fake.issue(REPO, number))
    return {
        "action": "edited",
        "issue": data,
        "changes": {"body": {"from": data["body"].replace("(in progress)", "(pending)")}},
        "sender": {"login": "ariel", "type": "User"},
        "repository": {"full_name": REPO},
    }


def run(
    tmp: Path,
    github_fake: GitHubFake,
    clickup_fake: ClickUpFake,
    event: str,
    payload: dict[str, Any],
    *,
    config: str = "",
) -> ActionRun:
    """The Action on EVENT with the ClickUp fake's token, at a clock where the seed is fresh;
    CONFIG, if given, as the workspace's .github/ai-context.yml."""
    if config:
        (tmp / "workspace" / ".github").mkdir(parents=True)
        (tmp / "workspace" / ".github" / "ai-context.yml").write_text(config, encoding="utf-8")
    inputs = {"clickup-token": clickup_fake.token, "clickup-api-url": clickup_fake.url}
    clock = {"AI_CONTEXT_NOW": "2026-05-26T15:00:00Z"}  # the seed block is then fresh
    return run_action(
        tmp,
        github_fake.url,
        event,
        payload,
        repository=REPO,
        inputs=inputs,
        timeout=60,
        extra_env=clock,
    )


def test_a_changed_block_is_mirrored(
    tmp_path: Path, github_fake: GitHubFake, clickup_fake: ClickUpFake
) -> None:
    github_fake.add_issue(REPO, "Booking history", LINKED, number=7)
    clickup_fake.add_task("Booking", task_id="86c0abc", values={"ai_context": "an older state"})

    done = run(tmp_path, github_fake, clickup_fake, "issues", edited_payload(github_fake, 7))

    assert done.code == 0, done.stdout + done.stderr
    assert clickup_fake.value("86c0abc") == expected(github_fake, 7)
    assert clickup_fake.count("POST", FIELD_POST) == 1
    assert done.outputs["mirrored"] == "1"
    assert "ClickUp 2" in done.stdout  # one read, one write, counted with the API calls
    assert "1 written, 0 unchanged" in done.summary


def test_an_unchanged_block_makes_no_post(
    tmp_path: Path, github_fake: GitHubFake, clickup_fake: ClickUpFake
) -> None:
    github_fake.add_issue(REPO, "Booking history", LINKED, number=7)
    clickup_fake.add_task(
        "Booking", task_id="86c0abc", values={"ai_context": expected(github_fake, 7)}
    )

    done = run(tmp_path, github_fake, clickup_fake, "issues", edited_payload(github_fake, 7))

    assert done.code == 0, done.stdout + done.stderr
    assert clickup_fake.count("POST", FIELD_POST) == 0 and clickup_fake.count("GET", TASK_GET) == 1
    assert done.outputs["mirrored"] == "0"


def test_a_missing_field_is_a_note_and_exit_0(
    tmp_path: Path, github_fake: GitHubFake, clickup_fake: ClickUpFake
) -> None:
    github_fake.add_issue(REPO, "Booking history", LINKED, number=7)
    clickup_fake.add_task("Booking", task_id="86c0abc", list_id="555")

    done = run(tmp_path, github_fake, clickup_fake, "issues", edited_payload(github_fake, 7))

    assert done.code == 0, done.stdout + done.stderr
    note = (
        "ClickUp field ai_context not found on list 555: create a Text field named ai_context "
        "at the space level"
    )
    assert f"::notice title=ai-context mirror::{note}" in done.stdout
    assert note in done.summary
    assert clickup_fake.count("POST", FIELD_POST) == 0
    assert not any(
        "ClickUp" in c.body for c in github_fake.comments(REPO, 7)
    )  # no noise on the issue


def test_a_429_is_waited_out_until_x_ratelimit_reset(
    tmp_path: Path, github_fake: GitHubFake, clickup_fake: ClickUpFake
) -> None:
    github_fake.add_issue(REPO, "Booking history", LINKED, number=7)
    clickup_fake.add_task("Booking", task_id="86c0abc")
    clickup_fake.rate_limit_next("GET", TASK_GET, reset_in=1)

    done = run(tmp_path, github_fake, clickup_fake, "issues", edited_payload(github_fake, 7))

    assert done.code == 0, done.stdout + done.stderr
    gets = clickup_fake.requests_to("GET", TASK_GET)
    assert len(gets) == 2
    assert clickup_fake.value("86c0abc") == expected(github_fake, 7)
    assert "(1 retries" in done.summary


def test_a_deleted_task_is_a_finding_in_the_sticky_comment(
    tmp_path: Path, github_fake: GitHubFake, clickup_fake: ClickUpFake
) -> None:
    github_fake.add_issue(REPO, "Booking history", LINKED, number=7)
    clickup_fake.add_task("Booking", task_id="86c0abc")
    clickup_fake.delete_task("86c0abc")

    done = run(tmp_path, github_fake, clickup_fake, "issues", edited_payload(github_fake, 7))

    assert done.code == 0, done.stdout + done.stderr
    (comment,) = github_fake.comments(REPO, 7)
    assert comment.body.startswith(MARKER)
    assert "AIC701" in comment.body and "linked ClickUp task not found" in comment.body
    assert "ITEM\\_013" in comment.body or "ITEM_013" in comment.body
    assert "::warning title=AIC701 in #7::linked ClickUp task not found" in done.stdout
    assert github_fake.issue(REPO, 7).labels == []  # the block itself is fine: no invalid label


def test_a_scheduled_full_rebuild_reads_pages(
    tmp_path: Path, github_fake: GitHubFake, clickup_fake: ClickUpFake
) -> None:
    for n in (1, 2, 3):
        link = f"https://app.clickup.com/t/{clickup_fake.team_id}/DEV-{n}"
        github_fake.add_issue(REPO, f"Task {n}", f"{SEED_BLOCK}\n\nClickUp: {link}\n", number=n)
    for n in (1, 2, 3):
        value = "old" if n == 2 else expected(github_fake, n)
        clickup_fake.add_task(
            f"t{n}", task_id=f"tsk{n}", custom_id=f"DEV-{n}", values={"ai_context": value}
        )
    (tmp_path / "workspace/.github").mkdir(parents=True)
    (tmp_path / "workspace/.github/ai-context.yml").write_text("mirror:\n  lists: ['901']\n")

    done = run(tmp_path, github_fake, clickup_fake, "schedule", {"schedule": "0 * * * *"})

    assert done.code == 0, done.stdout + done.stderr
    assert (
        clickup_fake.count("GET", "/team/{team_id}/task") == 1
        and clickup_fake.count("GET", TASK_GET) == 0
    )
    assert clickup_fake.count("POST", FIELD_POST) == 1 and clickup_fake.value("tsk2") == expected(
        github_fake, 2
    )
    assert done.outputs["mirrored"] == "1"


def test_a_title_or_link_edit_is_mirrored_without_a_check(
    tmp_path: Path, github_fake: GitHubFake, clickup_fake: ClickUpFake
) -> None:
    github_fake.add_issue(REPO, "Booking history", LINKED, number=7)
    clickup_fake.add_task("Booking", task_id="86c0abc", values={"ai_context": "an older state"})
    payload = edited_payload(github_fake, 7)
    payload["changes"] = {"title": {"from": "Old title"}}  # only the title changed

    done = run(tmp_path, github_fake, clickup_fake, "issues", payload)

    assert done.code == 0, done.stdout + done.stderr
    assert clickup_fake.value("86c0abc") == expected(github_fake, 7)
    assert "ai-context check" not in done.stdout  # the block did not change: no check ran
    assert github_fake.comments(REPO, 7) == []
