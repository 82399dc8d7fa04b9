"""Time to classify and render a digest of 1,000 tasks, beside the time to fetch them.

Fetching is modelled at 50 ms a call, for the calls a scheduled digest job really makes: the
job runs as a process against the loopback GitHub (1,000 open tasks) and its calls are
counted (the open issues 100 a page, the issues closed within the window, the digest issue's
comments, the comment write). The figure with the 10 list pages alone is printed too. The run
is fetch + parse/check + classify + render (Markdown for the comment and step summary, Slack
Block Kit); the goal is rendering under 5% of it. Slack's posting floor (one message a second)
is printed apart, as it is not fetching.

    .venv/bin/python benchmarks/bench_digest.py
"""

from __future__ import annotations

import math
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ai_context.adapters.slack import MESSAGE_INTERVAL
from ai_context.adapters.templates import Templates
from ai_context.core.models import Issue
from ai_context.jobs.digest import COMMENT_LIMIT as COMMENT
from ai_context.jobs.digest import STEP_SUMMARY_LIMIT
from ai_context.rules.checks import check_body
from ai_context.rules.digest import DigestConfig, build_digest, digest_from_checked
from ai_context.rules.digest_render import render_markdown
from ai_context.rules.digest_slack import slack_messages

TASKS = 1000
PAGE = 100
CALL_SECONDS = 0.050
REPEAT = 7
RUN = "https://github.com/o/r/actions/runs/1"
NOW = datetime(2026, 5, 27, 9, 0, tzinfo=UTC)
PHASES = ("implementing (chunk 2 of 5)", "in review", "blocked", "testing", "planning", "done")


def body(n: int) -> str:
    updated = (NOW - timedelta(minutes=37 * n % 3000)).strftime("%Y-%m-%dT%H:%M:%SZ")
    steps = "\n".join(
        f"  {i}. Step {i} of task {n} (" + ("done" if i < n % 6 else "pending") + ")"
        for i in range(1, 6)
    )
    blockers = "\n  - Waiting for the vendor's API keys" if n % 11 == 0 else " none"
    return (
        "## AI Context (updated by Claude — do not edit manually)\n\n"
        f"- **Active actor:** agent-{n % 13} (Claude Code)\n"
        f"- **Phase:** {PHASES[n % len(PHASES)]}\n"
        f"- **Last updated:** {updated}\n"
        f"- **Plan:**\n{steps}\n"
        f"- **Files touched:** apps/api/src/module{n}/{{a,b,c}}.ts, plus 3 test files\n"
        "- **Decisions:**\n  - Keep the existing schema\n"
        f"- **Blockers:**{blockers}\n"
        f"- **Next step:** Finish step {n % 5 + 1} and open the PR\n\n"
        "## Description\n\n" + "Some human text about the task. " * 20
    )


def issues() -> list[Issue]:
    return [
        Issue(
            number=n,
            title=f"Task {n}: make the booking service remember history | part {n % 4}",
            body=body(n),
            repository=f"acme/repo-{n % 3}",
            html_url=f"https://github.com/acme/repo-{n % 3}/issues/{n}",
            labels=("in-review",) if n % 17 == 0 else (),
            updated_at=NOW,
        )
        for n in range(1, TASKS + 1)
    ]


def best(action: Callable[[], object]) -> float:
    """The least CPU time of REPEAT runs: the work itself, not the other processes a busy
    machine (or CI runner) is also running."""
    times = []
    for _ in range(REPEAT):
        start = time.process_time()
        action()
        times.append(time.process_time() - start)
    return min(times)


def job_calls(data: list[Issue]) -> int:
    """GitHub calls of a scheduled digest job over DATA, counted on the loopback GitHub."""
    from tests.actionrun import run_action
    from tests.fakes import GitHubFake

    with GitHubFake() as gh, tempfile.TemporaryDirectory() as tmp:
        for issue in data:
            gh.add_issue("o/r", issue.title, issue.body, number=issue.number)
        gh.add_issue("o/r", "Digest", "", number=len(data) + 1, labels=["ai-context:digest"])
        env = {"AI_CONTEXT_NOW": NOW.isoformat(), "INPUT_JOBS": "digest"}
        result = run_action(Path(tmp), gh.url, "schedule", {}, extra_env=env)
        assert result.code == 0, result.stdout + result.stderr
        return gh.count()


def main() -> None:
    data = issues()
    config = DigestConfig()
    env = Templates().env
    checked = [(i, check_body(i.body, now=NOW, config=config.checks())) for i in data]
    digest = build_digest(data, NOW, config)

    t_check = best(lambda: [check_body(i.body, now=NOW, config=config.checks()) for i in data])
    t_classify = best(lambda: digest_from_checked(checked, NOW, config))
    # What the job renders: the comment (cut to fit, linking the run), the step summary's full
    # list, and the Slack messages.
    t_markdown = best(lambda: render_markdown(digest, env, max_chars=COMMENT, full_url=RUN))
    t_full = best(lambda: render_markdown(digest, env, max_chars=STEP_SUMMARY_LIMIT))
    t_slack = best(lambda: slack_messages(digest, env))
    pages = math.ceil(TASKS / PAGE)
    calls = job_calls(data)
    t_fetch = calls * CALL_SECONDS
    t_render = t_markdown + t_full + t_slack
    t_run = t_fetch + t_check + t_classify + t_render

    markdown = render_markdown(digest, env, max_chars=COMMENT, full_url=RUN)
    full = render_markdown(digest, env, max_chars=STEP_SUMMARY_LIMIT)
    messages = slack_messages(digest, env)
    print(f"digest of {TASKS} tasks, counts {dict(digest.counts)} (best of {REPEAT} runs)")
    print(
        f"  fetch (modelled)       {t_fetch * 1000:8.1f} ms  ({calls} calls the job makes, 50 ms)"
    )
    print(f"  parse + check bodies   {t_check * 1000:8.1f} ms")
    print(f"  classify + diff        {t_classify * 1000:8.1f} ms")
    print(f"  render the comment     {t_markdown * 1000:8.1f} ms  ({len(markdown):,} chars)")
    print(f"  render step summary    {t_full * 1000:8.1f} ms  ({len(full):,} chars, every task)")
    print(f"  render Slack           {t_slack * 1000:8.1f} ms  ({len(messages)} messages)")
    md_run = t_run - t_slack
    t_markdown += t_full
    post_floor = (len(messages) - 1) * MESSAGE_INTERVAL  # Slack's one message a second
    print(f"  rendering share of the run, Markdown + Slack  {t_render / t_run:6.1%}  (goal < 5%)")
    print(f"  rendering share of the run, Markdown only     {t_markdown / md_run:6.1%}")
    print(f"  rendering / fetch ratio                       {t_render / t_fetch:6.3f}")
    pages_only = t_run - t_fetch + pages * CALL_SECONDS
    print(
        f"  (counting only the {pages} list pages as fetch: rendering "
        f"{t_render / pages_only:.1%} of the run)"
    )
    print(f"  all local work share of the run               {(t_run - t_fetch) / t_run:6.1%}")
    print(
        f"  with Slack's posting floor ({post_floor:.0f} s for {len(messages)} messages), "
        f"rendering is {t_render / (t_run + post_floor):.1%} of the run"
    )


if __name__ == "__main__":
    main()
