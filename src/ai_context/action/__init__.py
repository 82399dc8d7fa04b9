"""The Action's face: event -> route -> jobs -> outputs, step summary and annotations."""

from __future__ import annotations

import argparse
from typing import Any, TextIO


def add_action_command(sub: Any) -> None:
    """`ai-context action`, the container's entrypoint; a bare `ai-context` never runs it."""
    p = sub.add_parser(
        "action",
        help="run the GitHub Action (the container's entrypoint; reads the runner's INPUT_* "
        "and GITHUB_* variables). A bare `ai-context` never runs it.",
    )
    p.set_defaults(handler=cmd_action)


def cmd_action(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    """The Action: event, settings and inputs come from the runner's environment."""
    del args, out, stdin
    from ai_context.action.run import run_action  # noqa: PLC0415 - only in an Action run

    return run_action()
