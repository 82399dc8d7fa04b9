"""GitHub on the wire: the adapter's errors, its counted and versioned HTTP connection, the
retry policy, and the translation of REST JSON and failures into plain models and our errors.

Kept apart from the client (github.py) so the client reads as the list of calls it makes.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import requests
from github import GithubException, GithubRetry
from github.GithubObject import GithubObject
from github.Requester import (
    HTTPRequestsConnectionClass,
    HTTPSRequestsConnectionClass,
    Requester,
    RequestsResponse,
)
from urllib3 import Retry

from ai_context.core.errors import ServiceError, ServiceRefused
from ai_context.core.models import Comment, GitCommit, Issue


class GitHubError(ServiceError):
    """GitHub could not do what we asked; `status` is the HTTP status when there was one."""

    service = "GitHub"


class GitHubUnavailable(GitHubError):
    """5xx, timeouts or rate limits that outlasted the retries: exit 3."""


class GitHubConfigError(GitHubError, ServiceRefused):
    """Bad token or missing permission: the user must change the workflow (exit 2)."""


class GitHubNotFound(GitHubError):
    pass


class GitHubConflict(GitHubError):
    """422: e.g. a git ref that already exists or an update that is not a fast-forward."""


@dataclass
class CallCounter:
    """HTTP attempts made, retries included; shared by the adapter and its retry policy."""

    calls: int = 0
    retries: int = 0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def add(self, calls: int = 0, retries: int = 0) -> None:
        with self._lock:
            self.calls += calls
            self.retries += retries

    @property
    def total(self) -> int:
        return self.calls + self.retries


class _CountingRetry(GithubRetry):
    """GithubRetry that counts attempts and never re-sends a POST that may have landed."""

    counter: CallCounter | None = None

    def new(self, **kw: Any) -> _CountingRetry:
        retry = super().new(**kw)
        retry.counter = self.counter
        return retry

    def is_retry(self, method: str, status_code: int, has_retry_after: bool = False) -> bool:
        if method.upper() == "POST":
            return bool(self.total) and status_code in (403, 429)
        return super().is_retry(method, status_code, has_retry_after)

    def increment(self, *args: Any, **kwargs: Any) -> Retry:  # type: ignore[override]
        if self.counter is not None:
            self.counter.add(retries=1)
        return super().increment(*args, **kwargs)


# What GitHub asks every REST client to send: its JSON media type and the API version the
# client was written against (without them, `Accept: */*` and whatever version is default).
API_HEADERS = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}


def _counted(base: type[Any]) -> type[Any]:
    class Counted(base):  # type: ignore[misc]
        def request(
            self, verb: str, url: str, input: Any, headers: dict[str, str], *rest: Any
        ) -> None:
            sent = {**API_HEADERS, **{k: v for k, v in headers.items() if k != "Accept"}}
            if headers.get("Accept", "*/*") != "*/*":  # a call that asks for another type
                sent["Accept"] = headers["Accept"]
            super().request(verb, url, input, sent, *rest)

        def getresponse(self) -> RequestsResponse:
            counter = getattr(self.retry, "counter", None)
            if counter is not None:
                counter.add(calls=1)
            response: RequestsResponse = super().getresponse()
            return response

    Counted.__name__ = f"Counted{base.__name__}"
    return Counted


Requester.injectConnectionClasses(
    _counted(HTTPRequestsConnectionClass), _counted(HTTPSRequestsConnectionClass)
)
# Injecting classes also switches off PyGithub's connection reuse (meant for its replay tests);
# switch it back on, or every call pays a new TCP (and TLS) handshake.
setattr(Requester, "_Requester__persist", True)  # noqa: B010 - a name-mangled class attribute


def url_problem(url: str) -> str | None:
    """Why URL cannot be an API base URL (`https://api.github.com`,
    `https://ghe.example.com/api/v3`), or None when it can."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError as exc:
        return f"{url!r} is not a URL ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in url):
        return f"{url!r} is not an http(s) URL like https://api.github.com"
    return None


def _raw(obj: GithubObject) -> dict[str, Any]:
    # The base-class property returns the JSON as received; the completable subclass would
    # fetch the object again first.
    data: dict[str, Any] = GithubObject.raw_data.fget(obj)  # type: ignore[attr-defined]
    return data


def _time(value: Any) -> datetime | None:
    if not value:
        return None
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def issue_from_json(data: dict[str, Any], repository: str) -> Issue:
    return Issue(
        number=int(data["number"]),
        title=str(data.get("title") or ""),
        body=str(data.get("body") or ""),
        state="closed" if data.get("state") == "closed" else "open",
        state_reason=data.get("state_reason"),
        labels=tuple(
            str(label["name"] if isinstance(label, dict) else label)
            for label in data.get("labels") or ()
        ),
        assignees=tuple(str(a["login"]) for a in data.get("assignees") or ()),
        author=(data.get("user") or {}).get("login"),
        comments=data.get("comments") if isinstance(data.get("comments"), int) else None,
        updated_at=_time(data.get("updated_at")),
        closed_at=_time(data.get("closed_at")),
        html_url=str(data.get("html_url") or ""),
        repository=repository,
        is_pull_request="pull_request" in data,
    )


def git_commit_from_json(data: dict[str, Any]) -> GitCommit:
    return GitCommit(
        sha=str(data["sha"]),
        message=str(data.get("message") or ""),
        tree=str((data.get("tree") or {}).get("sha") or ""),
        parents=tuple(str(p["sha"]) for p in data.get("parents") or ()),
        author_date=_time((data.get("author") or {}).get("date")),
    )


def comment_from_json(data: dict[str, Any]) -> Comment:
    return Comment(
        id=int(data["id"]),
        body=str(data.get("body") or ""),
        author=str((data.get("user") or {}).get("login") or ""),
        created_at=_time(data.get("created_at")),
        updated_at=_time(data.get("updated_at")),
        html_url=str(data.get("html_url") or ""),
        issue_number=_issue_number(data.get("issue_url")),
    )


def _issue_number(url: Any) -> int | None:
    """The number at the end of a comment's `issue_url` (".../issues/42"); None otherwise."""
    tail = str(url or "").rstrip("/").rsplit("/", 1)[-1]
    return int(tail) if tail.isdigit() and tail.isascii() else None


_REASONS = (
    ("connection refused", "connection refused"),
    ("name or service not known", "the host name does not resolve"),
    ("nodename nor servname", "the host name does not resolve"),
    ("temporary failure in name resolution", "the host name does not resolve"),
    ("timed out", "timed out"),
    ("certificate", "TLS certificate problem"),
    ("too many 5", "too many 5xx answers"),
    ("too many 4", "too many refusals"),
)


def failure_reason(exc: BaseException) -> str:
    """A few words on why a request failed, without the HTTP library's internals (pool
    objects, retry counters) that tell a user nothing."""
    text = str(exc).lower()
    return next((reason for clue, reason in _REASONS if clue in text), type(exc).__name__)


class _translated:
    """Turn PyGithub and requests failures into our error classes with a message that helps."""

    def __init__(self, what: str) -> None:
        self.what = what

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        if exc is None or isinstance(exc, GitHubError):
            return
        if isinstance(exc, GithubException):
            raise _from_status(self.what, exc.status, exc.data) from exc
        if isinstance(exc, requests.exceptions.RetryError):
            raise GitHubUnavailable(
                f"GitHub kept failing to {self.what} after retries ({failure_reason(exc)}); "
                "try again later or check https://www.githubstatus.com"
            ) from exc
        if isinstance(exc, requests.exceptions.Timeout):
            raise GitHubUnavailable(
                f"GitHub did not answer in time to {self.what}; try again later"
            ) from exc
        if isinstance(exc, requests.exceptions.RequestException):
            raise GitHubUnavailable(
                f"cannot reach GitHub to {self.what} ({failure_reason(exc)}); check the "
                "network and GITHUB_API_URL, then try again"
            ) from exc


def _from_status(what: str, status: int, data: Any) -> GitHubError:
    message = data.get("message", "") if isinstance(data, dict) else str(data or "")
    if status == 401:
        return GitHubConfigError(
            f"GitHub refused the token to {what} ({status} {message}); check the "
            "github-token input (GITHUB_TOKEN or GH_TOKEN for the command line)",
            status,
        )
    if status == 403 and "rate limit" not in message.lower():
        return GitHubConfigError(
            f"GitHub refused to {what} ({status} {message}); give the workflow "
            "`permissions: issues: write` (and `contents: write` for leases)",
            status,
        )
    if status == 404:
        return GitHubNotFound(f"GitHub found nothing to {what} (404 {message})", status)
    if status == 422:
        return GitHubConflict(f"GitHub could not {what} (422 {message})", status)
    if status in (403, 429) or status >= 500:
        return GitHubUnavailable(
            f"GitHub failed to {what} ({status} {message}) after retries; try again later",
            status,
        )
    return GitHubError(f"GitHub could not {what} ({status} {message})", status)
