"""The runner's environment, checked before the first write (issue 15, item 5): a bad
GITHUB_API_URL (the Action's and every CLI command's) and a GITHUB_OUTPUT in a missing
folder are exit 2 with a message naming the variable, never a traceback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ai_context.adapters.github import GitHub, GitHubConfigError, url_problem
from ai_context.core.errors import Exit
from ai_context.core.secret import Secret
from tests.actionrun import ActionRun, run_action
from tests.conftest import run_process
from tests.fakes import GitHubFake
from tests.test_action_e2e import INCOMPLETE, T0, TOKEN, issue_event


@pytest.fixture
def gh() -> Iterator[GitHubFake]:
    with GitHubFake(token=TOKEN, now=T0) as fake:
        fake.add_repo("o/r")
        fake.add_issue("o/r", "Task", INCOMPLETE, number=3)
        yield fake


def error_line(run: ActionRun) -> str:
    [line] = [x for x in run.stdout.splitlines() if x.startswith("::error")]
    return line.split("::", 2)[2]


@pytest.mark.parametrize(
    ("api_url", "says"),
    [
        ("not a url", "environment variable GITHUB_API_URL: 'not a url' is not an http(s) URL"),
        ("ftp://x", "environment variable GITHUB_API_URL: 'ftp://x' is not an http(s) URL"),
        ("http://x:port", "environment variable GITHUB_API_URL: 'http://x:port' is not a URL"),
    ],
)
def test_a_bad_api_url_is_exit_2_naming_the_variable(
    gh: GitHubFake, tmp_path: Path, api_url: str, says: str
) -> None:
    payload = issue_event(gh, 3, changes={"body": {"from": "old"}})
    run = run_action(tmp_path, api_url, "issues", payload, token=TOKEN)
    assert run.code == 2, run.stdout + run.stderr
    assert error_line(run).startswith(says)
    assert "Traceback" not in run.stderr
    assert gh.count() == 0 and gh.comments("o/r", 3) == []


@pytest.mark.parametrize("name", ["GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"])
def test_a_runner_file_in_a_missing_folder_is_exit_2_before_any_write(
    gh: GitHubFake, tmp_path: Path, name: str
) -> None:
    payload = issue_event(gh, 3, changes={"body": {"from": "old"}})
    missing = tmp_path / "no-such-folder" / "file.txt"
    run = run_action(
        tmp_path, gh.url, "issues", payload, token=TOKEN, extra_env={name: str(missing)}
    )
    assert run.code == 2, run.stdout + run.stderr
    assert error_line(run).startswith(f"environment variable {name} points into a missing folder")
    assert "Traceback" not in run.stderr
    assert gh.count() == 0 and gh.comments("o/r", 3) == []


def test_the_cli_is_exit_2_naming_the_variable(gh: GitHubFake, tmp_path: Path) -> None:
    env = {"GITHUB_TOKEN": TOKEN, "GITHUB_API_URL": "ftp://x"}
    proc = run_process(["claim", "3", "--actor", "cc-a", "--repo", "o/r"], env, tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[0] == (
        "ai-context: environment variable GITHUB_API_URL: 'ftp://x' is not an http(s) URL like "
        "https://api.github.com"
    )
    assert gh.count() == 0


@pytest.mark.parametrize(
    "url", ["ftp://x", "not a url", "https://", "http://x:abc", "https://api.github.com /x"]
)
def test_the_adapter_refuses_a_url_it_cannot_use(url: str) -> None:
    assert url_problem(url) is not None
    with pytest.raises(GitHubConfigError, match="environment variable GITHUB_API_URL: ") as caught:
        GitHub(Secret("t"), "o/r", api_url=url)
    assert caught.value.exit_code == Exit.USAGE


@pytest.mark.parametrize(
    "url", ["https://api.github.com", "http://127.0.0.1:8080", "https://ghe.example.com/api/v3"]
)
def test_the_adapter_takes_real_api_urls(url: str) -> None:
    assert url_problem(url) is None
    GitHub(Secret("t"), "o/r", api_url=url)  # lazy: no request is made
