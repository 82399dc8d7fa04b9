"""The command line's edges: a group's name typed as a command lists every command, as a typo
does; the internal-error line says how to run a command with --debug."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from ai_context.cli.main import internal_error
from tests.conftest import run_process


@pytest.mark.parametrize("name", ["lease", "agent", "digets"])
def test_a_name_that_is_no_command_lists_every_command(tmp_path: Path, name: str) -> None:
    done = run_process([name], cwd=tmp_path)
    assert done.returncode == 2
    assert f"invalid choice: '{name}'" in done.stderr
    for command in ("validate", "digest", "save", "claim", "mirror", "hook", "action", "mcp"):
        assert f"'{command}'" in done.stderr


def test_the_internal_error_line_puts_debug_before_the_command() -> None:
    out, err = io.StringIO(), io.StringIO()
    assert internal_error(RuntimeError("planted"), False, False, out, err) == 3
    assert "the output of `ai-context --debug COMMAND ...`" in err.getvalue()
