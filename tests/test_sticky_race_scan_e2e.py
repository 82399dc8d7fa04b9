"""A full scan settles its new comments' races at the end, from one listing of the repository's
comments: racing runs still end with one sticky comment per issue (the oldest kept, with this
run's text), and the run state vouches for no issue the run commented on (the next run reads
their comments again, and a duplicate goes then). The Action runs as a process against the
loopback GitHub."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ai_context.adapters.github import issue_from_json
from ai_context.rules.runstate import MAX_AGE, fingerprint
from ai_context.rules.sticky import MARKER
from tests.conftest import SEED_BLOCK
from tests.fakes import GitHubFake
from tests.fakes.github import parse_iso
from tests.test_action_e2e import BOT, COMMENTS, INCOMPLETE, T0, TOKEN, ours, run
from tests.test_runstate import run_state

REPO_COMMENTS = "/repos/{owner}/{repo}/issues/comments"
DELETE = "/repos/{owner}/{repo}/issues/comments/{comment_id}"
BROKEN = (2, 4, 6, 8)


@pytest.fixture
def gh() -> Iterator[GitHubFake]:
    with GitHubFake(token=TOKEN, now=T0) as fake:
        fake.add_repo("o/r")
        for n in range(1, 9):
            fake.add_issue("o/r", f"Task {n}", INCOMPLETE if n in BROKEN else SEED_BLOCK, number=n)
        yield fake


def scan(gh: GitHubFake, tmp: Path) -> Any:
    result = run(gh, tmp, "schedule", {"schedule": "17 6 * * *"}, inputs={"jobs": "check"})
    assert result.code == 0, result.stdout + result.stderr
    return result


def vouched(gh: GitHubFake) -> set[int]:
    """The issues the run state knows as they are now (the next run does not read them)."""
    state = run_state(gh, "check")
    issues = gh.repos["o/r"].issues
    return {
        n
        for n, print_ in state.seen.items()
        if fingerprint(issue_from_json(gh._issue_json(issues[n]), "o/r")) == print_
    }


def test_a_full_scan_lists_the_repository_comments_once_instead_of_once_per_creation(
    gh: GitHubFake, tmp_path: Path
) -> None:
    scan(gh, tmp_path)
    assert [len(ours(gh, n)) for n in range(1, 9)] == [0, 1, 0, 1, 0, 1, 0, 1]
    assert gh.count("POST", COMMENTS) == len(BROKEN)
    assert gh.count("GET", COMMENTS) == 0  # no listing after each creation ...
    [listing] = [r for r in gh.requests if r.template == REPO_COMMENTS]  # ... one at the end
    since = listing.arg("since")
    assert since is not None and since.endswith("Z")  # UTC, written with a Z
    assert parse_iso(since) <= T0 - timedelta(minutes=10)
    # calls: the issue page, per broken issue a comment and its labels, the one listing,
    # the issue created to carry the run state. Per-creation listings would add 3.
    assert gh.count() == 1 + 2 * len(BROKEN) + 1 + 1
    # The state vouches for no issue the run commented on: the next run reads their comments
    # again, so a duplicate a read missed does not outlive it.
    assert vouched(gh) == {1, 3, 5, 7}


def test_racing_runs_end_with_one_comment_per_issue_the_oldest_kept(
    gh: GitHubFake, tmp_path: Path
) -> None:
    other: dict[int, int] = {}

    def older_on_2(_: Any) -> None:  # a racing run posted on #2 just before this one
        other[2] = gh.add_comment("o/r", 2, f"{MARKER}\nthe other run's text", user=BOT).id
        gh.clock.advance(seconds=1)

    def newer_on_4(_: Any) -> None:  # ... and on #4 after this one, before its closing listing
        gh.clock.advance(seconds=1)
        other[4] = gh.add_comment("o/r", 4, f"{MARKER}\nthe other run's text", user=BOT).id

    gh.before("POST", "/repos/o/r/issues/2/comments", older_on_2)
    gh.before("GET", REPO_COMMENTS, newer_on_4)
    scan(gh, tmp_path)
    assert [len(ours(gh, n)) for n in BROKEN] == [1, 1, 1, 1]
    kept = {n: ours(gh, n)[0] for n in BROKEN}
    assert kept[2].id == other[2]  # the other run's, older: kept, and given our text
    assert kept[4].id < other[4]  # ours, older: kept; the other run's newer one deleted
    assert all("required field" in c.body for c in kept.values())
    assert gh.count("POST", COMMENTS) == len(BROKEN)
    assert gh.count("DELETE", DELETE) == 2  # ours on #2 (newer), the other run's on #4
    assert gh.count("GET", COMMENTS) == 0 and gh.count("GET", REPO_COMMENTS) == 1
    # The state does not vouch for the issues the run commented on: the next run reads them.
    assert vouched(gh) & set(BROKEN) == set()
    rerun = datetime.fromisoformat("2026-05-27T15:00:00+00:00")
    gh.clock.set(rerun)
    gh.reset_requests()
    scan(gh, tmp_path / "again")
    assert [len(ours(gh, n)) for n in BROKEN] == [1, 1, 1, 1]
    # One comments query reads them (the other query reads the carrier's edit history after
    # the run-state write).
    [query] = [r for r in gh.requests_to("POST", "/graphql") if "IssueComments" in r.json["query"]]
    assert tuple(n for n in BROKEN if f"i{n}: issue(number: {n})" in query.json["query"]) == BROKEN
    assert gh.count("GET", COMMENTS) == 0
    writes = [r for r in gh.requests if r.method in ("POST", "DELETE") and r.path != "/graphql"]
    assert writes == []


def test_a_comment_deleted_between_the_scans_read_and_its_edit_is_read_again(
    gh: GitHubFake, tmp_path: Path
) -> None:
    """A scan reads all due comments first, then writes. A sticky comment deleted in between
    answers 404 to the edit: that issue is read once more and gets a new comment; the scan
    does not stop (exit 3) for one vanished comment."""
    broken = gh.add_issue("o/r", "Broken", INCOMPLETE).number
    old = gh.add_comment("o/r", broken, f"{MARKER}\nan older run's text", user=BOT).id
    gh.before("PATCH", f"/repos/o/r/issues/comments/{old}", lambda _r: gh.remove_comment(old))
    result = run(gh, tmp_path, "schedule", {}, inputs={"jobs": "check"})
    assert result.code in (0, 1), result.stdout + result.stderr
    assert "is gone; reading it again" in result.stdout
    [comment] = ours(gh, broken)
    assert comment.id != old and comment.body.startswith(MARKER)


def later(gh: GitHubFake, tmp: Path, name: str, hours: float) -> Any:
    """A scheduled run HOURS after the last, its clock and GitHub's agreeing."""
    gh.clock.advance(hours=hours)
    now = gh.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")
    result = run(
        gh,
        tmp / name,
        "schedule",
        {"schedule": "17 6 * * *"},
        inputs={"jobs": "check"},
        extra_env={"AI_CONTEXT_NOW": now},
    )
    assert result.code == 0, result.stdout + result.stderr
    return result


def test_a_duplicate_made_by_a_read_that_missed_the_sticky_goes_at_the_next_run(
    gh: GitHubFake, tmp_path: Path
) -> None:
    """A run whose read of #2's comments missed its sticky comment posts a second one. The run
    state does not vouch for an issue the run commented on, so the next run (which lists #2:
    the new comment moved its updated_at) reads its comments again and deletes the newer."""
    scan(gh, tmp_path / "1")
    later(gh, tmp_path, "1b", hours=1)  # reads what the first run commented on, once more
    [first] = ours(gh, 2)
    gh.clock.advance(hours=1)
    gh.edit_issue("o/r", 2, body=INCOMPLETE + "\n\nMore notes.")  # #2 changes: it is read
    hidden: list[Any] = []

    def hide(_: Any) -> None:  # the read misses the sticky comment (a lagging replica)
        hidden.append(gh._comments.pop(first.id))

    def restore(_: Any) -> None:
        gh._comments[first.id] = hidden.pop()

    gh.before("GET", "/repos/o/r/issues/2/comments", hide)
    gh.after("GET", "/repos/o/r/issues/2/comments", restore)
    later(gh, tmp_path, "2", hours=0)
    assert len(ours(gh, 2)) == 2  # the duplicate this test is about
    later(gh, tmp_path, "3", hours=1)
    assert [c.id for c in ours(gh, 2)] == [first.id]  # the older stays, the newer went
    assert "required field" in ours(gh, 2)[0].body


def test_a_duplicate_older_than_the_run_state_goes_at_the_next_full_listing(
    gh: GitHubFake, tmp_path: Path
) -> None:
    """A duplicate the run state vouches for (made before its time, so #4 is not listed as
    changed) is deleted by the full listing the state forces within MAX_AGE: its read of the
    comments of every task with findings sees both."""
    scan(gh, tmp_path / "1")
    gh.clock.advance(hours=1)
    gh.edit_issue("o/r", 1, title="Task 1, renamed")  # a change: the state's time moves on
    later(gh, tmp_path, "2", hours=0)
    assert run_state(gh, "check").listed > gh.issue("o/r", 4).updated_at
    [first] = ours(gh, 4)
    made = first.created_at + timedelta(seconds=1)
    second = gh.add_comment("o/r", 4, f"{MARKER}\nanother run's text", user=BOT, created_at=made)
    later(gh, tmp_path, "3", hours=1)
    assert len(ours(gh, 4)) == 2  # not listed as changed: the state's time is after it
    later(gh, tmp_path, "4", hours=24 * MAX_AGE.days)
    assert [c.id for c in ours(gh, 4)] == [first.id] and second.id != first.id
