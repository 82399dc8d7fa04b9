"""Parse throughput: find + parse + check on realistic 1-4 KiB issue bodies, beside
markdown-it-py's full parse of the same bodies (the reference), in process and as whole
processes over 2,000 bodies (`ai-context validate FILES` against a `python -c` that parses the
same files with markdown-it-py, start-up included: goal >= 10x), and the linearity ratio of a
65,536-character body to a 1 KiB body. Run: `make bench` or `python benchmarks/bench_parse.py`.

The package's bytecode is compiled first, as `pip install` does for an installed package: with
PYTHONDONTWRITEBYTECODE set (this machine's environment, and the image's) a source checkout's
stale or missing .pyc files would otherwise be compiled again by every process, and the
start-up measured would be the compiler's.
"""

from __future__ import annotations

import compileall
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from markdown_it import MarkdownIt

import ai_context
from ai_context.rules.checks import check_body

NOW = datetime(2026, 5, 27, 9, tzinfo=UTC)
BLOCK = """## AI Context (updated by Claude — do not edit manually)

- **Active actor:** cc-ariel-laptop (Claude Code on Ariel's laptop)
- **Phase:** implementing (chunk 3 of 5)
- **Last updated:** 2026-05-26T14:32:00Z
- **Plan:**
{plan}
- **Files touched:** apps/api/src/booking/{{repository,service}}.ts, plus 4 test files
- **Decisions:**
  - Chose Mongo over Aurora for booking history (volume + write patterns)
- **Blockers:** none
- **Next step:** Finish unit tests in booking.repository.spec.ts
"""
PROSE = (
    "The booking service must keep every change a user makes, with who and when. "
    "See `apps/api/src/booking` and the [design doc](https://example.com/doc). "
)


def body(size: int, rng: random.Random) -> str:
    steps = "\n".join(
        f"  {i}. Step number {i} of the plan ({rng.choice(['done', 'pending', 'in progress'])})"
        for i in range(1, rng.randint(3, 8))
    )
    text = BLOCK.format(plan=steps) + "\n## Description\n\n"
    while len(text) < size:
        text += PROSE + ("\n\n- a bullet\n- another\n\n" if rng.random() < 0.3 else "")
    return text[:size]


def per_call(fn: Callable[[str], object], bodies: list[str], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for b in bodies:
            fn(b)
        best = min(best, time.perf_counter() - start)
    return best / len(bodies)


def compile_bytecode() -> None:
    """Compile the package's .pyc files, as an install does (see the module's docstring)."""
    compileall.compile_dir(str(Path(ai_context.__file__).parent), quiet=1)


def main() -> None:
    compile_bytecode()
    rng = random.Random(7)
    bodies = [body(rng.randint(1024, 4096), rng) for _ in range(200)]
    md = MarkdownIt("commonmark")
    # Interleaved rounds, best of each: a load that comes and goes hits both sides alike.
    ours, reference = float("inf"), float("inf")
    for _ in range(7):
        ours = min(ours, per_call(lambda b: check_body(b, now=NOW), bodies, 1))
        reference = min(reference, per_call(md.parse, bodies, 1))
    kib = sum(len(b) for b in bodies) / len(bodies) / 1024
    print(f"bodies: {len(bodies)}, mean {kib:.1f} KiB")
    print(f"find+parse+check: {ours * 1e6:8.1f} us/body  ({1 / ours:8.0f} bodies/s)")
    print(f"markdown-it-py:   {reference * 1e6:8.1f} us/body  ({1 / reference:8.0f} bodies/s)")
    print(f"speed-up vs a full markdown parse: {reference / ours:.1f}x (goal >= 10x)")
    whole_processes(rng)

    small = [body(1024, random.Random(i)) for i in range(20)]
    large = [body(65_536, random.Random(i)) for i in range(20)]
    t_small = per_call(lambda b: check_body(b, now=NOW), small, 5)
    t_large = per_call(lambda b: check_body(b, now=NOW), large, 5)
    print(f"1 KiB body: {t_small * 1e6:.1f} us; 65,536-char body: {t_large * 1e6:.1f} us")
    print(f"ratio 64 KiB / 1 KiB: {t_large / t_small:.1f} (size ratio 64; goal <= ~64, linear)")

    def all_block(size: int) -> str:
        step = "  {}. Step with some words in it (pending)\n"
        text, i = "## AI Context\n- **Plan:**\n", 1
        while len(text) < size:
            text += step.format(i)
            i += 1
        return text[:size]

    t_small_block = per_call(lambda b: check_body(b, now=NOW), [all_block(1024)], 20)
    t_large_block = per_call(lambda b: check_body(b, now=NOW), [all_block(65_536)], 5)
    print(
        f"all-block bodies (one plan step a line): ratio 64 KiB / 1 KiB: "
        f"{t_large_block / t_small_block:.1f} (goal <= ~64)"
    )
    hostile = "## AI Context\n" + "- **Plan:**\n" + "  1. (" * 20_000
    t_hostile = per_call(lambda b: check_body(b, now=NOW), [hostile[:65_536]], 3)
    print(f"hostile 65,536-char body (nested parens, one huge plan): {t_hostile * 1e3:.1f} ms")


MARKDOWN_IT = (
    "import sys\nfrom markdown_it import MarkdownIt\nmd = MarkdownIt('commonmark')\n"
    "for p in sys.argv[1:]:\n    md.parse(open(p, encoding='utf-8').read())"
)


def whole_processes(rng: random.Random, count: int = 2000, rounds: int = 5) -> None:
    """`ai-context validate` over COUNT files against markdown-it-py over the same files, each
    a whole process (start-up included), interleaved, median of ROUNDS."""
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i in range(count):
            path = Path(tmp) / f"issue-{i}.md"
            path.write_text(body(rng.randint(1024, 4096), rng), encoding="utf-8")
            paths.append(str(path))
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "ai-context validate (2,000 files)": [sys.executable, "-m", "ai_context", "validate"],
            "markdown-it-py (2,000 files)": [sys.executable, "-c", MARKDOWN_IT],
        }
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(rounds):
            for name, argv in commands.items():
                args = argv if name == "python -c pass" else [*argv, *paths]
                start = time.perf_counter()
                subprocess.run(args, capture_output=True, check=False, cwd=tmp)
                times[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(runs) for name, runs in times.items()}
    print(
        f"\nwhole processes over {count} bodies of 1-4 KiB, start-up included (median of {rounds}):"
    )
    for name, median in medians.items():
        print(f"  {name:36} {median * 1000:8.1f} ms")
    ratio = medians["markdown-it-py (2,000 files)"] / medians["ai-context validate (2,000 files)"]
    print(f"  speed-up as processes: {ratio:.1f}x (goal >= 10x)")


if __name__ == "__main__":
    main()
