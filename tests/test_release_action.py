"""The release-time action.yml (scripts/release_action.py): the rewrite the release job commits
on the tag, and the check it runs before moving any tag."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "release_action.py"
ACTION = ROOT / "action.yml"
IMAGE = "docker://ghcr.io/acme/ai-context:1.2.3"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("release_action", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


release = _load()


def script(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_rewrite_changes_the_image_line_and_no_other_byte() -> None:
    text = ACTION.read_bytes().decode("utf-8")
    result = release.rewrite(text, IMAGE)
    before, after = text.split("\n"), result.split("\n")
    assert len(before) == len(after)
    changed = [(b, a) for b, a in zip(before, after, strict=True) if b != a]
    assert changed == [("  image: Dockerfile", f"  image: {IMAGE}")]
    data = yaml.safe_load(result)
    assert data["runs"] == {"using": "docker", "image": IMAGE}
    assert {k: v for k, v in data.items() if k != "runs"} == {
        k: v for k, v in yaml.safe_load(text).items() if k != "runs"
    }


def test_reference_is_lower_case_and_names_the_version() -> None:
    assert release.image_reference("Acme/AI-Context", "1.2.3") == IMAGE


@pytest.mark.parametrize("version", ["v1.2.3", "1.2", "1.2.3.dev4+g0abc", "1.2.3rc1", ""])
def test_reference_refuses_what_is_not_a_release_version(version: str) -> None:
    with pytest.raises(release.ReleaseError, match="release version"):
        release.image_reference("acme/ai-context", version)


def test_rewrite_keeps_crlf_quotes_and_the_lines_comment() -> None:
    text = (
        "name: x\r\n"
        "description: 'image: not this one'\r\n"
        "runs:\r\n"
        "  # built on main\r\n"
        "  using: 'docker'\r\n"
        '  image: "Dockerfile"  # main builds from source\r\n'
        "  args: [action]\r\n"
        "branding: {icon: check, color: blue}\r\n"
    )
    result = release.rewrite(text, IMAGE)
    assert result == text.replace('"Dockerfile"', IMAGE)


def test_rewrite_refuses_what_it_cannot_edit_as_one_line() -> None:
    with pytest.raises(release.ReleaseError, match="not a Docker action"):
        release.rewrite("runs:\n  using: node20\n  main: index.js\n", IMAGE)
    with pytest.raises(release.ReleaseError, match="top-level `runs:` line"):
        release.rewrite("runs: {using: docker, image: Dockerfile}\n", IMAGE)
    with pytest.raises(release.ReleaseError, match="found 2"):
        release.rewrite("runs:\n  using: docker\n  image: a\n  image: b\n", IMAGE)
    with pytest.raises(release.ReleaseError, match="no `runs:`"):
        release.rewrite("name: x\n", IMAGE)


def test_script_rewrites_then_its_check_passes(tmp_path: Path) -> None:
    action = tmp_path / "action.yml"
    action.write_bytes(ACTION.read_bytes())
    done = script("--file", str(action), "--repository", "Acme/AI-Context", "--version", "1.2.3")
    assert done.returncode == 0, done.stderr
    assert yaml.safe_load(action.read_text(encoding="utf-8"))["runs"]["image"] == IMAGE
    args = ("--file", str(action), "--check", "--version", "1.2.3")
    done = script(*args, "--repository", "acme/ai-context")
    assert done.returncode == 0, done.stderr
    assert IMAGE in done.stdout


def test_check_fails_clearly_on_another_version(tmp_path: Path) -> None:
    action = tmp_path / "action.yml"
    action.write_text(release.rewrite(ACTION.read_text(encoding="utf-8"), IMAGE), "utf-8")
    done = script("--file", str(action), "--check", "--version", "1.2.4")
    assert done.returncode == 2
    assert "tagged '1.2.3' but the package version is '1.2.4'" in done.stderr
    assert done.stdout == ""


def test_check_fails_on_another_repository(tmp_path: Path) -> None:
    action = tmp_path / "action.yml"
    action.write_text(release.rewrite(ACTION.read_text(encoding="utf-8"), IMAGE), "utf-8")
    done = script("--file", str(action), "--check", "--version", "1.2.3", "--repository", "x/y")
    assert done.returncode == 2
    assert "not this repository ('x/y')" in done.stderr


def test_check_of_mains_action_yml_fails_it_builds_from_source() -> None:
    done = script("--check", "--version", "1.2.3")
    assert done.returncode == 2
    assert "runs.image is 'Dockerfile', not a published image" in done.stderr


def test_check_defaults_to_the_installed_package_version(monkeypatch: pytest.MonkeyPatch) -> None:
    text = release.rewrite(ACTION.read_text(encoding="utf-8"), IMAGE)
    monkeypatch.setattr(release, "installed_version", lambda: "1.2.3")
    assert release.check(text, release.installed_version()) == IMAGE
    monkeypatch.setattr(release, "installed_version", lambda: "2.0.0")
    with pytest.raises(release.ReleaseError, match=r"package version is '2\.0\.0'"):
        release.check(text, release.installed_version())


def test_rewrite_without_version_is_a_usage_error() -> None:
    done = script("--repository", "acme/ai-context")
    assert done.returncode == 2
    assert "needs --repository and --version" in done.stderr
