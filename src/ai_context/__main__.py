"""`ai-context` (the installed script) and `python -m ai_context`: the command line, with the MCP
server's `mcp` command beside its own. The two faces import neither the other; this module,
above both, puts them side by side."""

from __future__ import annotations

from collections.abc import Sequence

from ai_context.cli.main import main as cli_main
from ai_context.mcp import add_mcp_command


def main(argv: Sequence[str] | None = None) -> int:
    return cli_main(argv, more={"mcp": add_mcp_command})


if __name__ == "__main__":
    raise SystemExit(main())
