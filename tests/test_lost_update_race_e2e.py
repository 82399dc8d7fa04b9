"""Two resumed agents save the same issue at once, 20 times, as processes
(`python -m ai_context save`) against the loopback GitHub answering each call after 0.25 s:
at most one of them exits 0 each time, and a block that is not in the issue at the end was
reported to its writer (exit 4, with its copy and the issue's)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from pydantic import SecretStr

from ai_context.adapters.cache import DirectoryCache
from ai_context.adapters.github import GitHub
from ai_context.core.block.parse import parse
from ai_context.jobs.agent import resuming
from tests.conftest import ROOT, SEED_BLOCK
from tests.fakes import GitHubFake

REPO = "acme/shop"
RACES = 20
LATENCY = 0.25
HUMAN = "Users need their booking history.\n"


def save(fake: GitHubFake, cache: Path, next_step: str) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "GITHUB_TOKEN": "t",
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_API_URL": fake.url,
        "AI_CONTEXT_CACHE": str(cache),
        "PYTHONPATH": str(ROOT / "src"),
    }
    env.pop("GH_TOKEN", None)
    env.pop("AI_CONTEXT_ACTOR", None)
    text = SEED_BLOCK.replace("Finish unit tests in booking.repository.spec.ts", next_step)
    block = cache.parent / "block.md"
    block.write_text(text, encoding="utf-8")
    with block.open(encoding="utf-8") as stdin:
        return subprocess.Popen(
            [sys.executable, "-m", "ai_context", "save", "1", "--format", "json"],
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=cache.parent,
        )


def resume(fake: GitHubFake, cache: Path) -> str:
    api = GitHub(SecretStr("t"), REPO, api_url=fake.url, write_interval=0)
    return resuming.resume(api, DirectoryCache(cache), 1, now=datetime.now(UTC)).status


def test_two_save_processes_race_and_no_block_is_lost_silently(tmp_path: Path) -> None:
    outcomes: Counter[str] = Counter()
    with GitHubFake(latency=LATENCY) as fake:
        for race in range(RACES):
            fake.repos.clear()
            fake.add_issue(REPO, "Booking history", SEED_BLOCK + "\n" + HUMAN)
            steps = {"a": f"Step of A, race {race}", "b": f"Step of B, race {race}"}
            caches = {name: tmp_path / str(race) / name / "cache" for name in steps}
            with ThreadPoolExecutor(2) as pool:  # both sessions resumed: both hold the block
                resumed = pool.map(lambda cache: resume(fake, cache), caches.values())
                assert set(resumed) == {"ok"}
            running = {name: save(fake, caches[name], steps[name]) for name in steps}
            codes, answers = {}, {}
            for name, process in running.items():
                out, err = process.communicate(timeout=120)
                codes[name] = process.returncode
                answers[name] = json.loads(out) if out else {"stderr": err}
            final = parse(fake.issue(REPO, 1).body or "").block
            assert final is not None
            assert set(codes.values()) <= {0, 4}, answers
            assert list(codes.values()).count(0) <= 1, answers  # at most one exits 0
            for name, code in codes.items():
                if code == 0:  # it said saved: its block is the issue's
                    assert final.next_step == steps[name], answers
                else:  # told, with both copies
                    conflict = answers[name]["conflict"]
                    assert steps[name] in conflict["local"], answers
                    assert conflict["remote"], answers
            assert (fake.issue(REPO, 1).body or "").endswith(HUMAN)
            outcomes[" ".join(f"{n}={c}" for n, c in sorted(codes.items()))] += 1
    print(f"{RACES} races at {LATENCY} s latency: {dict(outcomes)}")
