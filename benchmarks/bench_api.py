"""API calls, peak memory and CPU of scheduled runs, each beside its lower bound, on the
loopback GitHub; every run is `python -m ai_context action` as a process of its own.

One repository of 1,000 and of 10,000 open issues (5% with problems, a third with a human
comment, edited at times spread over the days before; blocks fresh, going stale over the next
day), `jobs: check`:
  first run           no run state yet: every open issue is listed. Bound: the pages + the writes.
  rerun (1)           nothing changed, right after the first run: the issues it wrote to are
                      listed once more (their updated_at moved past the listing's time, and
                      GitHub cannot list "updated by someone else"), then the state moves on.
  rerun (2)           nothing changed: one page. Bound: 1 call (the listing that says so).
  rerun, 10 fixed     10 blocks fixed by hand. Bound: the writes + 1 page.
  full on dispatch    `full: true` after 5 edits: every page + what changed.
Then an organisation digest: 50 repositories of 1,000 issues, run from a central repository
(`repositories:`, `jobs: digest`): a first run, then reruns with nothing changed. Bound: one
call per repository (the listing that says so).

"counted" is what GitHub counts against the primary rate limit; a conditional re-read
answered `304 Not Modified` is a round trip it does not count (its docs on conditional
requests). CPU and peak memory (RSS) are the run's own, from getrusage at its end: the whole
process (interpreter, imports, work) and the work alone (neither Python's start-up nor an
import, wherever it happens: PyGithub is imported when the run first needs it).

Run: `make bench` or `python benchmarks/bench_api.py [ISSUES ...] [--no-org | --org-only]`.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.actionrun import run_action
from tests.conftest import SEED_BLOCK
from tests.fakes import GitHubFake
from tests.fakes.base import Request

from ai_context.rules import runstate

ROOT = Path(__file__).resolve().parents[1]
BROKEN_SHARE, FIXED, EDITED = 20, 10, 5
INCOMPLETE = "## AI Context\n\n- **Active actor:** cc-x\n- **Phase:** planning\n"
NOW = datetime(2026, 5, 26, 15, 0, tzinfo=UTC)
ENV = {"AI_CONTEXT_NOW": "2026-05-26T15:00:00Z"}
BOT = "github-actions[bot]"
WRITES = ("POST", "PATCH", "DELETE")
TIMEOUT = 3600  # a loaded two-core machine is slow; a bench reports, it does not race
MAX_WRITES = 500  # the most a run may write (max-writes): a first run of 10,000 issues takes 3
REPOS, REPO_ISSUES = 50, 1000
REPEAT = 3

# What a process spent, on the last line of its stderr as JSON: its CPU (getrusage), the CPU
# it had spent when the script began (Python's start-up), its imports' CPU by top-level
# package (each module's own share, nested imports apart; CPython's import statement calls
# importlib._bootstrap._find_and_load, wrapped here) and its peak RSS (VmHWM: getrusage's
# would count the bench's memory, which the child shares until it execs).
PROBE = """
import importlib._bootstrap as _boot, json, resource, sys, time
_startup = time.process_time()
_imports, _stack, _real = {{}}, [], _boot._find_and_load
def _timed(name, *args):
    _stack.append(0.0)
    start = time.process_time()
    try:
        return _real(name, *args)
    finally:
        spent = time.process_time() - start
        nested = _stack.pop()
        top = name.partition(".")[0]
        _imports[top] = _imports.get(top, 0.0) + spent - nested
        if _stack:
            _stack[-1] += spent
_boot._find_and_load = _timed
def _report():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    peak = next(l for l in open("/proc/self/status") if l.startswith("VmHWM:")).split()[1]
    sys.stderr.write("\\n" + json.dumps(dict(cpu=usage.ru_utime + usage.ru_stime,
        startup=_startup, imports=_imports, rss=int(peak), modules=sorted(sys.modules))) + "\\n")
"""
# Runs the Action as its container does (`ai-context action`), measured.
MEASURED = (
    PROBE
    + """
sys.path.insert(0, {src!r})
from ai_context.__main__ import main
code = main(["action"])
_report()
raise SystemExit(code)
"""
)
# Fetches the same pages with requests and nothing else, measured the same way.
FETCH_ONLY = (
    PROBE
    + """
import requests
session = requests.Session()
session.headers.update({{"Accept": "application/vnd.github+json",
                         "Authorization": "token t", "X-GitHub-Api-Version": "2022-11-28"}})
for url in json.load(sys.stdin):
    session.get(url, timeout=30).json()
_report()
"""
)
# The same, through PyGithub's requester (the client ai-context's adapter is built on).
FETCH_ONLY_PYGITHUB = (
    PROBE
    + """
from github import Auth, Github
requester = Github(auth=Auth.Token("t"), base_url={base!r}, per_page=100).requester
for url in json.load(sys.stdin):
    requester.requestJsonAndCheck("GET", url)
_report()
"""
)
# The packages a breakdown names; the rest of the imports are "other".
PACKAGES = (
    "ai_context",
    "github",
    "cryptography",
    "requests",
    "urllib3",
    "pydantic",
    "pydantic_core",
    "yaml",
    "jinja2",
)


def cost(usage: dict[str, Any]) -> Cost:
    """A process's CPU split: start-up, imports (by package), and the work (the rest)."""
    imports: dict[str, float] = usage["imports"]
    total_imports = sum(imports.values())
    return Cost(
        cpu=usage["cpu"],
        startup=usage["startup"],
        imports=total_imports,
        work=usage["cpu"] - usage["startup"] - total_imports,
        packages={p: imports.get(p, 0.0) for p in PACKAGES if imports.get(p)},
        rss_mb=usage["rss"] / 1024,
        modules=usage["modules"],
    )


@dataclass
class Cost:
    cpu: float
    startup: float
    imports: float
    work: float
    packages: dict[str, float]
    rss_mb: float
    modules: list[str]

    def split(self) -> str:
        """'start-up S + imports I (github G, ...) + work W', in milliseconds."""
        named = sum(self.packages.values())
        parts = [f"{p} {v * 1000:.0f}" for p, v in self.packages.items()]
        parts.append(f"other {(self.imports - named) * 1000:.0f}")
        return (
            f"start-up {self.startup * 1000:.0f} + imports {self.imports * 1000:.0f} "
            f"({', '.join(parts)}) + work {self.work * 1000:.0f} ms"
        )


@dataclass
class Run:
    calls: Counter[str]
    counted: int
    trips: int
    cpu: float
    work: float
    rss_mb: float
    seconds: float
    stdout: str
    gets: list[str]
    left: int = 0  # writes max-writes left for the next run
    runs: int = 1
    cost: Cost | None = None  # the CPU split of one run (None: several runs added)

    def then(self, other: Run) -> Run:
        """This run and OTHER, the next, as one: calls added, the higher peak."""
        return Run(
            calls=self.calls + other.calls,
            counted=self.counted + other.counted,
            trips=self.trips + other.trips,
            cpu=self.cpu + other.cpu,
            work=self.work + other.work,
            rss_mb=max(self.rss_mb, other.rss_mb),
            seconds=self.seconds + other.seconds,
            stdout=other.stdout,
            gets=self.gets + other.gets,
            left=other.left,
            runs=self.runs + other.runs,
        )


def action(gh: GitHubFake, tmp: Path, name: str, *, repository: str = "o/r", **inputs: str) -> Run:
    """One scheduled run as a process, measured; an hour after the one before, as the runs of
    an hourly schedule (GitHub's clock moves on; the findings' clock is NOW)."""
    gh.clock.shift(hours=1)
    gh.reset_requests()
    gh.not_modified.clear()
    start = time.perf_counter()
    result = run_action(
        tmp / name,
        gh.url,
        "schedule",
        {},
        repository=repository,
        inputs={"jobs": "check", "max-writes": str(MAX_WRITES), **inputs},
        extra_env={**ENV, "PYTHONPATH": str(ROOT / "src")},
        timeout=TIMEOUT,
        command=[sys.executable, "-c", MEASURED.format(src=str(ROOT / "src"))],
    )
    seconds = time.perf_counter() - start
    assert result.code == 0, f"exit {result.code}: " + result.stdout[-3000:] + result.stderr[-3000:]
    spent = cost(json.loads(result.stderr.strip().splitlines()[-1]))
    free = {id(r) for r in gh.not_modified}
    calls = kinds(gh.requests, free)
    trips = len(gh.requests)
    return Run(
        calls=calls,
        counted=trips - len(free),
        trips=trips,
        cpu=spent.cpu,
        work=spent.work,
        rss_mb=spent.rss_mb,
        seconds=seconds,
        stdout=result.stdout,
        gets=[f"{gh.url}{r.path}?{r.query}" for r in gh.requests if r.method == "GET"],
        left=int(result.outputs.get("writes-left") or 0),
        cost=spent,
    )


def kinds(requests: list[Request], free: set[int]) -> Counter[str]:
    """The calls of a run by what they were for."""
    out: Counter[str] = Counter()
    for r in requests:
        if id(r) in free:
            out["304"] += 1
        elif r.method == "GET" and r.template == "/repos/{owner}/{repo}/issues":
            out["page"] += 1
        elif r.method == "POST" and r.template == "/graphql" and "userContentEdits" in str(r.json):
            out["edit history"] += 1
        elif r.method == "POST" and r.template == "/graphql":  # a read, though a POST
            out["graphql"] += 1
        elif r.method == "GET" and r.template == "/repos/{owner}/{repo}/issues/comments":
            out["settle"] += 1
        elif r.method == "GET" and r.template.endswith("/comments"):
            out["comments"] += 1
        elif r.method == "GET" and r.template == "/repos/{owner}/{repo}/issues/{number}":
            out["due read"] += 1
        elif r.method == "POST" and r.template == "/repos/{owner}/{repo}/issues":
            out["carrier created"] += 1
        elif r.method == "PATCH" and r.template == "/repos/{owner}/{repo}/issues/{number}":
            out["state written"] += 1
        elif r.method in WRITES:
            out["write"] += 1
        else:
            out[f"other {r.method} {r.template}"] += 1
    return out


WHY = {
    "page": "page(s) of issues",
    "graphql": "GraphQL read(s) of comments (100 issues each)",
    "edit history": "edit history read(s) after the state's write (jobs/bodywrite.py)",
    "settle": "settle listing(s) (the run's new comments, 100 a page: jobs/settle.py)",
    "comments": "REST comment listing(s)",
    "due read": "due task(s) read",
    "carrier created": "run-state issue created",
    "state written": "run state written",
}


def line(name: str, run: Run, *, pages: int, writes: int, goal: str) -> None:
    """The run's counted calls beside its lower bound (PAGES pages + WRITES task writes), the
    difference call by call, and what it cost."""
    got = Counter(run.calls)
    assert got["write"] == writes, (name, dict(got))
    bound = pages + writes
    extra = Counter(got)
    extra["page"] -= pages
    del extra["write"], extra["304"]
    why = ", ".join(f"{v:+d} {WHY.get(k, k)}" for k, v in sorted(extra.items()) if v) or "none"
    free = f"; +{got['304']} re-read(s) answered 304 (free)" if got["304"] else ""
    print(
        f"  {name:18} counted {run.counted:5}  bound {bound:5} ({pages} page(s) + {writes} "
        f"write(s))  {goal}\n  {'':18} difference {run.counted - bound:+d}: {why}{free}\n"
        f"  {'':18} CPU {run.cpu:5.2f} s (work {run.work:5.2f} s), peak RSS {run.rss_mb:6.1f} "
        f"MB, {run.seconds:5.1f} s"
    )


def seed(gh: GitHubFake, repo: str, issues: int, *, broken: bool = True) -> None:
    """ISSUES open issues edited at spread times over the days before the runs, their blocks
    updated over the day before NOW (so each goes stale at its own minute of the next day)."""
    day_ago = datetime.now(UTC).replace(microsecond=0) - timedelta(days=1)
    for n in range(1, issues + 1):
        when = day_ago - timedelta(minutes=n)
        stamp = (NOW - timedelta(minutes=n % 1400 + 10)).strftime("%Y-%m-%dT%H:%M:%SZ")
        body = SEED_BLOCK.replace("2026-05-26T14:32:00Z", stamp)
        if broken and n % BROKEN_SHARE == 0:
            body = INCOMPLETE
        gh.add_issue(repo, f"Task {n}", body, number=n, created_at=when, updated_at=when)
        if broken and n % 3 == 0:
            gh.add_comment(repo, n, "A human comment.", user="ana", created_at=when)


def repository(issues: int) -> dict[str, float]:
    """The scenarios over one repository of ISSUES issues; returns the first run's peak RSS."""
    pages = math.ceil(issues / 100)
    broken = issues // BROKEN_SHARE
    print(f"{issues:,} open issues, {broken} with problems, a third with a human comment:")
    with GitHubFake(now=None) as gh, tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        seed(gh, "o/r", issues)
        first = action(gh, tmp, "1")
        while first.left:  # max-writes stopped it: the next runs go on where it stopped
            first = first.then(action(gh, tmp, f"1.{first.runs}"))
        name = "first run" if first.runs == 1 else f"first run ({first.runs} runs)"
        line(name, first, pages=pages, writes=2 * broken, goal="goal: <= bound + 3")
        rerun = action(gh, tmp, "2")
        line("rerun (1)", rerun, pages=1, writes=0, goal="(lists what the last run wrote, once)")
        again = action(gh, tmp, "3")
        line("rerun (2)", again, pages=1, writes=0, goal="goal: <= 2 calls")
        for n in range(BROKEN_SHARE, BROKEN_SHARE * (FIXED + 1), BROKEN_SHARE):
            gh.edit_issue("o/r", n, body=SEED_BLOCK)
        fixed = action(gh, tmp, "4")
        # fixed: the comment edited to all-clear, two labels removed
        line(f"rerun, {FIXED} fixed", fixed, pages=1, writes=3 * FIXED, goal="goal: <= writes + 3")
        for n in range(BROKEN_SHARE * 20, BROKEN_SHARE * (20 + EDITED), BROKEN_SHARE):
            gh.edit_issue("o/r", n, body=SEED_BLOCK)
        full = action(gh, tmp, "5", full="true")
        line("full on dispatch", full, pages=pages, writes=3 * EDITED, goal="goal: pages + changes")
        carrier = next(i for i in gh.repos["o/r"].issues.values() if "ai-context:state" in i.labels)
        (state_line,) = runstate.lines(carrier.body)
        state = runstate.decode(carrier.body, "o/r", BOT, "check")
        assert state is not None
        print(
            f"  run state: {len(state.due):,} dues, {len(state.seen)} fingerprints, "
            f"{len(state.marks)} tasks with findings, in {len(state_line):,} characters "
            f"(limit {runstate.MAX_ENCODED:,}; the dues spread over a day)"
        )
        graphql = first.calls["graphql"] + fixed.calls["graphql"]
        print(
            f"  comment reads: the GraphQL batch read the comments of the first run's "
            f"{(broken + 2) // 3} broken issues with comments in {first.calls['graphql']} "
            f"quer{'y' if first.calls['graphql'] == 1 else 'ies'} (REST: one listing each), "
            f"the {FIXED} fixed ones in {fixed.calls['graphql']}; remembering each sticky "
            f"comment's id in the run state would save those {graphql} and nothing on the "
            "first run"
        )
    return {"rss": first.rss_mb, "cpu": first.cpu}


def organisation() -> None:
    """The digest of REPOS repositories of REPO_ISSUES issues from a central repository."""
    names = [f"acme/repo-{k:02}" for k in range(REPOS)]
    print(f"organisation digest: {REPOS} repositories of {REPO_ISSUES:,} issues, jobs: digest")
    with GitHubFake(now=None) as gh, tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        gh.add_repo("acme/central")
        for name in names:
            seed(gh, name, REPO_ISSUES, broken=False)
        config = "repositories:\n" + "".join(f"  - {n}\n" for n in names)

        def run(name: str) -> Run:
            workspace = tmp / name / "workspace" / ".github"
            workspace.mkdir(parents=True)
            (workspace / "ai-context.yml").write_text(config, encoding="utf-8")
            return action(gh, tmp, name, repository="acme/central", jobs="digest")

        first = run("1")
        print(
            f"  first run          counted {first.counted:5}  ({first.calls['page']} pages, "
            f"{sum(v for k, v in first.calls.items() if k not in ('page', '304'))} other); "
            f"CPU {first.cpu:5.1f} s, peak RSS {first.rss_mb:6.1f} MB, {first.seconds:5.1f} s"
        )
        run("2")
        reruns = [run(f"3{k}") for k in range(REPEAT)]  # the least CPU of a few: the work,
        rerun = min(reruns, key=lambda r: r.cpu)  # not the other processes of a busy machine
        per_repo = rerun.counted / REPOS
        print(
            f"  rerun, no change   counted {rerun.counted:5} = {per_repo:.2f} per repository "
            f"(goal <= 2; bound 1: {dict(rerun.calls)}: the central repository's first page "
            "(the run states) and the digest issue's comments, then one listing per repository)"
        )
        assert "nothing changed since the last run" in rerun.stdout
        fetch = min((fetch_only(rerun.gets) for _ in range(REPEAT)), key=lambda f: f.cpu)
        script = FETCH_ONLY_PYGITHUB.format(base=gh.url)
        pygithub = min((fetch_only(rerun.gets, script) for _ in range(REPEAT)), key=lambda f: f.cpu)
        assert rerun.cost is not None
        compare(rerun.cost, {"requests": fetch, "PyGithub": pygithub}, pages=len(rerun.gets))


def compare(ours: Cost, scripts: dict[str, Cost], *, pages: int) -> None:
    """The rerun's CPU beside each fetch-only script's (whole, and its work alone), each split
    into start-up, imports and work, and the modules the rerun imports beyond the scripts'."""
    print(
        f"  its CPU            {ours.cpu:5.2f} s; scripts fetching the same {pages} pages "
        f"(the least of {REPEAT} runs each; goal <= 1.5x):"
    )
    for name, theirs in scripts.items():
        print(
            f"  {'':18} with {name + ':':9} {theirs.cpu:5.2f} s = {ours.cpu / theirs.cpu:.2f}x; "
            f"work alone {ours.work:5.2f} s against {theirs.work:5.2f} s = "
            f"{ours.work / max(theirs.work, 1e-9):.2f}x; peak RSS {ours.rss_mb:.0f} MB against "
            f"{theirs.rss_mb:.0f} MB"
        )
    for name, one in {"ai-context": ours, **scripts}.items():
        print(f"  {'':18} {name + ':':11} {one.split()}")
    known = set().union(*(one.modules for one in scripts.values()))
    extra = Counter(m.partition(".")[0] for m in ours.modules if m not in known)
    print(
        f"  {'':18} modules beyond the scripts': "
        + ", ".join(f"{p} {n}" for p, n in extra.most_common())
    )


def fetch_only(urls: list[str], script: str = FETCH_ONLY) -> Cost:
    """What SCRIPT (a fetch-only reference) costs to GET every one of URLS."""
    proc = subprocess.run(
        [sys.executable, "-c", script.format() if script is FETCH_ONLY else script],
        input=json.dumps(urls),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )
    return cost(json.loads(proc.stderr.strip().splitlines()[-1]))


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("issues", nargs="*", type=int, help="repository sizes (1000 10000)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--no-org", action="store_true", help="skip the organisation run")
    which.add_argument("--org-only", action="store_true", help="only the organisation run")
    args = parser.parse_args(argv)
    sizes = [] if args.org_only else args.issues or [1000, 10_000]
    peaks: dict[int, dict[str, float]] = {}
    for issues in sizes:
        peaks[issues] = repository(issues)
    if len(peaks) > 1:
        small, large = min(peaks), max(peaks)
        ratio = peaks[large]["rss"] / peaks[small]["rss"]
        print(
            f"first run's peak RSS: {peaks[large]['rss']:.0f} MB at {large:,} issues, "
            f"{peaks[small]['rss']:.0f} MB at {small:,}: {ratio:.2f}x (goal <= 2x)"
        )
    if not args.no_org:
        organisation()


if __name__ == "__main__":
    main(sys.argv[1:])
