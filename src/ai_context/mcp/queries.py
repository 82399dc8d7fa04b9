"""The MCP tools that read or lease rather than write the block, with the command line's
settings and JSON: claim, renew, release, who, status, summary and validate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ai_context.adapters.config import load_config
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
    from ai_context.core.durations import parse_duration  # noqa: PLC0415
    from ai_context.jobs.lease import (  # noqa: PLC0415
        LeaseRequest,
        check_ttl,
        lease_settings,
        outcome_exit,
        outcome_json,
        run_lease,
    )

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
    request = LeaseRequest(op=op, issue=number, actor=s.actor or "", ttl=duration, lease=sha)
    gh = s.github(repository)
    outcome = s.run(lambda: run_lease(gh, request, config, same))
    data = outcome_json(outcome, s.actor, same)
    return {**data, "exit_code": int(outcome_exit(request.op, outcome))}


def status(s: Session, actor: str | None, repo: str | None = None) -> dict[str, Any]:
    """What is on each actor's plate (or ACTOR's), by urgency: `ai-context status --format json`'s
    plates, read with the command line's settings."""
    from ai_context.jobs.digest.job import digest_config, read_issues  # noqa: PLC0415
    from ai_context.rules.digest.build import build_digest  # noqa: PLC0415
    from ai_context.rules.digest.json import plate_json  # noqa: PLC0415
    from ai_context.rules.digest.plate import plates_for  # noqa: PLC0415

    repository = s.repo(repo)
    settings = s.run(lambda: load_config(s.env, Path.cwd()))
    config, when = digest_config(settings), settings.now or now()
    issues = s.run(lambda: read_issues(s.github(repository), when - config.window))
    digest = build_digest(issues, when, config)
    plates = plates_for(digest, actor, settings.actors)
    return {"repository": repository, "plates": [plate_json(p) for p in plates]}


def summary(s: Session, issue: int | str, repo: str | None = None) -> dict[str, Any]:
    """One task's progress summary: the JSON of `ai-context summary ISSUE --format json`."""
    from ai_context.jobs.digest.job import digest_config  # noqa: PLC0415
    from ai_context.rules.digest.build import summarize_task  # noqa: PLC0415
    from ai_context.rules.digest.json import summary_json  # noqa: PLC0415

    repository = s.repo(repo)
    number = issue_number(issue, repository)
    settings = s.run(lambda: load_config(s.env, Path.cwd()))
    found = s.run(lambda: s.github(repository).get_issue(number))
    return summary_json(summarize_task(found, settings.now or now(), digest_config(settings)))


def validate(s: Session, body: str) -> dict[str, Any]:
    """Check a block (or an issue body holding one) as `ai-context validate` does, with the
    fields the config's `required:` asks for."""
    from ai_context.rules.checks import CheckConfig, check_body, result_json  # noqa: PLC0415

    result = check_body(body, now=now(), config=CheckConfig(required=s.required))
    data = result_json("<input>", result)
    data["exit_code"] = int(Exit.FINDINGS if result.errors else Exit.OK)
    return data
