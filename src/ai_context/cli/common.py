"""What every `ai-context` command shares: exit codes (docs/design.md §4) and argument types.

Kept apart from cli.py so each command module can import it without importing the others.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta
from typing import Any

from ai_context.core.block import Block, format_timestamp
from ai_context.core.durations import parse_duration

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_SERVICE, EXIT_CONFLICT, EXIT_INCOMPLETE = range(6)


class UsageError(Exception):
    """Bad usage or configuration: exit 2 with the message."""


def timestamp_arg(value: str) -> datetime:
    """`--now` and friends: ISO 8601, UTC when no offset is given."""
    try:
        stamp = datetime.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not an ISO 8601 time; write it like 2026-05-27T09:00:00Z"
        ) from None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


def duration_arg(value: str) -> timedelta:
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def block_json(block: Block | None) -> dict[str, Any] | None:
    """The stable JSON shape of a block: keys may be added, never renamed."""
    if block is None:
        return None
    return {
        "actor": block.actor,
        "actor_description": block.actor_description,
        "phase": block.phase,
        "chunk": list(block.chunk) if block.chunk else None,
        "last_updated": format_timestamp(block.last_updated) or None,
        "plan": [step.model_dump() for step in block.plan],
        "files_touched": block.files_touched,
        "paths": list(block.paths),
        "decisions": list(block.decisions),
        "blockers": list(block.blockers),
        "next_step": block.next_step,
        "extra": dict(block.extra),
    }
