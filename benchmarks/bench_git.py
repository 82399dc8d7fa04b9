"""`ai-context derive` over a generated history of 10,000 commits, against a plain `git log`.

    python benchmarks/bench_git.py [--commits 10000] [--repeat 5]

Builds the repository with one `git fast-import` (every 50th commit names #42, some name #420
or #1042 to exercise the pre-filter), then times, in the same run and on the same repository:
  - `git log` (default format, to a pipe): the reference;
  - `ai-context derive 42 --format json` in process (git log pre-filtered on "42" with
    --name-status, parsed as it streams, compared with a block);
  - reading the whole history with files (gitrepo.log, no filter) against
    `git log -z --name-status` to a pipe: the cost of the streaming parser itself.
Prints the best of --repeat runs for each and the ratios (goal: derive within 2x of git log).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from ai_context.adapters.gitrepo import log, log_command
from ai_context.cli.main import main

START = int(datetime(2026, 1, 1, tzinfo=UTC).timestamp())
BODY = """\
## AI Context

- **Active actor:** cc-bench
- **Phase:** implementing
- **Last updated:** 2026-01-05T00:00:00Z
- **Plan:**
  1. Build (done)
  2. Measure (in progress)
- **Files touched:** src/mod1/**, docs/
- **Next step:** Measure
"""


def message(i: int) -> str:
    if i % 50 == 0:
        return f"Work on booking step {i}\n\nRefs #42\n"
    if i % 77 == 0:
        return f"Tidy the exporter (#420) {i}\n"
    if i % 91 == 0:
        return f"Unrelated #1042 {i}\n\nAI-Context-Issue: 1042\n"
    return f"Change {i}: adjust module {i % 37}\n"


def generate(path: Path, commits: int) -> None:
    """One fast-import stream: each commit touches one or two files of 400."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    out = bytearray()
    for i in range(1, commits + 1):
        seconds = START + i * 60
        who = f"Dev {i % 7} <dev{i % 7}@example.test> {seconds} +0000"
        text = message(i).encode()
        out += f"commit refs/heads/main\nauthor {who}\ncommitter {who}\n".encode()
        out += b"data %d\n" % len(text) + text
        files = [f"src/mod{i % 20}/file{i % 400}.py"]
        if i % 3 == 0:
            files.append(f"docs/page{i % 13}.md")
        for name in files:
            content = f"# revision {i}\n".encode()
            out += f"M 100644 inline {name}\n".encode() + b"data %d\n" % len(content) + content
        out += b"\n"
    subprocess.run(["git", "-C", str(path), "fast-import", "--quiet"], input=bytes(out), check=True)
    subprocess.run(["git", "-C", str(path), "reset", "-q", "--hard"], check=True)


def best(repeat: int, run: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def derive_in_process(repo: Path, body: Path) -> None:
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink):
        argv = ["derive", "42", "--checkout", str(repo), "--body-file", str(body)]
        code = main([*argv, "--format", "json"])
    if code != 0:
        raise SystemExit(f"derive failed with exit status {code}")


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--commits", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ai-context-bench-git-") as tmp:
        repo = Path(tmp) / "repo"
        started = time.perf_counter()
        generate(repo, args.commits)
        built = time.perf_counter() - started
        body = Path(tmp) / "42.md"
        body.write_text(BODY, encoding="utf-8")

        def git_log() -> None:
            subprocess.run(["git", "-C", str(repo), "log"], check=True, stdout=subprocess.PIPE)

        full_command = log_command(repo)

        def git_log_files() -> None:
            subprocess.run(full_command, check=True, stdout=subprocess.PIPE)

        plain = best(args.repeat, git_log)
        derive = best(args.repeat, lambda: derive_in_process(repo, body))
        raw = best(args.repeat, git_log_files)
        parsed = best(args.repeat, lambda: sum(1 for _ in log(repo)))
        naming = sum(1 for i in range(1, args.commits + 1) if i % 50 == 0)

    print(f"repository: {args.commits} commits, built with git fast-import in {built:.2f}s")
    print(f"python {sys.version.split()[0]}, best of {args.repeat}")
    print(f"git log (plain, reference)             {plain * 1000:8.1f} ms")
    label = f"ai-context derive 42 ({naming} commits)"
    print(f"{label:39} {derive * 1000:8.1f} ms   ratio {derive / plain:.2f}x (goal <= 2x)")
    print(f"git log -z --name-status (all commits)  {raw * 1000:8.1f} ms")
    print(
        f"gitrepo.log, all commits parsed         {parsed * 1000:8.1f} ms   "
        f"ratio {parsed / raw:.2f}x of the same git log"
    )


if __name__ == "__main__":
    main_bench()
