"""The stale job end to end: scheduled runs of `python -m ai_context` against the loopback
GitHub mark a stale task (label and finding in the one comment), stay quiet on a rerun, and
clear both once the block is refreshed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ai_context.rules.lease import LeaseRecord, stamp
from tests.actionrun import run_action
from tests.conftest import SEED_BLOCK
from tests.fakes import GitHubFake

BOT = "github-actions[bot]"
# Every stale episode mentions its owner here (these tests are about how); the default,
# episodes ai-context saw begin, is test_first_run_e2e.py's.
CONFIG = """\
mention-owners: all
actors:
  cc-ariel-laptop:
    owner: ariel
    emails: [ariel@example.com]
  cc-ben:
    owner: ben
"""


@pytest.fixture
def gh(github_fake: GitHubFake) -> GitHubFake:
    github_fake.add_repo("o/r")
    return github_fake


def block(updated: datetime, actor: str = "cc-ariel-laptop") -> str:
    return SEED_BLOCK.replace("2026-05-26T14:32:00Z", stamp(updated)).replace(
        "cc-ariel-laptop", actor
    )


def run(
    gh: GitHubFake, tmp: Path, event: str = "schedule", payload: dict[str, Any] | None = None
) -> dict[str, Any]:
    workspace = tmp / "workspace"
    (workspace / ".github").mkdir(parents=True)
    (workspace / ".github/ai-context.yml").write_text(CONFIG, encoding="utf-8")
    # Without the digest, whose same-day rerun edits its comment by design.
    result = run_action(
        tmp, gh.url, event, payload or {"schedule": "17 * * * *"}, inputs={"jobs": "check,stale"}
    )
    assert result.code == 0, result.stdout + result.stderr
    return {"outputs": result.outputs, "summary": result.summary, "stdout": result.stdout}


def sticky(gh: GitHubFake, number: int) -> str:
    (comment,) = [c for c in gh.comments("o/r", number) if c.user == BOT]
    return comment.body


def test_scheduled_runs_mark_a_stale_task_and_clear_it_when_refreshed(
    gh: GitHubFake, tmp_path: Path
) -> None:
    now = datetime.now(UTC)
    gh.add_issue("o/r", "Stale task", block(now - timedelta(days=3)), number=1)
    gh.add_issue("o/r", "Fresh task", block(now - timedelta(hours=1)), number=2)

    first = run(gh, tmp_path / "1")
    assert first["outputs"]["stale"] == "1"
    assert gh.issue("o/r", 1).labels == ["ai-context:stale"]
    body = sticky(gh, 1)
    assert "`AIC601`" in body and "`AIC304`" not in body and body.count("@ariel") == 1
    assert gh.comments("o/r", 2) == [] and gh.issue("o/r", 2).labels == []
    assert "Stale tasks: 1; conflicts: 0." in first["summary"]

    # The bot's comment and label made the issue "updated" just now: still stale, and the
    # rerun writes nothing (no edit, so no second notification) but its run state, which now
    # vouches for the comments it read again.
    gh.reset_requests()
    second = run(gh, tmp_path / "2")
    assert second["outputs"]["stale"] == "1"
    [carrier] = [n for n, i in gh.repos["o/r"].issues.items() if "ai-context:state" in i.labels]
    writes = [(r.method, r.path) for r in gh.requests if r.method != "GET"]
    assert writes == [("PATCH", f"/repos/o/r/issues/{carrier}"), ("POST", "/graphql")]
    assert sticky(gh, 1) == body

    # The agent checkpoints: the next run clears the label and the finding.
    gh.edit_issue("o/r", 1, body=block(datetime.now(UTC)))
    third = run(gh, tmp_path / "3")
    assert third["outputs"]["stale"] == "0"
    assert gh.issue("o/r", 1).labels == []
    assert "no findings now" in sticky(gh, 1) and "@ariel" not in sticky(gh, 1)


def test_scheduled_run_reads_leases_for_expiry_and_conflicts(
    gh: GitHubFake, tmp_path: Path
) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    gh.add_issue("o/r", "Expired lease", block(now - timedelta(hours=1)), number=1)
    gh.add_issue("o/r", "Someone else's lease", block(now - timedelta(hours=1)), number=2)
    for number, actor, expires in (
        (1, "cc-ariel-laptop", now - timedelta(minutes=10)),
        (2, "cc-ben", now + timedelta(hours=1)),
    ):
        record = LeaseRecord(
            issue=number, actor=actor, acquired=now - timedelta(hours=2), expires=expires
        )
        sha = gh.create_commit("o/r", record.message())
        gh.set_ref("o/r", f"refs/ai-context/leases/{number}", sha)

    result = run(gh, tmp_path / "1", event="workflow_dispatch")
    assert result["outputs"]["stale"] == "1"
    assert gh.issue("o/r", 1).labels == ["ai-context:stale"]
    assert "`AIC602`" in sticky(gh, 1) and "@ariel" in sticky(gh, 1)
    assert gh.issue("o/r", 2).labels == ["ai-context:conflict"]
    assert "`AIC604`" in sticky(gh, 2) and "two actors: cc-ben holds the lease" in sticky(gh, 2)
    assert "Stale tasks: 1; conflicts: 1." in result["summary"]


def test_a_push_by_another_actor_is_a_claim_race_until_the_next_checkpoint(
    gh: GitHubFake, tmp_path: Path
) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    gh.add_issue("o/r", "Task", block(now - timedelta(hours=1)), number=1)
    push = {
        "ref": "refs/heads/main",
        "commits": [
            {
                "id": "c0ffee",
                "message": "Tweak the repository\n\nRefs #1",
                "timestamp": stamp(now - timedelta(minutes=5)),
                "author": {"name": "Ben", "email": "ben@example.com", "username": "ben"},
            }
        ],
    }
    run(gh, tmp_path / "1", event="push", payload=push)
    assert gh.issue("o/r", 1).labels == ["ai-context:conflict"]
    assert "claim race: 1 commit naming #1 by cc-ben after" in sticky(gh, 1)
    # A scheduled run cannot see that push; the comment remembers it, so nothing flips (the
    # one write creates the issue that keeps the run state).
    gh.reset_requests()
    run(gh, tmp_path / "2")
    writes = [(r.method, r.template) for r in gh.requests if r.method != "GET"]
    assert writes == [("POST", "/repos/{owner}/{repo}/issues")]
    # The Active actor checkpoints after the commit: the race is over.
    gh.edit_issue("o/r", 1, body=block(datetime.now(UTC)))
    run(gh, tmp_path / "3")
    assert gh.issue("o/r", 1).labels == [] and "no findings now" in sticky(gh, 1)
