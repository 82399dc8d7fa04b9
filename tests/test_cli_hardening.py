"""Hostile input to the command line (issue 15): exit 2, a first line that says what was
wrong, and nothing written; never a UnicodeEncodeError or a RecursionError."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SEED_BLOCK, run_cli
from tests.fakes import GitHubFake

ROOT = Path(__file__).resolve().parents[1]
REPO = "acme/shop"
DEEP = "[" * 100_000 + "]" * 100_000


def process(
    argv: list[str], stdin: bytes, cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[bytes]:
    base = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT / "src"), "LC_ALL": "C"}
    return subprocess.run(
        [sys.executable, "-m", "ai_context", *argv],
        input=stdin,
        env={**base, **env},
        cwd=cwd,
        capture_output=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def gh(github_fake: GitHubFake) -> GitHubFake:
    github_fake.add_issue(REPO, "Task", "Human text.\n")
    return github_fake


@pytest.mark.parametrize("locale", ["C", "C.UTF-8"])
def test_save_with_non_utf8_stdin_is_exit_2_and_writes_nothing(
    gh: GitHubFake, tmp_path: Path, locale: str
) -> None:
    cache = tmp_path / "cache"
    env = {
        "GITHUB_TOKEN": "t",
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_API_URL": gh.url,
        "AI_CONTEXT_CACHE": str(cache),
        "LC_ALL": locale,
    }
    body = SEED_BLOCK.encode() + b"\n- **Decisions:** caf\xe9 \xff\xfe\n"
    done = process(["save", "1", "--actor", "cc-a"], body, tmp_path, env)
    err = done.stderr.decode()
    assert done.returncode == 2, err
    at = body.index(b"\xe9")  # the first byte that is not UTF-8
    assert (
        err.splitlines()[0] == f"ai-context: <stdin>: not UTF-8 text (byte {at}); save it as UTF-8"
    )
    assert "Traceback" not in err and "UnicodeEncodeError" not in err
    assert gh.requests == [] and not cache.exists()  # nothing read, nothing written


def test_save_with_surrogates_in_text_stdin_is_exit_2(
    gh: GitHubFake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A text stream without bytes (surrogateescape'd input) is checked as well."""
    monkeypatch.setenv("GITHUB_TOKEN", "t")
    monkeypatch.setenv("GITHUB_API_URL", gh.url)
    monkeypatch.setenv("AI_CONTEXT_CACHE", str(tmp_path / "cache"))
    code, out, err = run_cli(["save", "1", "--repo", REPO], SEED_BLOCK + "\n\udcff\n")
    assert code == 2 and out == ""
    assert err.splitlines()[0].startswith("ai-context: <stdin>: not UTF-8 text (character ")
    assert gh.requests == [] and not (tmp_path / "cache").exists()


def test_session_save_with_json_nested_100k_deep_is_exit_2(tmp_path: Path) -> None:
    done = process(["session", "save", "--from", "-"], DEEP.encode(), tmp_path, {})
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert err.splitlines()[0] == (
        "ai-context: <stdin>: the JSON is nested too deeply to be a task list; pass "
        '{"tasks": [...], "context_blocks": [...]}'
    )
    assert "RecursionError" not in err and not (tmp_path / "sp.json").exists()


@pytest.mark.parametrize(
    "text", [DEEP, '{"tasks": ' + DEEP + "}", '{"tasks": [{"title": ' + DEEP + "}]}"]
)
def test_deep_json_anywhere_in_the_input_is_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(["session", "save", "--from", "-"], text)
    assert code == 2 and out == ""
    assert err.startswith("ai-context: <stdin>: the JSON is nested too deeply")
    assert not (tmp_path / "sp.json").exists()


def test_a_deep_session_file_is_exit_2_and_left_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sp.json").write_text(DEEP, encoding="utf-8")
    code, _, err = run_cli(["session", "load"], "")
    assert code == 2 and err.startswith("ai-context: sp.json: the JSON is nested too deeply")
    code, _, err = run_cli(["session", "save", "--from", "-"], '{"tasks": []}')
    assert code == 2 and err.startswith("ai-context: sp.json: the JSON is nested too deeply")
    assert (tmp_path / "sp.json").read_text(encoding="utf-8") == DEEP


# A bug of ours, planted in a real `python -m ai_context` process: the check raises.
PLANTED_BUG = """
import runpy, ai_context.cli.validate as v
def broken(*args, **kwargs):
    raise RuntimeError("planted\\nbug")
v.check_body = broken
runpy.run_module("ai_context", run_name="__main__")
"""


def crash(tmp_path: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    target = tmp_path / "issue.md"
    target.write_text(SEED_BLOCK, encoding="utf-8")
    base = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, "-c", PLANTED_BUG, *argv, str(target)],
        env={**base, **env},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_an_internal_error_is_exit_3_with_one_line_saying_where_to_report_it(
    tmp_path: Path,
) -> None:
    done = crash(tmp_path, "validate")
    assert done.returncode == 3, done.stderr
    assert done.stderr.splitlines() == [
        "ai-context: internal error: RuntimeError: planted bug. This is a bug in ai-context; "
        "please report it to the maintainers with the command you ran and the output of "
        "`ai-context --debug COMMAND ...`"
    ]
    json_done = crash(tmp_path, "validate", "--format", "json")
    assert json_done.returncode == 3 and "Traceback" not in json_done.stderr
    assert json.loads(json_done.stdout)["exit"] == 3


@pytest.mark.parametrize(("argv", "env"), [(["--debug"], {}), ([], {"AI_CONTEXT_DEBUG": "1"})])
def test_the_traceback_only_when_asked(
    tmp_path: Path, argv: list[str], env: dict[str, str]
) -> None:
    done = crash(tmp_path, *argv, "validate", **env)
    assert done.returncode == 3
    assert "Traceback (most recent call last)" in done.stderr
    assert "RuntimeError: planted\nbug" in done.stderr
    assert done.stderr.splitlines()[-1].startswith("ai-context: internal error: RuntimeError")
