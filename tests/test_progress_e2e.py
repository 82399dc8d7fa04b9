"""Progress on long work, seen from outside: a scheduled Action run against a slow loopback
GitHub logs a line every 10 pages (issues read, ETA) inside the scan's collapsible group, and
one line before a rate-limit wait longer than 5 s (what for, until when); the command line's
reports show a progress line on a terminal's stderr and nothing when stderr is a pipe."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.actionrun import run_action
from tests.conftest import ROOT, SEED_BLOCK
from tests.fakes import GitHubFake

ISSUES = 1_050  # eleven pages
DAY_AGO = datetime.now(UTC).replace(microsecond=0) - timedelta(days=1)


def seed(gh: GitHubFake) -> None:
    for n in range(1, ISSUES + 1):
        when = DAY_AGO - timedelta(minutes=n)
        gh.add_issue("o/r", f"Task {n}", SEED_BLOCK, number=n, created_at=when, updated_at=when)


def test_a_long_scan_logs_progress_and_says_before_it_waits(tmp_path: Path) -> None:
    with GitHubFake(latency=0.002) as gh:  # slow: every answer takes a little while
        seed(gh)
        # The first page is refused for a secondary rate limit: GitHub asks for 6 seconds.
        gh.secondary_rate_limit_next("GET", "/repos/o/r/issues", retry_after=6)
        result = run_action(
            tmp_path,
            gh.url,
            "schedule",
            {},
            inputs={"jobs": "check"},
            extra_env={"AI_CONTEXT_NOW": "2026-05-26T15:00:00Z"},
        )
    assert result.code == 0, result.stdout + result.stderr
    log = result.stdout.splitlines()
    start, end = log.index("::group::ai-context scan"), log.index("::endgroup::")
    scan = log[start:end]
    waits = [line for line in scan if "waiting" in line]
    assert len(waits) == 1
    assert re.fullmatch(
        r"ai-context: waiting 6 s for GitHub's rate limit, until \d\d:\d\d:\d\d UTC", waits[0]
    )
    lines = [line for line in scan if "issues read" in line]
    # The first line comes at page 10, or before it when 10 s pass first (a loaded machine).
    first = re.fullmatch(
        r"ai-context: o/r: ([\d,]+) issues read \((\d+) of 11 pages\), .*reading done in about .+",
        lines[0] if lines else "",
    )
    assert first is not None, lines
    pages = int(first[2])
    assert 1 <= pages <= 10 and first[1] == f"{100 * pages:,}"
    assert scan.index(waits[0]) < scan.index(lines[0])  # said before the wait, not after


def cli(gh: GitHubFake, cwd: Path, stderr: int) -> subprocess.Popen[bytes]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(ROOT / "src"),
        "GITHUB_TOKEN": "t",
        "GITHUB_API_URL": gh.url,
        "AI_CONTEXT_NOW": "2026-05-26T15:00:00Z",
        "TERM": "dumb",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "ai_context", "digest", "--repo", "o/r", "--format", "md"],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=stderr,
    )


def read_all(fd: int, proc: subprocess.Popen[bytes]) -> bytes:
    out = b""
    while True:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child closed its end
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    return out


def test_the_reports_show_a_progress_line_on_a_terminal_and_nothing_when_piped(
    tmp_path: Path,
) -> None:
    with GitHubFake() as gh:
        seed(gh)
        parent, child = pty.openpty()
        proc = cli(gh, tmp_path, child)
        os.close(child)
        stdout_reader = proc.stdout
        assert stdout_reader is not None
        terminal = read_all(parent, proc)
        stdout = stdout_reader.read()
        assert proc.wait(timeout=120) == 0, terminal.decode(errors="replace")
        os.close(parent)
        shown = terminal.decode()
        assert "ai-context: o/r: 100 issues read (1 of 11 pages)" in shown
        assert "1,050 issues read" in shown
        assert shown.endswith("\r\x1b[K")  # the line is cleared once the reading is done
        assert b"issues read" not in stdout

        piped = cli(gh, tmp_path, subprocess.PIPE)
        out, err = piped.communicate(timeout=120)
        assert piped.returncode == 0, err
        assert b"issues read" not in err and b"issues read" not in out
