"""`ai-context mirror`: one issue, --all, --dry-run diffs, and the usage errors."""

from __future__ import annotations

import pytest

from ai_context.cli.main import main
from tests.conftest import SEED_BLOCK
from tests.fakes import ClickUpFake, GitHubFake

REPO = "acme/shop"
FIELD_POST = "/task/{task_id}/field/{field_id}"


@pytest.fixture
def fakes(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: object,
    github_fake: GitHubFake,
    clickup_fake: ClickUpFake,
) -> tuple[GitHubFake, ClickUpFake]:
    monkeypatch.chdir(tmp_path)  # type: ignore[arg-type]
    for name, value in {
        "GITHUB_TOKEN": "t",
        "GITHUB_API_URL": github_fake.url,
        "GITHUB_REPOSITORY": REPO,
        "CLICKUP_TOKEN": clickup_fake.token,
        "AI_CONTEXT_CLICKUP_API_URL": clickup_fake.url,
    }.items():
        monkeypatch.setenv(name, value)
    for name in ("GH_TOKEN", "AI_CONTEXT_DRY_RUN", "AI_CONTEXT_CLICKUP_TEAM_ID"):
        monkeypatch.delenv(name, raising=False)
    return github_fake, clickup_fake


def seed(gh: GitHubFake, cu: ClickUpFake) -> None:
    for n in (1, 2):
        body = f"{SEED_BLOCK}\n\nClickUp: https://app.clickup.com/t/tsk{n}\n"
        gh.add_issue(REPO, f"Task {n}", body, number=n)
        cu.add_task(f"t{n}", task_id=f"tsk{n}", values={"ai_context": "Plan: 1/5 done"})


def test_one_issue_is_mirrored(
    fakes: tuple[GitHubFake, ClickUpFake], capsys: pytest.CaptureFixture[str]
) -> None:
    gh, cu = fakes
    seed(gh, cu)
    assert main(["mirror", "1"]) == 0
    out = capsys.readouterr().out
    assert "#1 -> ClickUp tsk1: written" in out
    assert "ClickUp calls: 1 reads, 1 writes" in out
    assert "Plan: 2/5 done" in cu.value("tsk1") and cu.value("tsk2") == "Plan: 1/5 done"


def test_dry_run_all_prints_diffs_and_writes_nothing(
    fakes: tuple[GitHubFake, ClickUpFake], capsys: pytest.CaptureFixture[str]
) -> None:
    gh, cu = fakes
    seed(gh, cu)
    assert main(["mirror", "--all", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "[dry-run] would set ClickUp task tsk1 field ai_context from #1" in out
    assert "| --- ClickUp tsk1 (now)\n| +++ from #1\n" in out
    assert "| -Plan: 1/5 done\n" in out and "| +Plan: 2/5 done\n" in out
    assert "#2 -> ClickUp tsk2: would write" in out
    assert cu.count("POST", FIELD_POST) == 0


def test_findings_and_exit_codes(
    fakes: tuple[GitHubFake, ClickUpFake], capsys: pytest.CaptureFixture[str]
) -> None:
    gh, cu = fakes
    seed(gh, cu)
    cu.delete_task("tsk2")
    assert main(["mirror", "2"]) == 0
    assert "#2:19: AIC701 warning linked ClickUp task not found" in capsys.readouterr().out
    cu.add_field("901", "ai_context", field_id="f-dup")
    assert main(["mirror", "1"]) == 1
    assert "AIC702 error" in capsys.readouterr().out


@pytest.mark.parametrize(
    "case",
    [
        (["mirror"], None, "name issue numbers or pass --all"),
        (["mirror", "1", "--all"], None, "not both"),
        (["mirror", "1"], "CLICKUP_TOKEN", "set CLICKUP_TOKEN"),
        (["mirror", "1"], "GITHUB_TOKEN", "set GITHUB_TOKEN"),
        (["mirror", "99"], None, "check the issue numbers"),
    ],
)
def test_usage_errors_exit_2_and_say_what_to_do(
    fakes: tuple[GitHubFake, ClickUpFake],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    case: tuple[list[str], str | None, str],
) -> None:
    argv, unset, needle = case
    gh, cu = fakes
    seed(gh, cu)
    if unset:
        monkeypatch.delenv(unset)
    assert main(argv) == 2
    assert needle in capsys.readouterr().err
