"""Switches that mean what they say (issue 23, item 2): `digest: false` and a `jobs` list
without the digest post no digest and create no digest issue; the command line reads the
Action's config file (from any folder of the checkout, or `--config`), so `stale-after` and
the categories agree. The Action and `ai-context` run as processes against the loopback
GitHub."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ai_context.jobs.digest.delivery import DIGEST_TITLE
from ai_context.rules.digest.state import find_state
from ai_context.rules.lease import stamp
from tests.actionrun import scheduled
from tests.conftest import SEED_BLOCK, run_process
from tests.fakes import GitHubFake

ROOT = Path(__file__).resolve().parents[1]
T0 = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
NOW = {"AI_CONTEXT_NOW": stamp(T0)}
INCOMPLETE = "## AI Context\n\n- **Active actor:** cc-x\n- **Phase:** planning\n\nHuman notes."


@pytest.fixture
def gh() -> Iterator[GitHubFake]:
    with GitHubFake(now=T0) as fake:
        fake.add_repo("o/r")
        fake.add_issue("o/r", "Broken", INCOMPLETE, number=1)
        updated = stamp(T0 - timedelta(days=2))
        fake.add_issue("o/r", "Two days quiet", SEED_BLOCK.replace("2026-05-26T14:32:00Z", updated))
        yield fake


def titles(gh: GitHubFake) -> list[str]:
    return [i.title for i in gh.repos["o/r"].issues.values()]


def digest_comments(gh: GitHubFake) -> list[str]:
    return [
        c.body
        for n in gh.repos["o/r"].issues
        for c in gh.comments("o/r", n)
        if c.body.startswith("<!-- ai-context:digest ")
    ]


def test_digest_false_posts_no_digest_and_creates_no_digest_issue(
    gh: GitHubFake, tmp_path: Path
) -> None:
    result = scheduled(gh, tmp_path, "digest: false\n", env=NOW)
    assert result.code == 0, result.text
    assert digest_comments(gh) == [] and DIGEST_TITLE not in titles(gh)
    assert result.outputs["digest-url"] == ""
    assert "ai-context digest" not in result.stdout  # the job did not even start


@pytest.mark.parametrize("jobs", ["check,stale", "check,mirror,stale"])
def test_jobs_without_the_digest_post_no_digest_and_create_no_digest_issue(
    gh: GitHubFake, tmp_path: Path, jobs: str
) -> None:
    result = scheduled(gh, tmp_path, env=NOW, jobs=jobs)
    assert result.code == 0, result.text
    assert digest_comments(gh) == [] and DIGEST_TITLE not in titles(gh)


def test_an_empty_digest_issue_means_the_labelled_issue_as_documented(
    gh: GitHubFake, tmp_path: Path
) -> None:
    result = scheduled(gh, tmp_path, env=NOW, **{"digest-issue": ""})
    assert result.code == 0, result.text
    [carrier] = [i for i in gh.repos["o/r"].issues.values() if "ai-context:digest" in i.labels]
    assert carrier.title == DIGEST_TITLE and len(digest_comments(gh)) == 1
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    action = (ROOT / "action.yml").read_text(encoding="utf-8")
    for text in (readme, action):
        assert (
            "Empty means no digest comment" not in text and "Empty: no digest comment" not in text
        )


def cli(gh: GitHubFake, cwd: Path, *argv: str) -> Any:
    env = {
        "GITHUB_TOKEN": "t",
        "GITHUB_API_URL": gh.url,
        "GITHUB_REPOSITORY": "o/r",
        "NO_COLOR": "1",
    }
    done = run_process([*argv, "--now", stamp(T0), "--format", "json"], env, cwd)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def categories(digest: dict[str, Any]) -> dict[int, str]:
    return {t["number"]: c for c, tasks in digest["categories"].items() for t in tasks}


def test_the_command_line_reads_the_actions_config_from_any_folder_and_agrees_with_it(
    gh: GitHubFake, tmp_path: Path
) -> None:
    config = "stale-after: 3d\n"
    action = scheduled(gh, tmp_path / "run", config, env=NOW)
    assert action.code == 0, action.text
    [comment] = digest_comments(gh)
    posted = find_state(comment).state.tasks
    checkout = tmp_path / "checkout"
    (checkout / ".git").mkdir(parents=True)
    (checkout / ".github").mkdir()
    (checkout / ".github" / "ai-context.yml").write_text(config, encoding="utf-8")
    (checkout / "src" / "deep").mkdir(parents=True)
    digest = cli(gh, checkout / "src" / "deep", "digest")
    assert digest["stale_after_hours"] == 72
    assert categories(digest)[2] == "in_progress"  # two days quiet, stale after three
    assert categories(digest) == {n: task.category for (_, n), task in posted.items()}
    # --config names the file from anywhere else.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    named = cli(gh, elsewhere, "digest", "--config", str(checkout / ".github/ai-context.yml"))
    assert named["stale_after_hours"] == 72
