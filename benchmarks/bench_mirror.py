"""API calls of the ClickUp mirror on schedule: 1,000 open issues linked to 1,000 ClickUp
tasks, on the loopback GitHub and ClickUp.

The full rebuild (a run with no run state yet, a week after the last full listing, or
`full: true` on dispatch), with 50 values changed by hand in ClickUp. Lower bound: GitHub reads
= pages of 100 issues; ClickUp reads = pages of 100 tasks; ClickUp writes = the 50 changed
values. Three ways to read ClickUp's current values are measured: pages filtered by list
(`mirror.lists` set), pages filtered by the field (no lists set: one task is read first to
learn the field's id), and one GET per task (what a run without a workspace id does). Then a
scheduled run after 50 blocks were edited on GitHub: it reads and writes those 50 tasks only
(lower bound: one GitHub page, 50 ClickUp reads and writes). The time each would take at
ClickUp's 100 requests a minute is printed. Run: `python benchmarks/bench_mirror.py`.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.actionrun import ActionRun, run_action
from tests.conftest import SEED_BLOCK
from tests.fakes import ClickUpFake, GitHubFake

from ai_context.adapters.clickup import ClickUp
from ai_context.adapters.github import issue_from_json
from ai_context.adapters.templates import Templates
from ai_context.core.block.parse import parse
from ai_context.core.secret import Secret
from ai_context.jobs.mirror.run import run_mirror
from ai_context.rules.mirror.targets import MirrorConfig
from ai_context.rules.mirror.text import mirror_text

TASKS, CHANGED, PER_MINUTE = 1000, 50, 100
REPO = "o/r"


def task_id(n: int) -> str:
    return f"86c{n:05d}"


def seed(gh: GitHubFake, cu: ClickUpFake) -> dict[int, str]:
    """Issues and tasks; returns the text each task's field should hold."""
    env = Templates().env
    texts: dict[int, str] = {}
    for n in range(1, TASKS + 1):
        body = f"{SEED_BLOCK}\n\nClickUp: https://app.clickup.com/t/{task_id(n)}\n"
        raw = gh._issue_json(gh.add_issue(REPO, f"Task {n}", body, number=n))
        issue = issue_from_json(raw, REPO)
        block = parse(issue.body).block
        assert block is not None
        texts[n] = mirror_text(issue, block, env)
        cu.add_task(f"Task {n}", task_id=task_id(n), values={"ai_context": texts[n]})
    return texts


def stale(cu: ClickUpFake, texts: dict[int, str]) -> None:
    """Put every task back in sync, then make 50 of them hold an older state."""
    step = TASKS // CHANGED
    for n, text in texts.items():
        value = text.replace("Plan: 2/5 done", "Plan: 1/5 done") if n % step == 0 else text
        cu.task(task_id(n)).values["f-ai"] = value
    cu.reset_requests()


def minutes(calls: int) -> str:
    seconds = calls / PER_MINUTE * 60
    return f"{seconds / 60:.1f} min" if seconds >= 90 else f"{seconds:.0f} s"


def line(name: str, gh_calls: int, reads: int, writes: int, seconds: float) -> None:
    pages = -(-TASKS // 100)
    read_gap = "equal" if reads == pages else f"{reads - pages:+d}"
    write_gap = "equal" if writes == CHANGED else f"{writes - CHANGED:+d}"
    print(
        f"{name:30} GitHub {gh_calls:4}  ClickUp reads {reads:5} ({read_gap})"
        f"  writes {writes:3} ({write_gap})"
        f"  at {PER_MINUTE}/min: {minutes(reads + writes):>8}  [{seconds:4.1f} s here]"
    )


def action(
    tmp: Path, gh: GitHubFake, cu: ClickUpFake, config: str, **more: str
) -> tuple[ActionRun, float]:
    workspace = tmp / "workspace" / ".github"
    workspace.mkdir(parents=True)
    (workspace / "ai-context.yml").write_text(config, encoding="utf-8")
    gh.clock.shift(hours=1)  # the runs of a schedule are an hour apart, at least
    gh.reset_requests()
    inputs = {"jobs": "mirror", "clickup-token": cu.token, "clickup-api-url": cu.url, **more}
    start = time.perf_counter()
    run = run_action(tmp, gh.url, "schedule", {}, repository=REPO, inputs=inputs, timeout=3600)
    assert run.code == 0, run.stdout + run.stderr
    assert run.outputs["mirrored"] == str(CHANGED), run.outputs
    return run, time.perf_counter() - start


def main() -> None:
    with GitHubFake() as gh, ClickUpFake() as cu, tempfile.TemporaryDirectory() as tmp:
        cu.add_field("901", "ai_context", field_id="f-ai")
        texts = seed(gh, cu)
        pages = -(-TASKS // 100)
        print(
            f"{TASKS} open issues linked to {TASKS} ClickUp tasks, {CHANGED} changed; lower "
            f"bound: GitHub {pages} (issue pages), ClickUp reads {pages} (task pages), "
            f"writes {CHANGED}"
        )

        stale(cu, texts)
        lists = "mirror:\n  lists: ['901']\n"
        _, seconds = action(Path(tmp) / "lists", gh, cu, lists, **{"clickup-team-id": cu.team_id})
        line("pages filtered by list", gh.count(), cu.count("GET"), cu.count("POST"), seconds)
        print(f"{'':30} (mirror.lists and clickup-team-id set)")

        stale(cu, texts)
        field = "mirror: {}\n"
        _, seconds = action(Path(tmp) / "field", gh, cu, field, full="true")
        line("pages filtered by the field", gh.count(), cu.count("GET"), cu.count("POST"), seconds)
        print(f"{'':30} (+1: one task read first names the field's id and the workspace)")

        for n in range(TASKS // CHANGED, TASKS + 1, TASKS // CHANGED):  # 50 blocks edited
            gh.edit_issue(REPO, n, body=gh.issue(REPO, n).body.replace("(done)", "(skipped)"))
        cu.reset_requests()
        run, seconds = action(Path(tmp) / "changed", gh, cu, field)
        assert "listed only what changed" in run.stdout, run.stdout
        gets, posts = cu.count("GET"), cu.count("POST")
        print(
            f"{'what changed (50 edited)':30} GitHub {gh.count():4}  ClickUp reads {gets:5} "
            f"({gets - CHANGED:+d} of {CHANGED})  writes {posts:3} ({posts - CHANGED:+d})"
            f"  at {PER_MINUTE}/min: {minutes(gets + posts):>8}  [{seconds:4.1f} s here]"
        )
        print(
            f"{'':30} (a scheduled run with its run state: one GitHub page of what changed "
            "and the run state's write; the changed tasks read one by one)"
        )

        stale(cu, texts)
        issues = [issue_from_json(gh._issue_json(gh.issue(REPO, n)), REPO) for n in texts]
        store = ClickUp(Secret(cu.token), api_url=cu.url)
        start = time.perf_counter()
        report = run_mirror(
            issues,
            store,
            config=MirrorConfig(),
            templates=Templates(),
            full=False,
            log=lambda _: None,
        )
        assert report.count("written") == CHANGED
        seconds = time.perf_counter() - start
        line("one GET per task (reference)", 0, store.counter.reads, store.counter.writes, seconds)
        print(
            f"{'':30} (no workspace id known, or single-issue events; GitHub listing not "
            "counted here)"
        )
        print(
            f"Free plan: every write counts against a lifetime cap of 60 custom-field writes; "
            f"this rebuild spends {CHANGED}, and an unchanged rerun spends 0."
        )


if __name__ == "__main__":
    main()
