"""Parse throughput: find + parse + check (`check_body`) on realistic 1-4 KiB issue bodies, in
process over 2,000 bodies, beside three Markdown parsers of the same bodies: cmark-gfm (GitHub's
renderer, in C, through cmarkgfm), mistune and markdown-it-py (both pure Python, like us). The
goal is `check_body` within 1.5x of cmarkgfm's CommonMark call (`markdown_to_html`: cmarkgfm
exposes no parse without its render, and no way to free a parsed tree); its GFM call, which
also sets up the extensions, is printed too. Then the cost split: per block, and per KiB of
the human text around it. Then as whole processes over 2,000 files (`ai-context validate
FILES` against a `python -c` that parses the same files with markdown-it-py, start-up
included: goal >= 10x), and the linearity ratio of a 65,536-character body to a 1 KiB body.
Run: `make bench` or `python benchmarks/bench_parse.py`.

In process, every side runs warm over all its bodies in each round and is timed in CPU time,
best of several rounds batch by batch: a load that comes and goes hits all alike. The
package's bytecode is compiled first, as `pip install` does for an installed package: with
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

import cmarkgfm
import mistune
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


def best_per_body(
    sides: dict[str, tuple[Callable[[str], object], list[str]]], rounds: int = 7, batch: int = 50
) -> dict[str, float]:
    """CPU seconds per body for each side (a function and its bodies). Each round runs every
    side over all its bodies in turn (so each runs warm, with its own code and data in the
    caches), timing batches of BATCH bodies; the best time of each batch over the rounds is
    summed. CPU time, not wall time, and per batch: another process on a shared machine then
    spoils one batch of one round, not a whole side."""
    best: dict[str, list[float]] = {
        name: [float("inf")] * -(-len(texts) // batch) for name, (_, texts) in sides.items()
    }
    for _ in range(rounds):
        for name, (fn, texts) in sides.items():
            times = best[name]
            for index in range(len(times)):
                chunk = texts[index * batch : (index + 1) * batch]
                start = time.process_time()
                for text in chunk:
                    fn(text)
                times[index] = min(times[index], time.process_time() - start)
    return {name: sum(times) / len(sides[name][1]) for name, times in best.items()}


def ours(text: str) -> object:
    return check_body(text, now=NOW)


def in_process(bodies: list[str]) -> None:
    """check_body beside cmarkgfm, mistune and markdown-it-py over BODIES (see the docstring)."""
    md = MarkdownIt("commonmark")
    ast = mistune.create_markdown(renderer=None)
    sides: dict[str, tuple[Callable[[str], object], list[str]]] = {
        "check_body (find+parse+check)": (ours, bodies),
        "cmarkgfm markdown_to_html (C)": (cmarkgfm.markdown_to_html, bodies),
        "cmarkgfm github_flavored (C)": (cmarkgfm.github_flavored_markdown_to_html, bodies),
        "mistune 3 (AST)": (ast, bodies),
        "markdown-it-py parse": (md.parse, bodies),
    }
    best = best_per_body(sides)
    kib = sum(len(b) for b in bodies) / len(bodies) / 1024
    print(f"in process: {len(bodies)} bodies, mean {kib:.1f} KiB")
    mine = best["check_body (find+parse+check)"]
    for name, seconds in best.items():
        print(f"  {name:31} {seconds * 1e6:8.1f} us/body  ({mine / seconds:5.2f}x ours/theirs)")
    goal = mine / best["cmarkgfm markdown_to_html (C)"]
    print(f"  check_body / cmarkgfm: {goal:.2f}x (goal <= 1.5x)")
    print(f"  speed-up vs markdown-it-py: {best['markdown-it-py parse'] / mine:.1f}x")


def cost_split(rng: random.Random, count: int = 400) -> None:
    """The cost of one block and of a KiB of other text: the same bodies with and without
    their block, and the prose alone at 1 and 4 KiB."""
    with_block = [body(rng.randint(1024, 4096), rng) for _ in range(count)]
    without = [b[b.index("## Description") :] for b in with_block]
    sides: dict[str, tuple[Callable[[str], object], list[str]]] = {
        "with": (ours, with_block),
        "without": (ours, without),
        "small": (ours, [prose(1024, random.Random(i)) for i in range(count)]),
        "large": (ours, [prose(4096, random.Random(i)) for i in range(count)]),
    }
    best = best_per_body(sides)
    per_kib = (best["large"] - best["small"]) / 3
    print(
        f"cost split: {(best['with'] - best['without']) * 1e6:.1f} us per block, "
        f"{per_kib * 1e6:.1f} us per KiB of other text"
    )


def prose(size: int, rng: random.Random) -> str:
    """Human text without a block, SIZE characters."""
    text = "## Description\n\n"
    while len(text) < size:
        text += PROSE + ("\n\n- a bullet\n- another\n\n" if rng.random() < 0.3 else "")
    return text[:size]


def main() -> None:
    compile_bytecode()
    rng = random.Random(7)
    in_process([body(rng.randint(1024, 4096), rng) for _ in range(2000)])
    cost_split(random.Random(11))
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
