"""The sticky comment never duplicates (issue 15, item 1): the Action as a process against the
loopback GitHub, with a payload replayed (GitHub's "Re-run jobs") and two runs at once."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import GitHubFake
from tests.fakes.base import Request
from tests.test_action_e2e import BOT, COMMENTS, INCOMPLETE, T0, TOKEN, issue_event, ours, run

LABELS = "/repos/{owner}/{repo}/issues/{number}/labels"


@pytest.fixture
def gh() -> Iterator[GitHubFake]:
    with GitHubFake(token=TOKEN, now=T0) as fake:
        fake.add_repo("o/r")
        yield fake


def test_the_same_payload_run_twice_leaves_one_comment_and_adds_no_label(
    gh: GitHubFake, tmp_path: Path
) -> None:
    gh.add_issue("o/r", "Task", INCOMPLETE, number=3)
    payload = issue_event(gh, 3, changes={"body": {"from": "old"}})
    assert payload["issue"]["comments"] == 0 and payload["issue"]["labels"] == []
    first = run(gh, tmp_path / "1", "issues", payload)
    assert first.code == 0, first.stderr
    assert len(ours(gh, 3)) == 1
    gh.reset_requests()
    second = run(gh, tmp_path / "2", "issues", payload)  # still says `comments: 0`, no labels
    assert second.code == 0, second.stderr
    assert len(ours(gh, 3)) == 1
    assert gh.count("POST", COMMENTS) == 0
    assert gh.count("POST", LABELS) == 0
    assert [r for r in gh.requests if r.method in ("POST", "PATCH", "DELETE")] == []


def test_two_runs_at_once_end_with_one_comment(gh: GitHubFake, tmp_path: Path) -> None:
    gh.add_issue("o/r", "Task", INCOMPLETE, number=3)
    gh.add_comment("o/r", 3, "A human comment.", user="ana")
    payload = issue_event(gh, 3, changes={"body": {"from": "old"}})
    # Hold each run's POST until both have sent theirs: both runs create a comment, as when a
    # push run and an issue run (different concurrency groups) meet on one issue.
    both = threading.Barrier(2, timeout=60)

    def meet(_: Request) -> None:
        # A broken barrier: the other run never posted, so there was nothing to race.
        with contextlib.suppress(threading.BrokenBarrierError):
            both.wait()

    gh.before("POST", COMMENTS, meet, times=2)
    results: list[Any] = [None, None]

    def start(i: int) -> None:
        results[i] = run(gh, tmp_path / str(i), "issues", payload)

    threads = [threading.Thread(target=start, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [r.code for r in results] == [0, 0], [r.stderr for r in results]
    assert gh.count("POST", COMMENTS) == 2  # both created one ...
    assert gh.count("DELETE", "/repos/{owner}/{repo}/issues/comments/{comment_id}") >= 1
    comments = ours(gh, 3)
    assert len(comments) == 1  # ... and one stays: the oldest
    assert "required field" in comments[0].body
    assert [c.user for c in gh.comments("o/r", 3)] == ["ana", BOT]


def test_a_personal_token_that_is_not_bot_login_keeps_one_comment_and_says_so(
    gh: GitHubFake, tmp_path: Path
) -> None:
    """A personal token writes as its user, not as `bot-login`: the run still ends with one
    comment (never a crash, never one more comment per run) and tells the user what to set."""
    gh.add_token("pat-alice", "alice")
    gh.add_issue("o/r", "Task", INCOMPLETE, number=3)
    payload = issue_event(gh, 3, changes={"body": {"from": "old"}})
    for attempt in ("1", "2", "3"):
        result = run(gh, tmp_path / attempt, "issues", payload, token="pat-alice")
        assert result.code == 0, result.stderr
        alices = [c for c in gh.comments("o/r", 3) if c.user == "alice"]
        assert len(alices) == 1, [c.body[:40] for c in alices]
        assert "set `bot-login: alice`" in result.stdout
