"""Shared test helpers: the seed's example block, the bundled examples and templates, the
in-process and process CLI runners, and the loopback GitHub and ClickUp fakes' fixtures."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from ai_context.adapters.github import GitHub
from ai_context.adapters.templates import Templates
from ai_context.cli.main import main
from ai_context.core.secret import Secret
from tests.fakes import ClickUpFake, GitHubFake

# No timing in tests (these machines are shared and noisy): hypothesis's per-example deadline
# and its too-slow health check are timed assertions, so they are off for every property test.
settings.register_profile("house", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("house")

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
# The bundled templates' environment, which the rules' renders take as an argument.
BUNDLED = Templates().env

SEED_BLOCK = """\
## AI Context (updated by Claude — do not edit manually)

- **Active actor:** cc-ariel-laptop (Claude Code on Ariel's laptop)
- **Phase:** implementing (chunk 3 of 5)
- **Last updated:** 2026-05-26T14:32:00Z
- **Plan:**
  1. Add UserBookingRepository (done)
  2. Wire into BookingService (done)
  3. Add unit tests for repository (in progress)
  4. Add integration test (pending)
  5. Open PR (pending)
- **Files touched:** apps/api/src/booking/{repository,service,booking.module}.ts, plus 4 test files
- **Decisions:**
  - Chose Mongo over Aurora for booking history (volume + write patterns)
  - Single-document booking model with embedded changes array
- **Blockers:** none
- **Next step:** Finish unit tests in booking.repository.spec.ts"""


# The REST adapter's tests answer it at the HTTP level (`responses`) at API, for this token.
API = "https://ghe.example.com:443/api/v3"
TOKEN = Secret("ghs_" + "x" * 36)


def adapter(**kwargs: Any) -> GitHub:
    """The GitHub adapter for acme/shop at API, with no pause between writes and no backoff
    unless KWARGS say otherwise."""
    options: dict[str, Any] = {"api_url": API, "write_interval": 0, "backoff": 0, **kwargs}
    return GitHub(TOKEN, "acme/shop", **options)


@pytest.fixture
def seed_block() -> str:
    return SEED_BLOCK


def run_cli(
    argv: list[str], stdin: str | io.StringIO = "", cwd: Path | None = None
) -> tuple[int, str, str]:
    """`ai-context ARGV` in this process, reading STDIN (a string, or a stream such as a fake
    terminal), from CWD if given: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdout, sys.stderr, sys.stdin
    here = Path.cwd()
    sys.stdout, sys.stderr = out, err
    sys.stdin = stdin if isinstance(stdin, io.StringIO) else io.StringIO(stdin)
    try:
        if cwd is not None:
            os.chdir(cwd)
        code = main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    finally:
        os.chdir(here)
        sys.stdout, sys.stderr, sys.stdin = old
    return code, out.getvalue(), err.getvalue()


def run_process(
    argv: list[str],
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 120,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """`python -m ai_context ARGV` as its own process, as a user runs it: this checkout's src/
    on its path and, beside PATH, only ENV in its environment; STDIN its input, if given."""
    base = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, "-m", "ai_context", *argv],
        input=stdin,
        capture_output=True,
        text=True,
        env={**base, **(env or {})},
        cwd=cwd,
        timeout=timeout,
        check=False,
    )


@pytest.fixture(scope="module")
def github_server() -> Iterator[GitHubFake]:
    """One loopback GitHub fake per test module: starting a server per test is slow."""
    with GitHubFake() as fake:
        yield fake


@pytest.fixture
def github_fake(github_server: GitHubFake) -> GitHubFake:
    """The module's GitHub fake, as new for this test (GitHubFake.reset)."""
    github_server.reset()
    return github_server


@pytest.fixture
def clickup_fake() -> Iterator[ClickUpFake]:
    """A loopback ClickUp whose list 901 has the mirror's Text field `ai_context` (f-ai)."""
    with ClickUpFake() as fake:
        fake.add_field("901", "ai_context", field_id="f-ai")
        yield fake


@pytest.fixture
def agent_fake(
    github_fake: GitHubFake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> GitHubFake:
    """The GitHub fake with one issue, acme/shop#1 (a person's text, assigned to ariel), and
    this process's environment pointing the agent commands at it, their cache in TMP_PATH."""
    github_fake.add_issue("acme/shop", "Booking history", "Human text.\n", assignees=["ariel"])
    for name in ("GH_TOKEN", "AI_CONTEXT_ACTOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_TOKEN", "t")
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/shop")
    monkeypatch.setenv("GITHUB_API_URL", github_fake.url)
    monkeypatch.setenv("AI_CONTEXT_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    return github_fake
