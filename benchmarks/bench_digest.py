"""The digest's render share of a scheduled digest run of 1,000 tasks, measured in the run.

The run is `python -m ai_context action` (`jobs: digest`, a first run: every open issue is
listed and parsed) as a process of its own against the loopback GitHub and Slack. Inside it,
the CPU time of everything that renders is added up as it happens: making the Jinja
environment and compiling the templates (the first render of each compiles it), the comment
and the step summary's Markdown, the Slack messages. The share is that sum over the run's
whole CPU time (interpreter, imports, fetching, parsing, classifying, delivering), from
getrusage at its end; the goal is under 5%. A busy machine only ever adds time, to either
figure and in any run, so each is the least over the runs (`--repeat`, 9 by default), and the
share is the least render time over the least CPU time: one run's own ratio moves with
whichever of the two a neighbour slowed down.

The run finds the bundled templates compiled as the image's build step compiles them (the
Dockerfile's `python -m ai_context.adapters.templates` into AI_CONTEXT_TEMPLATE_BYTECODE);
`--compile` leaves that out, as a run outside the image, which compiles every template it uses.

    .venv/bin/python benchmarks/bench_digest.py [--compile] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.actionrun import run_action
from tests.fakes import GitHubFake, SlackFake

ROOT = Path(__file__).resolve().parents[1]
TASKS = 1000
NOW = datetime(2026, 5, 27, 9, 0, tzinfo=UTC)
PHASES = ("implementing (chunk 2 of 5)", "in review", "blocked", "testing", "planning", "done")

# Runs the Action with the renderers wrapped, so their CPU time is added up where it is spent;
# reports it and the process's own, as JSON on the last line of stderr.
MEASURED = """
import json, resource, sys, time
sys.path.insert(0, {src!r})
spent = {{"render": 0.0, "compiles": 0}}

def timed(module, name):
    real = getattr(module, name)
    def wrapper(*args, **kwargs):
        start = time.process_time()
        try:
            return real(*args, **kwargs)
        finally:
            spent["render"] += time.process_time() - start
    setattr(module, name, wrapper)

import jinja2
compile_real = jinja2.Environment.compile
def compile_counted(*args, **kwargs):
    spent["compiles"] += 1
    return compile_real(*args, **kwargs)
jinja2.Environment.compile = compile_counted

import ai_context.adapters.templates as templates
import ai_context.rules.digest.render as render
import ai_context.rules.digest.slack as slack
timed(templates, "make_env")
for name in ("hidden_lines", "render_markdown"):
    timed(render, name)
timed(slack, "slack_messages")
from ai_context.action.run import run_action
code = run_action()
usage = resource.getrusage(resource.RUSAGE_SELF)
sys.stderr.write("\\n" + json.dumps(dict(cpu=usage.ru_utime + usage.ru_stime, **spent)) + "\\n")
raise SystemExit(code)
"""


def body(n: int) -> str:
    updated = (NOW - timedelta(minutes=37 * n % 3000)).strftime("%Y-%m-%dT%H:%M:%SZ")
    steps = "\n".join(
        f"  {i}. Step {i} of task {n} (" + ("done" if i < n % 6 else "pending") + ")"
        for i in range(1, 6)
    )
    blockers = "\n  - Waiting for the vendor's API keys" if n % 11 == 0 else " none"
    return (
        "## AI Context (updated by Claude — do not edit manually)\n\n"
        f"- **Active actor:** agent-{n % 13} (Claude Code)\n"
        f"- **Phase:** {PHASES[n % len(PHASES)]}\n"
        f"- **Last updated:** {updated}\n"
        f"- **Plan:**\n{steps}\n"
        f"- **Files touched:** apps/api/src/module{n}/{{a,b,c}}.ts, plus 3 test files\n"
        "- **Decisions:**\n  - Keep the existing schema\n"
        f"- **Blockers:**{blockers}\n"
        f"- **Next step:** Finish step {n % 5 + 1} and open the PR\n\n"
        "## Description\n\n" + "Some human text about the task. " * 20
    )


# The Dockerfile's build step; src/ first on the path, as the measured run has it.
FILL = [sys.executable, "-m", "ai_context.adapters.templates"]
BYTECODE = "AI_CONTEXT_TEMPLATE_BYTECODE"


def fill_bytecode(directory: Path) -> None:
    """Compile the bundled templates into DIRECTORY as the image's build step does."""
    env = {**os.environ, BYTECODE: str(directory), "PYTHONPATH": str(ROOT / "src")}
    subprocess.run(FILL, env=env, check=True, timeout=300)


def one_run(bytecode: Path | None) -> dict[str, float]:
    """A first digest run over TASKS tasks, measured from inside the process."""
    extra = {"AI_CONTEXT_NOW": NOW.isoformat()}
    if bytecode is not None:
        extra[BYTECODE] = str(bytecode)
    with GitHubFake() as gh, SlackFake() as slack, tempfile.TemporaryDirectory() as tmp:
        for n in range(1, TASKS + 1):
            title = f"Task {n}: make the booking service remember history | part {n % 4}"
            labels = ["in-review"] if n % 17 == 0 else []
            gh.add_issue("o/r", title, body(n), number=n, labels=labels)
        gh.add_issue("o/r", "Digest", "", number=TASKS + 1, labels=["ai-context:digest"])
        result = run_action(
            Path(tmp),
            gh.url,
            "schedule",
            {},
            inputs={"jobs": "digest", "slack-webhook-url": slack.webhook_url},
            extra_env=extra,
            timeout=3600,
            command=[sys.executable, "-c", MEASURED.format(src=str(ROOT / "src"))],
        )
        assert result.code == 0, result.stdout[-2000:] + result.stderr[-2000:]
        assert "Slack: sent" in result.summary, result.summary[-2000:]
        measured: dict[str, float] = json.loads(result.stderr.strip().splitlines()[-1])
        measured["calls"] = gh.count()
        return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compile", action="store_true", help="no bytecode: compile in the run")
    parser.add_argument("--repeat", type=int, default=9, help="runs to take the least of")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bytecode = None if args.compile else Path(tmp, "bytecode")
        if bytecode is not None:
            fill_bytecode(bytecode)
        runs = [one_run(bytecode) for _ in range(args.repeat)]
    cpu = min(r["cpu"] for r in runs)
    render = min(r["render"] for r in runs)
    share = render / cpu
    print(f"digest of {TASKS} tasks, a first scheduled run ({runs[0]['calls']:.0f} GitHub calls):")
    if args.compile:
        print("  templates compiled in the run (--compile: no bytecode, as outside the image)")
    else:
        print(f"  templates loaded from bytecode filled as the image's build does ({BYTECODE})")
    print(f"  templates compiled in the run      {max(r['compiles'] for r in runs):8.0f}")
    print(f"  the run's CPU, whole process       {cpu * 1000:8.1f} ms  (least of {args.repeat})")
    print(
        f"  of which rendering                 {render * 1000:8.1f} ms  (least of {args.repeat}: "
        "the Jinja environment, template loads and compiles, the comment, the step summary, "
        "Slack)"
    )
    print(f"  render share                       {share:8.1%}  (goal < 5%)")
    shares = sorted(r["render"] / r["cpu"] for r in runs)
    print(f"  each run's own share               {', '.join(f'{s:.1%}' for s in shares)}")


if __name__ == "__main__":
    main()
