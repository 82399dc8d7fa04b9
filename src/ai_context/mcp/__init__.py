"""`ai-context mcp`: the agent commands as an MCP server over stdio (server.py does the work).
Only running the server imports the optional `mcp` SDK."""

from __future__ import annotations

import argparse
from typing import Any, TextIO


def add_mcp_command(sub: Any) -> None:
    p = sub.add_parser(
        "mcp",
        help="serve the agent commands as MCP tools over stdio (needs ai-context[mcp])",
        description="An MCP server over stdio. Settings as the command line's: GITHUB_TOKEN, "
        "GITHUB_REPOSITORY (or --repo), AI_CONTEXT_ACTOR (or --actor), GITHUB_API_URL, "
        "AI_CONTEXT_CACHE.",
    )
    p.add_argument("--repo", metavar="OWNER/NAME", help="default: $GITHUB_REPOSITORY or origin")
    p.add_argument("--actor", metavar="ID", help="this machine's actor id ($AI_CONTEXT_ACTOR)")
    p.add_argument(
        "--cache", metavar="PATH", help="default: $AI_CONTEXT_CACHE or .ai-context/cache"
    )
    p.set_defaults(handler=cmd_mcp)


def cmd_mcp(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    del out, stdin  # the SDK owns the process's stdio
    from ai_context.mcp.server import serve  # noqa: PLC0415

    return serve(repo=args.repo, actor=args.actor, cache=args.cache)
