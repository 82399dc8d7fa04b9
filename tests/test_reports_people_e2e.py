"""Reports about people and outcomes (issue 23, item 4): every report names the owner (an
assignee, else `actors.<id>.owner`) beside the actor id; `status LOGIN` works from assignees;
Shipped links the pull request and lists the follow-ups `done` recorded; Stuck reads by
severity then age, its Why in words; `--actor`, `--owner`, `--label`; `report` counts the
issues without a block and speaks Markdown; `summary` takes an issue's URL. `ai-context` runs
as a process against the loopback GitHub."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ai_context.rules.lease import stamp
from tests.conftest import SEED_BLOCK, run_process
from tests.fakes import GitHubFake

ROOT = Path(__file__).resolve().parents[1]
REPO = "acme/widgets"
NOW = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
PR = f"https://github.com/{REPO}/pull/9"


def block(actor: str, hours_ago: float = 1, **swap: str) -> str:
    text = SEED_BLOCK.replace("2026-05-26T14:32:00Z", stamp(NOW - timedelta(hours=hours_ago)))
    text = text.replace("cc-ariel-laptop", actor)
    for old, new in swap.items():
        text = text.replace(old.replace("_", " "), new)
    return text


DONE = (
    block("cc-bob-laptop", 2)
    .replace("implementing (chunk 3 of 5)", "done")
    .replace("(in progress)", "(done)")
    .replace("(pending)", "(skipped)")
    + f"\n- **Shipped:** the checkout\n- **Pull request:** {PR}\n- **Follow-ups:**\n"
    "  - Add a metric for failed payments\n  - Remove the old flag\n"
)


@pytest.fixture
def gh() -> Iterator[GitHubFake]:
    with GitHubFake(now=NOW) as fake:
        fake.add_repo(REPO)
        add = fake.add_issue
        add(REPO, "Checkout", block("cc-bob-laptop"), number=1, assignees=["bob"])
        add(REPO, "Search", block("codex-bob"), number=2)
        add(REPO, "Payments", DONE, number=3, assignees=["bob"], state="closed")
        add(REPO, "Old quiet one", block("cc-bob-laptop", 72), number=4, assignees=["bob"])
        blocked = block("cc-carol", 5).replace("- **Blockers:** none", "- **Blockers:** keys")
        add(REPO, "Vendor keys", blocked, number=5, assignees=["carol"])
        broken = block("cc-bob-laptop", 3).replace("- **Next step:**", "- Next:")
        add(REPO, "Half a block", broken, number=6, assignees=["bob"])
        add(REPO, "A plain issue", "Just words.", number=7)
        add(REPO, "ai-context daily digest", "", number=90, labels=["ai-context:digest"])
        add(REPO, "Buttons", block("cc-carol"), number=8, assignees=["carol"], labels=["frontend"])
        yield fake


def cli(gh: GitHubFake, tmp: Path, *argv: str, repository: str | None = REPO) -> Any:
    env = {"GITHUB_TOKEN": "t", "GITHUB_API_URL": gh.url, "NO_COLOR": "1"}
    if repository:
        env["GITHUB_REPOSITORY"] = repository
    return run_process([*argv, "--now", stamp(NOW)], env, tmp)


def numbers(digest: dict[str, Any], category: str | None = None) -> list[int]:
    cats = [category] if category else list(digest["categories"])
    return [t["number"] for c in cats for t in digest["categories"][c]]


def test_the_digest_names_owners_links_prs_and_reads_stuck_by_severity_then_age(
    gh: GitHubFake, tmp_path: Path
) -> None:
    done = cli(gh, tmp_path, "digest", "--format", "md")
    assert done.returncode == 0, done.stderr
    md = done.stdout
    stuck = md.split("### 🔴 Stuck", 1)[1].split("###", 1)[0]
    rows = [line for line in stuck.splitlines() if line.startswith("| ") and "#" in line]
    assert ["#6" in rows[0], "#5" in rows[1], "#4" in rows[2]] == [True, True, True]
    assert rows[0].startswith("| required field 'Next step' is missing or empty (AIC201, line")
    assert rows[2].startswith("| no update for over 1d (stale) |")
    assert rows[2].count("3d") == 1  # the age once, in its own column
    assert "| bob (cc-bob-laptop) |" in rows[0] and "| carol (cc-carol) |" in rows[1]
    shipped = md.split("### 🟢 Shipped", 1)[1]
    assert f"[\\#9]({PR})" in shipped
    assert "Add a metric for failed payments; Remove the old flag" in shipped

    data = json.loads(cli(gh, tmp_path, "digest", "--format", "json").stdout)
    [payments] = data["categories"]["shipped"]
    assert payments["owners"] == ["bob"] and payments["pull_request"] == PR
    assert payments["followups"] == ["Add a metric for failed payments", "Remove the old flag"]
    text = cli(gh, tmp_path, "digest").stdout
    assert "bob (cc-bob-laptop)" in text and f"pull request: {PR}" in text


def test_status_of_a_login_works_from_assignees_without_an_actors_map(
    gh: GitHubFake, tmp_path: Path
) -> None:
    done = cli(gh, tmp_path, "status", "bob", "--format", "json")
    assert done.returncode == 0, done.stderr
    [plate] = json.loads(done.stdout)
    assert sorted(e["number"] for e in plate["entries"]) == [1, 3, 4, 6]
    assert cli(gh, tmp_path, "status", "bob").stdout.startswith("bob: 4 tasks")


def test_an_actors_owner_stands_in_for_a_missing_assignee(gh: GitHubFake, tmp_path: Path) -> None:
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "ai-context.yml").write_text(
        "actors:\n  codex-bob:\n    owner: bob\n", encoding="utf-8"
    )
    data = json.loads(cli(gh, tmp_path, "digest", "--format", "json").stdout)
    search = next(t for c in data["categories"].values() for t in c if t["number"] == 2)
    assert search["owners"] == ["bob"]
    [plate] = json.loads(cli(gh, tmp_path, "status", "bob", "--format", "json").stdout)
    assert 2 in [e["number"] for e in plate["entries"]]


def test_summary_takes_an_issue_url_and_shows_owner_pr_and_follow_ups(
    gh: GitHubFake, tmp_path: Path
) -> None:
    url = f"https://github.com/{REPO}/issues/3"
    done = cli(gh, tmp_path, "summary", url, repository=None)
    assert done.returncode == 0, done.stderr
    assert "Owner:        bob" in done.stdout
    assert f"Pull request: {PR}" in done.stdout
    assert "Follow-ups:   Add a metric for failed payments; Remove the old flag" in done.stdout
    md = cli(gh, tmp_path, "summary", url, "--format", "md", repository=None).stdout
    assert "**Owner:** bob" in md and "**Follow-ups:**" in md and PR in md


def test_filters_by_actor_owner_and_label(gh: GitHubFake, tmp_path: Path) -> None:
    def only(*flags: str) -> list[int]:
        done = cli(gh, tmp_path, "digest", "--format", "json", *flags)
        assert done.returncode == 0, done.stderr
        return sorted(numbers(json.loads(done.stdout)))

    assert only("--owner", "carol") == [5, 8]
    assert only("--label", "frontend") == [8]
    assert only("--actor", "cc-carol", "--label", "frontend") == [8]
    assert only("--actor", "codex-bob") == [2]
    assert only("--owner", "bob", "--owner", "carol") == [1, 3, 4, 5, 6, 8]
    report = cli(gh, tmp_path, "report", "--owner", "carol", "--format", "json")
    assert sorted(r["number"] for r in json.loads(report.stdout)) == [5, 8]


def test_report_rows_name_each_key_once(gh: GitHubFake, tmp_path: Path) -> None:
    [row] = json.loads(
        cli(gh, tmp_path, "report", "--label", "frontend", "--format", "json").stdout
    )
    assert list(row) == [
        *("repository", "number", "title", "url", "state", "owners"),
        *("complete", "block", "findings"),
    ]
    assert (row["number"], row["owners"], row["complete"]) == (8, ["carol"], True)


def test_report_counts_issues_without_a_block_worst_first_and_speaks_markdown(
    gh: GitHubFake, tmp_path: Path
) -> None:
    done = cli(gh, tmp_path, "report", "--format", "md")
    assert done.returncode == 1  # a block with errors
    lines = done.stdout.splitlines()
    rows = [line for line in lines if line.startswith("| [")]
    assert "#6" in rows[0]  # the errors first
    assert "| bob (cc-bob-laptop) |" in rows[0]
    assert "1 open issues without an AI Context block (not tasks: not checked)" in done.stdout
    text = cli(gh, tmp_path, "report").stdout
    assert text.index("#6") < text.index("#1 ")
