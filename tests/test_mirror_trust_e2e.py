"""A ClickUp link an outsider cannot hijack: `python -m ai_context action` against the loopback
GitHub and ClickUp. The mirror follows a link only when the issue's author (a member, owner or
collaborator, or a login in `actors:`) or its block's actor (listed in `actors:`) is trusted,
and never writes a task whose field mirrors another issue; otherwise a finding on the issue's
sticky comment and no write."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ai_context.adapters.github import issue_from_json
from ai_context.core.block.parse import parse
from ai_context.rules.mirror import mirror_text
from ai_context.rules.sticky import MARKER
from tests.actionrun import ActionRun, run_action
from tests.conftest import BUNDLED, SEED_BLOCK
from tests.fakes import ClickUpFake, GitHubFake

REPO = "acme/shop"
FIELD_POST = "/task/{task_id}/field/{field_id}"
LINK = "\n\nClickUp: https://app.clickup.com/t/86c0abc\n"
OUTSIDER_BLOCK = SEED_BLOCK.replace("cc-ariel-laptop", "mallory-bot")


@pytest.fixture
def gh() -> Iterator[GitHubFake]:
    with GitHubFake() as fake:
        yield fake


@pytest.fixture
def cu() -> Iterator[ClickUpFake]:
    with ClickUpFake() as fake:
        fake.add_field("901", "ai_context", field_id="f-ai")
        yield fake


def mirror_of(gh: GitHubFake, number: int) -> str:
    issue = issue_from_json(gh._issue_json(gh.issue(REPO, number)), REPO)
    block = parse(issue.body).block
    assert block is not None
    return mirror_text(issue, block, BUNDLED)


def opened(gh: GitHubFake, number: int) -> dict[str, Any]:
    data = gh._issue_json(gh.issue(REPO, number))
    sender = {"login": data["user"]["login"], "type": "User"}
    return {"action": "opened", "issue": data, "sender": sender, "repository": {"full_name": REPO}}


def run(
    tmp: Path,
    gh: GitHubFake,
    cu: ClickUpFake,
    event: str,
    payload: dict[str, Any],
    *,
    config: str = "",
) -> ActionRun:
    if config:
        (tmp / "workspace" / ".github").mkdir(parents=True)
        (tmp / "workspace" / ".github" / "ai-context.yml").write_text(config, encoding="utf-8")
    inputs = {"clickup-token": cu.token, "clickup-api-url": cu.url}
    clock = {"AI_CONTEXT_NOW": "2026-05-26T15:00:00Z"}
    return run_action(
        tmp, gh.url, event, payload, repository=REPO, inputs=inputs, timeout=60, extra_env=clock
    )


def sticky(gh: GitHubFake, number: int) -> str:
    (comment,) = [c.body for c in gh.comments(REPO, number) if MARKER in c.body]
    return comment


def test_an_outsiders_link_to_someone_elses_task_is_not_followed(
    tmp_path: Path, gh: GitHubFake, cu: ClickUpFake
) -> None:
    gh.add_issue(REPO, "Booking history", SEED_BLOCK + LINK, number=7)
    cu.add_task("Booking", task_id="86c0abc", values={"ai_context": mirror_of(gh, 7)})
    before = cu.value("86c0abc")
    gh.add_issue(
        REPO, "Hi", OUTSIDER_BLOCK + LINK, number=9, user="mallory", author_association="NONE"
    )

    done = run(tmp_path, gh, cu, "issues", opened(gh, 9))

    assert done.code == 0, done.stdout + done.stderr
    assert cu.value("86c0abc") == before and cu.count("POST", FIELD_POST) == 0
    assert "AIC705" in sticky(gh, 9) and "not followed" in sticky(gh, 9)


def test_a_task_that_mirrors_another_issue_is_not_overwritten(
    tmp_path: Path, gh: GitHubFake, cu: ClickUpFake
) -> None:
    gh.add_issue(REPO, "Booking history", SEED_BLOCK + LINK, number=7)
    cu.add_task("Booking", task_id="86c0abc", values={"ai_context": mirror_of(gh, 7)})
    before = cu.value("86c0abc")
    gh.add_issue(REPO, "Same task", SEED_BLOCK.replace("Finish", "Start") + LINK, number=9)

    done = run(tmp_path, gh, cu, "issues", opened(gh, 9))

    assert done.code == 0, done.stdout + done.stderr
    assert cu.value("86c0abc") == before and cu.count("POST", FIELD_POST) == 0
    assert "AIC706" in sticky(gh, 9) and "already mirrors acme/shop#7" in sticky(gh, 9)


def test_a_listed_actors_block_on_an_outsiders_issue_is_followed(
    tmp_path: Path, gh: GitHubFake, cu: ClickUpFake
) -> None:
    """A team agent works on an issue an outsider opened: the config vouches for its actor."""
    gh.add_issue(
        REPO, "Bug report", SEED_BLOCK + LINK, number=9, user="visitor", author_association="NONE"
    )
    cu.add_task("Booking", task_id="86c0abc")
    config = "actors:\n  cc-ariel-laptop:\n    owner: ariel\n"

    done = run(tmp_path, gh, cu, "issues", opened(gh, 9), config=config)

    assert done.code == 0, done.stdout + done.stderr
    assert cu.value("86c0abc") == mirror_of(gh, 9)


def test_a_schedule_takes_back_a_field_an_outsider_had_hijacked(
    tmp_path: Path, gh: GitHubFake, cu: ClickUpFake
) -> None:
    gh.add_issue(REPO, "Booking history", SEED_BLOCK + LINK, number=7)
    gh.add_issue(
        REPO, "Hi", OUTSIDER_BLOCK + LINK, number=9, user="mallory", author_association="NONE"
    )
    cu.add_task("Booking", task_id="86c0abc", values={"ai_context": mirror_of(gh, 9)})

    done = run(tmp_path, gh, cu, "schedule", {"schedule": "17 * * * *"})

    assert done.code == 0, done.stdout + done.stderr
    assert cu.value("86c0abc") == mirror_of(gh, 7)  # the member's issue has its task back
    assert "AIC705" in sticky(gh, 9)
    assert "AIC704" not in sticky(gh, 9)
