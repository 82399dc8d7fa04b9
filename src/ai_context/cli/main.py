"""The `ai-context` command: the parser, its command groups imported only when used, and the
one place that maps errors to exit codes (core/errors.py's `Exit`) and messages (`main`). A bug
of ours is exit 3 in one line (the traceback with `--debug`); a bare `ai-context` prints the
help and exits 2, so the Action runs only as `ai-context action`."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from importlib import import_module
from typing import Any, NoReturn, TextIO

from ai_context.cli import validate
from ai_context.cli.common import ENVIRONMENT_HELP, HelpFormatter
from ai_context.core.errors import AIContextError, Exit, UsageError

DEBUG_FLAG, DEBUG_ENV = "--debug", "AI_CONTEXT_DEBUG"


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is a `UsageError` (exit 2 through `main`, JSON with
    `--format json`) instead of a `sys.exit` from deep inside the parser. Its help formatter
    (every command's, as subparsers are Parsers too) is common.HelpFormatter."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        command = self.prog.removeprefix("ai-context").strip()
        raise UsageError(f"{command}: {message}" if command else message)


Register = Callable[[Any], None]  # adds a group's commands to the subparsers


def build_parser(
    command: str | None = None, more: Mapping[str, Register] | None = None
) -> argparse.ArgumentParser:
    """The parser; with COMMAND, only that command's module is imported and registered. MORE:
    the other faces' commands by name (`action`, `mcp`; see __main__.py)."""
    parser = Parser(
        prog="ai-context",
        description="Validate, mirror and report the AI Context blocks of GitHub issues.",
        epilog=ENVIRONMENT_HELP + ". Run `ai-context COMMAND --help` for a command's flags.",
    )
    parser.add_argument("--version", action="store_true", help="show the version and exit")
    parser.add_argument(
        DEBUG_FLAG,
        action="store_true",
        help=f"show the traceback of an internal error (or set {DEBUG_ENV}=1)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    validate.register(sub)

    groups = {**GROUPS, **(more or {})}
    wanted = _groups_for(command, groups)
    for group, register in groups.items():  # a fixed order: --help lists them the same way
        if group in wanted:
            register(sub)
    return parser


def _lazy(module: str, name: str) -> Register:
    """A group whose module is imported only when its commands run (or for --help): an
    agent's `resume` must not pay for jinja2 and the digest models at every checkpoint."""

    def register(sub: Any) -> None:
        getattr(import_module(module), name)(sub)

    return register


# Each group: its module, the function that registers its commands, and those commands.
_GROUPS = (
    ("git", "ai_context.cli.git", "add_derive_command", ("derive",)),
    ("session", "ai_context.cli.session", "add_session_commands", ("session", "scrub")),
    ("digest", "ai_context.cli.digest", "register", ("digest", "summary", "status", "slack")),
    ("report", "ai_context.cli.report", "add_report_command", ("report",)),
    ("agent", "ai_context.cli.agent", "add_agent_commands", ("save", "resume", "handoff", "done")),
    ("lease", "ai_context.cli.lease", "add_lease_commands", ("claim", "renew", "release", "who")),
    ("mirror", "ai_context.cli.mirror", "add_mirror_command", ("mirror",)),
    ("setup", "ai_context.cli.setup", "add_setup_command", ("setup",)),
    ("hook", "ai_context.cli.hook", "add_hook_command", ("hook",)),
)
GROUPS: dict[str, Register] = {name: _lazy(module, fn) for name, module, fn, _ in _GROUPS}
COMMAND_GROUPS = {command: name for name, _, _, commands in _GROUPS for command in commands}


# Commands defined here: they need no group, so `validate` imports nothing it does not use.
OWN_COMMANDS = frozenset({"validate"})
# `ai-context --version` with no command: it needs no command at all (registering every group
# cost it the imports of every command, ~200 ms).
VERSION_ONLY = "--version"


def _groups_for(command: str | None, groups: Mapping[str, Register]) -> set[str]:
    """The groups to register: the command's own, none for ours or for `--version` alone, all
    for help or a typo (so the parser can list every command and suggest one)."""
    if command in OWN_COMMANDS or command == VERSION_ONLY:
        return set()
    if command in COMMAND_GROUPS:
        return {COMMAND_GROUPS[command]}
    if command in groups.keys() - GROUPS.keys():  # another face's command: its own group
        return {command}
    return set(groups)


def _wants_json(argv: Sequence[str]) -> bool:
    """`--format json` anywhere in ARGV (read before parsing, for errors the parser raises)."""
    pairs = zip(argv, [*argv[1:], ""], strict=False)
    return any(a == "--format=json" or (a == "--format" and b == "json") for a, b in pairs)


def report_error(exc: AIContextError, as_json: bool, out: TextIO, err: TextIO) -> int:
    """The one mapping of an error to the command line: its message on stderr (and a JSON
    object on stdout with `--format json`), its kind's exit code."""
    code = int(exc.exit_code)
    err.write(f"ai-context: {exc}\n")
    if as_json:
        import json  # noqa: PLC0415 - start-up: only for --format json

        out.write(json.dumps({"error": str(exc), "exit": code}, ensure_ascii=False) + "\n")
    return code


def main(argv: Sequence[str] | None = None, more: Mapping[str, Register] | None = None) -> int:
    """The command line: ARGV (default the process's), with MORE commands (build_parser)."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    as_json = _wants_json(args_list)
    try:
        first = next((a for a in args_list if not a.startswith("-")), None)
        if first is None and VERSION_ONLY in args_list and not {"-h", "--help"} & set(args_list):
            first = VERSION_ONLY
        parser = build_parser(first, more)
        if argv is None:  # a process of its own (not a test calling main)
            # Its modules live as long as the process: the collector need not walk them again,
            # in each full collection nor at exit (about 5 ms, a tenth of a `validate`).
            import gc  # noqa: PLC0415

            gc.freeze()
        args = parser.parse_args(args_list)
        if args.version:  # resolved only when asked: one small import (ai_context.version)
            from ai_context import version  # noqa: PLC0415

            sys.stdout.write(f"ai-context {version()}\n")
            return int(Exit.OK)
        if not getattr(args, "handler", None):
            parser.print_help(sys.stderr)  # a bare `ai-context`: help, never the Action
            return int(Exit.USAGE)
        as_json = getattr(args, "format", None) == "json"
        code: int = args.handler(args, sys.stdout, sys.stdin)
    except AIContextError as exc:
        return report_error(exc, as_json, sys.stdout, sys.stderr)
    except BrokenPipeError:
        return _reader_left()
    except Exception as exc:  # a bug of ours: never a findings exit (1), never a bare traceback
        debug = DEBUG_FLAG in args_list or os.environ.get(DEBUG_ENV, "") == "1"
        return internal_error(exc, as_json, debug, sys.stdout, sys.stderr)
    return int(code)


def internal_error(exc: Exception, as_json: bool, debug: bool, out: TextIO, err: TextIO) -> int:
    """An unexpected exception: one line naming it and how to report it (exit 3); the
    traceback only when DEBUG asks for it."""
    if debug:
        import traceback  # noqa: PLC0415 - only for a bug, and only when asked

        traceback.print_exception(exc, file=err)
    what = " ".join(str(exc).split())[:300]  # one line, whatever the exception holds
    line = (
        f"internal error: {type(exc).__name__}: {what}. This is a bug in ai-context; please "
        f"report it to the maintainers with the command you ran and the output of "
        f"`ai-context {DEBUG_FLAG} COMMAND ...`"
    )
    return report_error(AIContextError(line), as_json, out, err)  # its exit code is 3


def _reader_left() -> int:
    """The reader closed the pipe (`validate ... | head`): no traceback, and nothing more is
    written; the status a Unix tool killed by SIGPIPE has (128 + 13)."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # Python flushes at exit
    return 141
