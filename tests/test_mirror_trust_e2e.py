"""A ClickUp link an outsider cannot hijack: `python -m ai_context action` against the loopback
GitHub and ClickUp. The mirror follows a link only when the issue's author (a member, owner or
collaborator, or a login in `actors:`) or its block's actor (listed in `actors:`) is trusted,
and never writes a task whose field mirrors another issue; otherwise a finding on the issue's
sticky comment and no write."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ai_context.rules.sticky import MARKER
from tests.conftest import SEED_BLOCK
from tests.fakes import ClickUpFake, GitHubFake
from tests.test_mirror_e2e import expected, run

REPO = "acme/shop"
FIELD_POST = "/task/{task_id}/field/{field_id}"
LINK = "\n\nClickUp: https://app.clickup.com/t/86c0abc\n"
OUTSIDER_BLOCK = SEED_BLOCK.replace("cc-ariel-laptop", "mallory-bot")


def opened(github_fake: GitHubFake, number: int) -> dict[str, Any]:
    data = github_fake._issue_json(github_fake.issue(REPO, number))
    sender = {"login": data["user"]["login"], "type": "User"}
    return {"action": "opened", "issue": data, "sender": sender, "repository": {"full_name": REPO}}


def sticky(github_fake: GitHubFake, number: int) -> str:
    (comment,) = [c.body for c in github_fake.comments(REPO, number) if MARKER in c.body]
    return comment


def test_an_outsiders_link_to_someone_elses_task_is_not_followed(
    tmp_path: Path, github_fake: GitHubFake, clickup_fake: ClickUpFake
) -> None:
    github_fake.add_issue(REPO, "Booking history", SEED_BLOCK + LINK, number=7)
    clickup_fake.add_task(
        "Booking", task_id="86c0abc", values={"ai_context": expected(github_fake, 7)}
    )
    before = clickup_fake.value("86c0abc")
    github_fake.add_issue(
        REPO, "Hi", OUTSIDER_BLOCK + LINK, number=9, user="mallory", author_association="NONE"
    )

    done = run(tmp_path, github_fake, clickup_fake, "issues", opened(github_fake, 9))

    assert done.code == 0, done.stdout + done.stderr
    assert clickup_fake.value("86c0abc") == before and clickup_fake.count("POST", FIELD_POST) == 0
    assert "AIC705" in sticky(github_fake, 9) and "not followed" in sticky(github_fake, 9)


def test_a_task_that_mirrors_another_issue_is_not_overwritten(
    tmp_path: Path, github_fake: GitHubFake, clickup_fake: ClickUpFake
) -> None:
    github_fake.add_issue(REPO, "Booking history", SEED_BLOCK + LINK, number=7)
    clickup_fake.add_task(
        "Booking", task_id="86c0abc", values={"ai_context": expected(github_fake, 7)}
    )
    before = clickup_fake.value("86c0abc")
    github_fake.add_issue(REPO, "Same task", SEED_BLOCK.replace("Finish", "Start") + LINK, number=9)

    done = run(tmp_path, github_fake, clickup_fake, "issues", opened(github_fake, 9))

    assert done.code == 0, done.stdout + done.stderr
    assert clickup_fake.value("86c0abc") == before and clickup_fake.count("POST", FIELD_POST) == 0
    assert "AIC706" in sticky(github_fake, 9) and "already mirrors acme/shop#7" in sticky(
        github_fake, 9
    )


def test_a_listed_actors_block_on_an_outsiders_issue_is_followed(
    tmp_path: Path, github_fake: GitHubFake, clickup_fake: ClickUpFake
) -> None:
    """A team agent works on an issue an outsider opened: the config vouches for its actor."""
    github_fake.add_issue(
        REPO, "Bug report", SEED_BLOCK + LINK, number=9, user="visitor", author_association="NONE"
    )
    clickup_fake.add_task("Booking", task_id="86c0abc")
    config = "actors:\n  cc-ariel-laptop:\n    owner: ariel\n"

    done = run(tmp_path, github_fake, clickup_fake, "issues", opened(github_fake, 9), config=config)

    assert done.code == 0, done.stdout + done.stderr
    assert clickup_fake.value("86c0abc") == expected(github_fake, 9)


def test_a_schedule_takes_back_a_field_an_outsider_had_hijacked(
    tmp_path: Path, github_fake: GitHubFake, clickup_fake: ClickUpFake
) -> None:
    github_fake.add_issue(REPO, "Booking history", SEED_BLOCK + LINK, number=7)
    github_fake.add_issue(
        REPO, "Hi", OUTSIDER_BLOCK + LINK, number=9, user="mallory", author_association="NONE"
    )
    clickup_fake.add_task(
        "Booking", task_id="86c0abc", values={"ai_context": expected(github_fake, 9)}
    )

    done = run(tmp_path, github_fake, clickup_fake, "schedule", {"schedule": "17 * * * *"})

    assert done.code == 0, done.stdout + done.stderr
    assert clickup_fake.value("86c0abc") == expected(
        github_fake, 7
    )  # the member's issue has its task back
    assert "AIC705" in sticky(github_fake, 9)
    assert "AIC704" not in sticky(github_fake, 9)
