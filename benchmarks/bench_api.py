"""API calls of a scheduled check over 1,000 and 10,000 open issues (5% with problems) on the
loopback GitHub: calls made beside the lower bound (the task list pages + one call per comment
or label write that must happen), and the difference, call by call: a first run, a rerun with
nothing changed, a rerun after 10 blocks are fixed; then an issue event of each kind.

The run state (issue 14, rules/memory.py) is a hidden line in the digest issue's body: the
listing brings it for free; writing it costs a conditional re-read of that issue (a 304 when
nothing changed since the listing) and one PATCH (or, the first time, the issue's creation).
Its size is printed beside the 65,536-character limit.

"counted" is what GitHub counts against the primary rate limit; "round trips" adds the
conditional re-reads answered `304 Not Modified`, which GitHub does not count (its docs on
conditional requests). The CLI's `github_calls` and the Action's "API calls" line are round
trips (retries and 304s included).
Run: `make bench` or `python benchmarks/bench_api.py [ISSUES ...]` (default 1000 10000).
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.actionrun import run_action
from tests.conftest import SEED_BLOCK
from tests.fakes import GitHubFake

from ai_context.rules.memory import current_line, decode_state

BROKEN_SHARE, FIXED = 20, 10  # one issue in 20 broken; 10 of them fixed before the third run
INCOMPLETE = "## AI Context\n\n- **Active actor:** cc-x\n- **Phase:** planning\n"
NOW = {"AI_CONTEXT_NOW": "2026-05-26T15:00:00Z", "INPUT_JOBS": "check"}
BOT = "github-actions[bot]"
DAY_AGO = datetime.now(UTC).replace(microsecond=0) - timedelta(days=1)
WRITES = ("POST", "PATCH", "DELETE")
NOT_MODIFIED = "conditional re-read, 304: not counted against the rate limit"


def kinds(gh: GitHubFake, carrier: int | None) -> Counter[str]:
    """The calls of the last run by what they were for."""
    out: Counter[str] = Counter()
    state_path = f"/repos/o/r/issues/{carrier}"
    previous = None
    free = {id(r) for r in gh.not_modified}
    for r in gh.requests:
        after_create = previous is not None and (previous.method, previous.path) == (
            "POST",
            r.path,
        )
        previous = r
        if id(r) in free:
            out[NOT_MODIFIED] += 1
        elif r.method == "GET" and r.template == "/repos/{owner}/{repo}/issues":
            out["page"] += 1
        elif r.method == "POST" and r.template == "/graphql":  # a read, though a POST
            out["graphql batch read"] += 1
        elif r.method == "GET" and r.template == "/repos/{owner}/{repo}/issues/comments":
            out["closing comment listing page"] += 1
        elif r.method == "GET" and r.template.endswith("/comments") and after_create:
            out["list after create (settles a race)"] += 1
        elif r.method == "GET" and r.template.endswith("/comments"):
            out["comment read"] += 1
        elif r.path == state_path and r.method == "GET":
            out["state re-read"] += 1
        elif (r.path == state_path and r.method == "PATCH") or (
            r.method == "POST" and r.template == "/repos/{owner}/{repo}/issues"
        ):
            out["state write"] += 1
        elif r.method in WRITES:
            out["task write"] += 1
        else:
            out[f"other {r.method} {r.template}"] += 1
    return out


def carrier_of(gh: GitHubFake) -> int | None:
    found = [n for n, i in gh.repos["o/r"].issues.items() if "ai-context:digest" in i.labels]
    return found[0] if found else None


def report(name: str, gh: GitHubFake, tasks: int, writes: int, seconds: float) -> None:
    """One line: calls counted against the rate limit beside the round trips, the lower bound
    (task pages + necessary task writes), the difference call by call."""
    got = kinds(gh, carrier_of(gh))
    trips = sum(got.values())
    counted = trips - got[NOT_MODIFIED]
    bound = -(-tasks // 100) + writes
    extra = {k: v for k, v in got.items() if k not in ("task write", NOT_MODIFIED)}
    extra["page"] -= -(-tasks // 100)
    why = ", ".join(f"+{v} {k}" for k, v in sorted(extra.items()) if v) or "none"
    free = f"; beside them {got[NOT_MODIFIED]} {NOT_MODIFIED}" if got[NOT_MODIFIED] else ""
    assert got["task write"] == writes, (name, got)
    print(
        f"  {name:26} counted {counted:5} (round trips {trips:5})  lower bound {bound:5}  "
        f"({counted - bound:+d}: {why}{free})  {seconds:5.1f} s"
    )


def scenario(issues: int) -> None:
    broken = issues // BROKEN_SHARE
    with GitHubFake(now=None) as gh, tempfile.TemporaryDirectory() as tmp:
        for n in range(1, issues + 1):
            gh.add_issue("o/r", f"Task {n}", INCOMPLETE if n % BROKEN_SHARE == 0 else SEED_BLOCK)
            if n % 3 == 0:  # written a day before the runs, as a repository's comments are
                gh.add_comment("o/r", n, "A human comment.", user="ana", created_at=DAY_AGO)
        with_comments = sum(1 for n in range(BROKEN_SHARE, issues + 1, BROKEN_SHARE) if n % 3 == 0)
        print(f"{issues} open issues, {broken} with problems, a third with human comments:")

        def run(name: str) -> float:
            gh.reset_requests()
            start = time.perf_counter()
            result = run_action(Path(tmp) / name, gh.url, "schedule", {}, extra_env=NOW)
            assert result.code == 0, result.stdout + result.stderr
            return time.perf_counter() - start

        # per broken issue: create the comment, add the labels
        report("first run", gh, issues, 2 * broken, run("1"))
        assert gh.count("GET", "/repos/{owner}/{repo}/issues/{number}/comments") == 0
        queries = gh.count("POST", "/graphql")
        assert queries == -(-with_comments // 100)
        pages = -(-broken // 100)
        print(
            f"  {'':26} (no state yet: the {with_comments} broken issues that have comments "
            f"are read, to be sure none is ours,\n  {'':26} by {queries} GraphQL "
            f"quer{'y' if queries == 1 else 'ies'} of up to 100 issues (REST: "
            f"{with_comments} listings; adapters/github_graphql.py);\n"
            f"  {'':26} the {broken} new comments are settled at the end by one listing of "
            f"the repository's comments since the run\n  {'':26} started ({pages} page(s) of "
            "100), so racing runs end with one: jobs/settle.py;\n"
            f"  {'':26} the state write creates the digest issue that carries the run state)"
        )
        report("rerun, nothing changed", gh, issues, 0, run("2"))
        for n in range(BROKEN_SHARE, BROKEN_SHARE * (FIXED + 1), BROKEN_SHARE):
            gh.edit_issue("o/r", n, body=SEED_BLOCK)
        # fixed: edit to all-clear + remove 2 labels each
        report(f"rerun, {FIXED} blocks fixed", gh, issues, 3 * FIXED, run("3"))
        carrier = carrier_of(gh)
        assert carrier is not None
        body = gh.issue("o/r", carrier).body
        line = current_line(body) or ""
        state = decode_state(body, "o/r", BOT)
        print(
            f"  run state: {len(state.tasks) if state else 0} tasks remembered in "
            f"{len(line):,} characters (limit 65,536; the page for the digest issue is the "
            "+1 page)"
        )
        events(gh, Path(tmp), BROKEN_SHARE * (FIXED + 1))


def events(gh: GitHubFake, tmp: Path, number: int) -> None:
    """Issue events use no state: the payload carries the issue (re-read once, conditionally
    on its updated_at: a payload is a snapshot, jobs/check.py `_current`), one comment read
    finds the sticky comment."""
    issue = gh.issue("o/r", number)
    payload = {
        "action": "edited",
        "issue": {**gh._issue_json(issue), "body": issue.body},
        "changes": {"title": {"from": "old title"}},
        "repository": {"full_name": "o/r"},
    }
    env = {**NOW, "INPUT_JOBS": "auto"}
    gh.reset_requests()
    run_action(tmp / "e1", gh.url, "issues", payload, extra_env=env)
    print(f"  issue event, title edited (block unchanged): {gh.count()} calls (goal 0)")
    gh.edit_issue("o/r", number, body=INCOMPLETE + "- **Next step:** plan it\n")
    issue = gh.issue("o/r", number)
    payload["issue"] = {**gh._issue_json(issue), "body": issue.body}
    payload["changes"] = {"body": {"from": INCOMPLETE}}
    gh.reset_requests()
    run_action(tmp / "e2", gh.url, "issues", payload, extra_env=env)
    got = kinds(gh, None)
    writes = sum(1 for r in gh.requests if r.method in WRITES)
    free = got[NOT_MODIFIED]
    reads = gh.count() - writes - free
    print(
        f"  issue event, block changed: {writes + reads} counted calls = {writes} write(s) + "
        f"{reads} read(s) (its comments; goal: the writes + at most 1 read), {gh.count()} "
        f"round trips: +{free} the issue's re-read ({NOT_MODIFIED})"
    )


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [1000, 10_000]
    for issues in sizes:
        scenario(issues)


if __name__ == "__main__":
    main()
