"""A scheduled check with no run state reads the comments of its broken issues with one GraphQL
query (issue 14), finds the sticky comment an earlier run left among humans' comments, and
edits it instead of posting a second one; with the GraphQL endpoint failing, or an issue with
more comments than one page, it reads by REST as before, and still ends with one comment.
The Action runs as a process against the loopback GitHub (tests/fakes/github_graphql.py)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from ai_context.rules.sticky import MARKER
from tests.conftest import SEED_BLOCK
from tests.fakes import GitHubFake
from tests.test_action_e2e import BOT, COMMENTS, INCOMPLETE, T0, TOKEN, ours, run

GRAPHQL = "/graphql"
EDIT = "/repos/{owner}/{repo}/issues/comments/{comment_id}"
OLD = f"{MARKER}\nwhat an earlier run found"


@pytest.fixture
def gh() -> Iterator[GitHubFake]:
    """#1 broken, our sticky comment between two humans'; #2 broken, a human comment only
    (so two issues are due a read); #3 fine, with a comment (not read: no findings)."""
    with GitHubFake(token=TOKEN, now=T0) as fake:
        fake.add_repo("o/r")
        fake.add_issue("o/r", "Task 1", INCOMPLETE, number=1)
        fake.add_issue("o/r", "Task 2", INCOMPLETE, number=2)
        fake.add_issue("o/r", "Task 3", SEED_BLOCK, number=3)
        day_ago = T0 - timedelta(days=1)
        fake.add_comment("o/r", 1, "On it.", user="ana", created_at=day_ago)
        fake.add_comment("o/r", 1, OLD, user=BOT, created_at=day_ago + timedelta(minutes=1))
        fake.add_comment("o/r", 1, "Thanks!", user="ben", created_at=day_ago + timedelta(hours=1))
        fake.add_comment("o/r", 2, "Looks stuck.", user="ana", created_at=day_ago)
        fake.add_comment("o/r", 3, "Fine by me.", user="ana", created_at=day_ago)
        yield fake


def scan(gh: GitHubFake, tmp: Path, **env: str) -> Any:
    result = run(
        gh, tmp, "schedule", {"schedule": "17 6 * * *"}, inputs={"jobs": "check"}, extra_env=env
    )
    assert result.code == 0, result.stdout + result.stderr
    assert gh.errors == []
    return result


def assert_one_sticky_each(gh: GitHubFake, sticky_id: int) -> None:
    [on_1] = ours(gh, 1)
    assert on_1.id == sticky_id and on_1.body != OLD and "required field" in on_1.body
    [on_2] = ours(gh, 2)
    assert on_2.body.startswith(MARKER)
    assert ours(gh, 3) == []
    assert [c.user for c in gh.comments("o/r", 1)] == ["ana", BOT, "ben"]  # humans' untouched


def test_one_query_finds_our_comment_among_humans_and_it_is_edited(
    gh: GitHubFake, tmp_path: Path
) -> None:
    [sticky] = ours(gh, 1)
    result = scan(gh, tmp_path)
    assert gh.count("POST", GRAPHQL) == 1
    assert gh.count("GET", COMMENTS) == 0  # no REST listing of any issue's comments
    [query] = gh.requests_to("POST", GRAPHQL)
    assert "i1: issue(number: 1)" in query.json["query"]
    assert "i2: issue(number: 2)" in query.json["query"]
    assert "i3:" not in query.json["query"]
    assert query.json["variables"] == {"owner": "o", "name": "r"}
    assert gh.count("PATCH", EDIT) == 1  # the sticky comment of #1, edited in place
    assert gh.count("POST", COMMENTS) == 1  # #2's new comment only
    assert_one_sticky_each(gh, sticky.id)
    assert "GraphQL" not in result.stdout + result.stderr


def test_a_failing_graphql_endpoint_falls_back_to_rest_and_still_one_comment(
    gh: GitHubFake, tmp_path: Path
) -> None:
    [sticky] = ours(gh, 1)
    gh.fail_next("POST", GRAPHQL, status=502, times=None)
    result = scan(gh, tmp_path, AI_CONTEXT_HTTP_RETRIES="2", AI_CONTEXT_HTTP_BACKOFF="0")
    assert gh.count("POST", GRAPHQL) == 3  # retried like a read, then REST reads instead
    listed = sorted(r.path for r in gh.requests_to("GET", COMMENTS))
    assert listed == ["/repos/o/r/issues/1/comments", "/repos/o/r/issues/2/comments"]
    assert gh.count("PATCH", EDIT) == 1
    assert gh.count("POST", COMMENTS) == 1
    assert_one_sticky_each(gh, sticky.id)
    [line] = [ln for ln in result.stdout.splitlines() if "GraphQL" in ln]
    assert "failed" in line and "502" in line and "one by one" in line


def test_an_answer_with_errors_falls_back_to_rest(gh: GitHubFake, tmp_path: Path) -> None:
    [sticky] = ours(gh, 1)
    errors = {"errors": [{"type": "RATE_LIMITED", "message": "API rate limit exceeded"}]}
    gh.fail_next("POST", GRAPHQL, status=200, body=errors)
    result = scan(gh, tmp_path)
    assert gh.count("GET", COMMENTS) == 2
    assert_one_sticky_each(gh, sticky.id)
    assert "API rate limit exceeded" in result.stdout


def test_an_issue_with_more_than_a_page_of_comments_is_read_by_rest(
    gh: GitHubFake, tmp_path: Path
) -> None:
    """#1's sticky comment is its 102nd: past the query's first page of 100."""
    [sticky] = ours(gh, 1)
    for n in range(100):
        gh.add_comment("o/r", 1, f"Comment {n}.", user="ana", created_at=T0 - timedelta(days=2))
    result = scan(gh, tmp_path)
    assert gh.count("POST", GRAPHQL) == 1
    assert [r.path for r in gh.requests_to("GET", COMMENTS)] == [
        "/repos/o/r/issues/1/comments",  # two pages of 100: the second holds ours
        "/repos/o/r/issues/1/comments",
    ]
    assert [c.id for c in ours(gh, 1)] == [sticky.id]
    assert "required field" in ours(gh, 1)[0].body
    assert len(ours(gh, 2)) == 1
    assert "GraphQL" not in result.stdout


def test_github_enterprise_is_queried_at_api_graphql(tmp_path: Path) -> None:
    """GHES serves REST under /api/v3 and GraphQL at /api/graphql (not /api/v3/graphql)."""
    with GitHubFake(token=TOKEN, now=T0, prefix="/api/v3") as ghes:
        for number in (1, 2):
            ghes.add_issue("o/r", f"Task {number}", INCOMPLETE, number=number)
            ghes.add_comment("o/r", number, "A human comment.", user="ana")
        ghes.add_comment("o/r", 1, OLD, user=BOT)
        [sticky] = ours(ghes, 1)
        result = scan(ghes, tmp_path)
        assert ghes.count("POST", "/api/graphql") == 1
        assert ghes.count("GET", COMMENTS) == 0
        assert [c.id for c in ours(ghes, 1)] == [sticky.id]
        assert len(ours(ghes, 2)) == 1
        assert "GraphQL" not in result.stdout
