"""The `ai-context` command: the parser, lazy command groups (`report` is cli/report.py),
`validate`, and the one place that maps errors to exit codes and messages (`main`).

Exit codes are core/errors.py's `Exit`: 0 done; 1 findings at or above the fail threshold (for
`validate`: errors); 2 bad configuration or usage; 3 an outside service failed; 4 conflict or
lease held by another; 5 incomplete state. A bare `ai-context` prints the help and exits 2; the
Action runs only as `ai-context action`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from ai_context.cli.common import (
    ENVIRONMENT_HELP,
    HelpFormatter,
    add_format,
    block_json,
    duration_arg,
    read_file,
    read_stream,
    timestamp_arg,
)
from ai_context.core.errors import AIContextError, ConfigError, Exit, UsageError
from ai_context.rules.checks import CheckConfig, CheckResult, check_body

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["UsageError", "build_parser", "main"]
DEFAULT_CONFIG = ".github/ai-context.yml"
_timestamp, _duration = timestamp_arg, duration_arg


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


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; with COMMAND, only that command's module is imported and registered."""
    parser = Parser(
        prog="ai-context",
        description="Validate, mirror and report the AI Context blocks of GitHub issues.",
        epilog=ENVIRONMENT_HELP + ". Run `ai-context COMMAND --help` for a command's flags.",
    )
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    action = sub.add_parser(
        "action",
        help="run the GitHub Action (the container's entrypoint; reads the runner's INPUT_* "
        "and GITHUB_* variables). A bare `ai-context` never runs it.",
    )
    action.set_defaults(handler=cmd_action)

    def checking(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--now", type=_timestamp, help="fix the clock (ISO 8601; default: the real one)"
        )
        p.add_argument(
            "--stale-after", type=_duration, default=None, help="e.g. 90m, 24h, 3d (default 24h)"
        )
        add_format(p)

    validate = sub.add_parser(
        "validate", help="check the AI Context block of Markdown files or stdin"
    )
    validate.add_argument("paths", nargs="+", metavar="PATH", help="a file, or - for stdin")
    validate.add_argument(
        "--config",
        type=_path,
        metavar="FILE",
        help=f"the settings (required:, stale-after:) to check with (default {DEFAULT_CONFIG} "
        "when present)",
    )
    checking(validate)
    validate.set_defaults(handler=cmd_validate)

    wanted = _groups_for(command)
    for group, register in GROUPS.items():  # a fixed order: --help lists them the same way
        if group in wanted:
            register(sub)
    return parser


class _VersionAction(argparse.Action):
    """`--version`, resolved only when asked: reading the installed distribution's metadata
    would otherwise cost every command its start-up time."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        kwargs.setdefault("help", "show the version and exit")
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        from ai_context import version  # noqa: PLC0415

        sys.stdout.write(f"ai-context {version()}\n")
        parser.exit()


def cmd_action(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    """The Action: event, settings and inputs come from the runner's environment."""
    del args, out, stdin
    from ai_context.action import run_action  # noqa: PLC0415 - only in an Action run

    return run_action()


# Commands that live in their own modules, imported only when they run (or for --help): an
# agent's `resume` must not pay for jinja2 and the digest models at every checkpoint.
def _git(sub: Any) -> None:
    from ai_context.cli.git import add_derive_command  # noqa: PLC0415

    add_derive_command(sub)


def _session(sub: Any) -> None:
    from ai_context.cli.session import add_session_commands  # noqa: PLC0415

    add_session_commands(sub)


def _digest(sub: Any) -> None:
    from ai_context.cli import digest as cli_digest  # noqa: PLC0415

    cli_digest.register(sub, timestamp=timestamp_arg, duration=duration_arg, usage_error=UsageError)


def _report(sub: Any) -> None:
    from ai_context.cli.report import add_report_command  # noqa: PLC0415

    add_report_command(sub)


def _agent(sub: Any) -> None:
    from ai_context.cli.agent import add_agent_commands  # noqa: PLC0415

    add_agent_commands(sub)


def _mirror(sub: Any) -> None:
    from ai_context.cli.mirror import add_mirror_command  # noqa: PLC0415

    add_mirror_command(sub)


def _lease(sub: Any) -> None:
    from ai_context.cli.lease import add_lease_commands  # noqa: PLC0415

    add_lease_commands(sub)


def _hook(sub: Any) -> None:
    from ai_context.cli.hook import add_hook_command  # noqa: PLC0415

    add_hook_command(sub)


def _setup(sub: Any) -> None:
    from ai_context.cli.setup import add_setup_command  # noqa: PLC0415

    add_setup_command(sub)


def _mcp(sub: Any) -> None:
    from ai_context.mcp import add_mcp_command  # noqa: PLC0415

    add_mcp_command(sub)


GROUPS: dict[str, Callable[[Any], None]] = {
    "git": _git,
    "session": _session,
    "digest": _digest,
    "report": _report,
    "agent": _agent,
    "lease": _lease,
    "mirror": _mirror,
    "setup": _setup,
    "hook": _hook,
    "mcp": _mcp,
}
COMMAND_GROUPS = {
    "derive": "git",
    "session": "session",
    "scrub": "session",
    "digest": "digest",
    "summary": "digest",
    "status": "digest",
    "report": "report",
    "save": "agent",
    "resume": "agent",
    "handoff": "agent",
    "done": "agent",
    "claim": "lease",
    "renew": "lease",
    "release": "lease",
    "who": "lease",
    "mirror": "mirror",
    "hook": "hook",
    "setup": "setup",
    "mcp": "mcp",
}


# Commands defined here: they need no group, so `validate` imports nothing it does not use.
OWN_COMMANDS = frozenset({"action", "validate"})
# `ai-context --version` with no command: it needs no command at all (registering every group
# cost it the imports of every command, ~200 ms).
VERSION_ONLY = "--version"


def _groups_for(command: str | None) -> set[str]:
    """The groups to register: the command's own, none for ours or for `--version` alone, all
    for help or a typo (so the parser can list every command and suggest one)."""
    if command in OWN_COMMANDS or command == VERSION_ONLY:
        return set()
    if command in COMMAND_GROUPS:
        return {COMMAND_GROUPS[command]}
    return set(GROUPS)


def _config(args: argparse.Namespace) -> CheckConfig:
    if args.stale_after is None:
        return CheckConfig()
    return CheckConfig(stale_after=args.stale_after)


def result_json(path: str, result: CheckResult) -> dict[str, Any]:
    return {
        "path": path,
        "complete": result.complete,
        "block": block_json(result.block),
        "findings": [
            {
                "code": f.code,
                "severity": f.severity,
                "line": f.line,
                "message": f.message,
                "hint": f.hint,
            }
            for f in result.findings
        ],
    }


def _read_inputs(paths: Sequence[str], stdin: TextIO) -> list[tuple[str, str]]:
    """Every input's text, or one UsageError naming each input that cannot be read."""
    problems: list[str] = []
    texts: list[tuple[str, str]] = []
    for name in paths:
        try:
            texts.append(
                ("<stdin>", read_stream(stdin)) if name == "-" else (name, read_file(name))
            )
        except UsageError as exc:
            problems.append(str(exc))
    if problems:
        raise UsageError("\n".join(problems))
    return texts


def _path(text: str) -> Path:
    """A Path, pathlib imported only when a config file is named or present (start-up)."""
    from pathlib import Path  # noqa: PLC0415

    return Path(text)


def _file_config(args: argparse.Namespace) -> tuple[CheckConfig, Path | None]:
    """The check settings of the config file (--config, else .github/ai-context.yml when
    present), with --stale-after over the file's; a bad file is a ConfigError (exit 2)."""
    path: Path | None = args.config
    if path is not None and not path.is_file():
        raise UsageError(f"--config {path}: no such file")
    if path is None and os.path.isfile(DEFAULT_CONFIG):
        path = _path(DEFAULT_CONFIG)
    if path is None:
        return _config(args), None
    from ai_context.adapters.config import load_settings  # noqa: PLC0415 - yaml, only here

    settings, _ = load_settings({"AI_CONTEXT_CONFIG": str(path.resolve())})
    try:
        config = settings.check_config
    except ValueError as exc:  # CheckConfig's: `required:` names an unknown field
        raise ConfigError(f"{path}: {exc}") from None
    if args.stale_after is not None:
        config = replace(config, stale_after=args.stale_after)
    return config, path


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


_OUTPUT_CHUNK = 256  # finding lines written at once (about 30 KB)


def cmd_validate(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    """Every input is read first (one error naming each unreadable one, before any output),
    then checked and reported one at a time: only the counts and up to _OUTPUT_CHUNK lines of
    pending output outlive a file's check, so 2,000 files cost no more memory (or garbage
    collection) than one. Output goes out in chunks: with PYTHONUNBUFFERED (set in
    containers) each write is a system call, and a line each was a tenth of a 2,000-file run."""
    config, path = _file_config(args)
    now = args.now or datetime.now(UTC)  # stale and future checks always run
    as_json = args.format == "json"
    rows: list[dict[str, Any]] = []
    files = errors = warnings = 0
    pending: list[str] = []
    for name, text in _read_inputs(args.paths, stdin):
        result = check_body(text, now=now, config=config)
        files += 1
        if as_json:
            rows.append(result_json(name, result))
        for f in result.findings:
            errors += f.severity == "error"
            warnings += f.severity == "warning"
            if not as_json:
                pending.append(f"{name}:{f.line or 1}: {f.code} {f.severity} {f.message}\n")
        if len(pending) >= _OUTPUT_CHUNK:
            out.write("".join(pending))
            pending.clear()
    out.write("".join(pending))
    failed = errors > 0
    if as_json:
        import json  # noqa: PLC0415 - start-up: only for --format json

        out.write(json.dumps(rows, ensure_ascii=False) + "\n")
        return Exit.FINDINGS if failed else Exit.OK
    where = f" (settings from {path})" if path else ""
    out.write(
        f"{'FAILED' if failed else 'ok'}: {_plural(files, 'file')}, "
        f"{_plural(errors, 'error')}, {_plural(warnings, 'warning')}{where}\n"
    )
    return Exit.FINDINGS if failed else Exit.OK


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


def _freeze_imports() -> None:
    """The command's modules are imported and live as long as the process: the garbage
    collector need not walk them again, in each full collection nor in the one at exit (about
    5 ms of a `validate`, a tenth of its start-up). `gc.freeze` is made for exactly this."""
    import gc  # noqa: PLC0415

    gc.freeze()


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    as_json = _wants_json(args_list)
    try:
        first = next((a for a in args_list if not a.startswith("-")), None)
        if first is None and VERSION_ONLY in args_list and not {"-h", "--help"} & set(args_list):
            first = VERSION_ONLY
        parser = build_parser(first)
        if argv is None:  # a process of its own (not a test calling main)
            _freeze_imports()
        args = parser.parse_args(args_list)
        if not getattr(args, "handler", None):
            parser.print_help(sys.stderr)  # a bare `ai-context`: help, never the Action
            return int(Exit.USAGE)
        as_json = getattr(args, "format", None) == "json"
        code: int = args.handler(args, sys.stdout, sys.stdin)
    except AIContextError as exc:
        return report_error(exc, as_json, sys.stdout, sys.stderr)
    return int(code)
