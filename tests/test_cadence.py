"""The checkpoint cadence and the hooks' decisions (rules/cadence.py), without processes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ai_context.rules.cadence import Cadence, Progress, commit_nudge, is_git_commit, stop_nudge

CADENCE = Cadence()


@pytest.mark.parametrize(
    "command",
    [
        "git commit -m x",
        'git add -A && git commit -m "fix: a && b"',
        "git -C /repo commit -am wip",
        "git -c user.name=a commit",
        "cd app; GIT_AUTHOR_NAME=x git commit --amend --no-edit",
        "(git commit -m a)",
        "git --no-pager commit -m a || true",
        "npm test\ngit commit -m done",
    ],
)
def test_commits_are_recognised(command: str) -> None:
    assert is_git_commit(command)


@pytest.mark.parametrize(
    "command",
    [
        "git status",
        "git commit-tree abc",
        "git log --grep commit",
        'echo "git commit"',
        "echo 'run git commit later'",
        "legit commit",
        "gitx commit",
    ],
)
def test_other_commands_are_not_commits(command: str) -> None:
    assert not is_git_commit(command)


@given(st.text(max_size=200))
def test_any_command_line_is_answered(command: str) -> None:
    assert isinstance(is_git_commit(command), bool)


def progress(
    commits: int, minutes: float | None, *, dirty: bool = False, finished: bool = False
) -> Progress:
    age = None if minutes is None else timedelta(minutes=minutes)
    return Progress(issue=7, commits=commits, age=age, dirty=dirty, finished=finished)


def test_commit_nudge_waits_for_the_third_commit_within_the_interval() -> None:
    assert commit_nudge(progress(1, 5), CADENCE) is None
    assert commit_nudge(progress(2, 29), CADENCE) is None
    reason = commit_nudge(progress(3, 10), CADENCE)
    assert reason is not None
    assert reason.startswith("your AI Context block (#7) is behind: 3 commits since Last updated")
    assert "ai-context save 7" in reason


def test_commit_nudge_asks_at_the_first_commit_past_the_interval() -> None:
    reason = commit_nudge(progress(1, 30), CADENCE)
    assert reason is not None and "1 commit since Last updated, last saved 30 minutes ago" in reason
    assert "3 hours ago" in (commit_nudge(progress(1, 180), CADENCE) or "")
    assert "2 days ago" in (commit_nudge(progress(1, 60 * 49), CADENCE) or "")
    assert commit_nudge(progress(0, 300), CADENCE) is None  # nothing committed: nothing due
    assert commit_nudge(progress(5, 300, finished=True), CADENCE) is None


def test_the_cadence_is_configurable_and_checked() -> None:
    five = Cadence(commits=5, interval=timedelta(hours=1))
    assert commit_nudge(progress(3, 10), five) is None
    assert commit_nudge(progress(5, 10), five) is not None
    with pytest.raises(ValueError, match="1 or more"):
        Cadence(commits=0)
    with pytest.raises(ValueError, match="longer than zero"):
        Cadence(interval=timedelta(0))


def test_stop_nudge() -> None:
    assert stop_nudge(None, CADENCE) is None  # no active task
    assert stop_nudge(progress(0, 5, dirty=True), CADENCE) is None
    assert stop_nudge(progress(0, 45), CADENCE) is None
    behind = stop_nudge(progress(2, 5), CADENCE)
    assert behind is not None and "2 commits since Last updated" in behind
    assert behind.endswith("Then stop.")
    old = stop_nudge(progress(0, 45, dirty=True), CADENCE)
    assert old is not None and "is 45 minutes old and the work tree has" in old
    unstamped = stop_nudge(progress(0, None, dirty=True), CADENCE)
    assert unstamped is not None and "has no Last updated" in unstamped
    # Never on a finished task (never twice in a row: the hook, test_hooks_e2e).
    assert stop_nudge(progress(2, 5, finished=True), CADENCE) is None
