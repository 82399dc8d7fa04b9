"""The mirror job: rebuild each linked ClickUp task's `ai_context` field from its issue's block.

The pure decisions live in mirror.py; this is the shell that reads ClickUp, compares and
writes. It takes the ClickUp adapter as an argument, so tests pass one pointed at a fake.

Reads are cheap (100 a minute) and writes are precious (the free plan's lifetime cap is 60
custom-field writes), so the job reads the current value first and writes only what changed.
A scheduled run mirrors the tasks whose issue changed since the last run (jobs/scan.py); the
run that lists every open issue (a week after the last, or on `full: true`) is a full rebuild,
which reads the current values in pages of 100 rather than one task at a time and heals values
changed by hand in ClickUp.

The rooms: `run` (one run over ClickUp, the shell around rules/mirror) and `job` (the Action's
job and its step summary).
"""

from ai_context.jobs.mirror.job import SUMMARY_ROWS, mirror_job, mirror_templates, summary
from ai_context.jobs.mirror.run import Mirrored, MirrorReport, Result, TaskStore, diff, run_mirror

__all__ = [
    "SUMMARY_ROWS",
    "MirrorReport",
    "Mirrored",
    "Result",
    "TaskStore",
    "diff",
    "mirror_job",
    "mirror_templates",
    "run_mirror",
    "summary",
]
