"""The config file is read with bounds (issue 15, item 3): an alias bomb, a file nested
thousands deep, a self-referencing alias and an oversized file are exit 2, not a hang, a
RecursionError or the runner's memory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ai_context.adapters.config import load_config
from ai_context.adapters.yamlfile import MAX_YAML_BYTES
from ai_context.core.errors import ConfigError
from tests.actionrun import run_action
from tests.fakes import GitHubFake
from tests.test_action_e2e import INCOMPLETE, T0, TOKEN


def bomb(levels: int = 9) -> str:
    """The billion laughs, under actors.*.aliases: 9**9 strings once expanded."""
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        refs = ", ".join([f"*l{i - 1}"] * 9)
        lines.append(f"l{i}: &l{i} [{refs}]")
    # The anchors live in a section nobody reads; the bomb goes off in the actors' aliases.
    body = "\n".join("  " + line for line in lines)
    return f"lease:\n  ttl: 2h\n  x:\n{body}\nactors:\n  cc-x:\n    aliases: *l{levels - 1}\n"


def nested(depth: int) -> str:
    return "actors: " + "[" * depth + "]" * depth + "\n"


def settings_from(tmp_path: Path, text: str) -> None:
    (tmp_path / ".github").mkdir(exist_ok=True)
    (tmp_path / ".github" / "ai-context.yml").write_text(text, encoding="utf-8")
    load_config({}, tmp_path).check_sections()


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (bomb(), "values once aliases are expanded"),
        (nested(5000), "nested more than 64 levels deep"),
        ("actors:\n  " + "\n  ".join(f"a{i}: &a{i} {{}}" for i in range(5)) + "\n", None),
        ("digest: &d\n  window: [*d]\n", "an alias refers to a value that contains it"),
        (
            "x: &x a\nactors: [" + ", ".join(["*x"] * 101) + "]\n",
            "more than 100 aliases (*name)",
        ),
        ("actors: [\n", "is not valid YAML"),
    ],
)
def test_bounded_yaml(tmp_path: Path, text: str, says: str | None) -> None:
    if says is None:  # anchors without excess are still fine
        settings_from(tmp_path, text)
        return
    with pytest.raises(ConfigError, match=r"ai-context\.yml") as caught:
        settings_from(tmp_path, text)
    assert says in str(caught.value)


def test_an_oversized_file_is_refused_unread(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=f"larger than {MAX_YAML_BYTES} bytes"):
        settings_from(tmp_path, "# " + "x" * MAX_YAML_BYTES + "\n")


def test_line_numbers_still_name_the_setting(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"ai-context.yml line 3\): "):
        settings_from(tmp_path, "# settings\njobs: check\nfail-on: sometimes\n")


@pytest.fixture
def gh() -> Iterator[GitHubFake]:
    with GitHubFake(token=TOKEN, now=T0) as fake:
        fake.add_repo("o/r")
        fake.add_issue("o/r", "Task", INCOMPLETE, number=3)
        yield fake


@pytest.mark.parametrize("text", [bomb(), nested(5000)], ids=["alias-bomb", "nested-5000"])
def test_the_action_refuses_a_hostile_config_with_exit_2_and_no_write(
    gh: GitHubFake, tmp_path: Path, text: str
) -> None:
    folder = tmp_path / "workspace" / ".github"
    folder.mkdir(parents=True)
    (folder / "ai-context.yml").write_text(text, encoding="utf-8")
    run = run_action(
        tmp_path, gh.url, "schedule", {}, token=TOKEN, extra_env={"AI_CONTEXT_NOW": T0.isoformat()}
    )
    assert run.code == 2, run.stdout + run.stderr
    [line] = [x for x in run.stdout.splitlines() if x.startswith("::error")]
    assert line.split("::", 2)[2].startswith("config file ")
    assert "is refused: " in line
    assert "Traceback" not in run.stderr
    assert gh.count() == 0  # refused before a single call, let alone a write
