"""The ClickUp mirror an agent's save, handoff or done triggers (the seeds' state-sync), for the
command line and the MCP server alike."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ai_context.core.block.model import Block
    from ai_context.core.models import Issue

CLICKUP_TOKEN_VARS = ("INPUT_CLICKUP-TOKEN", "AI_CONTEXT_CLICKUP_TOKEN", "CLICKUP_TOKEN")


def agent_mirror_hook() -> Callable[[Issue, Block], None] | None:
    """The mirror to run after an agent's write; None without a ClickUp token. A failing mirror is
    reported on stderr (a JSON answer stays parseable), never fatal: the issue holds the block."""
    out = sys.stderr
    if not any(os.environ.get(name, "").strip() for name in CLICKUP_TOKEN_VARS):
        return None

    def hook(issue: Issue, block: Block) -> None:
        del block  # the mirror renders from the issue body, the authority
        from ai_context.adapters import clients  # noqa: PLC0415
        from ai_context.adapters.clickup import ClickUpError  # noqa: PLC0415
        from ai_context.adapters.config import load_config  # noqa: PLC0415
        from ai_context.core.errors import ConfigError  # noqa: PLC0415
        from ai_context.jobs.mirror.job import mirror_templates  # noqa: PLC0415
        from ai_context.jobs.mirror.run import run_mirror  # noqa: PLC0415

        workspace = Path.cwd()
        try:
            settings = load_config(os.environ, workspace)
            config, actors = settings.mirror, settings.actors
            user_dir = workspace / settings.templates if settings.templates else None
            templates = mirror_templates(user_dir)
        except ConfigError as exc:
            out.write(f"mirror: skipped ({exc})\n")
            return
        if settings.clickup_token is None:
            return
        store = clients.clickup(
            settings.clickup_token, api_url=settings.clickup_api_url, http=settings.http
        )

        def log(line: str) -> None:
            out.write(f"mirror: {line}\n")

        try:
            report = run_mirror(
                [issue],
                store,
                config=config,
                actors=actors,
                templates=templates,
                team_id=settings.clickup_team_id,
                log=log,
            )
        except ClickUpError as exc:
            out.write(f"mirror: ClickUp failed ({exc}); the issue holds the block\n")
            return
        for findings in report.findings.values():
            for f in findings:
                out.write(f"mirror: {f.code} {f.severity} {f.message}\n")
        for line in (*report.notes, *report.errors):
            out.write(f"mirror: {line}\n")

    return hook
