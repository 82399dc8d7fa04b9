"""GitHub on the wire: the adapter's errors, its counting, the retry policy, and the
translation of failures into our errors (REST JSON into models: github_json.py).

Kept apart from the client (github.py) so the client reads as the list of calls it makes.
Built on requests and urllib3's `Retry` (no hand-rolled retry loop): PyGithub's package import
alone cost more than a whole `resume` round trip should.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, Self
from urllib.parse import urlsplit

import requests
from requests.auth import AuthBase
from urllib3.exceptions import MaxRetryError
from urllib3.util.retry import Retry

if TYPE_CHECKING:
    from urllib3.connectionpool import ConnectionPool
    from urllib3.response import BaseHTTPResponse

from ai_context.core.block.model import format_timestamp
from ai_context.core.errors import ServiceError, ServiceRefused
from ai_context.core.models import Issue


class Secret(Protocol):
    """A token that gives its value only when asked and never in a repr: pydantic's SecretStr
    in the Action's settings, a plain holder at the agent commands (which import no pydantic)."""

    def get_secret_value(self) -> str: ...


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
    """HTTP attempts made, retries included; shared by the adapter and its retry policy.
    `not_modified` counts the 304 answers to conditional re-reads among them: GitHub does not
    count those against the primary rate limit, so `against_rate_limit` leaves them out."""

    calls: int = 0
    retries: int = 0
    not_modified: int = 0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def add(self, calls: int = 0, retries: int = 0, not_modified: int = 0) -> None:
        with self._lock:
            self.calls += calls
            self.retries += retries
            self.not_modified += not_modified

    @property
    def total(self) -> int:
        """Every round trip, retries and 304s included."""
        return self.calls + self.retries

    @property
    def against_rate_limit(self) -> int:
        """The round trips GitHub counts against the primary rate limit (all but the 304s)."""
        return self.total - self.not_modified


# What GitHub asks every REST client to send: its JSON media type and the API version the
# client was written against (without them, `Accept: */*` and whatever version is default).
API_HEADERS = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
# Without a retry-after header nor a spent quota, GitHub asks for at least a minute.
SECONDARY_RATE_WAIT = 60.0


def rate_limit_wait(status: int, headers: Mapping[str, str]) -> float | None:
    """Seconds GitHub asks us to wait before asking again, or None when STATUS with HEADERS
    is no rate limit. GitHub's rule: `retry-after` first; else a spent quota
    (`x-ratelimit-remaining: 0`) until `x-ratelimit-reset` (+1 s: the second is not exact);
    a 429 is always a rate limit. A 403 without them is a refusal (permissions)."""
    if status not in (403, 429):
        return None
    after = str(headers.get("retry-after") or "").strip()
    if after.isdigit():
        return float(after)
    if str(headers.get("x-ratelimit-remaining", "")).strip() == "0":
        reset = str(headers.get("x-ratelimit-reset") or "").strip()
        if reset.isdigit():
            return max(0.0, int(reset) - time.time()) + 1
        return SECONDARY_RATE_WAIT
    return SECONDARY_RATE_WAIT if status == 429 else None


def unmarked_secondary_limit(response: requests.Response, max_wait: float) -> bool:
    """A 403 whose body names a secondary rate limit while its headers give no wait (GitHub
    then asks for at least a minute), and a minute is within MAX_WAIT."""
    if response.status_code != 403 or rate_limit_wait(403, response.headers) is not None:
        return False
    if max_wait < SECONDARY_RATE_WAIT:
        return False
    data = failure_data(response)
    text = data.get("message", "") if isinstance(data, dict) else data
    return "secondary rate limit" in str(text).lower()


class GitHubRetry(Retry):
    """urllib3's Retry with GitHub's rules, counting every retry it grants:
    - 5xx and connection failures are retried for the methods in `allowed_methods` (a POST
      that may have landed is not re-sent: it could duplicate a comment);
    - a rate limit (403/429, `rate_limit_wait`) is retried for every method, POST included
      (GitHub refused it, nothing was created), after the wait GitHub asks for, unless that
      wait is longer than `max_rate_limit_wait`;
    - any other 403 is handed back as it came (raise_on_status=False), to be translated."""

    def __init__(
        self,
        *,
        counter: CallCounter | None = None,
        max_rate_limit_wait: float = 300.0,
        rate_wait: float = 0.0,
        **kwargs: Any,
    ) -> None:
        self.counter = counter
        self.max_rate_limit_wait = max_rate_limit_wait
        self.rate_wait = rate_wait
        super().__init__(**kwargs)

    def new(self, **kw: Any) -> Self:
        kept = {"counter": self.counter, "max_rate_limit_wait": self.max_rate_limit_wait}
        return super().new(**{**kept, **kw})

    def is_retry(self, method: str, status_code: int, has_retry_after: bool = False) -> bool:
        if status_code in (403, 429):  # a candidate: `increment` reads the headers
            return bool(self.total)
        return super().is_retry(method, status_code, has_retry_after)

    def increment(
        self,
        method: str | None = None,
        url: str | None = None,
        response: BaseHTTPResponse | None = None,
        error: Exception | None = None,
        _pool: ConnectionPool | None = None,
        _stacktrace: TracebackType | None = None,
    ) -> Self:
        wait = 0.0
        if response is not None and response.status in (403, 429):
            found = rate_limit_wait(response.status, response.headers)
            if found is None or found > self.max_rate_limit_wait:
                # Not a rate limit, or one that outlasts our patience: the answer goes back
                # as it came (raise_on_status=False), and `_from_status` says what it was.
                raise MaxRetryError(_pool, url or "", None)  # type: ignore[arg-type]
            wait = found
        retry = super().increment(method, url, response, error, _pool, _stacktrace)
        retry.rate_wait = wait
        if self.counter is not None:
            self.counter.add(retries=1)
        return retry

    def get_backoff_time(self) -> float:
        return max(self.rate_wait, super().get_backoff_time())


class HTTPFailure(Exception):
    """An answer of 400 or more, as it came: translated by `_translated`."""

    def __init__(
        self, status: int, data: Any, headers: Mapping[str, str], *, retried: bool = False
    ) -> None:
        super().__init__(status, data)
        self.status, self.data, self.headers, self.retried = status, data, headers, retried


class TokenAuth(AuthBase):
    """`Authorization: token ...` on every request; never shown by repr."""

    def __init__(self, token: str) -> None:
        self._token = token

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        request.headers["Authorization"] = f"token {self._token}"
        return request

    def __repr__(self) -> str:
        return "TokenAuth(***)"


def graphql_url(api_url: str) -> str:
    """GitHub's GraphQL endpoint beside the REST base API_URL: Enterprise Server's
    `https://HOST/api/v3` -> `https://HOST/api/graphql`, anything else (github.com, a
    loopback fake) -> API_URL + `/graphql`. Never read from the environment."""
    base = api_url.rstrip("/")
    if base.endswith("/api/v3"):
        return base.removesuffix("/v3") + "/graphql"
    return base + "/graphql"


def response_json(response: requests.Response) -> Any:
    return response.json() if response.content else None


def failure_data(response: requests.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text


def graphql_data(answer: Any) -> dict[str, Any]:
    """The `data` of a GraphQL ANSWER; its first error, as our error, when it has `errors`."""
    errors = answer.get("errors") if isinstance(answer, dict) else None
    if errors:
        first = errors[0] if isinstance(errors, list) and isinstance(errors[0], dict) else {}
        message = str(first.get("message") or errors)
        if first.get("type") == "RATE_LIMITED":
            raise GitHubUnavailable(
                f"GitHub's GraphQL API is rate limited ({message}); try again later"
            )
        raise GitHubError(f"GitHub's GraphQL API refused the query: {message}")
    data = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(data, dict):
        raise GitHubError("GitHub's GraphQL API answered without data; try again later")
    return data


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
    """Turn HTTP failures (an answer of 400 or more, or none at all) into our error classes
    with a message that helps."""

    def __init__(self, what: str) -> None:
        self.what = what

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        if exc is None or isinstance(exc, GitHubError):
            return
        if isinstance(exc, HTTPFailure):
            raise _from_status(self.what, exc) from exc
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


def _from_status(what: str, failure: HTTPFailure) -> GitHubError:
    status, data = failure.status, failure.data
    message = data.get("message", "") if isinstance(data, dict) else str(data or "")
    wait = rate_limit_wait(status, failure.headers)
    if status == 401:
        return GitHubConfigError(
            f"GitHub refused the token to {what} ({status} {message}); check the "
            "github-token input (GITHUB_TOKEN or GH_TOKEN for the command line)",
            status,
        )
    if status == 403 and wait is None and "rate limit" not in message.lower():
        return GitHubConfigError(
            f"GitHub refused to {what} ({status} {message}); the token needs "
            f"{permission_for(what)} (the job's `permissions:`, or the token's scopes). The "
            "Action needs `issues: write` and `contents: read`, nothing more",
            status,
        )
    if status == 404:
        return GitHubNotFound(f"GitHub found nothing to {what} (404 {message})", status)
    if status == 422:
        return GitHubConflict(f"GitHub could not {what} (422 {message})", status)
    if status in (403, 429):  # a rate limit (a refusal was answered above)
        wait = SECONDARY_RATE_WAIT if wait is None else wait
        until = datetime.fromtimestamp(time.time() + wait, UTC).strftime("%H:%M:%S")
        return GitHubUnavailable(
            f"GitHub refused to {what} for its rate limit ({status} {message}) longer than "
            f"this run waits; try again after {until} UTC (in {wait:.0f} s)",
            status,
        )
    if status >= 500 and failure.retried:
        return GitHubUnavailable(
            f"GitHub kept failing to {what} after retries ({status} {message}); "
            "try again later or check https://www.githubstatus.com",
            status,
        )
    if status >= 500:  # a write that may have landed is not re-sent
        return GitHubUnavailable(
            f"GitHub failed to {what} ({status} {message}); try again later", status
        )
    return GitHubError(f"GitHub could not {what} ({status} {message})", status)


def permission_for(what: str) -> str:
    """The one permission a refused call needs: git refs and commits are `contents` (written
    by an agent's token for its leases, never by the Action), the rest is `issues`."""
    reads = what.startswith(("read", "list", "query"))
    if any(word in what for word in ("ref", "commit", "tree")):
        return "`contents: read`" if reads else "`contents: write` (an agent's token, for leases)"
    return "`issues: read`" if reads else "`issues: write`"


def unless_modified(known: Issue | None, number: int, repository: str) -> dict[str, str]:
    """The conditional header for re-reading NUMBER, when KNOWN is a dated copy of that issue
    (of this repository, when the copy says which)."""
    if known is None or known.updated_at is None or known.number != number:
        return {}
    if known.repository and known.repository != repository:
        return {}
    return {"If-Modified-Since": http_date(known.updated_at)}


def utc_text(when: datetime) -> str:
    """WHEN in UTC (naive means UTC), as GitHub's `since` takes it: with a literal Z."""
    return format_timestamp(_as_utc(when))


def http_date(when: datetime) -> str:
    """WHEN (naive means UTC) as an HTTP-date: `Tue, 26 May 2026 14:33:10 GMT`."""
    return format_datetime(_as_utc(when), usegmt=True)


def _as_utc(when: datetime) -> datetime:
    return when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)
