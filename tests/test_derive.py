"""gitrepo against real repositories, and `ai-context derive` end to end."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ai_context.adapters.gitrepo import (
    GitError,
    commits_between,
    current_branch,
    head_sha,
    is_ancestor,
    is_repo,
    log,
    remote_repository,
)
from tests.conftest import SEED_BLOCK, run_cli
from tests.test_gitlog import checkpoint_message

T0 = datetime(2026, 5, 26, 14, 32, tzinfo=UTC)


@dataclass
class Change:
    message: str
    at: datetime
    files: dict[str, str | None] = field(default_factory=dict)  # path -> content, None deletes
    author: str = "Ariel"


def build_repo(path: Path, changes: list[Change], branch: str = "main") -> Path:
    """A repository with exactly these commits, made by one `git fast-import`."""
    subprocess.run(["git", "init", "-q", "-b", branch, str(path)], check=True)
    out = bytearray()
    for change in changes:
        seconds = int(change.at.timestamp())
        who = f"{change.author} <{change.author.lower()}@example.test> {seconds} +0000"
        message = change.message.encode()
        out += f"commit refs/heads/{branch}\nauthor {who}\ncommitter {who}\n".encode()
        out += b"data %d\n" % len(message) + message + b"\n"
        for name, content in change.files.items():
            if content is None:
                out += f"D {name}\n".encode()
            else:
                data = content.encode()
                out += f"M 100644 inline {name}\n".encode() + b"data %d\n" % len(data) + data
                out += b"\n"
        out += b"\n"
    subprocess.run(["git", "-C", str(path), "fast-import", "--quiet"], input=bytes(out), check=True)
    subprocess.run(["git", "-C", str(path), "reset", "-q", "--hard"], check=True)
    return path


HISTORY = [
    Change(
        "Start booking #101", T0 - timedelta(days=1), {"apps/api/src/booking/repository.ts": "1"}
    ),
    Change("Unrelated work on #1010", T0 - timedelta(hours=20), {"other.ts": "x"}),
    Change(
        checkpoint_message("Wire into BookingService", 101, 2),
        T0 - timedelta(hours=2),
        {"apps/api/src/booking/service.ts": "2"},
    ),
    Change(
        "Add app wiring\n\nAI-Context-Issue: 101",
        T0 + timedelta(hours=3),
        {"apps/api/src/app.ts": "3", "other.ts": None},
        author="Bo",
    ),
    Change(checkpoint_message("Add unit tests", 101, 3), T0 + timedelta(hours=4), {"t.ts": "4"}),
]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_repo(tmp_path_factory.mktemp("repo"), HISTORY)


# --- gitrepo ----------------------------------------------------------------------------


def test_log_reads_every_commit_newest_first(repo: Path) -> None:
    commits = list(log(repo))
    assert commits[0].subject.startswith("ai-context: Add unit tests")
    assert len(commits) == 5
    assert commits[-1].added == ("apps/api/src/booking/repository.ts",)
    wiring = commits[1]
    assert wiring.author_name == "Bo" and wiring.timestamp == T0 + timedelta(hours=3)
    assert wiring.added == ("apps/api/src/app.ts",) and wiring.removed == ("other.ts",)
    assert wiring.message == "Add app wiring\n\nAI-Context-Issue: 101"


def test_log_grep_is_a_prefilter(repo: Path) -> None:
    subjects = [c.subject for c in log(repo, grep="101")]
    assert len(subjects) == 5  # #1010 contains 101 too; derive drops it
    assert [c.subject for c in log(repo, grep="BookingService")] == [
        "ai-context: Wire into BookingService completed [issue:101] [step:2]"
    ]


def test_log_rev(repo: Path) -> None:
    assert len(list(log(repo, rev="HEAD~3"))) == 2


def test_head_branch_and_ahead(repo: Path) -> None:
    head = head_sha(repo)
    assert head is not None and len(head) == 40
    assert current_branch(repo) == "main"
    first = list(log(repo))[-1].sha
    assert commits_between(repo, first) == 4
    assert commits_between(repo, "0" * 40) is None
    assert is_ancestor(repo, first)


def test_detached_head_has_no_branch(tmp_path: Path) -> None:
    path = build_repo(tmp_path / "r", HISTORY[:2])
    subprocess.run(["git", "-C", str(path), "checkout", "-q", "--detach"], check=True)
    assert current_branch(path) is None


def test_empty_repository(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert head_sha(tmp_path) is None
    assert list(log(tmp_path)) == []


def test_not_a_repository(tmp_path: Path) -> None:
    assert not is_repo(tmp_path)
    with pytest.raises(GitError, match="not a git checkout"):
        list(log(tmp_path))
    with pytest.raises(GitError, match="no such directory"):
        head_sha(tmp_path / "missing")


def test_bad_revision_is_a_git_error(repo: Path) -> None:
    with pytest.raises(GitError, match="git log failed"):
        list(log(repo, rev="no-such-branch"))


# --- ai-context derive ------------------------------------------------------------------


def test_derive_text_beside_the_block(repo: Path, tmp_path: Path) -> None:
    body = tmp_path / "101.md"
    body.write_text(SEED_BLOCK, encoding="utf-8")
    code, out, err = run_cli(["derive", "101", "--checkout", str(repo), "--body-file", str(body)])
    assert (code, err) == (0, "")
    assert "git: 4 commits naming #101" in out
    assert "Bo <bo@example.test>: 1 commit" in out
    assert "step 3: Add unit tests (v1)" in out
    assert "apps/api/src/app.ts: 1 commit" in out and "NOT in Files touched" in out
    assert "other.ts (removed)" in out
    assert "Last updated:  2026-05-26T14:32:00Z" in out
    for code_ in ("AIC501", "AIC502", "AIC503"):
        assert code_ in out


def test_derive_json(repo: Path, tmp_path: Path) -> None:
    issues = tmp_path / "issues"
    issues.mkdir()
    (issues / "101.md").write_text(
        f"---\nnumber: 101\ntitle: Booking\n---\n{SEED_BLOCK}\n", encoding="utf-8"
    )
    code, out, _ = run_cli(
        ["derive", "#101", "--checkout", str(repo), "--issues-dir", str(issues), "--format", "json"]
    )
    assert code == 0
    data = json.loads(out)
    assert data["issue"] == 101 and data["branch"] == "main" and len(data["head"]) == 40
    git = data["git"]
    assert len(git["commits"]) == 4 and "1010" not in json.dumps(git["commits"])
    assert git["last_activity"] == "2026-05-26T18:32:00Z"
    assert [c["checkpoint"]["step"] for c in git["checkpoints"]] == [2, 3]  # oldest first
    assert data["block"]["actor"] == "cc-ariel-laptop"
    assert [f["code"] for f in data["findings"]] == ["AIC501", "AIC502", "AIC503"]


def test_derive_without_a_block(repo: Path) -> None:
    code, out, _ = run_cli(["derive", "101", "--checkout", str(repo)])
    assert code == 0 and "block: not given" in out and "findings" not in out


def test_derive_body_from_stdin_without_block(repo: Path) -> None:
    code, out, _ = run_cli(
        ["derive", "101", "--checkout", str(repo), "--body-file", "-"], "no block"
    )
    assert code == 0 and "block: none found in the body" in out


def test_derive_issue_nobody_names(repo: Path) -> None:
    code, out, _ = run_cli(["derive", "555", "--checkout", str(repo)])
    assert code == 0 and "git: no commit names #555" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["derive", "101", "--checkout", "{tmp}"], "not a git checkout"),
        (["derive", "101", "--checkout", "{repo}", "--body-file", "{tmp}/nope.md"], "no such file"),
        (["derive", "101", "--checkout", "{repo}", "--issues-dir", "{tmp}"], "no issue #101"),
        (["derive", "101", "--checkout", "{repo}", "--rev=--all"], "does not start with '-'"),
    ],
)
def test_derive_usage_errors(repo: Path, tmp_path: Path, argv: list[str], message: str) -> None:
    filled = [a.format(tmp=tmp_path, repo=repo) for a in argv]
    code, out, err = run_cli(filled)
    assert code == 2 and out == "" and message in err


def test_derive_rejects_a_bad_issue_number() -> None:
    code, _, err = run_cli(["derive", "abc"])
    assert code == 2 and "'abc' is not an issue number" in err


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("git@github.com:acme/api.git", "acme/api"),
        ("https://github.com/acme/api", "acme/api"),
        ("https://ghe.corp.test/acme/my.repo.git", "acme/my.repo"),
        ("ssh://git@github.com/acme/api.git/", "acme/api"),
    ],
)
def test_remote_repository(tmp_path: Path, url: str, expected: str) -> None:
    path = build_repo(tmp_path / "r", HISTORY[:1])
    assert remote_repository(path) is None
    subprocess.run(["git", "-C", str(path), "remote", "add", "origin", url], check=True)
    assert remote_repository(path) == expected


def test_derive_counts_other_repositories_refs_only_when_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_REPOSITORY", raising=False)  # CI sets it; the remote is tested
    path = build_repo(
        tmp_path / "r",
        [Change("Refs other/thing#7", T0, {"a": "1"}), Change("Refs acme/api#7", T0, {"b": "2"})],
    )
    argv = ["derive", "7", "--checkout", str(path), "--format", "json"]
    assert len(json.loads(run_cli(argv)[1])["git"]["commits"]) == 2
    subprocess.run(
        ["git", "-C", str(path), "remote", "add", "origin", "git@github.com:acme/api.git"],
        check=True,
    )
    assert len(json.loads(run_cli(argv)[1])["git"]["commits"]) == 1
    assert len(json.loads(run_cli([*argv, "--repo", "other/thing"])[1])["git"]["commits"]) == 1
