"""API calls of a scheduled check over 1,000 open issues, 50 with problems, on the loopback
GitHub: calls made beside the lower bound (list pages + one call per comment or label write
that must happen). A first run, a rerun with nothing changed, and a rerun after 10 blocks are
fixed. The gap is the comment reads: the issue listing says how many comments an issue has and
which of our labels it wears, but not what our comment says, so an issue with findings (or our
labels) and any comments costs one read to compare.
Run: `make bench` or `python benchmarks/bench_api.py`.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.actionrun import run_action
from tests.conftest import SEED_BLOCK
from tests.fakes import GitHubFake

ISSUES, BROKEN, FIXED = 1000, 50, 10
INCOMPLETE = "## AI Context\n\n- **Active actor:** cc-x\n- **Phase:** planning\n"
NOW = {"AI_CONTEXT_NOW": "2026-05-26T15:00:00Z", "INPUT_JOBS": "check"}


def writes(gh: GitHubFake) -> int:
    return sum(1 for r in gh.requests if r.method in ("POST", "PATCH", "DELETE"))


def report(name: str, gh: GitHubFake, bound: int, seconds: float) -> None:
    calls = gh.count()
    print(
        f"{name:34} calls {calls:5}  lower bound {bound:5}  "
        f"({'equal' if calls == bound else f'{calls - bound:+d}'})  writes {writes(gh):4}  "
        f"{seconds:5.1f} s"
    )


def main() -> None:
    with GitHubFake(now=None) as gh, tempfile.TemporaryDirectory() as tmp:
        for n in range(1, ISSUES + 1):
            broken = n % (ISSUES // BROKEN) == 0
            gh.add_issue("o/r", f"Task {n}", INCOMPLETE if broken else SEED_BLOCK, number=n)
            if n % 3 == 0:
                gh.add_comment("o/r", n, "A human comment.", user="ana")
        pages = -(-ISSUES // 100)
        print(f"{ISSUES} open issues, {BROKEN} with problems, a third with human comments")

        start = time.perf_counter()
        result = run_action(Path(tmp) / "1", gh.url, "schedule", {}, extra_env=NOW)
        assert result.code == 0, result.stdout + result.stderr
        # per broken issue: create the comment, add the labels. Broken issues that already
        # have (human) comments cost one read each to make sure none of them is ours.
        with_comments = sum(1 for n in range(1, ISSUES + 1) if n % 20 == 0 and n % 3 == 0)
        report("first run", gh, pages + 2 * BROKEN, time.perf_counter() - start)
        print(f"{'':34} (+{with_comments}: comment reads on broken issues with human comments)")

        gh.reset_requests()
        start = time.perf_counter()
        run_action(Path(tmp) / "2", gh.url, "schedule", {}, extra_env=NOW)
        # nothing must change; the 50 issues with findings have a comment now, and the
        # listing cannot say whether it is current, so each costs one read.
        report("rerun, nothing changed", gh, pages, time.perf_counter() - start)
        print(f"{'':34} (+{BROKEN}: one comment read per issue with findings, to compare)")

        for n in range(ISSUES // BROKEN, ISSUES // BROKEN * (FIXED + 1), ISSUES // BROKEN):
            gh.edit_issue("o/r", n, body=SEED_BLOCK)
        gh.reset_requests()
        start = time.perf_counter()
        run_action(Path(tmp) / "3", gh.url, "schedule", {}, extra_env=NOW)
        # fixed: edit to all-clear + remove 2 labels each (reads: one per issue that had one)
        bound = pages + 3 * FIXED
        report(f"rerun, {FIXED} blocks fixed", gh, bound, time.perf_counter() - start)
        print(f"{'':34} (+{BROKEN}: one comment read per issue with findings or our labels)")


if __name__ == "__main__":
    main()
