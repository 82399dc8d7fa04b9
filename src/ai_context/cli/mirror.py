"""`ai-context mirror ISSUE... | --all [--dry-run]`: the mirror job from a terminal, with the
Action's settings (the environment and `.github/ai-context.yml`); a dry run prints each write
it would make as a diff of the field's old and new value."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ai_context.cli.common import (
    ENVIRONMENT_HELP,
    add_format,
    add_issue,
    add_repo,
    resolve_repository,
)
from ai_context.core.errors import Exit, UsageError

if TYPE_CHECKING:
    from ai_context.core.models import Issue
    from ai_context.jobs.mirror.run import MirrorReport


def add_mirror_command(sub: Any) -> None:
    """Register `mirror` on the CLI's subparsers."""
    mirror = sub.add_parser(
        "mirror",
        help="mirror issues' AI Context blocks to their ClickUp tasks' ai_context field",
        description="Rebuild the ClickUp field of the tasks the issues link, writing only "
        "values that changed. Needs GITHUB_TOKEN (or GH_TOKEN) and CLICKUP_TOKEN.",
        epilog=ENVIRONMENT_HELP,
    )
    add_issue(mirror, nargs="*", what="issues: 12, #12 or their URLs")
    mirror.add_argument("--all", action="store_true", help="every open issue with a block")
    mirror.add_argument("--dry-run", action="store_true", help="print the diffs, write nothing")
    add_repo(mirror)
    add_format(mirror)
    mirror.set_defaults(handler=cmd_mirror)


def cmd_mirror(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    # Imported here: `ai-context --help` and the agent commands must not load requests,
    # pydantic or Jinja just to build the parser.
    from ai_context.adapters import clients  # noqa: PLC0415
    from ai_context.adapters.config import load_config  # noqa: PLC0415
    from ai_context.adapters.github import GitHubNotFound  # noqa: PLC0415
    from ai_context.jobs.mirror.job import mirror_issues  # noqa: PLC0415
    from ai_context.jobs.scan import is_task  # noqa: PLC0415

    del stdin
    if bool(args.issue) == bool(args.all):
        raise UsageError("mirror: name issue numbers or pass --all (not both)")
    workspace = Path.cwd()
    settings = load_config(os.environ, workspace)
    repository = resolve_repository(args, os.environ, workspace)
    if settings.github_token is None:
        raise UsageError("mirror: set GITHUB_TOKEN (or GH_TOKEN) to a token that reads issues")
    if settings.clickup_token is None:
        raise UsageError("mirror: set CLICKUP_TOKEN to a ClickUp personal API token (pk_...)")
    github = clients.github(
        settings.github_token,
        repository,
        api_url=clients.github_api_url(os.environ),
        http=settings.http,
    )

    def issues() -> list[Issue]:
        try:
            if args.all:
                return [i for i in github.list_issues("open") if is_task(i)]
            return [github.get_issue(ref.number) for ref in args.issue]
        except GitHubNotFound as exc:
            raise UsageError(f"mirror: {exc}; check the issue numbers and --repo") from exc

    as_json = args.format == "json"

    def log(line: str) -> None:
        (sys.stderr if as_json else out).write(line + "\n")

    report, counter = mirror_issues(
        issues,
        settings,
        workspace,
        full=args.all,
        dry_run=args.dry_run or settings.dry_run,
        log=log,
    )
    calls = {"clickup_reads": counter.reads, "clickup_writes": counter.writes}
    calls["github"] = github.counter.total
    if as_json:
        out.write(json.dumps(report_json(report, calls), ensure_ascii=False) + "\n")
    else:
        _print(report, out)
        out.write(
            f"ClickUp calls: {calls['clickup_reads']} reads, {calls['clickup_writes']} writes; "
            f"GitHub calls: {calls['github']}\n"
        )
    return _exit(report)


def _exit(report: MirrorReport) -> int:
    if report.exit_code:
        return report.exit_code
    errors = any(f.severity == "error" for fs in report.findings.values() for f in fs)
    return int(Exit.FINDINGS if errors else Exit.OK)


def report_json(report: MirrorReport, calls: dict[str, int]) -> dict[str, Any]:
    """The stable JSON shape of a mirror run: keys may be added, never renamed."""
    return {
        "items": [
            {
                "issue": item.number,
                "task": item.task_id,
                "result": item.result,
            }
            for item in report.items
        ],
        "findings": [
            {
                "issue": number,
                "code": f.code,
                "severity": f.severity,
                "line": f.line,
                "message": f.message,
            }
            for number, findings in sorted(report.findings.items())
            for f in findings
        ],
        "notes": list(report.notes),
        "errors": list(report.errors),
        "calls": calls,
        "exit": _exit(report),
    }


def _print(report: MirrorReport, out: TextIO) -> None:
    for item in report.items:
        out.write(f"#{item.number} -> ClickUp {item.task_id}: {item.result.replace('_', ' ')}\n")
    for number, findings in sorted(report.findings.items()):
        for f in findings:
            out.write(f"#{number}:{f.line or 1}: {f.code} {f.severity} {f.message}\n")
    for note in report.notes:
        out.write(f"note: {note}\n")
    for error in report.errors:
        out.write(f"error: {error}\n")
