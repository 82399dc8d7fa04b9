"""What the documents promise: every finding code documented, the install lines on the README's
first screen, the changelog's sections readable by the release workflow."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CHANGELOG = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


changelog = _script("changelog_section")


def test_every_raised_finding_code_has_a_readme_row_and_every_row_is_raised() -> None:
    raised: set[str] = set()
    for path in (ROOT / "src").rglob("*.py"):
        raised |= set(re.findall(r"\"(AIC\d{3})\"", path.read_text(encoding="utf-8")))
    documented = re.findall(r"^\| (AIC\d{3}) \| (?:error|warning|info) \|", README, re.M)
    assert raised, "no finding code found in src/"
    assert sorted(raised - set(documented)) == [], "raised but not in README's table"
    assert sorted(set(documented) - raised) == [], "in README's table but raised nowhere"
    assert documented == sorted(documented), "README's code table is out of order"


def test_first_screen_says_how_agents_and_repositories_get_it() -> None:
    first_screen = "\n".join(README.splitlines()[:40])
    assert "pipx install ai-context" in first_screen
    assert "uvx ai-context" in first_screen
    assert "no release yet" in first_screen  # said plainly, with what works before it
    assert "[The Action in five minutes](#the-action-in-five-minutes)" in first_screen


def test_the_readme_reads_in_its_readers_order() -> None:
    """What it is, the Action in five minutes, agents, managers, reference, contributing."""
    headings = re.findall(r"^## (.+)$", README.split("```", 1)[0] + README, re.M)
    order = ["The Action in five minutes", "For agents", "For managers", "Reference"]
    top = [h for h in headings if h in (*order, "Contributing")]
    assert top == [*order, "Contributing"]
    action = README.index("## The Action in five minutes")
    for part in ("### 3. The first run", "### Troubleshooting"):
        assert action < README.index(part) < README.index("## For agents")


def test_nothing_a_user_copies_holds_a_placeholder() -> None:
    """Code a user copies names nothing they cannot fill in (`<owner>`...)."""
    for block in re.findall(r"```(?:yaml|sh|json)\n(.*?)```", README, re.S):
        assert not re.search(r"<(owner|repo|name|user|org)>", block, re.I), block


def test_changelog_keeps_an_unreleased_section_and_each_version_is_readable() -> None:
    headings = re.findall(r"^## \[([^\]]+)\](.*)$", CHANGELOG, re.M)
    assert headings[0] == ("Unreleased", "")
    for version, rest in headings[1:]:
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), version
        assert re.fullmatch(r" - \d{4}-\d{2}-\d{2}", rest), f"{version}: no ` - YYYY-MM-DD`"
        assert changelog.section(CHANGELOG, version).strip()


def test_section_stops_at_the_next_version_and_drops_link_lines() -> None:
    text = (
        "# Changelog\n\n## [Unreleased]\n\n- next\n\n"
        "## [1.1.0] - 2026-01-02\n\n### Fixed\n\n- a fix\n\n"
        "## [1.0.0] - 2026-01-01\n\n- first\n\n"
        "[1.1.0]: https://example.invalid/compare/v1.0.0...v1.1.0\n"
    )
    assert changelog.section(text, "1.1.0") == "### Fixed\n\n- a fix\n"
    assert changelog.section(text, "1.0.0") == "- first\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("## [Unreleased]\n\n- x\n", "no `## [1.0.0]"),
        ("## [1.0.0] - 2026-01-01\n\n## [0.9.0] - 2025-01-01\n- y\n", "is empty"),
    ],
)
def test_a_missing_or_empty_section_stops_the_release(text: str, message: str) -> None:
    with pytest.raises(changelog.ChangelogError, match=re.escape(message)):
        changelog.section(text, "1.0.0")
