"""The GitHub adapter at the HTTP level (responses): models, pagination, retries, errors."""

from __future__ import annotations

import json
import logging
import time
from datetime import UTC, datetime, timedelta, timezone

import pytest
import requests
import responses
from github import GithubRetry
from responses import matchers

from ai_context.adapters.github import (
    GitHub,
    GitHubConfigError,
    GitHubNotFound,
    GitHubUnavailable,
)
from ai_context.core.secret import Secret
from tests.conftest import API, TOKEN, adapter
from tests.fakes import GitHubFake

REPO = f"{API}/repos/acme/shop"
TOKEN_T = Secret("t")  # the loopback GitHub's token


def issue_json(number: int, **extra: object) -> dict[str, object]:
    data: dict[str, object] = {
        "number": number,
        "title": f"Issue {number}",
        "body": "## AI Context\n- **Phase:** x\n",
        "state": "open",
        "state_reason": None,
        "labels": [{"name": "in-progress"}],
        "assignees": [{"login": "ariel"}],
        "user": {"login": "ariel", "type": "User"},
        "comments": 0,
        "created_at": "2026-05-20T10:00:00Z",
        "updated_at": "2026-05-26T14:33:10Z",
        "closed_at": None,
        "html_url": f"https://ghe.example.com/acme/shop/issues/{number}",
        "url": f"{REPO}/issues/{number}",
    }
    data.update(extra)
    return data


def comment_json(cid: int, body: str, login: str = "github-actions[bot]") -> dict[str, object]:
    return {
        "id": cid,
        "body": body,
        "user": {"login": login, "type": "Bot"},
        "created_at": "2026-05-26T15:00:00Z",
        "updated_at": "2026-05-26T15:00:00Z",
        "html_url": f"https://ghe.example.com/acme/shop/issues/1#issuecomment-{cid}",
    }


@responses.activate
@pytest.mark.parametrize(
    ("header", "date"),
    [
        ("Tue, 26 May 2026 15:00:00 -0000", datetime(2026, 5, 26, 15, tzinfo=UTC)),
        ("Tue, 26 May 2026 17:00:00 +0200", datetime(2026, 5, 26, 15, tzinfo=UTC)),
        ("Fri, 31 Dec 9999 23:59:59 -0100", None),
        ("soon", None),
    ],
)
def test_a_page_s_date_is_github_s_clock_in_utc_or_none(header: str, date: datetime | None) -> None:
    responses.get(f"{REPO}/issues", json=[issue_json(1)], headers={"Date": header})
    page = next(iter(adapter().issue_pages()))
    assert page.date == date
    assert page.date is None or page.date.tzinfo is UTC


@responses.activate
def test_lists_issues_across_pages_without_pull_requests_or_refetches() -> None:
    page2 = f"{REPO}/issues?state=open&per_page=100&page=2"
    responses.get(
        f"{REPO}/issues",
        json=[issue_json(1), issue_json(2, pull_request={"url": "x"})],
        headers={"Link": f'<{page2}>; rel="next", <{page2}>; rel="last"'},
        match=[matchers.query_param_matcher({"state": "open", "per_page": "100"})],
    )
    responses.get(
        f"{REPO}/issues",
        json=[issue_json(3)],
        match=[matchers.query_param_matcher({"state": "open", "per_page": "100", "page": "2"})],
    )
    gh = adapter()
    issues = gh.list_issues()
    assert [i.number for i in issues] == [1, 3]
    first = issues[0]
    assert first.labels == ("in-progress",) and first.assignees == ("ariel",)
    assert first.comments == 0 and first.repository == "acme/shop"
    assert first.html_url.endswith("/issues/1")
    assert len(responses.calls) == 2 == gh.counter.total  # no hidden GET per issue
    auth = responses.calls[0].request.headers["Authorization"]
    assert auth == f"token {TOKEN.get_secret_value()}"


@responses.activate
def test_ghes_base_url_is_honoured() -> None:
    responses.get(f"{REPO}/issues/7", json=issue_json(7))
    assert adapter().get_issue(7).number == 7
    assert responses.calls[0].request.url == f"{REPO}/issues/7"


@responses.activate
def test_502_then_200_on_a_read_is_retried() -> None:
    responses.get(f"{REPO}/issues/7", status=502, json={"message": "Bad gateway"})
    responses.get(f"{REPO}/issues/7", json=issue_json(7))
    gh = adapter()
    assert gh.get_issue(7).number == 7
    assert gh.counter.calls == 1 and gh.counter.retries == 1 and gh.counter.total == 2


@responses.activate
def test_persistent_500_is_unavailable() -> None:
    responses.get(f"{REPO}/issues/7", status=500, json={"message": "Server Error"})
    gh = adapter(retries=2)
    with pytest.raises(GitHubUnavailable, match="read issue #7"):
        gh.get_issue(7)
    assert len(responses.calls) == 3


@responses.activate
def test_secondary_rate_limit_waits_retry_after_then_succeeds() -> None:
    responses.get(
        f"{REPO}/issues/7",
        status=403,
        headers={"retry-after": "1"},
        json={"message": "You have exceeded a secondary rate limit. Please wait a few minutes."},
    )
    responses.get(f"{REPO}/issues/7", json=issue_json(7))
    gh = adapter()
    assert gh.get_issue(7).number == 7
    # responses does not sleep; the end-to-end test against the loopback server shows the wait.
    assert gh.counter.retries == 1 and len(responses.calls) == 2


@responses.activate
def test_primary_rate_limit_waits_for_reset() -> None:
    reset = int(time.time()) + 1
    responses.get(
        f"{REPO}/issues/7",
        status=403,
        headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)},
        json={"message": "API rate limit exceeded for installation ID 1."},
    )
    responses.get(f"{REPO}/issues/7", json=issue_json(7))
    assert adapter().get_issue(7).number == 7
    assert len(responses.calls) == 2


@responses.activate
def test_post_is_not_retried_on_5xx() -> None:
    responses.post(f"{REPO}/issues/1/comments", status=502, json={"message": "Bad gateway"})
    gh = adapter()
    with pytest.raises(GitHubUnavailable):
        gh.create_comment(1, "hello")
    assert len(responses.calls) == 1


@responses.activate
def test_post_refused_by_rate_limit_is_retried() -> None:
    responses.post(
        f"{REPO}/issues/1/comments",
        status=403,
        headers={"retry-after": "0"},
        json={"message": "You have exceeded a secondary rate limit."},
    )
    responses.post(f"{REPO}/issues/1/comments", status=201, json=comment_json(5, "hello"))
    assert adapter().create_comment(1, "hello").id == 5
    assert len(responses.calls) == 2


@responses.activate
def test_timeout_is_unavailable() -> None:
    responses.get(f"{REPO}/issues/7", body=requests.exceptions.ReadTimeout("slow"))
    with pytest.raises(GitHubUnavailable):
        adapter(retries=0).get_issue(7)


@responses.activate
def test_an_unreachable_host_is_one_plain_reason_without_library_internals() -> None:
    refused = requests.exceptions.ConnectionError(
        "HTTPSConnectionPool(host='ghe.example.com', port=443): Max retries exceeded with url: "
        "/api/v3/repos/acme/shop/issues/7 (Caused by NewConnectionError('<urllib3.connection."
        "HTTPSConnection object at 0x7f>: Failed to establish a new connection: [Errno 111] "
        "Connection refused'))"
    )
    responses.get(f"{REPO}/issues/7", body=refused)
    with pytest.raises(GitHubUnavailable) as caught:
        adapter(retries=0).get_issue(7)
    message = str(caught.value)
    assert message.startswith("cannot reach GitHub to read issue #7 (connection refused)")
    assert "Pool" not in message and "0x7f" not in message and "urllib3" not in message


@responses.activate
@pytest.mark.parametrize(
    ("status", "message", "error"),
    [
        (401, "Bad credentials", GitHubConfigError),
        (403, "Resource not accessible by integration", GitHubConfigError),
        (404, "Not Found", GitHubNotFound),
    ],
)
def test_client_errors_are_not_retried(status: int, message: str, error: type) -> None:
    responses.get(f"{REPO}/issues/7", status=status, json={"message": message})
    with pytest.raises(error, match=message):
        adapter().get_issue(7)
    assert len(responses.calls) == 1


@responses.activate
def test_comment_crud_and_labels() -> None:
    responses.get(
        f"{REPO}/issues/1/comments",
        json=[comment_json(9, "<!-- ai-context:findings -->\nx"), comment_json(10, "hi", "ana")],
    )
    responses.post(f"{REPO}/issues/1/comments", status=201, json=comment_json(11, "new"))
    responses.patch(f"{REPO}/issues/comments/9", json=comment_json(9, "edited"))
    responses.delete(f"{REPO}/issues/comments/10", status=204)
    responses.post(f"{REPO}/issues/1/labels", json=[{"name": "ai-context:invalid"}])
    responses.delete(
        f"{REPO}/issues/1/labels/ai-context%3Aincomplete",
        status=404,
        json={"message": "Label does not exist"},
    )
    gh = adapter()
    comments = gh.list_comments(1)
    assert [(c.id, c.author) for c in comments] == [(9, "github-actions[bot]"), (10, "ana")]
    assert gh.create_comment(1, "new").id == 11
    assert gh.edit_comment(9, "edited").body == "edited"
    gh.delete_comment(10)
    gh.add_labels(1, ["ai-context:invalid"])
    gh.remove_label(1, "ai-context:incomplete")  # already gone: fine
    bodies = [json.loads(c.request.body) for c in responses.calls if c.request.body]
    assert {"body": "new"} in bodies and {"labels": ["ai-context:invalid"]} in bodies
    assert gh.counter.total == 6


def test_repr_hides_the_token() -> None:
    gh = adapter()
    assert TOKEN.get_secret_value() not in repr(gh)
    assert TOKEN.get_secret_value() not in str(vars(gh))


def test_bad_repository_is_config_error() -> None:
    with pytest.raises(GitHubConfigError, match="owner/name"):
        GitHub(TOKEN, "shop")


def test_an_empty_token_is_config_error() -> None:
    with pytest.raises(GitHubConfigError, match="the GitHub token is empty"):
        GitHub(Secret(""), "acme/shop")


@responses.activate
def test_post_refused_for_permissions_is_a_config_error_not_retried() -> None:
    responses.post(
        f"{REPO}/issues/1/comments",
        status=403,
        json={"message": "Resource not accessible by integration"},
    )
    # The one permission the refused call needs, and never more than the Action's.
    with pytest.raises(GitHubConfigError, match="the token needs `issues: write`"):
        adapter().create_comment(1, "hello")
    assert len(responses.calls) == 1


@responses.activate
def test_repository_comments_since_are_listed_across_pages_in_utc_with_their_issues() -> None:
    """The full scan's closing listing (jobs/settle.py): `since` is sent in UTC with a Z
    whatever the zone of the time given, every page is read, and each comment names its issue
    (from `issue_url`), so one listing can be grouped by issue. Each page is a counted call."""
    since = datetime(2026, 5, 26, 17, 0, tzinfo=timezone(timedelta(hours=2)))  # 15:00 UTC
    query = {"since": "2026-05-26T15:00:00Z", "per_page": "100"}
    page2 = f"{REPO}/issues/comments?since=2026-05-26T15%3A00%3A00Z&per_page=100&page=2"
    responses.get(
        f"{REPO}/issues/comments",
        json=[
            {**comment_json(11, "a"), "issue_url": f"{REPO}/issues/4"},
            {**comment_json(12, "b"), "issue_url": f"{REPO}/issues/7"},
        ],
        headers={"Link": f'<{page2}>; rel="next", <{page2}>; rel="last"'},
        match=[matchers.query_param_matcher(query)],
    )
    responses.get(
        f"{REPO}/issues/comments",
        json=[{**comment_json(13, "c"), "issue_url": f"{REPO}/issues/4"}, comment_json(14, "d")],
        match=[matchers.query_param_matcher({**query, "page": "2"})],
    )
    gh = adapter()
    found = gh.list_repo_comments(since)
    assert [(c.id, c.issue_number) for c in found] == [(11, 4), (12, 7), (13, 4), (14, None)]
    assert len(responses.calls) == 2 and gh.counter.total == 2


@responses.activate
def test_repository_comments_listing_that_fails_is_unavailable() -> None:
    responses.get(f"{REPO}/issues/comments", status=502)
    with pytest.raises(GitHubUnavailable):
        adapter(retries=1).list_repo_comments(datetime(2026, 5, 26, 15, 0, tzinfo=UTC))


@responses.activate
@pytest.mark.parametrize(
    "headers",
    [
        {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(time.time()) + 3600)},
        {"retry-after": "120"},
    ],
    ids=["primary", "secondary"],
)
def test_a_rate_limit_longer_than_we_wait_is_unavailable_at_once(
    headers: dict[str, str],
) -> None:
    responses.get(
        f"{REPO}/issues/7", status=403, headers=headers, json={"message": "API rate limit exceeded"}
    )
    with pytest.raises(GitHubUnavailable, match="rate limit") as caught:
        adapter(max_rate_limit_wait=60).get_issue(7)
    assert "read issue #7" in str(caught.value) and "try again after" in str(caught.value)
    assert len(responses.calls) == 1  # no wait, no retry: the run says when to come back


@responses.activate
def test_post_refused_with_429_is_retried() -> None:
    responses.post(f"{REPO}/issues/1/comments", status=429, headers={"retry-after": "0"})
    responses.post(f"{REPO}/issues/1/comments", status=201, json=comment_json(5, "hello"))
    gh = adapter()
    assert gh.create_comment(1, "hello").id == 5
    assert len(responses.calls) == 2 and gh.counter.retries == 1


@responses.activate
def test_writes_are_spaced_by_write_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    """GitHub asks integrations to space writes; reads go at once."""
    import ai_context.adapters.github as module

    slept: list[float] = []
    monkeypatch.setattr(module.time, "sleep", slept.append)
    responses.post(f"{REPO}/issues/1/comments", status=201, json=comment_json(5, "hello"))
    responses.get(f"{REPO}/issues/1", json=issue_json(1))
    gh = adapter(write_interval=1.0)
    gh.create_comment(1, "hello")
    gh.get_issue(1)
    gh.create_comment(1, "hello")
    assert len(slept) == 1 and 0 < slept[0] <= 1.0  # the second write only


@responses.activate
def test_the_rate_limit_left_is_read_from_the_last_answer() -> None:
    responses.get(
        f"{REPO}/issues/7",
        json=issue_json(7),
        headers={"x-ratelimit-remaining": "4321", "x-ratelimit-limit": "5000"},
    )
    gh = adapter()
    assert gh.rate_limit is None  # nothing asked yet: no call spent to find out
    gh.get_issue(7)
    assert gh.rate_limit == (4321, 5000)


@pytest.mark.parametrize("verb", ["GET", "POST"])
def test_a_secondary_limit_without_headers_waits_a_minute_once(
    verb: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GitHub: without retry-after nor a spent quota, wait at least a minute. Only the body
    says it is a rate limit: the retry policy reads it, waits once and asks again (a POST
    refused for a rate limit created nothing). Against the loopback GitHub, where urllib3
    makes the wait (responses makes none): recorded, not slept."""
    waits: list[float] = []

    def recorded(retry: GithubRetry, response: object = None) -> None:
        waits.append(retry.get_backoff_time())

    monkeypatch.setattr(GithubRetry, "sleep", recorded)  # our policy extends it
    with GitHubFake() as fake:
        fake.add_issue("o/r", "Task")
        path = "/repos/o/r/issues/1" if verb == "GET" else "/repos/o/r/issues/1/comments"
        refused = {
            "message": "You have exceeded a secondary rate limit. Please wait a few minutes."
        }
        fake.fail_next(verb, path, status=403, body=refused)
        gh = GitHub(TOKEN_T, "o/r", api_url=fake.url, write_interval=0, backoff=0)
        result = gh.get_issue(1) if verb == "GET" else gh.create_comment(1, "hi")
        assert result.number == 1 if verb == "GET" else result.id > 0  # type: ignore[union-attr]
        assert waits == [60] and gh.counter.retries == 1 and fake.count(verb, path) == 2


@responses.activate
def test_a_secondary_limit_without_headers_twice_or_beyond_patience_is_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(time, "sleep", lambda _s: None)
    refused = {"message": "You have exceeded a secondary rate limit."}
    responses.get(f"{REPO}/issues/7", status=403, json=refused)
    with pytest.raises(GitHubUnavailable, match="rate limit"):
        adapter().get_issue(7)
    assert len(responses.calls) == 2  # one wait, then the answer is reported
    responses.calls.reset()
    with pytest.raises(GitHubUnavailable, match="try again after"):
        adapter(max_rate_limit_wait=30).get_issue(7)
    assert len(responses.calls) == 1


@responses.activate
def test_a_plain_403_is_not_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)
    responses.get(f"{REPO}/issues/7", status=403, json={"message": "Must have admin rights"})
    with pytest.raises(GitHubConfigError):
        adapter().get_issue(7)
    assert slept == [] and len(responses.calls) == 1


@responses.activate
def test_a_label_with_a_slash_is_one_path_segment() -> None:
    """`area/api` is quoted whole (`area%2Fapi`): unquoted, GitHub would read two segments."""
    responses.delete(f"{REPO}/issues/1/labels/area%2Fapi", json=[])
    adapter().remove_label(1, "area/api")
    assert responses.calls[0].request.url == f"{REPO}/issues/1/labels/area%2Fapi"


@responses.activate
def test_the_token_is_in_no_log(caplog: pytest.LogCaptureFixture) -> None:
    """PyGithub and urllib3 log each request at DEBUG level: without the token."""
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="github")  # PyGithub sets its own logger's level
    responses.get(f"{REPO}/issues/7", json=issue_json(7))
    adapter().get_issue(7)
    assert "/issues/7" in caplog.text  # the probe sees the request's log line
    assert TOKEN.get_secret_value() not in caplog.text


@pytest.mark.parametrize("status", [429, 403])
def test_retry_after_as_an_http_date_is_the_wait_it_names(status: int) -> None:
    from email.utils import format_datetime

    from ai_context.adapters.github import rate_limit_wait

    when = datetime.now(UTC) + timedelta(seconds=120)
    wait = rate_limit_wait(status, {"retry-after": format_datetime(when, usegmt=True)})
    assert wait is not None and 100 <= wait <= 121
    hour_ago = format_datetime(when - timedelta(hours=1), usegmt=True)
    past = rate_limit_wait(status, {"retry-after": hour_ago})
    assert past == 0


@responses.activate
def test_a_failure_with_an_empty_body_carries_the_status_text() -> None:
    responses.post(f"{REPO}/issues/1/labels", status=503, body="")
    with pytest.raises(GitHubUnavailable) as caught:
        adapter().add_labels(1, ["ai-context:incomplete"])
    assert "(503 Service Unavailable)" in str(caught.value)
    assert "(503 )" not in str(caught.value)


@responses.activate
def test_a_failure_with_a_text_body_carries_that_text() -> None:
    responses.post(f"{REPO}/issues/1/comments", status=502, body="upstream connect error")
    with pytest.raises(GitHubUnavailable, match=r"\(502 upstream connect error\)"):
        adapter().create_comment(1, "hello")
