"""`GitHub.graphql` at the HTTP level (responses): the URL beside the REST base, the answer's
`data`, GraphQL errors as our errors, and retries like a read (a query writes nothing)."""

from __future__ import annotations

import contextlib
import json

import pytest
import responses
from hypothesis import example, given
from hypothesis import strategies as st

from ai_context.adapters.github import (
    GitHub,
    GitHubError,
    GitHubUnavailable,
    graphql_data,
    rate_limit_wait,
)
from ai_context.core.secret import Secret
from tests.conftest import API, TOKEN, adapter

GRAPHQL = "https://ghe.example.com:443/api/graphql"
QUERY = 'query($owner: String!) { repository(owner: $owner, name: "shop") { id } }'


@responses.activate
@pytest.mark.parametrize(
    ("api_url", "expected"),
    [
        ("https://ghe.example.com/api/v3", "https://ghe.example.com:443/api/graphql"),
        ("https://ghe.example.com/api/v3/", "https://ghe.example.com:443/api/graphql"),
        ("https://api.github.com", "https://api.github.com:443/graphql"),
        ("https://api.github.com/", "https://api.github.com:443/graphql"),
        ("http://127.0.0.1:8123", "http://127.0.0.1:8123/graphql"),
    ],
)
def test_the_url_is_derived_from_the_api_url(api_url: str, expected: str) -> None:
    """Enterprise Server's `/api/v3` -> `/api/graphql`, anything else + `/graphql` (PyGithub
    writes the default port out)."""
    responses.post(expected, json={"data": {"ok": True}})
    gh = GitHub(Secret("t"), "acme/shop", api_url=api_url, write_interval=0, backoff=0)
    assert gh.graphql(QUERY, {}) == {"ok": True}


@responses.activate
def test_github_com_posts_to_its_graphql_url() -> None:
    responses.post("https://api.github.com:443/graphql", json={"data": {"viewer": {"login": "a"}}})
    gh = GitHub(Secret("t"), "acme/shop", write_interval=0, backoff=0)
    assert gh.graphql("{ viewer { login } }", {}) == {"viewer": {"login": "a"}}


@responses.activate
def test_a_query_returns_data_and_is_counted_with_the_api_headers() -> None:
    assert API.endswith("/api/v3")
    responses.post(GRAPHQL, json={"data": {"repository": {"id": "R_1"}}})
    gh = adapter()
    assert gh.graphql(QUERY, {"owner": "acme"}) == {"repository": {"id": "R_1"}}
    [call] = responses.calls
    assert json.loads(call.request.body) == {"query": QUERY, "variables": {"owner": "acme"}}
    assert call.request.headers["Authorization"] == f"token {TOKEN.get_secret_value()}"
    assert call.request.headers["X-GitHub-Api-Version"] == "2022-11-28"
    assert gh.counter.total == 1


@responses.activate
def test_graphql_errors_raise_the_first_message() -> None:
    errors = [
        {"type": "NOT_FOUND", "message": "Could not resolve to a Repository."},
        {"message": "second"},
    ]
    responses.post(GRAPHQL, json={"data": {"repository": None}, "errors": errors})
    with pytest.raises(GitHubError, match="Could not resolve to a Repository") as caught:
        adapter().graphql(QUERY, {"owner": "acme"})
    assert not isinstance(caught.value, GitHubUnavailable)


@responses.activate
def test_a_rate_limited_query_is_unavailable_saying_to_retry_later() -> None:
    errors = [{"type": "RATE_LIMITED", "message": "API rate limit exceeded for user ID 1."}]
    responses.post(GRAPHQL, json={"errors": errors})
    with pytest.raises(GitHubUnavailable, match=r"rate limit.*try again later"):
        adapter().graphql(QUERY, {"owner": "acme"})


@responses.activate
def test_502_then_200_is_retried_like_a_read() -> None:
    responses.post(GRAPHQL, status=502, json={"message": "Bad gateway"})
    responses.post(GRAPHQL, json={"data": {"ok": True}})
    gh = adapter()
    assert gh.graphql(QUERY, {}) == {"ok": True}
    assert len(responses.calls) == 2 and gh.counter.retries == 1 and gh.counter.total == 2


@responses.activate
def test_persistent_5xx_is_unavailable_after_retries() -> None:
    responses.post(GRAPHQL, status=503, json={"message": "Unavailable"})
    with pytest.raises(GitHubUnavailable, match="kept failing to query GitHub's GraphQL API"):
        adapter(retries=2).graphql(QUERY, {})
    assert len(responses.calls) == 3


@responses.activate
def test_rest_posts_stay_unretried_beside_graphql() -> None:
    """The GraphQL URL's retry policy does not leak to REST POSTs (a comment may have landed)."""
    responses.post(f"{API}/repos/acme/shop/issues/1/comments", status=502, json={})
    with pytest.raises(GitHubUnavailable, match="GitHub failed to comment on #1"):
        adapter().create_comment(1, "hello")
    assert len(responses.calls) == 1


@responses.activate
def test_an_answer_without_data_is_an_error() -> None:
    responses.post(GRAPHQL, json={})
    with pytest.raises(GitHubError, match="without data"):
        adapter().graphql(QUERY, {})


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(st.dictionaries(st.sampled_from(["data", "errors", "extensions"]), JSON) | JSON)
def test_any_answer_is_its_data_or_our_error(answer: object) -> None:
    """Whatever a GraphQL endpoint (or a proxy in front of it) answers, the caller gets a
    dict or a GitHubError, never a KeyError or TypeError."""
    with contextlib.suppress(GitHubError):
        assert isinstance(graphql_data(answer), dict)


@given(
    st.sampled_from([403, 429, 500, 502]),
    st.dictionaries(
        st.sampled_from(["retry-after", "x-ratelimit-remaining", "x-ratelimit-reset"]),
        st.text(max_size=12) | st.integers(0, 10**10).map(str),
    ),
)
@example(403, {"retry-after": "\u00b9"})  # a digit to str.isdigit, not to int(): no wait
@example(429, {"retry-after": "\u00b2", "x-ratelimit-reset": "\u00b3"})
@example(403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "9" * 400})  # no float
def test_rate_limit_wait_reads_any_headers(status: int, headers: dict[str, str]) -> None:
    wait = rate_limit_wait(status, headers)
    assert wait is None or wait >= 0
    if status >= 500:
        assert wait is None  # no rate limit: urllib3's backoff applies
    elif status == 429:
        assert wait is not None  # always a rate limit
    else:
        assert (wait is not None) == _limited(headers)  # else a refusal (permissions)


def _limited(headers: dict[str, str]) -> bool:
    after = headers.get("retry-after", "").strip()
    return (after.isascii() and after.isdigit()) or (
        headers.get("x-ratelimit-remaining", "").strip() == "0"
    )
