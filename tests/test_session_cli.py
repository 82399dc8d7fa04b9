"""`ai-context session save|load` with real files and a real checkout."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_cli

TASKS = {
    "tasks": [
        {
            "title": "Fix JWT validation",
            "status": "pending",
            "priority": "P1",
            "category": "BUGFIX",
        },
        {"title": "Rate limits", "status": "in_progress", "priority": "P2"},
        {"title": "Docs", "status": "completed", "completed": "2025-11-25T10:00:00Z"},
    ],
    "context_blocks": [{"title": "JWT", "content": "RS256", "related_tasks": ["TASK_001"]}],
}
NOW = "2025-11-26T14:00:00Z"


def git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "A",
        "GIT_AUTHOR_EMAIL": "a@example.test",
        "GIT_COMMITTER_NAME": "A",
        "GIT_COMMITTER_EMAIL": "a@example.test",
    }
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", "-b", "feature/auth", str(tmp_path)], check=True)
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "start")
    return tmp_path


def test_save_then_load_in_a_checkout(checkout: Path) -> None:
    source = checkout / "tasks.json"
    source.write_text(json.dumps(TASKS), encoding="utf-8")
    head = git(checkout, "rev-parse", "HEAD")
    code, out, err = run_cli(
        ["session", "save", "--from", "tasks.json", "--now", NOW], cwd=checkout
    )
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "Saved → sp.json",
        "- 1 pend, 1 prog (1 P1, 1 P2)",
        "- 1 done",
        f"- Git: feature/auth @ {head[:7]}",
        "Next: TASK_001 - Fix JWT validation",
    ]
    text = (checkout / "sp.json").read_text(encoding="utf-8")
    assert "\n" not in text and json.loads(text)["metadata"]["git_commit"] == head

    git(checkout, "commit", "-q", "--allow-empty", "-m", "one")
    git(checkout, "commit", "-q", "--allow-empty", "-m", "two")
    git(checkout, "checkout", "-q", "-b", "main")
    code, out, err = run_cli(["session", "load", "--now", "2025-11-28T15:00:00Z"], cwd=checkout)
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "Loaded sp.json (2d old)",
        "- 1 pend, 1 prog, 1 done",
        f"- Git: feature/auth @ {head[:7]} (2 commits ahead)",
        "- Warning: Git state changed",
        "- Warning: Branch: feature/auth → main",
        "- Context: JWT",
        "Next: TASK_001 - Fix JWT validation",
    ]


def test_no_checkout_skips_git(tmp_path: Path) -> None:
    spfile = tmp_path / "sp.json"
    code, out, _ = run_cli(
        ["session", "save", "--file", str(spfile), "--from", "-", "--now", NOW],
        stdin=json.dumps(TASKS["tasks"]),
    )
    assert code == 0 and "Git" not in out
    assert json.loads(spfile.read_text(encoding="utf-8"))["metadata"]["git_branch"] is None


def test_merge_by_default_overwrite_on_request(tmp_path: Path) -> None:
    spfile = tmp_path / "sp.json"
    base = ["session", "save", "--file", str(spfile), "--now", NOW, "--from", "-"]
    assert run_cli(base, stdin=json.dumps(TASKS))[0] == 0
    assert run_cli(base, stdin='[{"title": "New thing", "status": "pending"}]')[0] == 0
    merged = json.loads(spfile.read_text(encoding="utf-8"))
    assert [t["id"] for t in merged["tasks"]] == ["TASK_001", "TASK_002", "TASK_004", "TASK_003"]
    assert run_cli([*base, "--overwrite"], stdin='[{"title": "Only", "status": "pending"}]')[0] == 0
    replaced = json.loads(spfile.read_text(encoding="utf-8"))
    assert [t["title"] for t in replaced["tasks"]] == ["Only"]


def test_a_broken_file_is_never_merged_silently(tmp_path: Path) -> None:
    spfile = tmp_path / "sp.json"
    spfile.write_text("{broken", encoding="utf-8")
    argv = ["session", "save", "--file", str(spfile), "--from", "-", "--now", NOW]
    code, out, err = run_cli(argv, stdin=json.dumps(TASKS))
    assert code == 2 and out == ""
    assert "Cannot load: invalid JSON" in err and "--overwrite" in err
    assert spfile.read_text(encoding="utf-8") == "{broken"  # untouched
    assert run_cli([*argv, "--overwrite"], stdin=json.dumps(TASKS))[0] == 0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "Cannot load: "),
        ("{not json", "Cannot load: invalid JSON"),
        ('{"tasks": []}', "Cannot load: missing metadata"),
    ],
)
def test_load_errors(tmp_path: Path, content: str | None, message: str) -> None:
    spfile = tmp_path / "sp.json"
    if content is not None:
        spfile.write_text(content, encoding="utf-8")
    code, out, err = run_cli(["session", "load", "--file", str(spfile)])
    assert code == 2 and out == "" and message in err
    if content is None:
        assert "not found" in err and "session save" in err


def test_load_json(tmp_path: Path) -> None:
    spfile = tmp_path / "sp.json"
    run_cli(
        ["session", "save", "--file", str(spfile), "--from", "-", "--now", NOW], json.dumps(TASKS)
    )
    code, out, _ = run_cli(
        ["session", "load", "--file", str(spfile), "--format", "json", "--now", NOW]
    )
    data = json.loads(out)
    assert code == 0 and data["next"] == "TASK_001" and data["age_seconds"] == 0
    assert data["counts"]["pending"] == 1 and data["session"]["metadata"]["version"] == "2.0"


def test_save_input_errors(tmp_path: Path) -> None:
    argv = ["session", "save", "--file", str(tmp_path / "sp.json"), "--from"]
    code, _, err = run_cli([*argv, str(tmp_path / "missing.json")])
    assert code == 2 and "no such file" in err
    code, _, err = run_cli([*argv, "-"], stdin="[]")
    assert code == 2 and "no tasks given" in err
    assert not (tmp_path / "sp.json").exists()


def test_session_without_action() -> None:
    code, _, err = run_cli(["session"])
    assert code == 2 and "save or load" in err


def test_save_refuses_stdin_that_is_not_utf8_and_writes_nothing(tmp_path: Path) -> None:
    tasks = json.dumps([{"title": "Fix \u00e9", "status": "pending"}]).encode() + b"\xff"
    code, out, err = run_cli(
        ["session", "save", "--from", "-", "--now", NOW],
        stdin=tasks.decode("utf-8", "surrogateescape"),
        cwd=tmp_path,
    )
    assert (code, out) == (2, "")
    assert err.splitlines()[0].startswith("ai-context: <stdin>: not UTF-8 text (")
    assert not (tmp_path / "sp.json").exists()


def test_save_redacts_the_real_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/opt/builder")
    tasks = json.dumps([{"title": "Read /opt/builder/notes.md", "status": "pending"}])
    code, out, _ = run_cli(
        ["session", "save", "--from", "-", "--now", NOW], stdin=tasks, cwd=tmp_path
    )
    assert code == 0, out
    saved = (tmp_path / "sp.json").read_text(encoding="utf-8")
    assert "/opt/builder" not in saved and "Read ~/notes.md" in saved


def test_load_names_the_first_pending_or_in_progress_task_in_saved_order(tmp_path: Path) -> None:
    """Seeds/004: "Next: first pend/prog"; its example names TASK_001 with a task in progress."""
    spfile = tmp_path / "sp.json"
    tasks = [
        {"title": "Fix auth middleware", "status": "pending"},
        {"title": "Rate limits", "status": "in_progress"},
    ]
    base = ["session", "save", "--file", str(spfile), "--now", NOW, "--from", "-"]
    assert run_cli(base, stdin=json.dumps(tasks))[0] == 0
    code, out, _ = run_cli(["session", "load", "--file", str(spfile), "--now", NOW])
    assert code == 0 and out.splitlines()[-1] == "Next: TASK_001 - Fix auth middleware"
    saved = json.loads(spfile.read_text(encoding="utf-8"))["tasks"]
    assert [t["id"] for t in saved] == ["TASK_001", "TASK_002"]
