"""`ai-context report`: check the AI Context block of every task, live or offline.

Live, the open issues of each repository (`--repo`, as the other reports); offline, every file
of `--issues-dir`. One line per task with its title, then each finding with what to do. Exits 1
when any block has errors, as `validate` does, so a script can gate on it.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from typing import Any, TextIO

from ai_context.cli.reports import (
    Source,
    add_source_options,
    colour_for,
    now_of,
    open_source,
    service_errors,
    stale_after_of,
)
from ai_context.core.errors import Exit


def add_report_command(sub: Any) -> None:
    report = sub.add_parser(
        "report",
        help="check every task's AI Context block (GitHub, or --issues-dir offline)",
        description="Exits 1 when any block has errors, as validate does.",
    )
    add_source_options(report, ("text", "json"))
    report.set_defaults(handler=cmd_report)


def _tasks(source: Source) -> list[Any]:
    if not source.live:
        return source.offline.list_issues("all")  # type: ignore[no-any-return]
    from ai_context.jobs.comments import is_task  # noqa: PLC0415

    assert source.github is not None
    found: list[Any] = []
    for repo in source.repos:
        with service_errors(repo):
            found += [i for i in source.github(repo).list_issues("open") if is_task(i)]
    return found


def result_json(issue: Any, result: Any) -> dict[str, Any]:
    """One checked task: the shared task keys, then validate's (`path` kept from 0.1)."""
    from ai_context.rules.checks import result_json as checked_json  # noqa: PLC0415

    return {
        "repository": issue.repository,
        "number": issue.number,
        "title": issue.title,
        "url": issue.html_url,
        "state": issue.state,
        **checked_json(f"#{issue.number}", result),
    }


def cmd_report(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    from ai_context.rules.checks import check_body  # noqa: PLC0415

    del stdin
    source = open_source(args)
    issues = _tasks(source)
    now = now_of(args, source)
    config = replace(source.config.check, stale_after=stale_after_of(args, source))
    rows = [(i, check_body(i.body, now=now, config=config)) for i in issues]
    errors = sum(r.errors for _, r in rows)
    code = int(Exit.FINDINGS if errors else Exit.OK)
    if args.format == "json":
        out.write(json.dumps([result_json(i, r) for i, r in rows], ensure_ascii=False) + "\n")
        return code
    out.write(_text(rows, source, now, colour_for(out)))
    return code


def _text(rows: list[tuple[Any, Any]], source: Source, now: Any, colour: bool) -> str:
    from ai_context.core.block import format_timestamp  # noqa: PLC0415
    from ai_context.rules.digest import plan_done  # noqa: PLC0415
    from ai_context.rules.digest_text import Paint, plain  # noqa: PLC0415

    paint = Paint(colour)
    where = source.offline.root if not source.live else ", ".join(source.repos)
    multi = len({i.repository for i, _ in rows}) > 1
    lines = [f"ai-context report: {len(rows)} issues in {where}, now {format_timestamp(now)}", ""]
    for issue, result in rows:
        block = result.block
        ref = f"{issue.repository}#{issue.number}" if multi else f"#{issue.number}"
        plan = f"{plan_done(block)}/{len(block.plan)}" if block and block.plan else "-"
        verdict = (
            paint(f"{result.errors} error(s)", "31")
            if result.errors
            else paint("warnings", "33")
            if result.findings
            else paint("ok", "32")
        )
        lines.append(f"{ref:>6}  {plain(issue.title, 60)}  [{issue.state}]  {verdict}")
        lines.append(
            f"        {plain((block.actor if block else None) or '-', 30)} · "
            f"{plain((block.phase if block else None) or '-', 30)} · plan {plan}"
        )
        for f in result.findings:
            lines.append(f"        {f.code} {f.severity} (line {f.line or 1}): {plain(f.message)}")
            lines.append(f"          what to do: {plain(f.hint)}")
    errors = sum(r.errors for _, r in rows)
    warnings = sum(1 for _, r in rows for f in r.findings if f.severity == "warning")
    complete = sum(1 for _, r in rows if r.complete)
    lines += ["", f"{len(rows)} issues, {complete} complete, {errors} errors, {warnings} warnings"]
    return "\n".join(lines) + "\n"
