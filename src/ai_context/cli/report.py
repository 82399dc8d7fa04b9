"""`ai-context report`: every task's AI Context block checked, worst first, with its owner and
what to do; then the open issues without a block. Exits 1 when any block has errors, as
`validate` does, so a script can gate on it."""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

from ai_context.cli.report_source import (
    Source,
    add_source_options,
    colour_for,
    digest_config,
    now_of,
    open_source,
    select,
    service_errors,
)
from ai_context.core.errors import Exit


def add_report_command(sub: Any) -> None:
    report = sub.add_parser(
        "report",
        help="check every task's AI Context block (GitHub, or --issues-dir offline)",
        description="Exits 1 when any block has errors, as validate does.",
    )
    add_source_options(report, ("text", "md", "json"))
    report.set_defaults(handler=cmd_report)


def _open_issues(source: Source) -> list[Any]:
    if not source.live:
        return source.offline.list_issues("all")  # type: ignore[no-any-return]
    assert source.github is not None
    found: list[Any] = []
    for repo in source.repos:
        with service_errors(repo):
            found += source.github(repo).list_issues("open")
    return found


def _row_json(issue: Any, result: Any, owners: tuple[str, ...]) -> dict[str, Any]:
    """One checked task: the shared task keys, then validate's but its `path` (`number`)."""
    from ai_context.rules.checks import result_json  # noqa: PLC0415

    checked = result_json("", result)
    del checked["path"]
    return {
        "repository": issue.repository,
        "number": issue.number,
        "title": issue.title,
        "url": issue.html_url,
        "state": issue.state,
        "owners": list(owners),
        **checked,
    }


def _rank(row: tuple[Any, Any, tuple[str, ...]]) -> tuple[int, str, int]:
    """Errors first, then warnings, then clean blocks; by repository and number within."""
    issue, result, _ = row
    worst = 0 if result.errors else 1 if result.findings else 2
    return (worst, issue.repository, issue.number)


def cmd_report(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    from ai_context.jobs.scan import DIGEST_LABEL, is_task  # noqa: PLC0415
    from ai_context.rules.checks import check_body  # noqa: PLC0415
    from ai_context.rules.digest.build import owners_of  # noqa: PLC0415

    del stdin
    source = open_source(args)
    config = digest_config(args, source)
    listed = _open_issues(source)
    tasks = [i for i in listed if is_task(i)]
    # The issues that are not tasks, as the Action's summary counts them (the digest's aside).
    others = [i for i in listed if not is_task(i) and DIGEST_LABEL not in i.labels]
    without = len(others) if source.live else 0
    issues = select(tasks, args, config)
    now = now_of(args, source)
    rows = []
    for issue in issues:
        result = check_body(issue.body, now=now, config=config.checks())
        rows.append((issue, result, owners_of(issue, result.block, config.owners)))
    rows.sort(key=_rank)
    errors = sum(r.errors for _, r, _ in rows)
    code = int(Exit.FINDINGS if errors else Exit.OK)
    if args.format == "json":
        out.write(json.dumps([_row_json(*row) for row in rows], ensure_ascii=False) + "\n")
    elif args.format == "md":
        out.write(_markdown(rows, without))
    else:
        out.write(_text(rows, source, now, colour_for(out), without))
    return code


def _counts(rows: list[tuple[Any, Any, Any]], without: int) -> str:
    errors = sum(r.errors for _, r, _ in rows)
    warnings = sum(1 for _, r, _ in rows for f in r.findings if f.severity == "warning")
    complete = sum(1 for _, r, _ in rows if r.complete)
    line = f"{len(rows)} tasks, {complete} complete, {errors} errors, {warnings} warnings"
    if without:
        line += f"; {without} open issues without an AI Context block (not tasks: not checked)"
    return line


def _who(block: Any, owners: tuple[str, ...]) -> str:
    actor = block.actor if block else None
    named = ", ".join(owners)
    return f"{named} ({actor})" if named and actor else named or actor or "-"


def _text(
    rows: list[tuple[Any, Any, tuple[str, ...]]],
    source: Source,
    now: Any,
    colour: bool,
    without: int,
) -> str:
    from ai_context.core.block.model import format_timestamp  # noqa: PLC0415
    from ai_context.rules.digest.build import plan_done  # noqa: PLC0415
    from ai_context.rules.digest.text import Paint, plain  # noqa: PLC0415

    paint = Paint(colour)
    where = source.offline.root if not source.live else ", ".join(source.repos)
    multi = len({i.repository for i, _, _ in rows}) > 1
    lines = [f"ai-context report: {len(rows)} tasks in {where}, now {format_timestamp(now)}", ""]
    for issue, result, owners in rows:
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
            f"        {plain(_who(block, owners), 60)} · "
            f"{plain((block.phase if block else None) or '-', 30)} · plan {plan}"
        )
        for f in result.findings:
            lines.append(f"        {plain(f.message)} ({f.code}, {f.severity}, line {f.line or 1})")
            lines.append(f"          what to do: {plain(f.hint)}")
    lines += ["", _counts(rows, without)]
    return "\n".join(lines) + "\n"


def _markdown(rows: list[tuple[Any, Any, tuple[str, ...]]], without: int) -> str:
    """The report for GitHub: one table row per task, worst first, its findings in words."""
    from ai_context.core.markdown import escape_cell, escape_code_cell  # noqa: PLC0415
    from ai_context.rules.templating import md_link  # noqa: PLC0415

    multi = len({i.repository for i, _, _ in rows}) > 1
    lines = [
        "## ai-context report",
        "",
        "| Task | Owner (actor) | Phase | Findings |",
        "|---|---|---|---|",
    ]
    for issue, result, owners in rows:
        block = result.block
        ref = f"{issue.repository}#{issue.number}" if multi else f"#{issue.number}"
        task = f"{md_link(ref, issue.html_url)} {escape_code_cell(issue.title)}"
        found = "<br>".join(
            f"{f.severity}: {escape_code_cell(f.message)} ({f.code})" for f in result.findings
        )
        phase = escape_cell((block.phase if block else None) or "-")
        lines.append(f"| {task} | {escape_cell(_who(block, owners))} | {phase} | {found or 'ok'} |")
    lines += ["", _counts(rows, without) + "."]
    return "\n".join(lines) + "\n"
