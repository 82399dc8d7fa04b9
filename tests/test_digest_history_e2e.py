"""The digest over time and over repositories (issue 23, items 5 and 6): each repository is
compared with its own previous digest, the command line and the Action put the same tasks in
the same categories, and `digest --since 7d` reads a week of digests back into trends. Daily
runs of the Action and `ai-context digest` as processes against the loopback GitHub."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ai_context.rules.digest.state import find_state
from ai_context.rules.lease import stamp
from tests.actionrun import ActionRun, run_action
from tests.conftest import SEED_BLOCK, run_process
from tests.fakes import GitHubFake

ROOT = Path(__file__).resolve().parents[1]
DAY0 = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
REPOS = ("acme/shop", "acme/widgets", "acme/infra")


def block(when: datetime, *, blocker: str = "", phase: str = "implementing") -> str:
    text = SEED_BLOCK.replace("2026-05-26T14:32:00Z", stamp(when - timedelta(hours=1)))
    text = text.replace("implementing (chunk 3 of 5)", phase)
    return text.replace("- **Blockers:** none", f"- **Blockers:** {blocker or 'none'}")


@pytest.fixture
def gh() -> Iterator[GitHubFake]:
    with GitHubFake(now=DAY0) as fake:
        yield fake


def daily(gh: GitHubFake, tmp: Path, repo: str, when: datetime, config: str = "") -> ActionRun:
    gh.clock.set(when)
    (tmp / "workspace" / ".github").mkdir(parents=True)
    (tmp / "workspace" / ".github" / "ai-context.yml").write_text(config, encoding="utf-8")
    result = run_action(
        tmp, gh.url, "schedule", {}, repository=repo, extra_env={"AI_CONTEXT_NOW": stamp(when)}
    )
    assert result.code == 0, result.text
    return result


def cli(gh: GitHubFake, cwd: Path, when: datetime, *argv: str) -> Any:
    env = {"GITHUB_TOKEN": "t", "GITHUB_API_URL": gh.url}
    done = run_process(["digest", *argv, "--now", stamp(when)], env, cwd)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_each_repository_is_compared_with_its_own_previous_digest(
    gh: GitHubFake, tmp_path: Path
) -> None:
    for n, repo in enumerate(REPOS):
        gh.add_repo(repo)
        for k in range(1, 4):
            gh.add_issue(repo, f"{repo} task {k}", block(DAY0), number=10 * n + k)
        daily(gh, tmp_path / repo.replace("/", "-"), repo, DAY0)  # each its own digest
    today = DAY0 + timedelta(days=1)
    for n, repo in enumerate(REPOS):
        for k in range(1, 4):
            gh.edit_issue(repo, 10 * n + k, body=block(today))
    gh.edit_issue("acme/infra", 21, body=block(today, blocker="waiting for the vendor"))
    args = [x for repo in REPOS for x in ("--repo", repo)]
    digest = cli(gh, tmp_path, today, *args, "--format", "json")
    assert not [c for c in digest["changes"] if c["new"]]  # all nine were in yesterday's
    [moved] = digest["changes"]
    assert (moved["repository"], moved["number"], moved["moved_from"]) == (
        "acme/infra",
        21,
        "in_progress",
    )
    assert digest["deltas"] == {"shipped": 0, "in_review": 0, "in_progress": -1, "stuck": 1}


def test_the_command_line_and_the_action_agree_on_categories(
    gh: GitHubFake, tmp_path: Path
) -> None:
    for n, repo in enumerate(REPOS):
        gh.add_repo(repo)
        gh.add_issue(repo, "Quiet two days", block(DAY0 - timedelta(days=2)), number=n + 1)
        gh.add_issue(repo, "Fresh", block(DAY0), number=n + 10)
    config = "stale-after: 3d\nrepositories: [acme/shop, acme/widgets, acme/infra]\n"
    daily(gh, tmp_path / "action", "acme/shop", DAY0, config)
    [carrier] = [
        i for i in gh.repos["acme/shop"].issues.values() if "ai-context:digest" in i.labels
    ]
    [comment] = gh.comments("acme/shop", carrier.number)
    posted = {key: t.category for key, t in find_state(comment.body).state.tasks.items()}
    (tmp_path / "cli.yml").write_text(config, encoding="utf-8")
    # The same repositories, read by the command line (the config's list, or --repo each).
    args = [x for repo in REPOS for x in ("--repo", repo)]
    digest = cli(
        gh,
        tmp_path,
        DAY0,
        *args,
        "--config",
        str(tmp_path / "cli.yml"),
        "--format",
        "json",
    )
    listed = {
        (t["repository"], t["number"]): c for c, ts in digest["categories"].items() for t in ts
    }
    assert listed == posted and set(listed.values()) == {"in_progress"}


def test_digest_since_a_week_reads_the_weeks_digests_into_trends(
    gh: GitHubFake, tmp_path: Path
) -> None:
    gh.add_repo("acme/shop")
    add = gh.add_issue
    add("acme/shop", "Stuck all week", block(DAY0, blocker="vendor keys"), number=1)
    add("acme/shop", "Stuck two days", block(DAY0), number=2)
    add("acme/shop", "Shipped on day five", block(DAY0), number=3)
    for day in range(7):
        when = DAY0 + timedelta(days=day)
        gh.clock.set(when)
        gh.edit_issue("acme/shop", 1, body=block(when, blocker="vendor keys"))
        gh.edit_issue("acme/shop", 2, body=block(when, blocker="CI down" if day in (2, 3) else ""))
        if day < 5:
            gh.edit_issue("acme/shop", 3, body=block(when))
        elif day == 5:
            gh.edit_issue(
                "acme/shop",
                3,
                body=block(when, phase="done"),
                state="closed",
                state_reason="completed",
            )
        daily(gh, tmp_path / f"day{day}", "acme/shop", when)
    week_on = DAY0 + timedelta(days=7)
    gh.edit_issue("acme/shop", 1, body=block(week_on, blocker="vendor keys"))
    gh.edit_issue("acme/shop", 2, body=block(week_on))
    out = cli(gh, tmp_path, week_on, "--repo", "acme/shop", "--since", "7d", "--format", "json")
    trends = out["trends"]
    assert trends["shipped"] == 1
    assert trends["median_first_block_to_done_seconds"] == 5 * 86400
    stuck = {s["number"]: s["stuck_seconds"] for s in trends["stuck"]}
    assert stuck == {1: 7 * 86400, 2: 2 * 86400}
    assert [t["number"] for t in trends["stuck_all_period"]] == [1]
    assert out["window_hours"] == 7 * 24  # shipped within the week
    text = subprocess.run(
        [
            sys.executable,
            "-m",
            "ai_context",
            "digest",
            "--repo",
            "acme/shop",
            "--since",
            "7d",
            "--now",
            stamp(week_on),
        ],
        capture_output=True,
        text=True,
        env={
            "PATH": os.environ.get("PATH", ""),
            "PYTHONPATH": str(ROOT / "src"),
            "GITHUB_TOKEN": "t",
            "GITHUB_API_URL": gh.url,
            "NO_COLOR": "1",
        },
        timeout=120,
        check=False,
    ).stdout
    assert "shipped: 1 (median 5d from the first block to done)" in text
    assert "stuck all period: #1 Stuck all week" in text
