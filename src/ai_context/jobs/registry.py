"""The jobs by name, in the order they run (the mirror's findings before check), and the ones
`jobs: auto` runs for each event. A job's module is imported only when the job runs.
"""

from __future__ import annotations

from importlib import import_module

from ai_context.jobs.context import Job, RunContext


def _lazy(module: str, name: str) -> Job:
    def job(ctx: RunContext) -> None:
        run: Job = getattr(import_module(module), name)
        run(ctx)

    job.__name__ = job.__qualname__ = name
    return job


def stale_job(ctx: RunContext) -> None:
    if "check" in ctx.route.jobs:
        return  # the check job's plan already carries the stale findings: one comment
    JOBS["check"](ctx)


JOBS: dict[str, Job] = {
    "mirror": _lazy("ai_context.jobs.mirror.job", "mirror_job"),
    "check": _lazy("ai_context.jobs.check", "check_job"),
    "stale": stale_job,
    "digest": _lazy("ai_context.jobs.digest.job", "digest_job"),
}
AUTO_JOBS: dict[str, tuple[str, ...]] = {
    "issues": ("mirror", "check"),
    "push": ("mirror", "check"),
    "schedule": ("mirror", "check", "stale", "digest"),
    "workflow_dispatch": ("mirror", "check", "stale", "digest"),
}
