"""Slack adapter: posts messages to an incoming webhook. The only module that talks to Slack.

A webhook answers 200 with the body `ok`; anything else is a failure carrying Slack's error
text (404 `no_service`, 410 `channel_is_archived`, 400 `invalid_blocks`, 403
`action_prohibited`, ...). Messages go out at most one per second, Slack's posting rate.

Retries (`SlackRetry`, urllib3's `Retry` on adapters/retry.py's policy, as the ClickUp
adapter's). Posting is not idempotent: a retried POST that had in fact been delivered shows the
digest twice in the channel. So only answers that prove nothing was posted are retried:
- 429, after the `Retry-After` Slack sends (bounded by `max_wait`);
- 503, "unable to handle the request", after a backoff;
- a connection that failed before the request went out (connect timeout, refused, DNS):
  urllib3's `connect` errors.
A read timeout, a dropped connection after sending (urllib3's `read` errors, `read=False`), or
a 500/502/504 may each have posted, so they fail at once with a message saying the digest may
have been posted. (slack_sdk's WebhookClient is not used: its retry handlers are a second
retry style beside urllib3's, and its urllib transport would escape the HTTP-level tests.)

The webhook URL is a secret (it is the only credential). It never appears in a result, an
error or a repr: requests' own exception texts quote the URL, so they are never passed on.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import requests
from pydantic import BaseModel, ConfigDict
from requests.adapters import HTTPAdapter
from urllib3.exceptions import NameResolutionError, NewConnectionError

from ai_context.adapters.retry import PolicyRetry

if TYPE_CHECKING:
    from urllib3.response import BaseHTTPResponse

MESSAGE_INTERVAL = 1.0  # seconds between two messages
DEFAULT_TIMEOUT = (5.0, 15.0)  # connect, read
MAX_ERROR_TEXT = 300


class SlackResult(BaseModel):
    """What a delivery did: messages sent of those given, HTTP calls made, the error if any."""

    model_config = ConfigDict(frozen=True)

    sent: int
    total: int
    calls: int
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.sent == self.total


def _sent_nothing(exc: requests.exceptions.ConnectionError) -> bool:
    """True when the connection failed before any byte of the request was sent."""
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return True
    reason = exc.args[0] if exc.args else None
    inner = getattr(reason, "reason", reason)  # urllib3's MaxRetryError wraps the cause
    return isinstance(inner, NewConnectionError | NameResolutionError)


def _retry_after(response: requests.Response | BaseHTTPResponse) -> float | None:
    """Slack's Retry-After in seconds; None (the backoff) for an HTTP date or garbage."""
    raw = (response.headers.get("Retry-After") or "").strip()
    try:
        return max(0.0, float(raw))
    except ValueError:
        return None


class SlackRetry(PolicyRetry):
    """Slack's rule: a 429 or 503 waits the Retry-After Slack sends (else the backoff)."""

    def asked_wait(self, response: BaseHTTPResponse) -> float | None:
        return _retry_after(response) if response.status in (429, 503) else None


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_ERROR_TEXT else text[: MAX_ERROR_TEXT - 1] + "…"


class SlackWebhook:
    """An incoming webhook. `repr` shows the host only: the path is the secret."""

    def __init__(
        self,
        url: str,
        *,
        session: requests.Session | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        timeout: tuple[float, float] = DEFAULT_TIMEOUT,
        max_attempts: int = 3,
        max_wait: float = 60.0,
        backoff: float = 2.0,
    ) -> None:
        parts = urlsplit(url.strip())
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(
                "the Slack webhook URL must be an http(s) URL such as "
                "https://hooks.slack.com/services/...; check the slack-webhook-url setting"
            )
        if max_attempts < 1:
            raise ValueError("max_attempts is at least 1")
        self._url = url.strip()
        self._host = parts.hostname or "?"
        self._session = session or requests.Session()
        self._sleep = sleep
        self._clock = clock
        self._timeout = timeout
        self._max_wait = max_wait
        self._retries = 0
        policy = SlackRetry(
            on_retry=self._retried,
            max_wait=max_wait,
            sleep=sleep,
            total=max_attempts - 1,
            read=False,  # an answer that never came may have posted: raised, never retried
            other=0,
            backoff_factor=backoff,
            status_forcelist=(429, 503),
            allowed_methods=("POST",),
            raise_on_status=False,  # the last answer comes back, to be reported
        )
        for scheme in ("http://", "https://"):
            self._session.mount(scheme, HTTPAdapter(max_retries=policy))
        self._last_sent: float | None = None

    def __repr__(self) -> str:
        return f"SlackWebhook(host={self._host!r}, url=<hidden>)"

    __str__ = __repr__

    def _retried(self, method: str, waited: float) -> None:
        del method, waited
        self._retries += 1

    def _pace(self) -> None:
        if self._last_sent is None:
            return
        wait = MESSAGE_INTERVAL - (self._clock() - self._last_sent)
        if wait > 0:
            self._sleep(wait)

    def _post_once(self, message: dict[str, Any]) -> str:
        """MESSAGE posted (SlackRetry retrying what may), or why not: "" when it was."""
        unsure = "it may have been posted; not retried, to avoid posting it twice"
        try:
            response = self._session.post(self._url, json=message, timeout=self._timeout)
        except requests.exceptions.ConnectionError as exc:
            if _sent_nothing(exc):
                kind = "timed out" if isinstance(exc, requests.exceptions.Timeout) else "failed"
                return f"connecting to {self._host} {kind}"
            return f"the connection to {self._host} broke after sending; {unsure}"
        except requests.exceptions.Timeout:
            return f"{self._host} did not answer within {self._timeout[1]:g}s; {unsure}"
        except requests.exceptions.RequestException as exc:
            return f"request failed ({type(exc).__name__})"
        body = _clip(response.text)
        status = response.status_code
        if status == 200 and body == "ok":
            return ""
        error = f"HTTP {status} {body or '(empty body)'}"
        wait = _retry_after(response) if status == 429 else None
        if wait is not None and wait > self._max_wait:
            return f"{error}: Slack asked to wait {wait:g}s, over {self._max_wait:g}s"
        if status >= 500 and status != 503:
            return f"{error}; {unsure}"
        return error

    def post(self, messages: Sequence[dict[str, Any]]) -> SlackResult:
        """Post every message in order; stop at the first that cannot be delivered."""
        sent = calls = 0
        for index, message in enumerate(messages, start=1):
            self._pace()
            self._last_sent = self._clock()  # the rate counts from each message's start
            retried = self._retries
            error = self._post_once(message)
            attempts = self._retries - retried + 1
            calls += attempts
            if error:
                tries = f" after {attempts} attempts" if attempts > 1 else ""
                error = f"Slack message {index} of {len(messages)}{tries}: {error}"
                return SlackResult(sent=sent, total=len(messages), calls=calls, error=error)
            sent += 1
        return SlackResult(sent=sent, total=len(messages), calls=calls)
