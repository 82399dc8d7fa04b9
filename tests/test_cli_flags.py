"""One command line: every command names an issue as `12`, `#12` or its URL, a repository with
--repo, and with `--format json` reports an error as a JSON object with its exit code."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import SEED_BLOCK, run_cli, run_process
from tests.fakes import ClickUpFake, GitHubFake

REPO = "acme/shop"
URL = f"https://github.com/{REPO}/issues/1"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def gh(github_fake: GitHubFake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitHubFake:
    github_fake.add_issue(REPO, "Booking history", SEED_BLOCK + "\n\nHuman text.\n")
    for name in list(os.environ):
        if name.startswith(("INPUT_", "AI_CONTEXT_", "GITHUB_", "GH_", "CLICKUP_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("GITHUB_TOKEN", "t")
    monkeypatch.setenv("GITHUB_API_URL", github_fake.url)
    monkeypatch.setenv("AI_CONTEXT_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    return github_fake


# Every command that talks to GitHub about one issue: (argv with ISSUE, stdin, expected exit).
GITHUB_COMMANDS = {
    "save": (["save", "ISSUE", "--actor", "cc-ariel-laptop"], SEED_BLOCK, 0),
    "resume": (["resume", "ISSUE", "--actor", "cc-ariel-laptop"], "", 0),
    "handoff": (["handoff", "ISSUE", "--to", "cc-noa", "--actor", "cc-ariel-laptop"], "", 0),
    "done": (["done", "ISSUE", "--actor", "cc-ariel-laptop"], "", 0),
    "claim": (["claim", "ISSUE", "--actor", "cc-a"], "", 0),
    "renew": (["renew", "ISSUE", "--actor", "cc-a"], "", 4),  # no lease yet: nothing to renew
    "release": (["release", "ISSUE", "--actor", "cc-a"], "", 0),
    "who": (["who", "ISSUE"], "", 0),
}


def _with(argv: list[str], issue: str) -> list[str]:
    return [issue if a == "ISSUE" else a for a in argv]


@pytest.mark.parametrize("command", sorted(GITHUB_COMMANDS))
@pytest.mark.parametrize("issue", ["1", "#1", URL])
def test_every_github_command_takes_a_number_a_hash_or_a_url(
    gh: GitHubFake, monkeypatch: pytest.MonkeyPatch, command: str, issue: str
) -> None:
    argv, stdin, expected = GITHUB_COMMANDS[command]
    if issue != URL:
        monkeypatch.setenv("GITHUB_REPOSITORY", REPO)  # a URL names its repository itself
    if command in ("save", "handoff", "done"):  # the write guard: this machine reads it first
        assert run_cli(_with(GITHUB_COMMANDS["resume"][0], issue))[0] == 0
    code, out, err = run_cli([*_with(argv, issue), "--format", "json"], stdin)
    assert code == expected, err
    data = json.loads(out)
    assert data["issue"] == 1


@pytest.mark.parametrize("command", sorted(GITHUB_COMMANDS))
def test_an_issue_url_in_another_repository_than_repo_is_refused(
    gh: GitHubFake, command: str
) -> None:
    argv, stdin, _ = GITHUB_COMMANDS[command]
    code, out, err = run_cli([*_with(argv, URL), "--repo", "o/r", "--format", "json"], stdin)
    assert code == 2
    assert err == "ai-context: the issue URL is in acme/shop but --repo says o/r\n"
    assert json.loads(out) == {
        "error": "the issue URL is in acme/shop but --repo says o/r",
        "exit": 2,
    }
    assert gh.requests == []  # refused before a single call


@pytest.mark.parametrize("command", sorted(GITHUB_COMMANDS))
def test_json_errors_carry_the_exit_code_of_their_kind(
    gh: GitHubFake, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    argv, stdin, _ = GITHUB_COMMANDS[command]
    monkeypatch.setenv("GITHUB_REPOSITORY", REPO)
    # A parse error (exit 2) is JSON too, read before the parser knows the command's flags.
    code, out, err = run_cli([*_with(argv, "twelve"), "--format", "json"], stdin)
    assert code == 2 and "'twelve' is not an issue number" in err
    assert json.loads(out)["exit"] == 2
    # A service failure (exit 3): GitHub answers every read with a status it does not retry.
    gh.fail_next("GET", "*", status=418, times=None)
    code, out, err = run_cli([*_with(argv, "1"), "--format", "json"], stdin)
    gh.clear_faults()
    assert code == 3, err
    data = json.loads(out)
    assert data["exit"] == 3 and "GitHub" in data["error"] and err.startswith("ai-context: ")
    assert not [r for r in gh.requests if r.method != "GET"]  # nothing written


def test_json_error_of_a_conflict_kind_exits_4(gh: GitHubFake) -> None:
    sha = gh.create_commit(REPO, "not a lease", tree="4b825dc642cb6eb9a060e54bf8d69288fbee4904")
    gh.set_ref(REPO, "refs/ai-context/leases/1", sha)
    code, out, err = run_cli(["who", "#1", "--repo", REPO, "--format", "json"])
    assert code == 4 and "is not a lease" in err
    assert json.loads(out)["exit"] == 4


def test_actor_comes_from_the_environment_and_is_checked(
    gh: GitHubFake, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_REPOSITORY", REPO)
    code, out, err = run_cli(["claim", "1"])
    assert code == 2 and err == "ai-context: which actor? pass --actor ID or set AI_CONTEXT_ACTOR\n"
    monkeypatch.setenv("AI_CONTEXT_ACTOR", "cc-env")
    code, out, _ = run_cli(["claim", "1", "--format", "json"])
    assert code == 0 and json.loads(out)["actor"] == "cc-env"


def test_derive_takes_a_number_a_hash_or_a_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_REPOSITORY", raising=False)
    repo = tmp_path / "r"
    git = ["git", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "remote", "add", "origin", f"https://github.com/{REPO}.git"], check=True)
    (repo / "a.txt").write_text("a", encoding="utf-8")
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run(
        [*git, "-c", "user.name=a", "-c", "user.email=a@x", "commit", "-qm", "Fix #1"], check=True
    )
    for issue in ("1", "#1", URL):
        code, out, err = run_cli(["derive", issue, "--checkout", str(repo), "--format", "json"])
        assert code == 0, err
        data = json.loads(out)
        assert data["issue"] == 1 and len(data["git"]["commits"]) == 1
    code, out, err = run_cli(["derive", URL, "--checkout", str(repo), "--repo", "o/r"])
    assert code == 2 and "the issue URL is in acme/shop but --repo says o/r" in err


@pytest.mark.parametrize("issue", ["1", "#1", URL])
def test_mirror_takes_a_number_a_hash_or_a_url(
    gh: GitHubFake, clickup_fake: ClickUpFake, monkeypatch: pytest.MonkeyPatch, issue: str
) -> None:
    clickup_fake.add_task("t1", task_id="tsk1", values={"ai_context": "old"})
    gh.edit_issue(REPO, 1, body=SEED_BLOCK + "\n\nClickUp: https://app.clickup.com/t/tsk1\n")
    monkeypatch.setenv("CLICKUP_TOKEN", clickup_fake.token)
    monkeypatch.setenv("CLICKUP_API_URL", clickup_fake.url)
    if issue != URL:
        monkeypatch.setenv("GITHUB_REPOSITORY", REPO)
    code, out, err = run_cli(["mirror", issue, "--format", "json"])
    assert code == 0, err
    data = json.loads(out)
    assert [(i["issue"], i["result"]) for i in data["items"]] == [(1, "written")]
    assert "Plan: 2/5 done" in clickup_fake.value("tsk1")


def test_mirror_json_error(gh: GitHubFake, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_REPOSITORY", REPO)
    code, out, err = run_cli(["mirror", "1", "--format", "json"])
    assert code == 2 and "set CLICKUP_TOKEN" in err
    assert json.loads(out)["exit"] == 2


def test_validate_json_error(tmp_path: Path) -> None:
    code, out, err = run_cli(["validate", str(tmp_path / "nope.md"), "--format=json"])
    message = f"{tmp_path}/nope.md: no such file"
    assert code == 2 and err == f"ai-context: {message}\n"
    assert json.loads(out) == {"error": message, "exit": 2}


def _bare(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """`python -m ai_context ARGV` in a runner's environment with an event that would run."""
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"action": "opened", "issue": {"number": 1}}), encoding="utf-8")
    output = tmp_path / "output.txt"
    env = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "issues",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_API_URL": "http://127.0.0.1:9",  # nothing listens (the event needs no call)
        "GITHUB_OUTPUT": str(output),
        "INPUT_GITHUB-TOKEN": "t",
    }
    return run_process(argv, env, tmp_path)


def test_a_bare_ai_context_prints_help_even_inside_github_actions(tmp_path: Path) -> None:
    done = _bare(tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("usage: ai-context")
    assert "action" in done.stderr and "GITHUB_API_URL" in done.stderr
    assert done.stdout == ""
    assert not (tmp_path / "output.txt").exists()  # the Action did not run


def test_ai_context_action_runs_the_action(tmp_path: Path) -> None:
    done = _bare(tmp_path, "action")
    assert done.returncode == 0, done.stderr
    assert "ai-context: API calls:" in done.stdout  # the Action's last log line
    assert (tmp_path / "output.txt").exists()  # and its outputs


def test_digest_reads_a_directory_by_one_flag_only(tmp_path: Path) -> None:
    """`--issues-dir` is the flag; the `--source` spelling was dropped before any release."""
    code, _, err = run_cli(["digest", "--source", str(tmp_path)])
    assert code == 2 and "--source" in err
