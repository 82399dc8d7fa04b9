"""A config file's `jobs` of any YAML type, in any characters: a list of job names, or bad
configuration (exit 2), never a TypeError or a YAML reader's error (exit 3)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ai_context.adapters.config import load_config
from ai_context.core.errors import ConfigError

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=6,
)


def _config(tmp_path: Path, text: str) -> Path:
    (tmp_path / ".github").mkdir(exist_ok=True)
    (tmp_path / ".github" / "ai-context.yml").write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("value", ["5", "true", ".inf", "{a: 1}"])
def test_jobs_that_are_not_a_list_are_bad_configuration(tmp_path: Path, value: str) -> None:
    with pytest.raises(ConfigError, match="jobs is a list of job names"):
        load_config({}, _config(tmp_path, f"jobs: {value}\n"))


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(value=values)
def test_jobs_of_any_type_are_read_or_are_bad_configuration(tmp_path: Path, value: object) -> None:
    text = "jobs: " + json.dumps(value, ensure_ascii=False).replace("NaN", ".nan").replace(
        "Infinity", ".inf"
    )
    with contextlib.suppress(ConfigError):
        load_config({}, _config(tmp_path, text + "\n"))


def test_a_config_file_with_a_control_character_is_not_valid_yaml(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is not valid YAML: unacceptable character #x007f"):
        load_config({}, _config(tmp_path, 'jobs: "\x7f"\n'))


@pytest.mark.parametrize(
    "text",
    [
        'jobs: "\\ud800"\n',
        '"\\udfff": 1\n',
        'stale:\n  after: "a\\ud83d"\n',
        'actors:\n  x: {owner: "\\ud800"}\n',
    ],
)
def test_a_lone_surrogate_escape_is_refused_with_its_line(tmp_path: Path, text: str) -> None:
    line = text.count("\n", 0, text.index("\\ud") if "\\ud" in text else 0) + 1
    with pytest.raises(ConfigError, match=f"is refused: line {line} escapes a lone surrogate"):
        load_config({}, _config(tmp_path, text))


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    value=st.recursive(
        st.text(st.characters(codec=None, exclude_categories=()), max_size=8),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
        max_leaves=6,
    )
)
def test_any_escaped_text_is_read_or_is_bad_configuration(tmp_path: Path, value: object) -> None:
    for key in ("jobs", "bot-login", "stale"):
        with contextlib.suppress(ConfigError):
            load_config({}, _config(tmp_path, f"{key}: {json.dumps(value)}\n"))
