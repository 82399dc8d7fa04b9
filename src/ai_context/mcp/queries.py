"""The MCP tools that read or lease rather than write the block: claim, renew, release and who
(the lease calls of the command line), status and summary (read from GitHub), validate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ai_context.core.errors import Exit
from ai_context.mcp.tools import Session, ToolFailure, issue_number, now


def lease(
    s: Session, op: str, issue: int | str, ttl: str | None, sha: str | None
) -> dict[str, Any]:
    """claim, renew, release or who: the lease JSON of the command line, with `exit_code`."""
    from ai_context.core.durations import parse_duration  # noqa: PLC0415
    from ai_context.jobs.lease import (  # noqa: PLC0415
        LeaseRequest,
        check_ttl,
        issue_check,
        lease_settings,
        outcome_exit,
        outcome_json,
        run_lease,
    )

    number = issue_number(issue, s.repository)
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
    gh = s.github()
    before = gh.counter.total
    check = issue_check(gh, s.repository) if op == "claim" else None
    outcome = s.run(lambda: run_lease(gh, request, config, same, before_write=check))
    outcome = outcome.model_copy(update={"calls": gh.counter.total - before})
    return {**outcome_json(outcome), "exit_code": int(outcome_exit(request.op, outcome))}


def status(s: Session, actor: str | None) -> dict[str, Any]:
    """What is on each actor's plate (or ACTOR's), by urgency: the open issues and those closed
    within the digest window, read as `ai-context status` reads them; the same JSON."""
    from ai_context.jobs.digest import read_issues  # noqa: PLC0415
    from ai_context.rules.digest import DigestConfig, build_digest  # noqa: PLC0415
    from ai_context.rules.digest_json import plate_json  # noqa: PLC0415
    from ai_context.rules.digest_plate import actors, plate  # noqa: PLC0415

    config, when = DigestConfig(), now()
    issues = s.run(lambda: read_issues(s.github(), when - config.window))
    digest = build_digest(issues, when, config)
    names = [actor] if actor else actors(digest)
    return {"repository": s.repository, "plates": [plate_json(plate(digest, n)) for n in names]}


def summary(s: Session, issue: int | str) -> dict[str, Any]:
    """One task's progress summary: the JSON of `ai-context summary ISSUE --format json`."""
    from ai_context.rules.digest import summarize_task  # noqa: PLC0415
    from ai_context.rules.digest_json import summary_json  # noqa: PLC0415

    number = issue_number(issue, s.repository)
    found = s.run(lambda: s.github().get_issue(number))
    return summary_json(summarize_task(found, now()))


def validate(body: str) -> dict[str, Any]:
    """Check a block (or an issue body holding one) as `ai-context validate` does."""
    from ai_context.rules.checks import check_body, result_json  # noqa: PLC0415

    result = check_body(body, now=now())
    data = result_json("<input>", result)
    data["exit_code"] = int(Exit.FINDINGS if result.errors else Exit.OK)
    return data
