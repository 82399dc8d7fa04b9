"""Issue events re-read their issue conditionally (issue 14, jobs/check.py `_current`): the
payload's updated_at goes as `If-Modified-Since`; a 304 (nothing changed since the payload)
costs nothing against the rate limit and the run writes from the payload; an issue changed
after the payload answers 200 and the run uses the fresh copy. The Action as a process
against the loopback GitHub."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SEED_BLOCK
from tests.fakes import GitHubFake
from tests.fakes.github import iso
from tests.test_action_e2e import INCOMPLETE, T0, TOKEN, issue_event, ours, run

ISSUE = "/repos/{owner}/{repo}/issues/{number}"


@pytest.fixture
def gh() -> Iterator[GitHubFake]:
    with GitHubFake(token=TOKEN, now=T0) as fake:
        fake.add_repo("o/r")
        yield fake


def current_event(fake: GitHubFake, number: int, **extra: Any) -> dict[str, Any]:
    """A payload that is the issue as it is now, updated_at included (a fresh webhook)."""
    payload = issue_event(fake, number, **extra)
    payload["issue"]["updated_at"] = iso(fake.issue("o/r", number).updated_at)
    return payload


def test_an_unchanged_issue_is_re_read_as_a_304_and_written_correctly(
    gh: GitHubFake, tmp_path: Path
) -> None:
    gh.add_issue("o/r", "Task", INCOMPLETE, number=3)
    payload = current_event(gh, 3, changes={"body": {"from": "old"}})
    rate = gh.rate_remaining
    result = run(gh, tmp_path, "issues", payload)
    assert result.code == 0, result.stdout + result.stderr
    [reread] = [r for r in gh.requests if (r.method, r.template) == ("GET", ISSUE)]
    assert reread.headers["if-modified-since"].endswith(" GMT")
    assert gh.count("GET", ISSUE) == 1
    [comment] = ours(gh, 3)
    assert "required field" in comment.body
    assert set(gh.issue("o/r", 3).labels) == {"ai-context:invalid", "ai-context:incomplete"}
    writes = sum(1 for r in gh.requests if r.method in ("POST", "PATCH", "DELETE"))
    # the 304 is not charged: every other call is
    assert rate - gh.rate_remaining == gh.count() - 1 and writes >= 2


def test_an_issue_changed_after_the_payload_is_read_fresh(gh: GitHubFake, tmp_path: Path) -> None:
    """The payload says incomplete; a later edit fixed the block: the run checks the fix."""
    gh.add_issue("o/r", "Task", INCOMPLETE, number=3)
    payload = current_event(gh, 3, changes={"body": {"from": "old"}})
    gh.edit_issue("o/r", 3, body=SEED_BLOCK + "\n\nHuman notes.")
    result = run(gh, tmp_path, "issues", payload)
    assert result.code == 0, result.stdout + result.stderr
    assert ours(gh, 3) == [] and gh.issue("o/r", 3).labels == []
    assert gh.count("GET", ISSUE) == 1
