"""Agent checkpoints: wall time of `ai-context resume` and `save` as processes (cold start
included) against the loopback GitHub, beside `python -c pass` (the reference), where the
start-up goes (import times), and the GitHub calls each command costs (goal: resume 1; save 3
with a cached body, 4 on a new machine).
Also the Claude Code hooks (goal: the SessionStart hook makes 1 GitHub call and takes no longer
than `resume`) and an MCP tool call once the server is up (goal: under 10% of the CLI process's
time for the same command; needs the `mcp` extra).
Run: `make bench` or `python benchmarks/bench_agent.py [ROUNDS]`.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests.fakes

from benchmarks.bench_parse import compile_bytecode  # noqa: E402
from tests.conftest import SEED_BLOCK  # noqa: E402
from tests.fakes import GitHubFake  # noqa: E402

REPO = "acme/shop"
HUMAN = "Users need their booking history.\n\n" + "Acceptance criteria and notes. " * 60 + "\n"
WATCHED = (
    "ai_context.cli.main",
    "ai_context.cli.digest",
    "ai_context.cli.session",
    "ai_context.cli.git",
    "ai_context.jobs.agent",
    "ai_context.adapters.github",
    "ai_context.core.block",
    "jinja2",
    "github",
    "requests",
    "pydantic",
    "yaml",
)


class Runner:
    def __init__(self, fake: GitHubFake, cache: Path) -> None:
        self.fake = fake
        self.env = {
            **os.environ,
            "GITHUB_TOKEN": "t",
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_API_URL": fake.url,
            "AI_CONTEXT_CACHE": str(cache),
            "AI_CONTEXT_ACTOR": "cc-ariel-laptop",
        }
        self.env.pop("GH_TOKEN", None)
        self.cwd = cache.parent

    def run(
        self, argv: list[str], stdin: str = "", cwd: Path | None = None
    ) -> tuple[float, int, str, str]:
        """(seconds, GitHub calls, stdout, stderr) of one process, in CWD (default its own)."""
        before = self.fake.count()
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, *argv],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.env,
            cwd=cwd or self.cwd,
            check=False,
        )
        elapsed = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"{argv} exited {done.returncode}: {done.stderr or done.stdout}")
        return elapsed, self.fake.count() - before, done.stdout, done.stderr


def interleaved(
    runner: Runner, commands: dict[str, tuple[Any, ...]], rounds: int
) -> dict[str, list[float]]:
    """Seconds per run of each command (argv, stdin[, cwd]), run round-robin so machine noise
    hits all alike."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(rounds):
        for name, command in commands.items():
            times[name].append(runner.run(*command)[0])
    return times


def import_times(runner: Runner, argv: list[str]) -> dict[str, float]:
    """Cumulative import time (ms) of the watched modules, from `python -X importtime`."""
    _, _, _, err = runner.run(["-X", "importtime", *argv])
    found: dict[str, float] = {}
    for line in err.splitlines():
        parts = [p.strip() for p in line.removeprefix("import time:").split("|")]
        if len(parts) == 3 and parts[2] in WATCHED and parts[1].isdigit():
            found[parts[2]] = int(parts[1]) / 1000
    return found


def hook_input(runner: Runner, event: str, **fields: object) -> str:
    """The JSON Claude Code sends a hook on stdin."""
    payload = {
        "session_id": "bench",
        "transcript_path": str(runner.cwd / "transcript.jsonl"),
        "cwd": str(runner.cwd),
        "hook_event_name": event,
        **fields,
    }
    return json.dumps(payload)


async def _mcp_calls(runner: Runner, rounds: int) -> tuple[float, list[float], int]:
    """(seconds to start and initialize, seconds per `resume` call, GitHub calls per call)."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "ai_context", "mcp"],
        env=runner.env,
        cwd=str(runner.cwd),
    )
    start = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.call_tool("resume", {})  # the first call builds the GitHub client
        up = time.perf_counter() - start
        times: list[float] = []
        before = runner.fake.count()
        for _ in range(rounds):
            begin = time.perf_counter()
            result = await session.call_tool("resume", {})
            times.append(time.perf_counter() - begin)
            assert not getattr(result, "is_error", getattr(result, "isError", False)), result
        calls = (runner.fake.count() - before) // rounds
    return up, times, calls


def hooks_and_mcp(runner: Runner, rounds: int) -> None:
    cli = ["-m", "ai_context"]
    start_input = hook_input(runner, "SessionStart", source="startup")
    stop_input = hook_input(runner, "Stop", stop_hook_active=False)
    commit_input = hook_input(
        runner, "PostToolUse", tool_name="Bash", tool_input={"command": "git commit -m x"}
    )
    _, start_calls, out, _ = runner.run([*cli, "hook", "session-start"], start_input)
    assert "AI Context" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    stop_calls = runner.run([*cli, "hook", "stop"], stop_input)[1]
    times = interleaved(
        runner,
        {
            "ai-context resume (cache names the task)": ([*cli, "resume"], ""),
            "hook session-start (the same reconciliation)": (
                [*cli, "hook", "session-start"],
                start_input,
            ),
            "hook stop (cache and git, no GitHub)": ([*cli, "hook", "stop"], stop_input),
            "hook post-tool-use (git commit)": ([*cli, "hook", "post-tool-use"], commit_input),
        },
        rounds,
    )
    medians = {name: statistics.median(runs) for name, runs in times.items()}
    print(f"\nClaude Code hooks as processes, {rounds} rounds, interleaved (median / best):")
    for name, runs in times.items():
        print(f"  {name:46} {medians[name] * 1000:7.1f} ms / {min(runs) * 1000:7.1f} ms")
    resume = medians["ai-context resume (cache names the task)"]
    hook = medians["hook session-start (the same reconciliation)"]
    verdict = "met" if hook <= resume * 1.05 else "NOT met"
    print(f"  SessionStart hook / resume: {hook / resume:.2f} (goal <= 1, within noise: {verdict})")
    print(f"  GitHub calls: SessionStart hook {start_calls} (goal 1), Stop hook {stop_calls}")

    try:
        import anyio
    except ImportError:
        print("\nMCP: skipped (pip install 'ai-context[mcp]')")
        return
    up, calls_times, calls = anyio.run(_mcp_calls, runner, rounds)
    median = statistics.median(calls_times)
    share = median / resume
    print(f"\nMCP server (stdio, the SDK's own client), {rounds} `resume` calls once it is up:")
    print(f"  server start + initialize + first call  {up * 1000:7.1f} ms")
    best = min(calls_times)
    print(
        f"  one `resume` tool call (median / best)  {median * 1000:7.1f} ms / {best * 1000:.1f} ms"
    )
    print(f"  GitHub calls per tool call: {calls} (the client is made once per server)")
    verdict = "met" if share < 0.10 else "NOT met"
    print(f"  tool call / CLI `resume` process: {share:.1%} (goal < 10%: {verdict})")


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    compile_bytecode()  # as an install does: processes then measure start-up, not the compiler
    with GitHubFake() as fake, tempfile.TemporaryDirectory() as tmp:
        fake.add_issue(REPO, "Booking history", HUMAN, assignees=["ariel"], labels=["in-progress"])
        for name in "abc":
            (Path(tmp) / name).mkdir()
        laptop = Runner(fake, Path(tmp) / "a" / "cache")
        fresh = Runner(fake, Path(tmp) / "b" / "cache")
        phone = Runner(fake, Path(tmp) / "c" / "cache")
        cli = ["-m", "ai_context"]

        # GitHub calls per command (each counted at the fake, retries included).
        calls = {
            "save, no cache (read, re-read, PATCH, history)": laptop.run(
                [*cli, "save", "1"], SEED_BLOCK
            )[1],
            "save, cached body (re-read, PATCH, history)": laptop.run(
                [*cli, "save", "1"], SEED_BLOCK.replace("Finish", "Then finish")
            )[1],
            "save --dry-run": laptop.run([*cli, "save", "1", "--dry-run"], SEED_BLOCK)[1],
            "resume, task named by the cache": laptop.run([*cli, "resume"])[1],
            "resume ISSUE on a fresh machine": fresh.run([*cli, "resume", "1"])[1],
            "resume, found by assignee + label": phone.run([*cli, "resume", "--assignee", "ariel"])[
                1
            ],
        }

        # Wall time as processes, cold start included.
        print(f"agent commands as processes, {rounds} rounds, interleaved (median / best):")
        times = interleaved(
            laptop,
            {
                "python -c pass (reference)": (["-c", "pass"], ""),
                "ai-context --version (start-up only)": ([*cli, "--version"], ""),
                "ai-context resume (cache names the task)": ([*cli, "resume"], ""),
                "ai-context save ISSUE (cache holds the body)": ([*cli, "save", "1"], SEED_BLOCK),
            },
            rounds,
        )
        medians = {name: statistics.median(runs) for name, runs in times.items()}
        reference = medians["python -c pass (reference)"]
        for name, runs in times.items():
            median, best = medians[name], min(runs)
            ratio = median / reference
            print(f"  {name:46} {median * 1000:7.1f} ms / {best * 1000:7.1f} ms  ({ratio:5.1f}x)")
        extra = (
            medians["ai-context resume (cache names the task)"]
            - medians["ai-context --version (start-up only)"]
        )
        print(f"  resume beyond bare start-up: {extra * 1000:.1f} ms (the GitHub client's")
        print("  imports, one HTTP round trip, the cache write)")

        print("\ncumulative import time of `ai-context resume` (ms, one run; nested: a module's")
        print("figure includes what it was first to import):")
        for name, ms in sorted(import_times(laptop, [*cli, "resume"]).items(), key=lambda p: -p[1]):
            print(f"  {name:22} {ms:7.1f}")

        startup(laptop, fake, rounds)

        print("\nGitHub calls per command (goal: resume 1; save 3 cached, 4 on a new machine):")
        for name, n in calls.items():
            print(f"  {name:48} {n}")
        _, _, out, _ = laptop.run([*cli, "resume", "--format", "json"])
        assert json.loads(out)["github_calls"] == calls["resume, task named by the cache"]

        hooks_and_mcp(laptop, rounds)


# What an adopter's repository holds (the README's example): `validate` reads it when present.
ADOPTER_CONFIG = """\
stale-after: 2d
fail-on: error
required: [actor, phase, last_updated, plan, files_touched, next_step]
actors:
  cc-ariel-laptop: {owner: ariel, emails: [ariel@example.com], clickup: 4455667, slack: U024BE7LH}
  copilot: {owner: ariel, aliases: [app/github-copilot, app/copilot-swe-agent]}
stale: {max-active-per-actor: 3}
lease: {prefix: refs/ai-context/leases/, ttl: 2h}
mirror: {field: ai_context, max-length: 4000, template: mirror.txt.j2, lists: ["901"]}
repositories: [acme/shop, acme/infra]
digest: {targets: [issue-comment, slack], window: 24h, mention-owners: true}
"""


def startup(runner: Runner, fake: GitHubFake, rounds: int) -> None:
    """The start-up goals, as whole processes beside their references, interleaved:
    `validate FILE` <= 5x `python -c pass`, and <= 10x with a `.github/ai-context.yml` to read
    (every adopter's repository has one; run from a directory that holds it); `resume` and the
    SessionStart hook <= 1.3x (`import github` + one round trip to the same fake): PyGithub is
    their GitHub client, so the reference is what any client costs."""
    target = runner.cwd / "block.md"
    target.write_text(SEED_BLOCK, encoding="utf-8")
    adopter = runner.cwd / "adopter"
    (adopter / ".github").mkdir(parents=True, exist_ok=True)
    (adopter / ".github" / "ai-context.yml").write_text(ADOPTER_CONFIG, encoding="utf-8")
    trip = (
        "import github, requests; requests.get("
        f"{fake.url + '/repos/' + REPO + '/issues/1'!r}, headers={{'Authorization': 'token t'}})"
    )
    commands = {
        "python -c pass": (["-c", "pass"], ""),
        "python -c 'import github'": (["-c", "import github"], ""),
        "import github + one round trip": (["-c", trip], ""),
        "ai-context validate FILE": (["-m", "ai_context", "validate", str(target)], ""),
        "ai-context validate FILE, config present": (
            ["-m", "ai_context", "validate", str(target)],
            "",
            adopter,
        ),
        "ai-context resume (cache names the task)": (["-m", "ai_context", "resume"], ""),
        "hook session-start": (
            ["-m", "ai_context", "hook", "session-start"],
            hook_input(runner, "SessionStart", source="startup"),
        ),
    }
    times = interleaved(runner, commands, rounds)
    medians = {name: statistics.median(runs) for name, runs in times.items()}
    base, github = medians["python -c pass"], medians["python -c 'import github'"]
    print(f"\nstart-up as whole processes, {rounds} rounds interleaved (median; x pass, x github):")
    for name, median in medians.items():
        print(
            f"  {name:42} {median * 1000:7.1f} ms  {median / base:5.1f}x  {median / github:5.2f}x"
        )
    validate = medians["ai-context validate FILE"]
    configured = medians["ai-context validate FILE, config present"]
    resume = medians["ai-context resume (cache names the task)"]
    hook = medians["hook session-start"]
    reference = medians["import github + one round trip"]
    print(
        f"  validate: {validate / base:.1f}x pass (goal <= 5x); with .github/ai-context.yml "
        f"present: {configured / base:.1f}x pass (goal <= 10x); resume: "
        f"{resume / reference:.2f}x, SessionStart hook: {hook / reference:.2f}x (import github + "
        "one round trip; goal <= 1.3x)"
    )


if __name__ == "__main__":
    main()
