"""`ai-context validate`: output lines, the stable JSON shape, exit codes, usage errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, SEED_BLOCK, run_cli, run_process


def test_clean_file_exits_0(tmp_path: Path) -> None:
    path = tmp_path / "ok.md"
    path.write_text(SEED_BLOCK, encoding="utf-8")
    assert run_cli(["validate", str(path), "--now", "2026-05-26T15:00:00Z"]) == (
        0,
        "ok: 1 file, 0 errors, 0 warnings\n",
        "",
    )


def test_errors_exit_1_with_path_line_code(tmp_path: Path) -> None:
    path = tmp_path / "bad.md"
    path.write_text("## AI Context\n- **Phase:** x\n", encoding="utf-8")
    code, out, _ = run_cli(["validate", str(path)])
    assert code == 1
    assert f"{path}:1: AIC201 error required field 'Active actor' is missing or empty" in out


def test_stdin(tmp_path: Path) -> None:
    code, out, _ = run_cli(["validate", "-"], stdin="nothing here")
    assert code == 1 and out == (
        "<stdin>:1: AIC101 error no AI Context block found\nFAILED: 1 file, 1 error, 0 warnings\n"
    )


def test_warnings_only_exit_0() -> None:
    code, out, _ = run_cli(["validate", "-", "--now", "2026-06-30T00:00:00Z"], stdin=SEED_BLOCK)
    assert code == 0 and "AIC304 warning" in out


@pytest.mark.parametrize("kind", ["missing", "directory", "latin1"])
def test_usage_problems_exit_2(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "x.md"
    if kind == "directory":
        path.mkdir()
    elif kind == "latin1":
        path.write_bytes("caf\xe9".encode("latin-1"))
    code, out, err = run_cli(["validate", str(path)])
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and str(path) in err
    assert {"missing": "no such file", "directory": "is a directory", "latin1": "not UTF-8"}[
        kind
    ] in err


def test_bad_now_is_usage() -> None:
    code, _, err = run_cli(["validate", "-", "--now", "tuesday"])
    assert code == 2 and "ISO 8601" in err


def test_json_shape_is_stable(tmp_path: Path) -> None:
    path = tmp_path / "ok.md"
    path.write_text(SEED_BLOCK, encoding="utf-8")
    code, out, _ = run_cli(["validate", str(path), "-", "--format", "json"], stdin="no block")
    assert code == 1
    data = json.loads(out)
    assert [d["path"] for d in data] == [str(path), "<stdin>"]
    first = data[0]
    assert set(first) >= {"path", "complete", "block", "findings"}
    assert first["complete"] is True
    block = first["block"]
    assert set(block) >= {
        "actor",
        "actor_description",
        "phase",
        "chunk",
        "last_updated",
        "plan",
        "files_touched",
        "paths",
        "decisions",
        "blockers",
        "next_step",
        "extra",
    }
    assert block["chunk"] == [3, 5]
    assert block["last_updated"] == "2026-05-26T14:32:00Z"
    assert block["plan"][2] == {
        "number": 3,
        "text": "Add unit tests for repository",
        "status": "in progress",
    }
    assert block["blockers"] == [] and block["extra"] == {}
    assert data[1]["block"] is None
    assert data[1]["findings"] == [
        {
            "code": "AIC101",
            "severity": "error",
            "line": None,
            "message": "no AI Context block found",
            "hint": "Add a '## AI Context' heading with the fields at the top of the issue body.",
        }
    ]


def test_report_over_examples() -> None:
    code, out, _ = run_cli(
        ["report", "--issues-dir", str(EXAMPLES), "--now", "2026-05-27T09:00:00Z"]
    )
    assert code == 1  # blocks with errors fail the report, as they fail validate
    assert "7 tasks, 6 complete, 2 errors, 2 warnings" in out


def test_module_entrypoint_runs_as_a_process(tmp_path: Path) -> None:
    proc = run_process(["validate", "-"], stdin=SEED_BLOCK)
    assert proc.returncode == 0, proc.stderr


def test_no_command_is_usage() -> None:
    assert run_cli([])[0] == 2


# --- issue 15 item 9: the real clock, the config file, a one-line summary ----------------------


def test_the_real_clock_is_the_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    old = SEED_BLOCK  # Last updated 2026-05-26: long stale by any real clock after it
    future = SEED_BLOCK.replace("2026-05-26T14:32:00Z", "2999-01-01T00:00:00Z")
    code, out, _ = run_cli(["validate", "-"], stdin=old)
    assert code == 0 and "AIC304 warning" in out
    assert out.splitlines()[-1] == "ok: 1 file, 0 errors, 1 warning"
    code, out, _ = run_cli(["validate", "-"], stdin=future)
    assert code == 0 and "AIC303 warning" in out


def test_the_config_file_of_the_checkout_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github/ai-context.yml").write_text(
        "required: [actor, phase, plan, next_step, decisions]\nstale-after: 9999d\n",
        encoding="utf-8",
    )
    decisions = SEED_BLOCK[SEED_BLOCK.index("- **Decisions:**") : SEED_BLOCK.index("- **Blockers")]
    no_decisions = SEED_BLOCK.replace(decisions, "")
    (tmp_path / "empty.yml").write_text("", encoding="utf-8")
    code, out, _ = run_cli(["validate", "-", "--config", "empty.yml"], stdin=no_decisions)
    assert code == 0  # the default required fields do not include Decisions
    code, out, _ = run_cli(["validate", "-"], stdin=no_decisions)
    assert code == 1 and "AIC201 error required field 'Decisions' is missing or empty" in out
    assert "AIC304" not in out  # stale-after from the file
    assert out.splitlines()[-1] == (
        "FAILED: 1 file, 1 error, 0 warnings (settings from .github/ai-context.yml)"
    )
    other = tmp_path / "other.yml"
    other.write_text("stale-after: 1h\n", encoding="utf-8")
    code, out, _ = run_cli(["validate", "-", "--config", str(other)], stdin=SEED_BLOCK)
    assert code == 0 and "AIC304 warning" in out and f"(settings from {other})" in out


@pytest.mark.parametrize(
    ("config", "first_line"),
    [
        ("required: [actor, bogus]\n", "ai-context: {path}: unknown required field(s) bogus"),
        ("stale-after: whenever\n", "ai-context: "),
        ("[not, a, mapping]\n", "ai-context: config file "),
        (None, "ai-context: --config "),
    ],
)
def test_a_bad_config_is_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: str | None, first_line: str
) -> None:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "c.yml"
    if config is not None:
        path.write_text(config, encoding="utf-8")
    code, out, err = run_cli(["validate", "-", "--config", str(path)], stdin=SEED_BLOCK)
    assert code == 2 and out == ""
    assert err.splitlines()[0].startswith(first_line.format(path=path))


# --- issue 14: start-up -----------------------------------------------------------------------

# What `validate` must not import: each is tens of milliseconds of start-up it does not use.
NOT_FOR_VALIDATE = ("pydantic", "yaml", "jinja2", "requests", "github", "importlib.metadata")


def imported_modules(argv: list[str], cwd: Path) -> set[str]:
    """Every module a whole `python -X importtime -m ai_context ARGV` process imported."""
    done = run_process(argv, {"PYTHONPROFILEIMPORTTIME": "1"}, cwd)
    assert done.returncode in (0, 1), done.stderr
    rows = [ln.split("|")[-1] for ln in done.stderr.splitlines() if ln.startswith("import time:")]
    return {row.strip() for row in rows} - {"package"}  # "package" is the header's last column


def heavy(modules: set[str]) -> list[str]:
    return sorted(
        m for m in modules if any(m == h or m.startswith(h + ".") for h in NOT_FOR_VALIDATE)
    )


def test_validate_imports_no_pydantic_yaml_jinja_or_github_client(tmp_path: Path) -> None:
    path = tmp_path / "issue.md"
    path.write_text(SEED_BLOCK, encoding="utf-8")
    modules = imported_modules(["validate", str(path), "--format", "json"], tmp_path)
    assert "ai_context.rules.checks" in modules  # the probe sees what validate imports
    assert heavy(modules) == []


def test_validate_reads_the_config_file_without_pydantic(tmp_path: Path) -> None:
    """Every adopter's repository has .github/ai-context.yml: validate then reads its two keys
    with YAML alone (config_file.check_config), not the whole typed configuration."""
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "ai-context.yml").write_text(
        "stale-after: 2d\nrequired: [actor, phase]\nactors: {cc-a: {owner: ariel}}\n",
        encoding="utf-8",
    )
    path = tmp_path / "issue.md"
    path.write_text(SEED_BLOCK, encoding="utf-8")
    modules = imported_modules(["validate", str(path)], tmp_path)
    assert "yaml" in modules  # the probe sees the file being read
    assert [m for m in heavy(modules) if m != "yaml" and not m.startswith("yaml.")] == []


def test_version_alone_registers_no_command(tmp_path: Path) -> None:
    modules = imported_modules(["--version"], tmp_path)
    groups = {"ai_context.cli.agent", "ai_context.cli.digest", "ai_context.cli.git"}
    assert "ai_context.cli.main" in modules and not groups & modules
    assert heavy(modules) == []


def test_help_is_as_wide_as_columns_says(monkeypatch: pytest.MonkeyPatch) -> None:
    """Our help formatter finds the width as shutil does (without importing it)."""
    from ai_context.cli.main import build_parser

    monkeypatch.setenv("COLUMNS", "50")
    narrow = build_parser("validate").format_help()
    monkeypatch.setenv("COLUMNS", "200")
    wide = build_parser("validate").format_help()
    assert max(len(line) for line in narrow.splitlines()) <= 48
    assert max(len(line) for line in wide.splitlines()) > 48


def test_a_reader_that_leaves_early_gets_no_traceback(tmp_path: Path) -> None:
    """`ai-context validate ... | head -1`: the pipe closes under a long output; the process
    ends quietly with SIGPIPE's status instead of a BrokenPipeError traceback."""
    body = "## AI Context\n- **Active actor:** cc-x\n- **Phase:** planning\n"
    paths = []
    for i in range(1500):  # about 400 KB of findings: far more than a pipe holds
        path = tmp_path / f"{i}.md"
        path.write_text(body, encoding="utf-8")
        paths.append(str(path))
    process = subprocess.Popen(
        [sys.executable, "-m", "ai_context", "validate", *paths],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()
    process.stdout.close()
    error = process.stderr.read()
    assert process.wait(timeout=60) == 141
    assert b"AIC201" in first
    assert b"Traceback" not in error and b"BrokenPipe" not in error
