"""The jobs by name, in the order they run, and the ones `jobs: auto` runs for each event.

Jobs that add findings to the sticky comment (the mirror's) come before check.
"""

from __future__ import annotations

from ai_context.jobs.check import check_job
from ai_context.jobs.context import Job, RunContext
from ai_context.jobs.digest import digest_job
from ai_context.jobs.mirror import mirror_job


def stale_job(ctx: RunContext) -> None:
    if "check" in ctx.route.jobs:
        return  # the check job's plan already carries the stale findings: one comment
    check_job(ctx)


JOBS: dict[str, Job] = {
    "mirror": mirror_job,
    "check": check_job,
    "stale": stale_job,
    "digest": digest_job,
}
AUTO_JOBS: dict[str, tuple[str, ...]] = {
    "issues": ("mirror", "check"),
    "push": ("mirror", "check"),
    "schedule": ("mirror", "check", "stale", "digest"),
    "workflow_dispatch": ("mirror", "check", "stale", "digest"),
}
