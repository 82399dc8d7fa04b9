"""When an agent owes its issue a checkpoint: the seeds' cadence ("every 30 minutes or every
3 commits, whichever comes first") and the hooks' decisions (pure: cli/hook.py reads the
facts, these functions say what to tell the agent)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

DEFAULT_COMMITS = 3
DEFAULT_INTERVAL = timedelta(minutes=30)

# `git commit` as a command of a shell line: also with options before the subcommand (`git -C
# dir commit`, `git -c k=v commit`), after `&&`, `;`, `|`, a subshell or `VAR=x`; not `git
# commit-tree`, and not the words inside quotes (`echo "git commit"`).
_SEGMENT_SPLIT_RE = re.compile(r"&&|\|\||[;|&()\n]|\$\(|`")
_GIT_COMMIT_RE = re.compile(
    r"(?:\w+=\S*\s+)*(?:command\s+)?git(?:\s+(?:-[Cc]\s+\S+|--?[\w-]+(?:=\S+)?))*\s+commit(?![\w-])"
)
_ECHOED_RE = re.compile(r"""(['"]).*?\1""")


@dataclass(frozen=True)
class Cadence:
    """How often a checkpoint is due: after COMMITS commits, or INTERVAL since the last save."""

    commits: int = DEFAULT_COMMITS
    interval: timedelta = DEFAULT_INTERVAL

    def __post_init__(self) -> None:
        if self.commits < 1:
            raise ValueError(f"a checkpoint every {self.commits} commits: give 1 or more")
        if self.interval <= timedelta(0):
            raise ValueError("a checkpoint interval must be longer than zero")


@dataclass(frozen=True)
class Progress:
    """What the hooks observed about the active task since its block's Last updated."""

    issue: int
    commits: int  # commits on HEAD made after Last updated
    age: timedelta | None  # now - Last updated; None when the block has no Last updated
    dirty: bool = False  # the work tree holds uncommitted changes
    finished: bool = False  # the block's phase says the task is over: nothing more to save


def _minutes(age: timedelta) -> str:
    minutes = int(age.total_seconds() // 60)
    if minutes < 120:
        return f"{minutes} minutes"
    hours = minutes // 60
    return f"{hours} hours" if hours < 48 else f"{hours // 24} days"


def _commits(progress: Progress) -> str:
    return f"{progress.commits} commit{'' if progress.commits == 1 else 's'} since Last updated"


def _behind(progress: Progress, why: str, *, when: str = "", then: str = "") -> str:
    return (
        f"your AI Context block (#{progress.issue}) is behind{when}: {why}; {then}save a "
        "checkpoint: update the block (state-sync skill) and run "
        f"`ai-context save {progress.issue}` with it on stdin"
    )


def is_git_commit(command: str) -> bool:
    """Whether a shell command line runs `git commit` (quoted text, e.g. in echo, is ignored)."""
    text = _ECHOED_RE.sub("''", command)
    return any(_GIT_COMMIT_RE.match(part.strip()) for part in _SEGMENT_SPLIT_RE.split(text))


def commit_nudge(progress: Progress, cadence: Cadence) -> str | None:
    """After a `git commit`: the reason to checkpoint now (at the COMMITS-th commit since the
    last save, or the first once the block is older than the interval), or None."""
    if progress.commits <= 0 or progress.finished:
        return None
    old = progress.age is None or progress.age >= cadence.interval
    if progress.commits < cadence.commits and not old:
        return None
    why = _commits(progress)
    if old and progress.age is not None:
        why += f", last saved {_minutes(progress.age)} ago"
    return _behind(progress, why)


def stop_nudge(progress: Progress | None, cadence: Cadence) -> str | None:
    """At the end of a turn: the reason to block the stop once, or None to let it go; only
    when the block is behind git, or older than the interval while uncommitted work waits
    (merely old, with nothing done since, is fine)."""
    if progress is None or progress.finished:
        return None
    if progress.commits > 0:
        why = _commits(progress)
    elif progress.dirty and (progress.age is None or progress.age >= cadence.interval):
        when = "has no Last updated" if progress.age is None else f"is {_minutes(progress.age)} old"
        why = f"the block {when} and the work tree has uncommitted changes"
    else:
        return None
    return _behind(progress, why) + ". Then stop."


def compact_nudge(progress: Progress, *, hold: bool) -> str | None:
    """Before a compaction (save "before context pressure"): what to say when the block is
    behind the work, or None. HOLD: the compaction waits (a manual /compact, held once) and
    the agent saves first; else it goes on and the agent saves right after."""
    if progress.finished:
        return None
    if progress.commits > 0:
        why = _commits(progress)
    elif progress.dirty:
        why = "the work tree has uncommitted changes"
    else:
        return None
    when = " before a compaction"
    if hold:
        return _behind(progress, why, when=when) + ", then run /compact again."
    return _behind(progress, why, when=when, then="the compaction goes on; ") + " right after it."
