"""The GitHub adapter's requests (issue 15, item 11, non-lease parts), at the HTTP level
(responses): every request carries GitHub's media type and API version, retries included,
and `since` is sent in UTC."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import responses

from ai_context.adapters.github import API_HEADERS
from tests.conftest import adapter
from tests.test_github_adapter import REPO, comment_json, issue_json


def assert_headers(calls: responses.CallList) -> None:
    assert len(calls) > 0
    for call in calls:
        assert call.request.headers["Accept"] == "application/vnd.github+json"
        assert call.request.headers["X-GitHub-Api-Version"] == "2022-11-28"
        assert call.request.headers["User-Agent"] == "ai-context"  # GitHub requires one


@responses.activate
def test_every_request_sends_the_media_type_and_the_api_version() -> None:
    assert API_HEADERS["X-GitHub-Api-Version"] == "2022-11-28"
    responses.get(f"{REPO}/issues", json=[issue_json(1)])
    responses.get(f"{REPO}/issues/1", json=issue_json(1))
    responses.get(f"{REPO}/issues/1/comments", json=[comment_json(5, "hi")])
    responses.post(f"{REPO}/issues/1/comments", json=comment_json(6, "new"), status=201)
    responses.patch(f"{REPO}/issues/comments/6", json=comment_json(6, "edited"))
    responses.delete(f"{REPO}/issues/comments/6", status=204)
    responses.post(f"{REPO}/issues/1/labels", json=[])
    responses.delete(f"{REPO}/issues/1/labels/x", status=404, json={"message": "Not Found"})
    responses.get(f"{REPO}/git/matching-refs/ai-context/leases/", json=[])
    gh = adapter()
    gh.list_issues()
    gh.get_issue(1)
    gh.list_comments(1)
    gh.create_comment(1, "new")
    gh.edit_comment(6, "edited")
    gh.delete_comment(6)
    gh.add_labels(1, ["a"])
    gh.remove_label(1, "x")
    gh.matching_refs("refs/ai-context/leases/")
    assert len(responses.calls) == 9
    assert_headers(responses.calls)


@responses.activate
def test_retries_send_them_too() -> None:
    responses.get(f"{REPO}/issues/1", status=502, json={"message": "Bad Gateway"})
    responses.get(f"{REPO}/issues/1", json=issue_json(1))
    adapter().get_issue(1)
    assert len(responses.calls) == 2
    assert_headers(responses.calls)


@responses.activate
def test_since_is_sent_in_utc() -> None:
    responses.get(f"{REPO}/issues", json=[])
    berlin = timezone(timedelta(hours=2))
    adapter().list_issues("closed", since=datetime(2026, 5, 26, 17, 0, tzinfo=berlin))
    adapter().list_issues("closed", since=datetime(2026, 5, 26, 15, 0))  # naive: taken as UTC
    adapter().list_issues("closed", since=datetime(2026, 5, 26, 15, 0, tzinfo=UTC))
    sent = [call.request.params["since"] for call in responses.calls]
    assert sent == ["2026-05-26T15:00:00Z"] * 3
