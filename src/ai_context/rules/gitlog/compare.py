"""The git rules: what commits naming an issue say, compared with its block (AIC501-506)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import timedelta
from fnmatch import fnmatchcase

from pydantic import BaseModel, ConfigDict

from ai_context.core.block.model import Block, format_timestamp
from ai_context.core.durations import format_duration
from ai_context.core.events import Commit
from ai_context.core.fields import time_after
from ai_context.core.findings import Finding, make_finding
from ai_context.rules.gitlog.checkpoints import (
    CHECKPOINT_TRAILER,
    CHECKPOINT_VERSION,
    Checkpoint,
    CheckpointProblem,
    issues_of,
    read_checkpoint,
)

# --- path coverage ----------------------------------------------------------------------

_GLOB_CHARS = frozenset("*?[")


def _segments(path: str) -> list[str]:
    return [s for s in path.replace("\\", "/").split("/") if s not in ("", ".")]


def _glob_segments(pattern: list[str], path: list[str]) -> bool:
    reach = {0}  # how many path segments the pattern so far can have consumed
    for seg in pattern:
        if not reach:
            return False
        if seg == "**":
            reach = set(range(min(reach), len(path) + 1))
        else:
            reach = {j + 1 for j in reach if j < len(path) and fnmatchcase(path[j], seg)}
    return len(path) in reach


def path_covered(path: str, entries: Iterable[str]) -> bool:
    """Whether a changed file is covered by one of a block's Files touched entries."""
    segs = _segments(path)
    if not segs:
        return True
    for entry in entries:
        pattern = _segments(entry)
        if not pattern:
            continue
        is_dir = entry.rstrip().endswith(("/", "\\"))
        if len(pattern) == 1 and not is_dir:
            # No slash: a file or directory of that name (or glob) at any depth, as in
            # .gitignore.
            name = pattern[0]
            if _GLOB_CHARS & set(name):
                if any(fnmatchcase(seg, name) for seg in segs):
                    return True
            elif name in segs:
                return True
            continue
        if _GLOB_CHARS & set(entry):
            if _glob_segments(pattern, segs) or _glob_segments([*pattern, "**"], segs):
                return True
        elif segs[: len(pattern)] == pattern:
            return True  # the file itself, or a directory it sits in
    return False


# --- comparing git with a block ---------------------------------------------------------


class GitRules(BaseModel):
    """Settings of the git rules (action inputs or `.github/ai-context.yml` may set them)."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    behind_after: timedelta = timedelta(hours=1)
    max_listed: int = 10


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def behind_git(
    issue: int,
    block: Block,
    commits: Iterable[Commit],
    *,
    rules: GitRules | None = None,
    field_lines: Mapping[str, int] | None = None,
) -> list[Finding]:
    """AIC501: commits naming the issue landed after Last updated by more than the threshold."""
    rules = rules or GitRules()
    if block.last_updated is None:
        return []  # AIC201 already says Last updated is missing
    cutoff = time_after(block.last_updated, rules.behind_after)
    late = [c for c in commits if cutoff is not None and c.timestamp > cutoff]
    if not late:
        return []
    newest = max(late, key=lambda c: c.timestamp)
    return [
        make_finding(
            "AIC501",
            "warning",
            f"block is behind git: {_plural(len(late), 'commit')} naming #{issue} landed after "
            f"Last updated {format_timestamp(block.last_updated)}; the newest, {newest.short} "
            f"'{newest.subject[:60]}', is {format_duration(newest.timestamp - block.last_updated)}"
            " later",
            (field_lines or {}).get("last_updated"),
            f"Have the agent save its block (run `ai-context derive {issue}` in the checkout to "
            "see what git says).",
        )
    ]


def files_drift(
    issue: int,
    block: Block,
    commits: Iterable[Commit],
    *,
    rules: GitRules | None = None,
    field_lines: Mapping[str, int] | None = None,
) -> list[Finding]:
    """AIC502 (info): changed files that Files touched does not mention."""
    rules = rules or GitRules()
    entries = block.paths
    changed = dict.fromkeys(path for commit in commits for path in commit.files)
    missing = [path for path in changed if not path_covered(path, entries)]
    if not missing:
        return []
    shown = ", ".join(missing[: rules.max_listed])
    more = f" (+{len(missing) - rules.max_listed} more)" if len(missing) > rules.max_listed else ""
    return [
        make_finding(
            "AIC502",
            "info",
            f"{_plural(len(missing), 'file')} changed by commits naming #{issue} "
            f"{'is' if len(missing) == 1 else 'are'} not in Files touched: {shown}{more}",
            (field_lines or {}).get("files_touched"),
            "Add them to Files touched (globs such as src/booking/** are fine) at the next save.",
        )
    ]


def checkpoints_of(
    commits: Iterable[Commit],
) -> list[tuple[Commit, Checkpoint | CheckpointProblem]]:
    """Every commit that is (or claims to be) a checkpoint, with what reading it gave."""
    return [(c, found) for c in commits if (found := read_checkpoint(c.message)) is not None]


def checkpoint_drift(
    issue: int,
    block: Block,
    commits: Iterable[Commit],
    *,
    field_lines: Mapping[str, int] | None = None,
) -> list[Finding]:
    """AIC503/AIC504 from the issue's checkpoints, AIC505/AIC506 for unreadable ones."""
    lines = field_lines or {}
    latest: dict[int, tuple[Commit, Checkpoint]] = {}
    out: list[Finding] = []
    for commit, result in checkpoints_of(commits):
        if isinstance(result, CheckpointProblem):
            out.append(checkpoint_problem_finding(commit, result))
            continue
        if result.issue != issue or result.step is None:
            continue
        known = latest.get(result.step)
        if known is None or commit.timestamp >= known[0].timestamp:
            latest[result.step] = (commit, result)
    steps = {step.number: step for step in block.plan}
    for number in sorted(latest):
        commit, checkpoint = latest[number]
        step = steps.get(number)
        if step is None:
            out.append(
                make_finding(
                    "AIC504",
                    "warning",
                    f"checkpoint {commit.short} completed step {number} "
                    f"('{checkpoint.text[:60]}') but the plan has no step {number}",
                    lines.get("plan"),
                    "Make the plan list every step the agent checkpoints, numbered as in the "
                    "commits.",
                )
            )
        elif step.status not in ("done", "skipped"):
            out.append(
                make_finding(
                    "AIC503",
                    "warning",
                    f"checkpoint {commit.short} at {format_timestamp(commit.timestamp)} completed "
                    f"step {number} ('{checkpoint.text[:60]}') but the plan says "
                    f"{step.status or 'no status'}",
                    lines.get("plan"),
                    f"Mark step {number} (done) in the block, or reopen it on purpose and say why "
                    "in Decisions.",
                )
            )
    return out


def checkpoint_problem_finding(commit: Commit, problem: CheckpointProblem) -> Finding:
    """AIC505 for an unknown format version, AIC506 for anything else unreadable."""
    if problem.kind == "unknown-version":
        return make_finding(
            "AIC505",
            "warning",
            f"commit {commit.short}: {problem.message}",
            None,
            "Upgrade ai-context to read this checkpoint; it was not guessed at.",
        )
    return make_finding(
        "AIC506",
        "warning",
        f"commit {commit.short}: checkpoint not read: {problem.message}",
        None,
        "ai-context does not write checkpoint commits; the agent does. Write the subject as "
        "'ai-context: <step> completed [issue:N] [step:K]' with the trailer "
        f"'{CHECKPOINT_TRAILER}: v{CHECKPOINT_VERSION}', e.g. `git commit -m '<subject>' "
        f"--trailer '{CHECKPOINT_TRAILER}: v{CHECKPOINT_VERSION}'`.",
    )


def compare_block(
    issue: int,
    block: Block,
    commits: Iterable[Commit],
    *,
    repo: str | None = None,
    rules: GitRules | None = None,
    field_lines: Mapping[str, int] | None = None,
) -> list[Finding]:
    """Every git rule for one issue: the commits given are filtered to those naming it."""
    naming = [c for c in commits if issue in issues_of(c, repo)]
    if not naming:
        return []
    return [
        *behind_git(issue, block, naming, rules=rules, field_lines=field_lines),
        *files_drift(issue, block, naming, rules=rules, field_lines=field_lines),
        *checkpoint_drift(issue, block, naming, field_lines=field_lines),
    ]


SESSION_FILE_NAME = "sp.json"


def session_files_changed(commits: Iterable[Commit]) -> list[str]:
    """Session files (`sp.json`, anywhere) the commits, oldest first, leave added or modified."""
    state: dict[str, bool] = {}
    for commit in commits:
        for path in (*commit.added, *commit.modified):
            if path.rsplit("/", 1)[-1] == SESSION_FILE_NAME:
                state.pop(path, None)
                state[path] = True
        for path in commit.removed:
            if path.rsplit("/", 1)[-1] == SESSION_FILE_NAME:
                state[path] = False
    return [path for path, present in state.items() if present]
