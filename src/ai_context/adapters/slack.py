"""Slack adapter: the only module that talks to Slack, posting to an incoming webhook at most
one message a second (a success is 200 `ok`; anything else carries Slack's error text).

A POST is not idempotent, so only answers that prove nothing was posted are retried: a 429 or
503 (after the wait Slack asks), a connection that failed before sending. A read timeout, a
connection dropped after sending or another 5xx fails at once. (slack_sdk's WebhookClient would
be a second retry style and escape the HTTP-level tests.) The URL is the secret: no result,
error or repr shows it, so requests' exception texts are never passed on.
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
from ai_context.adapters.retry_after import retry_after

if TYPE_CHECKING:
    from urllib3.response import BaseHTTPResponse

MESSAGE_INTERVAL = 1.0  # seconds between two messages
DEFAULT_TIMEOUT = (5.0, 15.0)  # connect, read
MAX_ERROR_TEXT = 300


class SlackResult(BaseModel):
    """What a delivery did: messages sent of those given, HTTP calls made, the error if any."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    sent: int
    total: int
    calls: int
    error: str | None = None
    status: int | None = None  # Slack's last HTTP status, when it answered

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


class SlackRetry(PolicyRetry):
    """Slack's rule: a 429 or 503 waits the Retry-After Slack sends (else the backoff)."""

    def asked_wait(self, response: BaseHTTPResponse) -> float | None:
        asked = response.headers.get("Retry-After") or ""
        return retry_after(asked) if response.status in (429, 503) else None


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_ERROR_TEXT else text[: MAX_ERROR_TEXT - 1] + "…"


# Where Slack's incoming webhooks live: /services/T…/B…/… (an app's webhook), /workflows/…
# and /triggers/… (Workflow Builder's). Any other path is a page, an API method or a typo.
WEBHOOK_PATHS = ("/services/", "/workflows/", "/triggers/")
GET_A_WEBHOOK = (
    "create an incoming webhook (https://api.slack.com/messaging/webhooks) and pass its "
    "https://hooks.slack.com/services/... URL"
)
# Slack's error texts, each with what to do about it.
REMEDIES = {
    "invalid_token": "the webhook's app was uninstalled or its token revoked: create a new "
    "incoming webhook and update the secret that holds it (SLACK_WEBHOOK_URL)",
    "no_service": "no webhook at this URL (removed, or a part of the URL is missing): copy it "
    "again from the app's Incoming Webhooks page",
    "no_team": "the workspace in the URL does not exist: copy the webhook URL again",
    "team_disabled": "the Slack workspace is disabled: use a webhook of another workspace",
    "channel_not_found": "the webhook's channel was deleted: " + GET_A_WEBHOOK,
    "channel_is_archived": "the webhook's channel is archived: unarchive it, or " + GET_A_WEBHOOK,
    "action_prohibited": "a Slack admin restricted posting there: ask them, or post to "
    "another channel",
    "posting_to_general_channel_denied": "only admins may post to that channel: choose "
    "another one for the webhook",
    "too_many_attachments": "ai-context sent a message Slack refused: report it with this log",
    "invalid_payload": "ai-context sent a message Slack refused: report it with this log",
    "invalid_blocks": "ai-context sent blocks Slack refused: report it with this log "
    "(a template override in `templates` may be the cause)",
    "no_text": "ai-context sent an empty message: report it with this log",
    "rate_limited": "Slack asked to wait: run again in a minute",
}
# When Slack's body names no known error: what the status alone says.
STATUS_REMEDIES = {
    400: "Slack refused the message: report it with this log",
    403: "Slack refused the webhook (revoked, or posting restricted): " + GET_A_WEBHOOK,
    404: REMEDIES["no_service"],
    410: "the webhook's channel is archived or the webhook disabled: " + GET_A_WEBHOOK,
}


def webhook_problem(url: str) -> str | None:
    """Why URL is not an incoming webhook (None when it looks like one), never quoting it;
    checked before anything is sent."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return f"is not an http(s) URL; {GET_A_WEBHOOK}"
    host = (parts.hostname or "").lower()
    if host.endswith("slack.com") and host != "hooks.slack.com":
        return (
            f"is a Slack page ({host}), not an incoming webhook (a channel's or app's address "
            f"does not take messages); {GET_A_WEBHOOK}"
        )
    if not parts.path.startswith(WEBHOOK_PATHS):
        return f"is not an incoming webhook (its path is not /services/...); {GET_A_WEBHOOK}"
    return None


def remedy(status: int, body: str) -> str:
    """What to do about Slack's answer STATUS BODY ('' when nothing but waiting helps)."""
    known = REMEDIES.get(body.strip().split(" ")[0]) if body else None
    if known:
        return known
    if status >= 500:
        return "Slack is failing: run again later (https://slack-status.com)"
    return STATUS_REMEDIES.get(status, "")


class SlackWebhook:
    """An incoming webhook. `repr` shows the host only: the path is the secret."""

    def __init__(
        self,
        url: str,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        timeout: tuple[float, float] = DEFAULT_TIMEOUT,
        max_attempts: int = 3,
        max_wait: float = 60.0,
        backoff: float = 2.0,
    ) -> None:
        problem = webhook_problem(url)
        if problem is not None:
            raise ValueError(f"the Slack webhook URL {problem}")
        if max_attempts < 1:
            raise ValueError("max_attempts is at least 1")
        self._url = url.strip()
        self._host = urlsplit(self._url).hostname or "?"
        self._session = requests.Session()
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

    def _retried(self, method: str, waited: float) -> None:
        del method, waited
        self._retries += 1

    def _pace(self) -> None:
        if self._last_sent is None:
            return
        wait = MESSAGE_INTERVAL - (self._clock() - self._last_sent)
        if wait > 0:
            self._sleep(wait)

    def _post_once(self, message: dict[str, Any]) -> tuple[str, int | None]:
        """MESSAGE posted (SlackRetry retrying what may), or why not ("" when it was), and
        Slack's HTTP status when it answered."""
        unsure = "it may have been posted; not retried, to avoid posting it twice"
        try:
            response = self._session.post(self._url, json=message, timeout=self._timeout)
        except requests.exceptions.ConnectionError as exc:
            if _sent_nothing(exc):
                kind = "timed out" if isinstance(exc, requests.exceptions.Timeout) else "failed"
                return f"connecting to {self._host} {kind}", None
            return f"the connection to {self._host} broke after sending; {unsure}", None
        except requests.exceptions.Timeout:
            return f"{self._host} did not answer within {self._timeout[1]:g}s; {unsure}", None
        except requests.exceptions.RequestException as exc:
            return f"request failed ({type(exc).__name__})", None
        body = _clip(response.text)
        status = response.status_code
        if status == 200 and body == "ok":
            return "", status
        error = f"HTTP {status} {body or '(empty body)'}"
        fix = remedy(status, body)
        error += f": {fix}" if fix else ""
        wait = retry_after(response.headers.get("Retry-After") or "") if status == 429 else None
        if wait is not None and wait > self._max_wait:
            return f"{error}: Slack asked to wait {wait:g}s, over {self._max_wait:g}s", status
        if status >= 500 and status != 503:
            return f"{error}; {unsure}", status
        return error, status

    def post(self, messages: Sequence[dict[str, Any]]) -> SlackResult:
        """Post every message in order; stop at the first that cannot be delivered."""
        sent = calls = 0
        for index, message in enumerate(messages, start=1):
            self._pace()
            self._last_sent = self._clock()  # the rate counts from each message's start
            retried = self._retries
            error, status = self._post_once(message)
            attempts = self._retries - retried + 1
            calls += attempts
            if error:
                tries = f" after {attempts} attempts" if attempts > 1 else ""
                error = f"Slack message {index} of {len(messages)}{tries}: {error}"
                return SlackResult(
                    sent=sent, total=len(messages), calls=calls, error=error, status=status
                )
            sent += 1
        return SlackResult(sent=sent, total=len(messages), calls=calls)
