"""A full scan settles its new comments' races at the end, from one listing of the repository's
comments (issues 14 and 15): racing runs still end with one sticky comment per issue (the
oldest kept, with this run's text), and the run state vouches only for issues whose comments
stayed as the run left them (the others are read again). The Action runs as a process against
the loopback GitHub."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ai_context.adapters.github import issue_from_json
from ai_context.rules.runstate import fingerprint
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
    assert vouched(gh) >= set(BROKEN)


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
    # Where a race decided (#2 lost, #4 won), the state does not vouch: the next run reads
    # them, as after a single-issue run's race (jobs/comments.py `_create_once`).
    assert vouched(gh) & set(BROKEN) == {6, 8}
    rerun = datetime.fromisoformat("2026-05-27T15:00:00+00:00")
    gh.clock.set(rerun)
    gh.reset_requests()
    scan(gh, tmp_path / "again")
    assert [len(ours(gh, n)) for n in BROKEN] == [1, 1, 1, 1]
    # One comments query reads #2 and #4 only (the other query reads the digest issue's edit
    # history after the run-state write).
    [query] = [r for r in gh.requests_to("POST", "/graphql") if "IssueComments" in r.json["query"]]
    assert [n for n in BROKEN if f"i{n}: issue(number: {n})" in query.json["query"]] == [2, 4]
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
