"""`digest`, `summary`, `status` and `report` as processes against the loopback GitHub."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SEED_BLOCK, run_process
from tests.fakes import GitHubFake

T0 = datetime(2026, 5, 26, 15, 0, tzinfo=UTC)
CONFIG = """\
repositories: [acme/api, acme/web]
actors:
  cc-ariel-laptop:
    owner: ariel
  cc-dana-desktop:
    owner: dana
"""


@pytest.fixture
def gh() -> Iterator[GitHubFake]:
    with GitHubFake(now=T0) as fake:
        fake.add_issue("acme/api", "Booking history", SEED_BLOCK, number=1)
        blocked = SEED_BLOCK.replace("- **Blockers:** none", "- **Blockers:**\n  - `IdP` metadata")
        fake.add_issue("acme/api", "SSO | login", blocked, number=2)
        dana = SEED_BLOCK.replace("cc-ariel-laptop", "cc-dana-desktop")
        fake.add_issue("acme/web", "Dark mode", dana, number=7)
        broken = dana.replace(
            "- **Next step:** Finish unit tests in booking.repository.spec.ts", ""
        )
        fake.add_issue("acme/web", "Half-written", broken, number=8)
        fake.add_issue("acme/web", "Just a question", "no block here", number=9)
        yield fake


def cli(gh: GitHubFake, cwd: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    config = cwd / ".github" / "ai-context.yml"
    if not config.exists():
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(CONFIG, encoding="utf-8")
    environ = {
        "GITHUB_TOKEN": "t",
        "GITHUB_API_URL": gh.url,
        "AI_CONTEXT_NOW": "2026-05-26T15:00:00Z",
        **env,
    }
    return run_process(list(argv), environ, cwd)


def data(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.stderr == "", done.stderr
    return json.loads(done.stdout)


def test_digest_reads_every_configured_repository(gh: GitHubFake, tmp_path: Path) -> None:
    done = cli(gh, tmp_path, "digest", "--format", "json")
    assert done.returncode == 0, done.stderr
    digest = data(done)
    assert digest["repositories"] == ["acme/api", "acme/web"]
    tasks = {(t["repository"], t["number"]) for c in digest["categories"].values() for t in c}
    assert tasks == {("acme/api", 1), ("acme/api", 2), ("acme/web", 7), ("acme/web", 8)}
    for stuck in digest["categories"]["stuck"]:
        assert "repo" not in stuck  # one name per key: `repository`
    # one listing of open issues and one of closed issues per repository, nothing more
    lists = [r for r in gh.requests if r.method == "GET" and r.path.endswith("/issues")]
    assert sorted(r.path for r in lists) == [
        "/repos/acme/api/issues",
        "/repos/acme/api/issues",
        "/repos/acme/web/issues",
        "/repos/acme/web/issues",
    ]


def test_repeated_repo_options_replace_the_config(gh: GitHubFake, tmp_path: Path) -> None:
    digest = data(cli(gh, tmp_path, "digest", "--repo", "acme/web", "--format", "json"))
    assert digest["repositories"] == ["acme/web"]


def test_the_terminal_format_is_plain_text(gh: GitHubFake, tmp_path: Path) -> None:
    done = cli(gh, tmp_path, "digest", "--repo", "acme/api")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("AI Context digest — Tuesday 26 May 2026\n")
    assert "#2 SSO | login" in done.stdout and "\\" not in done.stdout
    assert "\x1b[" not in done.stdout  # not a terminal: no colour
    md = cli(gh, tmp_path, "digest", "--repo", "acme/api", "--format", "md").stdout
    assert "SSO \\| login" in md


def test_summary_of_a_live_issue_by_url(gh: GitHubFake, tmp_path: Path) -> None:
    url = "https://github.com/acme/api/issues/2"
    task = data(cli(gh, tmp_path, "summary", url, "--format", "json"))
    assert (task["repository"], task["number"], task["category"]) == ("acme/api", 2, "stuck")
    assert task["age_seconds"] == 1680 and "age" not in task
    text = cli(gh, tmp_path, "summary", "#7", "--repo", "acme/web").stdout
    assert text.startswith("acme/web#7 Dark mode\n") and "Stuck" not in text

    other = cli(gh, tmp_path, "summary", url, "--repo", "acme/web", "--format", "json")
    assert other.returncode == 2
    assert json.loads(other.stdout)["error"] == (
        "the issue URL is in acme/api but --repo says acme/web"
    )


def test_status_by_actor_id_and_by_github_login(gh: GitHubFake, tmp_path: Path) -> None:
    [mine] = data(cli(gh, tmp_path, "status", "cc-ariel-laptop", "--format", "json"))
    assert [e["number"] for e in mine["entries"]] == [2, 1]  # stuck first
    assert mine["entries"][0]["age_seconds"] == 1680 and "age" not in mine["entries"][0]
    [hers] = data(cli(gh, tmp_path, "status", "dana", "--format", "json"))
    assert hers["login"] == "dana" and [e["number"] for e in hers["entries"]] == [8, 7]
    env = cli(gh, tmp_path, "status", "--format", "json", AI_CONTEXT_ACTOR="cc-dana-desktop")
    assert [p["actor"] for p in data(env)] == ["cc-dana-desktop"]


def test_report_shows_titles_and_fails_on_errors(gh: GitHubFake, tmp_path: Path) -> None:
    done = cli(gh, tmp_path, "report")
    assert done.returncode == 1, done.stderr
    assert "acme/web#8  Half-written" in done.stdout and "AIC201" in done.stdout
    assert "Just a question" not in done.stdout  # not a task
    rows = data(cli(gh, tmp_path, "report", "--repo", "acme/api", "--format", "json"))
    found = sorted((r["repository"], r["number"], r["title"]) for r in rows)
    assert found == [("acme/api", 1, "Booking history"), ("acme/api", 2, "SSO | login")]


def test_no_repository_and_no_token_are_usage_errors(gh: GitHubFake, tmp_path: Path) -> None:
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "ai-context.yml").write_text("{}\n", encoding="utf-8")
    done = cli(gh, tmp_path, "digest")
    assert done.returncode == 2 and "pass --repo OWNER/NAME" in done.stderr
    done = cli(gh, tmp_path, "digest", "--repo", "acme/api", GITHUB_TOKEN="")
    assert done.returncode == 2 and "GITHUB_TOKEN" in done.stderr
    done = cli(gh, tmp_path, "summary", "99", "--repo", "acme/api")
    assert done.returncode == 2 and "acme/api" in done.stderr


def test_github_down_exits_3_with_one_line(gh: GitHubFake, tmp_path: Path) -> None:
    done = cli(
        gh,
        tmp_path,
        "digest",
        "--repo",
        "acme/api",
        GITHUB_API_URL="http://127.0.0.1:9",
        AI_CONTEXT_HTTP_RETRIES="0",
    )
    assert done.returncode == 3
    assert done.stderr.startswith("ai-context: acme/api: ") and "Traceback" not in done.stderr


def test_the_live_digest_compares_with_the_posted_one(gh: GitHubFake, tmp_path: Path) -> None:
    from ai_context.rules.digest.model import DigestState, TaskState
    from ai_context.rules.digest.state import state_line

    yesterday = DigestState(
        generated_at=datetime(2026, 5, 25, 9, 0, tzinfo=UTC),
        tasks={("acme/api", 1): TaskState(category="stuck", done=0)},
    )
    gh.add_issue("acme/api", "Digest", "", number=50, labels=["ai-context:digest"])
    body = f"<!-- ai-context:digest 2026-05-25 -->\nold digest\n\n{state_line(yesterday)}\n"
    gh.add_comment("acme/api", 50, body, user="github-actions[bot]")
    digest = data(cli(gh, tmp_path, "digest", "--repo", "acme/api", "--format", "json"))
    assert digest["previous"]["status"] == "restored"
    assert digest["previous"]["generated_at"] == "2026-05-25T09:00:00Z"
    changes = {c["number"]: c for c in digest["changes"]}
    assert changes[1]["moved_from"] == "stuck" and changes[2]["new"]
    assert digest["deltas"]["stuck"] == 0 and digest["deltas"]["in_progress"] == 1
