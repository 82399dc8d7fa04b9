"""The ClickUp mirror an agent's save, handoff or done triggers (the seeds' state-sync), for the
command line and the MCP server alike; the face gives the settings and where notes go."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from ai_context.core.block.model import Block
    from ai_context.core.models import Issue

CLICKUP_TOKEN_VARS = ("INPUT_CLICKUP-TOKEN", "AI_CONTEXT_CLICKUP_TOKEN", "CLICKUP_TOKEN")


def agent_mirror_hook(
    env: Mapping[str, str], workspace: Path, note: Callable[[str], None]
) -> Callable[[Issue, Block], None] | None:
    """The mirror to run after an agent's write, with the settings of ENV and WORKSPACE; None
    without a ClickUp token. A failing mirror is a NOTE (the faces write it on stderr, so a
    `--format json` answer stays parseable), never fatal: the issue holds the block."""
    if not any(env.get(name, "").strip() for name in CLICKUP_TOKEN_VARS):
        return None

    def hook(issue: Issue, block: Block) -> None:
        del block  # the mirror renders from the issue body, the authority
        from ai_context.adapters.clickup import ClickUpError  # noqa: PLC0415
        from ai_context.adapters.config import load_config  # noqa: PLC0415
        from ai_context.core.errors import AIContextError  # noqa: PLC0415
        from ai_context.jobs.mirror.job import mirror_issues  # noqa: PLC0415

        def log(line: str) -> None:
            note(f"mirror: {line}")

        try:
            settings = load_config(env, workspace)
            if settings.clickup_token is None:
                return
            report, _ = mirror_issues(lambda: [issue], settings, workspace, log=log)
        except ClickUpError as exc:
            note(f"mirror: ClickUp failed ({exc}); the issue holds the block")
            return
        except AIContextError as exc:  # a bad config file or template: the block has landed
            note(f"mirror: skipped ({exc})")
            return
        for findings in report.findings.values():
            for f in findings:
                note(f"mirror: {f.code} {f.severity} {f.message}")
        for line in (*report.notes, *report.errors):
            note(f"mirror: {line}")

    return hook
