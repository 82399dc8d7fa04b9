"""A config file's `jobs` of any YAML type: a list of job names, or bad configuration (exit 2),
never a TypeError (exit 3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ai_context.adapters.config import load_config
from ai_context.core.errors import ConfigError


def _config(tmp_path: Path, text: str) -> Path:
    (tmp_path / ".github").mkdir(exist_ok=True)
    (tmp_path / ".github" / "ai-context.yml").write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("value", ["5", "true", ".inf", "{a: 1}"])
def test_jobs_that_are_not_a_list_are_bad_configuration(tmp_path: Path, value: str) -> None:
    with pytest.raises(ConfigError, match="jobs is a list of job names"):
        load_config({}, _config(tmp_path, f"jobs: {value}\n"))
