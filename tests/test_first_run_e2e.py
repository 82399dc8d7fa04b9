"""A first run over a repository that already has issues (issue 23, item 1): capped by
max-writes and continued by the next run without a second comment, owners mentioned only for
staleness ai-context saw begin, a dry run that prints each comment, a 403 that leaves no
`findings=0`, and a step summary that counts the issues without a block. Runs of the Action
(`python -m ai_context action`) against the loopback GitHub."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ai_context.jobs.mention import MENTION_MARKER
from ai_context.rules.lease import stamp
from ai_context.rules.sticky import MARKER
from tests.actionrun import ActionRun, run_action
from tests.conftest import SEED_BLOCK
from tests.fakes import GitHubFake

BOT = "github-actions[bot]"
T0 = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
WRITES = ("POST", "PATCH", "PUT", "DELETE")
INCOMPLETE = "## AI Context\n\n- **Active actor:** cc-x\n- **Phase:** planning\n\nHuman notes."
CONFIG = """\
actors:
  cc-ariel-laptop:
    owner: ariel
  cc-ben:
    owner: ben
"""


@pytest.fixture
def gh() -> Iterator[GitHubFake]:
    with GitHubFake(now=T0) as fake:
        fake.add_repo("o/r")
        yield fake


def block(updated: datetime, actor: str = "cc-ariel-laptop") -> str:
    return SEED_BLOCK.replace("2026-05-26T14:32:00Z", stamp(updated)).replace(
        "cc-ariel-laptop", actor
    )


def dispatch(
    gh: GitHubFake, tmp: Path, *, when: datetime = T0, config: str = CONFIG, **inputs: str
) -> ActionRun:
    """One workflow_dispatch run at WHEN (the fake's clock too), the config file in place."""
    gh.clock.set(when)
    (tmp / "workspace" / ".github").mkdir(parents=True)
    (tmp / "workspace" / ".github" / "ai-context.yml").write_text(config, encoding="utf-8")
    return run_action(
        tmp,
        gh.url,
        "workflow_dispatch",
        {},
        inputs=inputs,
        extra_env={"AI_CONTEXT_NOW": stamp(when)},
    )


def writes(gh: GitHubFake) -> list[Any]:
    """Every write: a GraphQL query is a POST that reads."""
    return [r for r in gh.requests if r.method in WRITES and r.path != "/graphql"]


def ours(gh: GitHubFake, number: int) -> list[str]:
    return [c.body for c in gh.comments("o/r", number) if c.user == BOT]


def test_a_capped_first_run_leaves_the_rest_to_the_next_run_without_a_second_comment(
    gh: GitHubFake, tmp_path: Path
) -> None:
    for n in range(1, 13):  # twelve incomplete tasks: a comment and a label each
        gh.add_issue("o/r", f"Task {n}", INCOMPLETE, number=n)
    for n in range(13, 18):  # five issues that are not tasks
        gh.add_issue("o/r", f"Plain {n}", "Just a description.", number=n)

    first = dispatch(gh, tmp_path / "1", **{"max-writes": "10"})
    assert first.code == 0, first.text
    assert len(writes(gh)) <= 10
    done = [n for n in range(1, 13) if ours(gh, n)]
    left = 12 - len(done)
    assert done and left
    assert first.outputs["writes-left"] == str(2 * left)
    assert f"{2 * left} write(s) on {left} task(s) left for the next run" in first.stdout
    assert "left for the next run" in first.summary
    assert "(5 other open issue(s) have no AI Context block" in first.summary
    digest = [i for i in gh.repos["o/r"].issues.values() if "ai-context:digest" in i.labels]
    assert len(digest) == 1 and ours(gh, digest[0].number)  # the digest had its room

    runs = 1
    while any(not ours(gh, n) for n in range(1, 13)):
        gh.reset_requests()
        later = dispatch(gh, tmp_path / str(runs + 1), **{"max-writes": "10"})
        assert later.code == 0, later.text
        assert len(writes(gh)) <= 10
        runs += 1
        assert runs < 8
    for n in range(1, 13):
        assert len(ours(gh, n)) == 1, n  # continued, never a second comment
        assert set(gh.issue("o/r", n).labels) == {"ai-context:invalid", "ai-context:incomplete"}
    gh.reset_requests()
    last = dispatch(gh, tmp_path / "last", **{"max-writes": "10"})
    assert last.outputs["writes-left"] == "0"
    assert [r.path for r in writes(gh) if "/comments" in r.path and r.method == "POST"] == []


def test_a_cap_smaller_than_a_tasks_writes_still_gets_there_one_write_at_a_time(
    gh: GitHubFake, tmp_path: Path
) -> None:
    for n in range(1, 4):
        gh.add_issue("o/r", f"Task {n}", INCOMPLETE, number=n)
    for run in range(1, 10):
        gh.reset_requests()
        result = dispatch(gh, tmp_path / str(run), jobs="check", **{"max-writes": "2"})
        assert result.code == 0, result.text
        assert len(writes(gh)) <= 2
        if result.outputs["writes-left"] == "0":
            break
    for n in range(1, 4):
        assert len(ours(gh, n)) == 1, n
        assert set(gh.issue("o/r", n).labels) == {"ai-context:invalid", "ai-context:incomplete"}


def test_max_writes_outside_its_range_is_refused_before_any_write(
    gh: GitHubFake, tmp_path: Path
) -> None:
    gh.add_issue("o/r", "Task", INCOMPLETE, number=1)
    result = dispatch(gh, tmp_path, **{"max-writes": "5000"})
    assert result.code == 2 and "max-writes" in result.stdout
    assert writes(gh) == []


def test_owners_are_mentioned_for_staleness_that_began_after_the_first_run(
    gh: GitHubFake, tmp_path: Path
) -> None:
    gh.add_issue("o/r", "Old and stale", block(T0 - timedelta(days=5)), number=1)
    gh.add_issue("o/r", "Fresh", block(T0 - timedelta(hours=1), actor="cc-ben"), number=2)

    first = dispatch(gh, tmp_path / "1")
    assert first.code == 0, first.text
    assert first.outputs["stale"] == "1"
    assert all("@ariel" not in body for body in ours(gh, 1))  # stale before we came: quiet

    later = T0 + timedelta(days=2)  # #2 went stale a day after the first run saw it
    second = dispatch(gh, tmp_path / "2", when=later)
    assert second.code == 0, second.text
    assert sum(body.count("@ben") for body in ours(gh, 2)) == 1
    assert all("@ariel" not in body for body in ours(gh, 1))
    third = dispatch(gh, tmp_path / "3", when=later + timedelta(hours=1))
    assert third.code == 0 and sum(body.count("@ben") for body in ours(gh, 2)) == 1


def test_mention_owners_all_mentions_tasks_stale_before_the_first_run(
    gh: GitHubFake, tmp_path: Path
) -> None:
    gh.add_issue("o/r", "Old and stale", block(T0 - timedelta(days=5)), number=1)
    result = dispatch(gh, tmp_path, **{"mention-owners": "all"})
    assert result.code == 0, result.text
    [sticky] = [b for b in ours(gh, 1) if b.startswith(MARKER)]
    assert sticky.count("@ariel") == 1


def test_a_task_whose_comment_predates_its_staleness_mentions_its_owner_on_an_issue_event(
    gh: GitHubFake, tmp_path: Path
) -> None:
    broken = block(T0 - timedelta(hours=2)).replace("- **Next step:**", "- Next:")
    gh.add_issue("o/r", "Task", broken, number=1)
    assert dispatch(gh, tmp_path / "1").code == 0
    assert len(ours(gh, 1)) == 1  # its sticky comment, from before it went stale
    gh.edit_issue("o/r", 1, body=block(T0 - timedelta(hours=2)))
    later = T0 + timedelta(days=2)
    assert dispatch(gh, tmp_path / "2", when=later).code == 0
    told = [b for b in ours(gh, 1) if b.startswith(MENTION_MARKER)]
    assert len(told) == 1 and "@ariel" in told[0]


def test_dry_run_prints_each_comment_and_the_diff_of_an_edit(
    gh: GitHubFake, tmp_path: Path
) -> None:
    gh.add_issue("o/r", "New finding", INCOMPLETE, number=1)
    gh.add_issue("o/r", "Changed finding", INCOMPLETE, number=2)
    assert dispatch(gh, tmp_path / "1", jobs="check").code == 0
    fewer = INCOMPLETE.replace("planning", "planning\n- **Files touched:** src/app.py")
    gh.edit_issue("o/r", 2, body=fewer)  # one finding less: an edit
    gh.add_issue("o/r", "Another", INCOMPLETE, number=3)
    gh.reset_requests()
    result = dispatch(gh, tmp_path / "2", jobs="check", **{"dry-run": "true"})
    assert result.code == 0, result.text
    assert writes(gh) == []
    out = result.stdout
    assert "[dry-run] would create comment on #3" in out
    assert f"| {MARKER}" in out  # the new comment's text, line by line
    assert "| | ❌ error |" in out
    edit = out.split("[dry-run] would edit comment", 1)[1]
    assert "| --- comment" in edit and "| +++ comment" in edit  # a unified diff
    assert "| -" in edit and "| +" in edit
    assert not any(line.startswith("::") for line in out.splitlines() if line.startswith("| "))


def test_a_run_stopped_by_a_403_reports_no_counts_and_asks_only_for_issues_write(
    gh: GitHubFake, tmp_path: Path
) -> None:
    gh.add_issue("o/r", "Task", INCOMPLETE, number=1)
    body = {"message": "Resource not accessible by integration"}
    gh.fail_next("POST", "/repos/{owner}/{repo}/issues/{number}/comments", status=403, body=body)
    result = dispatch(gh, tmp_path, jobs="check")
    assert result.code == 2
    assert result.outputs["findings"] == "" and result.outputs["errors"] == ""
    assert "`issues: write`" in result.stdout and "contents: write" not in result.stdout
