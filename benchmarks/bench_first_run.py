"""A first run on a repository that already has 200 issues (issue 23): 150 without a block, 21
stale (13 of them one person's), 13 incomplete, 16 fine. Runs the Action on the loopback
GitHub as a new user would (workflow_dispatch, default settings, GitHub's one-write-a-second
pace), run after run until a run has nothing left to write, and prints per run: the GitHub
writes, the @-mentions (and the most one person got), the wall time, and what max-writes left.

The reference is GitHub's content-creation limit, 80 writes a minute and 500 an hour: a run
should stay inside both whatever else runs. `--source DIR` runs another checkout's `src/`
(e.g. main's, for the figures before), `--pace 0` skips the pacing (the writes stay the same).

Run: `make bench` or `python benchmarks/bench_first_run.py [--source DIR] [--pace SECONDS]`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.actionrun import parse_outputs
from tests.conftest import SEED_BLOCK
from tests.fakes import GitHubFake

ROOT = Path(__file__).resolve().parents[1]
NOW = datetime(2026, 6, 1, 9, 17, tzinfo=UTC)
BOT = "github-actions[bot]"
WRITES = ("POST", "PATCH", "PUT", "DELETE")
INCOMPLETE = "## AI Context\n\n- **Active actor:** cc-x\n- **Phase:** planning\n"
CONFIG = "actors:\n" + "".join(
    f"  cc-{who}:\n    owner: {who}\n" for who in ("eve", "bob", "ann", "joe")
)
MENTION = re.compile(r"@(eve|bob|ann|joe)\b")


def block(updated: datetime, actor: str) -> str:
    text = SEED_BLOCK.replace("2026-05-26T14:32:00Z", updated.strftime("%Y-%m-%dT%H:%M:%SZ"))
    return text.replace("cc-ariel-laptop", actor)


def seed(gh: GitHubFake) -> None:
    """150 plain issues, 21 stale tasks (13 of eve's), 13 incomplete blocks, 16 fine."""
    gh.add_repo("o/r")
    number = 0

    def add(title: str, body: str) -> None:
        nonlocal number
        number += 1
        gh.add_issue("o/r", title, body, number=number)

    for n in range(150):
        add(f"Plain issue {n}", "A description, no block.")
    owners = ["eve"] * 13 + ["bob"] * 4 + ["ann"] * 2 + ["joe"] * 2
    for n, who in enumerate(owners):
        add(f"Stale task {n}", block(NOW - timedelta(days=5 + n % 3), f"cc-{who}"))
    for n in range(13):
        add(f"Incomplete task {n}", INCOMPLETE)
    for n in range(16):
        add(f"Fine task {n}", block(NOW - timedelta(hours=2), "cc-bob"))


def run(gh: GitHubFake, tmp: Path, source: Path, pace: float) -> dict[str, object]:
    """One dispatch of the Action; what it wrote and how long it took."""
    tmp.mkdir(parents=True)
    workspace = tmp / "workspace"
    (workspace / ".github").mkdir(parents=True)
    (workspace / ".github" / "ai-context.yml").write_text(CONFIG, encoding="utf-8")
    event, output, summary = tmp / "event.json", tmp / "output.txt", tmp / "summary.md"
    event.write_text("{}", encoding="utf-8")
    output.write_text("", encoding="utf-8")
    summary.write_text("", encoding="utf-8")
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(source),
        "GITHUB_EVENT_NAME": "workflow_dispatch",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_API_URL": gh.url,
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(summary),
        "INPUT_GITHUB-TOKEN": "t",
        "INPUT_WRITE-INTERVAL": str(pace),
        "AI_CONTEXT_NOW": NOW.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    gh.reset_requests()
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "ai_context", "action"],
        env=env,
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"the run failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    writes = [r for r in gh.requests if r.method in WRITES and r.path != "/graphql"]
    mentions: Counter[str] = Counter()
    for r in writes:
        if r.template.endswith("/comments") and r.method == "POST" and isinstance(r.json, dict):
            mentions.update(MENTION.findall(str(r.json.get("body", ""))))
    kinds = Counter(f"{r.method} {r.template.rsplit('/', 1)[-1]}" for r in writes)
    return {
        "writes": len(writes),
        "kinds": dict(kinds),
        "mentions": sum(mentions.values()),
        "most": mentions.most_common(1)[0] if mentions else ("-", 0),
        "seconds": seconds,
        "left": parse_outputs(output.read_text(encoding="utf-8")).get("writes-left", "n/a"),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=ROOT / "src", help="the src/ to run")
    parser.add_argument("--pace", type=float, default=1.0, help="seconds between writes")
    parser.add_argument("--json", action="store_true", help="print the runs as JSON")
    args = parser.parse_args(argv)
    runs = []
    with GitHubFake(now=NOW) as gh, tempfile.TemporaryDirectory() as tmp:
        seed(gh)
        while len(runs) < 10:
            runs.append(
                run(gh, Path(tmp) / f"run{len(runs) + 1}", args.source.resolve(), args.pace)
            )
            if runs[-1]["writes"] == 0 or runs[-1]["left"] in ("0", "n/a"):
                break
    if args.json:
        print(json.dumps(runs, indent=2))
        return 0
    print(f"first run on 200 issues (150 plain, 21 stale, 13 incomplete), {args.source}")
    print("reference: GitHub's content-creation limit, 80 writes a minute, 500 an hour")
    for n, r in enumerate(runs, start=1):
        who, most = r["most"]  # type: ignore[misc]
        print(
            f"run {n}: {r['writes']:>3} writes, {r['mentions']:>2} mentions (most: {who} {most}), "
            f"{r['seconds']:6.1f} s, left for the next run: {r['left']}   {r['kinds']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
