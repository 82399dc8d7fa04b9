"""`ai-context` (the installed script) and `python -m ai_context`: the command line, with the
Action's `action` and the MCP server's `mcp` commands beside its own. The three faces import
none of the others; this module, above them, puts them side by side."""

from __future__ import annotations

from collections.abc import Sequence

from ai_context.action import add_action_command
from ai_context.cli.main import main as cli_main
from ai_context.mcp import add_mcp_command


def main(argv: Sequence[str] | None = None) -> int:
    return cli_main(argv, more={"action": add_action_command, "mcp": add_mcp_command})


if __name__ == "__main__":
    raise SystemExit(main())
