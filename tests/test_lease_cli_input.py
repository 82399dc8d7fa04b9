"""Lease commands on bad input (issue 15): exit 2, the first line says what was wrong, and
nothing is written (no commit, no ref)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.fakes import GitHubFake

REPO = "o/r"


@pytest.fixture
def gh(github_fake: GitHubFake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitHubFake:
    github_fake.add_issue(REPO, "Task", "", number=6)
    for name in list(os.environ):
        if name.startswith(("INPUT_", "AI_CONTEXT_", "GITHUB_", "GH_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("GITHUB_TOKEN", "t")
    monkeypatch.setenv("GITHUB_REPOSITORY", REPO)
    monkeypatch.setenv("GITHUB_API_URL", github_fake.url)
    monkeypatch.chdir(tmp_path)
    return github_fake


def nothing_written(gh: GitHubFake) -> bool:
    return not [r for r in gh.requests if r.method != "GET"] and not gh.repos[REPO].refs


def test_claim_on_an_issue_that_does_not_exist_writes_nothing(gh: GitHubFake) -> None:
    code, out, err = run_cli(["claim", "999", "--actor", "cc-a"])
    assert code == 2 and out == ""
    assert err.splitlines()[0] == (
        "ai-context: no issue #999 in o/r: check the number and the repository; "
        "no lease was written"
    )
    assert nothing_written(gh)
    assert gh.count("GET", "/repos/{owner}/{repo}/issues/{number}") == 1  # one GET


def test_claim_checks_the_issue_only_when_it_would_write(gh: GitHubFake) -> None:
    assert run_cli(["claim", "6", "--actor", "cc-a"])[0] == 0
    gh.reset_requests()
    code, out, _ = run_cli(["claim", "6", "--actor", "cc-b", "--format", "json"])
    assert code == 4 and json.loads(out)["calls"] == 2  # held: read ref and commit, no GET


@pytest.mark.parametrize(
    ("ttl", "first_line"),
    [
        ("0", "ai-context: --ttl 0m is out of range: a lease lasts from 1m to 30d"),
        ("99999d", "ai-context: --ttl 99999d is out of range: a lease lasts from 1m to 30d"),
        ("31d", "ai-context: --ttl 31d is out of range: a lease lasts from 1m to 30d"),
        ("=-1h", "ai-context: claim: argument --ttl: cannot read duration '-1h'"),
    ],
)
def test_claim_ttl_out_of_range_is_exit_2(gh: GitHubFake, ttl: str, first_line: str) -> None:
    argv = ["claim", "6", "--actor", "cc-a"]
    argv += [f"--ttl{ttl}"] if ttl.startswith("=") else ["--ttl", ttl]
    code, out, err = run_cli(argv)
    assert code == 2 and out == ""
    lines = [line for line in err.splitlines() if line.startswith("ai-context: ")]
    assert lines[0].startswith(first_line)
    assert gh.requests == []  # refused before a single call


def test_renew_ttl_out_of_range_is_exit_2(gh: GitHubFake) -> None:
    code, _, err = run_cli(["renew", "6", "--actor", "cc-a", "--ttl", "0"])
    assert code == 2 and err.startswith("ai-context: --ttl 0m is out of range")
    assert gh.requests == []


def test_the_ttl_bounds_are_inclusive(gh: GitHubFake) -> None:
    assert run_cli(["claim", "6", "--actor", "cc-a", "--ttl", "1m"])[0] == 0
    assert run_cli(["renew", "6", "--actor", "cc-a", "--ttl", "30d"])[0] == 0


@pytest.mark.parametrize("actor", ["", "two words", "line\nbreak", "x" * 10_000])
def test_claim_refuses_a_bad_actor_id_like_save(gh: GitHubFake, actor: str) -> None:
    code, out, err = run_cli(["claim", "6", "--actor", actor])
    assert code == 2 and out == ""
    assert err.startswith("ai-context: actor id ")
    assert "must be one word of at most 100 characters" in err.splitlines()[0]
    assert gh.requests == []


def test_who_run_by_the_holder_says_it_is_them(
    gh: GitHubFake, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run_cli(["claim", "6", "--actor", "cc-a"])[0] == 0
    code, out, _ = run_cli(["who", "6", "--actor", "cc-a"])
    assert code == 0 and "is held by cc-a until" in out
    assert ": that is you; renew it (ai-context renew 6)" in out and "hand it off" not in out
    monkeypatch.setenv("AI_CONTEXT_ACTOR", "cc-a")  # the variable works as the flag does
    code, out, _ = run_cli(["who", "#6", "--format", "json"])
    assert code == 0 and json.loads(out)["mine"] is True
    code, out, _ = run_cli(["who", "6", "--actor", "cc-b"])
    assert code == 0 and "wait, or ask cc-a's owner to hand it off" in out


def test_release_with_a_wrong_lease_id_by_the_holder_says_the_id_is_wrong(
    gh: GitHubFake,
) -> None:
    code, out, _ = run_cli(["claim", "6", "--actor", "cc-a", "--format", "json"])
    sha = json.loads(out)["lease"]
    wrong = "f" * 40
    code, out, err = run_cli(["release", "6", "--actor", "cc-a", "--lease", wrong])
    assert code == 2 and err == ""
    assert out.splitlines()[0] == (
        f"#6: the lease id ffffffffffff is not your current lease ({sha[:12]}); nothing was "
        f"released: run `ai-context release 6 --lease {sha}`, or leave out --lease"
    )
    assert gh.ref(REPO, "refs/ai-context/leases/6") == sha  # nothing deleted
    code, out, _ = run_cli(
        ["release", "6", "--actor", "cc-a", "--lease", wrong, "--format", "json"]
    )
    data = json.loads(out)
    assert (code, data["exit"], data["result"]) == (2, 2, "mismatch")
    assert data["error"].startswith("#6: the lease id ffffffffffff is not your current lease")
    # Another actor with a wrong id is still told who holds it (exit 4).
    code, out, _ = run_cli(["release", "6", "--actor", "cc-b", "--lease", wrong])
    assert code == 4 and "is held by cc-a" in out
    assert run_cli(["release", "6", "--actor", "cc-a", "--lease", sha])[0] == 0
