"""The MCP tools that read or lease rather than write the block: claim, renew, release and who
(the lease calls of the command line), status and summary (the command line's own commands,
with its settings and its JSON), validate."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path
from typing import Any

from ai_context.core.errors import Exit
from ai_context.mcp.tools import Session, ToolFailure, issue_number, now


def lease(
    s: Session,
    op: str,
    issue: int | str,
    ttl: str | None,
    sha: str | None,
    *,
    repo: str | None = None,
) -> dict[str, Any]:
    """claim, renew, release or who: the lease JSON of the command line, with `exit_code`."""
    from ai_context.cli.common import IssueRef  # noqa: PLC0415
    from ai_context.cli.lease import outcome_json, run_lease_op  # noqa: PLC0415
    from ai_context.core.durations import parse_duration  # noqa: PLC0415
    from ai_context.jobs.lease import check_ttl, issue_check, lease_settings  # noqa: PLC0415

    repository = s.repo(repo)
    number = issue_number(issue, repository)
    if op != "who" and not s.actor:
        raise ToolFailure(Exit.USAGE, "which actor? set AI_CONTEXT_ACTOR or start with --actor")
    duration = None
    if ttl:
        try:
            wanted = parse_duration(ttl)
        except ValueError as exc:
            raise ToolFailure(Exit.USAGE, f"ttl: {exc}") from exc
        duration = s.run(lambda: check_ttl(wanted, "ttl"))
    config, same = s.run(lambda: lease_settings(s.env, Path.cwd()))
    args = argparse.Namespace(lease_op=op, issue=IssueRef(None, number), ttl=duration, lease=sha)
    gh = s.github(repository)
    before = gh.counter.total
    check = issue_check(gh, repository) if op == "claim" else None
    outcome = s.run(lambda: run_lease_op(gh, args, s.actor or "", config, same, before_write=check))
    outcome = outcome.model_copy(update={"calls": gh.counter.total - before})
    data = outcome_json(outcome)
    if outcome.result == "mismatch":
        data["exit_code"] = int(Exit.USAGE)
    else:
        data["exit_code"] = int(Exit.OK if op == "who" or outcome.ok else Exit.CONFLICT)
    return data


def cli_json(argv: list[str]) -> Any:
    """The JSON `ai-context ARGV --format json` prints, run in this process: the command line's
    settings (environment, config file) and output, one code for both faces. Its errors are
    the tool's failures, with the same exit codes."""
    from ai_context.cli.main import build_parser  # noqa: PLC0415
    from ai_context.core.errors import AIContextError  # noqa: PLC0415

    out = io.StringIO()
    try:
        args = build_parser(argv[0]).parse_args([*argv, "--format", "json"])
        args.handler(args, out, io.StringIO())
    except AIContextError as exc:
        raise ToolFailure(exc.exit_code, str(exc)) from exc
    return json.loads(out.getvalue())


def status(s: Session, actor: str | None, repo: str | None = None) -> dict[str, Any]:
    """What is on each actor's plate (or ACTOR's), by urgency: `ai-context status --format
    json` (the open issues and those closed within the digest window)."""
    repository = s.repo(repo)
    who = ["--actor", actor] if actor else ["--all"]
    plates = cli_json(["status", *who, "--repo", repository])
    return {"repository": repository, "plates": plates}


def summary(s: Session, issue: int | str, repo: str | None = None) -> dict[str, Any]:
    """One task's progress summary: the JSON of `ai-context summary ISSUE --format json`."""
    repository = s.repo(repo)
    number = issue_number(issue, repository)
    data: dict[str, Any] = cli_json(["summary", str(number), "--repo", repository])
    return data


def validate(s: Session, body: str) -> dict[str, Any]:
    """Check a block (or an issue body holding one) as `ai-context validate` does, with the
    fields the config's `required:` asks for."""
    from ai_context.cli.validate import result_json  # noqa: PLC0415
    from ai_context.rules.checks import CheckConfig, check_body  # noqa: PLC0415

    result = check_body(body, now=now(), config=CheckConfig(required=s.required))
    data = result_json("<input>", result)
    data["exit_code"] = int(Exit.FINDINGS if result.errors else Exit.OK)
    return data
