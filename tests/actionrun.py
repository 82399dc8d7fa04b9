"""Run the Action as GitHub would: `python -m ai_context action` in a subprocess with the
runner's environment (event file, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY) against loopback fakes.

`command` runs another installation instead (an installed wheel's `ai-context action`); the
checkout's src/ is then kept off its path, so only what was installed can answer."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fakes import GitHubFake

ROOT = Path(__file__).resolve().parents[1]
NOW = "2026-05-26T15:00:00Z"  # a scheduled run's clock unless told otherwise


@dataclass
class ActionRun:
    code: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str

    @property
    def text(self) -> str:
        return self.stdout + self.stderr + self.summary + json.dumps(self.outputs)


def parse_outputs(text: str) -> dict[str, str]:
    """GITHUB_OUTPUT's `name<<DELIM ... DELIM` records."""
    outputs: dict[str, str] = {}
    pattern = re.compile(r"^([\w-]+)<<(\S+)\n(.*?)\n\2$", re.MULTILINE | re.DOTALL)
    for match in pattern.finditer(text):
        outputs[match.group(1)] = match.group(3)
    return outputs


def run_action(
    tmp: Path,
    api_url: str,
    event: str,
    payload: dict[str, Any],
    *,
    repository: str = "o/r",
    token: str = "t",  # noqa: S107 - the fake's default test token
    inputs: dict[str, str] | None = None,
    extra_env: dict[str, str] | None = None,
    timeout: float = 120,
    command: Sequence[str] | None = None,
) -> ActionRun:
    tmp.mkdir(parents=True, exist_ok=True)
    event_path = tmp / "event.json"
    event_path.write_text(json.dumps(payload), encoding="utf-8")
    output_path, summary_path = tmp / "output.txt", tmp / "summary.md"
    output_path.write_text("", encoding="utf-8")
    summary_path.write_text("", encoding="utf-8")
    workspace = tmp / "workspace"
    workspace.mkdir(exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(ROOT / "src"),
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": event,
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_REPOSITORY": repository,
        "GITHUB_API_URL": api_url,
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_OUTPUT": str(output_path),
        "GITHUB_STEP_SUMMARY": str(summary_path),
        "GITHUB_RUN_ID": "1",
        "INPUT_GITHUB-TOKEN": token,
        "INPUT_WRITE-INTERVAL": "0",
    }
    env.update({f"INPUT_{k.upper()}": v for k, v in (inputs or {}).items()})
    env.update(extra_env or {})
    if command is not None:
        del env["PYTHONPATH"]
    proc = subprocess.run(
        [sys.executable, "-m", "ai_context", "action"] if command is None else list(command),
        env=env,
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return ActionRun(
        proc.returncode,
        proc.stdout,
        proc.stderr,
        parse_outputs(output_path.read_text(encoding="utf-8")),
        summary_path.read_text(encoding="utf-8"),
    )


def scheduled(
    fake: GitHubFake,
    tmp: Path,
    config: str = "",
    *,
    token: str = "t",  # noqa: S107 - the fake's default test token
    env: Mapping[str, str] | None = None,
    **inputs: str,
) -> ActionRun:
    """A scheduled run in the folder TMP against FAKE: CONFIG (when given) as the workspace's
    .github/ai-context.yml, INPUTS as the Action's inputs, ENV over AI_CONTEXT_NOW=NOW."""
    if config:
        folder = tmp / "workspace" / ".github"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "ai-context.yml").write_text(config, encoding="utf-8")
    now = {"AI_CONTEXT_NOW": NOW, **(env or {})}
    return run_action(tmp, fake.url, "schedule", {}, token=token, inputs=inputs, extra_env=now)
