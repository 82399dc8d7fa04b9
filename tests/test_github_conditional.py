"""Conditional re-reads (issue 14): `get_issue(n, known=...)` sends `If-Modified-Since`; a 304
returns the copy in hand and is counted apart (GitHub does not count it against the primary
rate limit); a 200 is always the fresh issue, whether or not GitHub honoured the header."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import responses

from ai_context.adapters.github import GitHub
from ai_context.adapters.github_json import issue_from_json
from ai_context.core.secret import Secret
from tests.conftest import adapter
from tests.fakes import GitHubFake
from tests.test_github_adapter import REPO, issue_json

T0 = datetime(2026, 5, 26, 15, 0, tzinfo=UTC)


@responses.activate
def test_a_304_returns_the_known_copy_and_is_counted_apart() -> None:
    known = issue_from_json(issue_json(7), "acme/shop")
    responses.get(f"{REPO}/issues/7", status=304)
    gh = adapter()
    assert gh.get_issue(7, known=known) is known
    sent = responses.calls[0].request.headers["If-Modified-Since"]
    assert sent == "Tue, 26 May 2026 14:33:10 GMT"  # known.updated_at, as an HTTP-date in UTC
    assert gh.counter.total == 1 and gh.counter.not_modified == 1  # not against the rate limit


@responses.activate
def test_a_200_is_the_fresh_issue_even_when_the_header_is_ignored() -> None:
    known = issue_from_json(issue_json(7), "acme/shop")
    responses.get(
        f"{REPO}/issues/7", json=issue_json(7, body="fresh", updated_at="2026-05-27T09:00:00Z")
    )
    gh = adapter()
    fresh = gh.get_issue(7, known=known)
    assert fresh.body == "fresh" and fresh is not known
    assert gh.counter.not_modified == 0 and gh.counter.total == 1


@responses.activate
def test_no_condition_without_a_known_time_or_for_another_issue() -> None:
    responses.get(f"{REPO}/issues/7", json=issue_json(7))
    undated = issue_from_json(issue_json(7, updated_at=None), "acme/shop")
    other = issue_from_json(issue_json(8), "acme/shop")
    gh = adapter()
    gh.get_issue(7)
    gh.get_issue(7, known=undated)
    gh.get_issue(7, known=other)
    assert all("If-Modified-Since" not in c.request.headers for c in responses.calls)


@responses.activate
def test_a_known_time_in_another_zone_is_sent_in_gmt() -> None:
    berlin = "2026-05-26T16:33:10+02:00"  # 14:33:10 UTC
    known = issue_from_json(issue_json(7, updated_at=berlin), "acme/shop")
    responses.get(f"{REPO}/issues/7", status=304)
    adapter().get_issue(7, known=known)
    assert responses.calls[0].request.headers["If-Modified-Since"].endswith("14:33:10 GMT")


@pytest.fixture
def fake() -> Iterator[GitHubFake]:
    with GitHubFake(now=T0) as gh:
        gh.add_issue("o/r", "Task", "body", number=3)
        yield gh


def test_the_fake_answers_304_until_the_issue_changes(fake: GitHubFake) -> None:
    api = GitHub(Secret("t"), "o/r", api_url=fake.url, write_interval=0, backoff=0)
    known = api.get_issue(3)
    rate = fake.rate_remaining
    assert api.get_issue(3, known=known) is known
    assert fake.rate_remaining == rate  # a 304 costs no quota
    fake.add_comment("o/r", 3, "a comment moves updated_at, on a frozen clock too")
    fresh = api.get_issue(3, known=known)
    assert fresh is not known and fresh.comments == 1
    assert fresh.updated_at is not None and known.updated_at is not None
    assert fresh.updated_at > known.updated_at
    assert api.counter.not_modified == 1 and api.counter.total == 3


@pytest.mark.parametrize(
    "change",
    [
        lambda api: api.update_issue_body(3, "new body"),
        lambda api: api.add_labels(3, ["in-progress"]),
        lambda api: api.create_comment(3, "hello"),
    ],
    ids=["body", "label", "comment"],
)
def test_every_change_through_the_api_ends_the_304s(fake: GitHubFake, change: Any) -> None:
    """On a frozen clock too: the fake moves updated_at a second on, as a change on GitHub
    always lands at a later second than the copy read before it."""
    api = GitHub(Secret("t"), "o/r", api_url=fake.url, write_interval=0, backoff=0)
    known = api.get_issue(3)
    change(api)
    assert api.get_issue(3, known=known) is not known
    assert api.counter.not_modified == 0


def test_changes_to_comments_and_labels_move_updated_at(fake: GitHubFake) -> None:
    api = GitHub(Secret("t"), "o/r", api_url=fake.url, write_interval=0, backoff=0)
    api.add_labels(3, ["in-progress"])
    comment = api.create_comment(3, "hello")
    seen = [api.get_issue(3)]
    for change in (
        lambda: api.edit_comment(comment.id, "edited"),
        lambda: api.remove_label(3, "in-progress"),
        lambda: api.delete_comment(comment.id),
        lambda: fake.edit_issue("o/r", 3, title="renamed"),
    ):
        change()
        fresh = api.get_issue(3, known=seen[-1])
        assert fresh is not seen[-1]
        seen.append(fresh)
    assert api.counter.not_modified == 0
