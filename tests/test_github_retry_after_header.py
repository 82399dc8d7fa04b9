"""GitHub's `retry-after` read by the project's one reader: a 5xx or 429 whose header is not
whole seconds nor a date (`soon`, `1.5`) is retried after the backoff, not given up on; a 5xx
asking for a wait beyond the rate-limit cap is given up on at once."""

from __future__ import annotations

import time
from datetime import UTC

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ai_context.adapters import clients
from ai_context.adapters.clients import Http
from ai_context.adapters.github import GitHubUnavailable
from ai_context.adapters.retry_after import http_time, retry_after
from ai_context.core.secret import Secret
from tests.fakes import GitHubFake


def _read_after_one_failure(gh: GitHubFake, status: int, header: str) -> int:
    gh.reset()  # a hypothesis example reuses the test's fake
    gh.add_repo("o/r")
    gh.add_issue("o/r", "t", "b", number=1)
    gh.fail_next("GET", "/repos/o/r/issues/1", status=status, headers={"retry-after": header})
    github = clients.github(Secret("t"), "o/r", api_url=gh.url, http=Http(retries=2, backoff=0.01))
    return github.get_issue(1).number


@pytest.mark.parametrize(("status", "header"), [(503, "soon"), (503, "¹"), (500, "1.5")])
def test_a_server_error_with_an_unreadable_retry_after_is_retried(
    github_fake: GitHubFake, status: int, header: str
) -> None:
    assert _read_after_one_failure(github_fake, status, header) == 1


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(header=st.text(st.characters(codec="latin-1", exclude_categories=["Cc"]), max_size=12))
def test_a_503_with_any_retry_after_is_retried(github_fake: GitHubFake, header: str) -> None:
    if header.strip().isascii() and header.strip().isdigit():
        header = "0"  # a wait of whole seconds is honoured: keep the test quick
    assert _read_after_one_failure(github_fake, 503, header) == 1


@pytest.mark.parametrize(
    "header", ["Fri, 31 Dec 9999 23:59:59 -0100", "Mon, 01 Jan 0001 00:00:00 +0100"]
)
def test_a_retry_after_date_past_the_calendar_s_edge_is_no_wait(
    github_fake: GitHubFake, header: str
) -> None:
    assert retry_after(header) in (None, 0.0)
    assert _read_after_one_failure(github_fake, 503, header) == 1


@pytest.mark.parametrize(
    ("status", "header"), [(503, "86400"), (500, "Fri, 31 Dec 9998 23:59:59 GMT")]
)
def test_a_server_error_asking_for_a_wait_beyond_the_cap_is_not_waited_for(
    github_fake: GitHubFake, monkeypatch: pytest.MonkeyPatch, status: int, header: str
) -> None:
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)
    with pytest.raises(GitHubUnavailable, match="try again later"):
        _read_after_one_failure(github_fake, status, header)
    assert [r.path for r in github_fake.requests] == ["/repos/o/r/issues/1"]
    assert max(slept, default=0.0) <= 300  # the client's max_rate_limit_wait


@given(
    text=st.text(max_size=40)
    | st.sampled_from(["Mon, 01 Jan 2026 00:00:00 -0000", "Mon, 01 Jan 0001 00:00:00 +0100"])
)
def test_any_date_header_is_a_time_in_utc_or_none(text: str) -> None:
    when = http_time(text)
    assert when is None or when.tzinfo is UTC
