"""The package as PyPI will carry it: built the way release.yml builds it, installed into a fresh
venv that never sees this checkout, then run as an agent and as the Action would run it.

`python -m build` makes the sdist and then the wheel *from the sdist*, so a file the sdist
forgets fails here too. The version is passed as SETUPTOOLS_SCM_PRETEND_VERSION, as the
release workflow passes the tag's; here it is the development install's own version, so the
installed `ai-context --version` must print exactly what `importlib.metadata` says for the
checkout. The dry-run Action renders the digest from the templates, which therefore have to
be inside the wheel.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from tests.actionrun import run_action
from tests.conftest import SEED_BLOCK
from tests.fakes import GitHubFake

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "101-booking-repository.md"
TOKEN = "ghs_wheelTestToken0123456789abcdefABCDEF"
T0 = datetime(2026, 5, 26, 15, 0, tzinfo=UTC)

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Installed:
    cli: Path  # the venv's ai-context script
    env: dict[str, str]
    work: Path  # a folder with nothing of the repository in it
    wheel: Path
    version: str


def run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    kwargs.setdefault("timeout", 120)
    return subprocess.run(cmd, capture_output=True, text=True, check=False, **kwargs)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    base = tmp_path_factory.mktemp("wheel")
    dist, venv, work = base / "dist", base / "venv", base / "work"
    work.mkdir()
    expected = version("ai-context")
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"} and not k.startswith("PIP_")
    }
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    built = run(
        [sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)],
        env={**env, "SETUPTOOLS_SCM_PRETEND_VERSION": expected},
        timeout=600,
    )
    assert built.returncode == 0, f"python -m build failed\n{built.stdout}\n{built.stderr}"
    (wheel,) = dist.glob("*.whl")
    assert len(list(dist.glob("*.tar.gz"))) == 1, "no sdist"

    made = run([sys.executable, "-m", "venv", str(venv)], env=env, timeout=120)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    done = run([str(python), "-m", "pip", "install", "--quiet", str(wheel)], env=env, timeout=600)
    assert done.returncode == 0, f"pip install of the wheel failed\n{done.stdout}\n{done.stderr}"
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    yield Installed(venv / "bin" / "ai-context", env, work, wheel, expected)


def test_wheel_holds_the_package_and_its_templates_and_no_tests(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = wheel.namelist()
    templates = [n for n in names if n.startswith("ai_context/templates/")]
    assert {Path(n).name for n in templates} >= {"digest.md.j2", "task.md.j2", "mirror.txt.j2"}
    assert not [n for n in names if n.startswith(("tests/", "benchmarks/", "examples/"))]


def test_version_is_the_development_installs(installed: Installed) -> None:
    done = run([str(installed.cli), "--version"], cwd=installed.work, env=installed.env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"ai-context {installed.version}\n"
    with zipfile.ZipFile(installed.wheel) as wheel:
        (metadata,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
        headers = wheel.read(metadata).decode("utf-8").split("\n\n", 1)[0].splitlines()
    assert f"Version: {installed.version}" in headers


def test_validate_a_bundled_example(installed: Installed) -> None:
    example = installed.work / EXAMPLE.name
    shutil.copyfile(EXAMPLE, example)
    done = run(
        [
            str(installed.cli),
            "validate",
            example.name,
            "--format",
            "json",
            "--now",
            "2026-05-26T15:00:00Z",
        ],
        cwd=installed.work,
        env=installed.env,
        timeout=60,
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    (result,) = json.loads(done.stdout)
    assert result["path"] == example.name
    assert result["complete"] is True
    assert result["block"]["actor"] == "cc-ariel-laptop"


def test_the_action_dry_run_renders_the_digest_from_the_packaged_templates(
    installed: Installed,
) -> None:
    with GitHubFake(token=TOKEN, now=T0) as gh:
        gh.add_issue("o/r", "Booking <!channel>", SEED_BLOCK, number=1)
        gh.add_issue("o/r", "Digest", "", number=9, labels=["ai-context:digest"])
        result = run_action(
            installed.work / "action",
            gh.url,
            "schedule",
            {},
            token=TOKEN,
            inputs={"dry-run": "true"},
            extra_env={"AI_CONTEXT_NOW": "2026-05-26T15:00:00Z", "PATH": installed.env["PATH"]},
            command=[str(installed.cli), "action"],
        )
        written = gh.comments("o/r", 9) + gh.comments("o/r", 1)
    assert result.code == 0, f"{result.stdout}\n{result.stderr}"
    assert "would create a digest comment on #9" in result.stdout
    assert "## AI Context digest" in result.summary  # digest.md.j2, from the wheel
    assert "Booking &lt;!channel&gt;" in result.summary  # issue text stays data
    told = [line for line in result.text.splitlines() if not line.startswith("::add-mask::")]
    assert not [line for line in told if TOKEN in line], "the token was printed unmasked"
    assert written == [], "a dry run wrote to GitHub"
