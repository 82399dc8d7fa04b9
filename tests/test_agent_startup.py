"""Issue 14, the agent's side: what `resume`, `save`, `handoff`, `done` and the Claude Code hooks
import, each run as a whole `python -X importtime -m ai_context` process against the loopback
GitHub. Agents run them at every checkpoint; pydantic, PyYAML and Jinja are tens of
milliseconds of start-up none of them uses (a real handoff or done still loads the lease job,
with its settings file, after the write: not measured here)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT, SEED_BLOCK, run_process
from tests.fakes import GitHubFake

REPO = "acme/shop"
NOT_FOR_AGENTS = ("pydantic", "pydantic_core", "yaml", "jinja2")
# The GitHub client: PyGithub, on requests and urllib3 (which reads importlib.metadata). The
# hooks that never call GitHub load none of it.
GITHUB_CLIENT = ("github", "requests", "urllib3", "importlib.metadata")
NOT_FOR_LOCAL_HOOKS = (*NOT_FOR_AGENTS, *GITHUB_CLIENT)


class Checkout:
    """A project with a git history and a cache the agent already saved into."""

    def __init__(self, root: Path, fake: GitHubFake) -> None:
        self.root = root
        self.env = {
            **os.environ,
            "GITHUB_TOKEN": "t",
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_API_URL": fake.url,
            "AI_CONTEXT_CACHE": str(root / "cache"),
            "AI_CONTEXT_ACTOR": "cc-ariel-laptop",
            "PYTHONPATH": str(ROOT / "src"),
            "GIT_AUTHOR_NAME": "Ariel",
            "GIT_AUTHOR_EMAIL": "ariel@example.com",
            "GIT_COMMITTER_NAME": "Ariel",
            "GIT_COMMITTER_EMAIL": "ariel@example.com",
        }
        for name in ("GH_TOKEN", "CLICKUP_TOKEN"):
            self.env.pop(name, None)
        for argv in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "start"]):
            subprocess.run(["git", *argv], cwd=root, env=self.env, check=True)

    def run(self, argv: list[str], stdin: str = "") -> tuple[set[str], str]:
        """(every module the process imported, its stdout)."""
        env = {**self.env, "PYTHONPROFILEIMPORTTIME": "1"}  # -X importtime
        done = run_process(argv, env, self.root, stdin=stdin)
        assert done.returncode == 0, done.stderr[-2000:] + done.stdout
        lines = done.stderr.splitlines()
        rows = [ln.split("|")[-1].strip() for ln in lines if ln.startswith("import time:")]
        return set(rows) - {"package"}, done.stdout

    def hook_input(self, event: str, **fields: object) -> str:
        """The JSON Claude Code sends a hook on stdin (as in test_hooks_e2e.py)."""
        payload = {
            "session_id": "3f1c2e4a",
            "transcript_path": str(self.root / "transcript.jsonl"),
            "cwd": str(self.root),
            "hook_event_name": event,
            **fields,
        }
        return json.dumps(payload)


def heavy(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in names))


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Checkout]:
    with GitHubFake() as fake:
        fake.add_issue(REPO, "Booking history", "Human text.\n", labels=["in-progress"])
        project = Checkout(tmp_path_factory.mktemp("project"), fake)
        modules, _ = project.run(["save", "1", "--now", "2026-05-26T14:40:00Z"], SEED_BLOCK)
        assert heavy(modules, NOT_FOR_AGENTS) == []
        yield project


def test_resume_imports_the_http_client_and_nothing_heavy(checkout: Checkout) -> None:
    modules, out = checkout.run(["resume", "--format", "json"])
    assert json.loads(out)["issue"] == 1 and json.loads(out)["github_calls"] == 1
    assert {"ai_context.adapters.cache", "ai_context.rules.reconcile", "github"} <= modules
    assert heavy(modules, NOT_FOR_AGENTS) == []


def test_the_stop_hook_imports_neither_pydantic_nor_an_http_client(checkout: Checkout) -> None:
    stdin = checkout.hook_input("Stop", stop_hook_active=False)
    modules, out = checkout.run(["hook", "stop", "--now", "2026-05-27T09:00:00Z"], stdin)
    assert json.loads(out)["decision"] == "block"  # the cache was read, git was asked
    assert "ai_context.adapters.cache" in modules and "ai_context.adapters.gitrepo" in modules
    assert heavy(modules, NOT_FOR_LOCAL_HOOKS) == []


def test_the_post_tool_use_hook_imports_neither(checkout: Checkout) -> None:
    stdin = checkout.hook_input(
        "PostToolUse", tool_name="Bash", tool_input={"command": "git commit -m x"}
    )
    modules, _ = checkout.run(["hook", "post-tool-use"], stdin)
    assert "ai_context.adapters.cache" in modules
    assert heavy(modules, NOT_FOR_LOCAL_HOOKS) == []


def test_the_session_start_hook_imports_what_resume_does(checkout: Checkout) -> None:
    stdin = checkout.hook_input("SessionStart", source="startup")
    modules, out = checkout.run(["hook", "session-start"], stdin)
    assert "AI Context" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert "github" in modules and heavy(modules, NOT_FOR_AGENTS) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["handoff", "1", "--to", "cc-ariel-phone", "--dry-run"],
        ["done", "1", "--dry-run", "--shipped", "the booking history"],
    ],
)
def test_handoff_and_done_until_the_write_import_nothing_heavy(
    checkout: Checkout, argv: list[str]
) -> None:
    modules, _ = checkout.run(argv)
    assert "ai_context.jobs.agent.finishing" in modules
    assert heavy(modules, NOT_FOR_AGENTS) == []


def test_the_adapter_loads_the_github_client_only_when_a_client_is_made() -> None:
    """Its errors and models come without PyGithub: a command that only names them (or never
    calls GitHub) does not pay for PyGithub's import."""
    probe = (
        "import sys; import ai_context.adapters.github as a; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'github', 'requests', 'urllib3'}));"
        "a.GitHub(type('T', (), {'get_secret_value': lambda s: 't'})(), 'o/r'); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'github', 'requests', 'urllib3'}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        timeout=60,
        check=True,
    )
    assert done.stdout.splitlines() == ["[]", "['github', 'requests', 'urllib3']"]
