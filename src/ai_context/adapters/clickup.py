"""ClickUp adapter (requests, API v2, a raw `pk_` token): the only module that talks to ClickUp.

A 429 waits until `X-RateLimit-Reset`, and a nearly spent window is waited out before the next
request. 5xx and lost connections are retried for GETs and the custom-field POST, which sets a
value (sending it twice leaves the same state); no other write is made.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import requests
from requests.adapters import HTTPAdapter

from ai_context.adapters.clients import CLICKUP_API_URL
from ai_context.adapters.retry import PolicyRetry

if TYPE_CHECKING:
    from urllib3.response import BaseHTTPResponse

from ai_context.core.errors import ServiceError, ServiceRefused
from ai_context.core.secret import Secret
from ai_context.rules.mirror.clickup import CustomField, Task

PAGE_SIZE = 100  # tasks per page of GET /team/{team_id}/task (fixed by ClickUp)
RESERVE = 1  # requests left in the window when the next one waits for its reset


class ClickUpError(ServiceError):
    """ClickUp refused or failed; `status` and `code` (ECODE) when there was an answer."""

    service = "ClickUp"

    def __init__(self, message: str, status: int | None = None, code: str = "") -> None:
        super().__init__(message, status)
        self.code = code


class ClickUpNotFound(ClickUpError):
    """The task is deleted (404 ITEM_013) or was never visible to the token (401 OAUTH_027)."""


class ClickUpConfigError(ClickUpError, ServiceRefused):
    """Bad token or a workspace the token cannot see: the user must fix a setting (exit 2)."""


class ClickUpQuotaExceeded(ClickUpError):
    """FIELD_033: the plan's custom-field write cap is spent; no write can succeed."""


class ClickUpUnavailable(ClickUpError):
    """5xx, timeouts or rate limits that outlasted the retries (exit 3)."""


@dataclass
class ClickUpCounter:
    """HTTP attempts made: reads (GET) and writes (POST), retries included in both."""

    reads: int = 0
    writes: int = 0
    retries: int = 0
    waited: float = 0.0  # seconds spent waiting for rate-limit resets

    @property
    def total(self) -> int:
        return self.reads + self.writes

    def attempt(self, method: str) -> None:
        if method == "GET":
            self.reads += 1
        else:
            self.writes += 1

    def retried(self, method: str, waited: float) -> None:
        self.retries += 1
        self.waited += waited
        self.attempt(method)


class ClickUpRetry(PolicyRetry):
    """ClickUp's wait: a 429 waits until `X-RateLimit-Reset` (else the backoff)."""

    def asked_wait(self, response: BaseHTTPResponse) -> float | None:
        """Seconds until the window resets (whole seconds: a quarter more), when it says."""
        reset = _number(response.headers.get("X-RateLimit-Reset"))
        if response.status != 429 or reset is None:
            return None
        return max(0.0, reset - self._clock()) + 0.25


def _field(data: Mapping[str, Any]) -> CustomField:
    return CustomField(
        id=str(data.get("id") or ""),
        name=str(data.get("name") or ""),
        type=str(data.get("type") or ""),
        value=data.get("value"),
    )


def task_from_json(data: Mapping[str, Any]) -> Task:
    team = data.get("team_id")
    return Task(
        id=str(data["id"]),
        custom_id=str(data["custom_id"]) if data.get("custom_id") else None,
        name=str(data.get("name") or ""),
        url=str(data.get("url") or ""),
        list_id=str((data.get("list") or {}).get("id") or ""),
        team_id=str(team) if team else None,
        fields=tuple(_field(f) for f in data.get("custom_fields") or () if isinstance(f, dict)),
    )


class ClickUp:
    """One ClickUp API (api.clickup.com or a stand-in at `api_url`) with one token."""

    def __init__(
        self,
        token: Secret,
        *,
        api_url: str = CLICKUP_API_URL,
        timeout: float = 15.0,
        retries: int = 4,
        backoff: float = 1.0,
        max_rate_limit_wait: float = 120.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not token.get_secret_value().strip():
            raise ClickUpConfigError("the ClickUp token is empty; set the clickup-token input")
        self._token = token
        self.api_url = api_url.rstrip("/")
        self.timeout = timeout
        self.max_rate_limit_wait = max_rate_limit_wait
        self.counter = ClickUpCounter()
        self._sleep = sleep
        self._clock = clock
        self._session = requests.Session()
        policy = ClickUpRetry(
            on_retry=self.counter.retried,
            max_wait=max_rate_limit_wait,
            sleep=sleep,
            clock=clock,
            total=retries,
            backoff_factor=backoff,
            backoff_max=60.0,
            status_forcelist=(429, *range(500, 600)),
            allowed_methods=("GET", "POST"),
            raise_on_status=False,  # the last answer comes back, to be translated
        )
        for scheme in ("http://", "https://"):
            self._session.mount(scheme, HTTPAdapter(max_retries=policy))
        self._remaining: int | None = None
        self._reset: float | None = None

    def __repr__(self) -> str:
        return f"ClickUp(api_url={self.api_url!r}, token=***)"

    def get_task(self, task_id: str, *, custom: bool = False, team_id: str | None = None) -> Task:
        """A task with its custom fields (and their values); a custom id needs TEAM_ID."""
        params = {"custom_task_ids": "true", "team_id": team_id} if custom else {}
        if custom and not team_id:
            raise ClickUpConfigError(
                "a custom task id needs the workspace id: set clickup-team-id or link the task "
                "with its full URL (https://app.clickup.com/t/<workspace>/<ID>)"
            )
        data = self._json("GET", f"/task/{task_id}", params, what=f"read task {task_id}", task=True)
        return task_from_json(data)

    def list_fields(self, list_id: str) -> tuple[CustomField, ...]:
        """The custom fields available on a list (no values)."""
        data = self._json(
            "GET", f"/list/{list_id}/field", what=f"read the fields of list {list_id}"
        )
        return tuple(_field(f) for f in data.get("fields") or () if isinstance(f, dict))

    def team_tasks(
        self,
        team_id: str,
        page: int,
        *,
        list_ids: Sequence[str] = (),
        custom_fields: str | None = None,
    ) -> tuple[list[Task], bool]:
        """One page (100 tasks) of the workspace's tasks, closed ones and subtasks included;
        returns (tasks, whether it is the last page)."""
        params: dict[str, Any] = {
            "page": page,
            "include_closed": "true",
            "subtasks": "true",
        }
        if list_ids:
            params["list_ids[]"] = list(list_ids)
        if custom_fields:
            params["custom_fields"] = custom_fields
        what = f"list the tasks of workspace {team_id}"
        data = self._json("GET", f"/team/{team_id}/task", params, what=what, team=team_id)
        tasks = [task_from_json(t) for t in data.get("tasks") or () if isinstance(t, dict)]
        last = data.get("last_page")
        return tasks, bool(last) if last is not None else len(tasks) < PAGE_SIZE

    def set_field(self, task_id: str, field_id: str, value: str) -> None:
        """Set a text custom field (by the task's own id). Idempotent, so retried on 5xx."""
        what = f"set field {field_id} on task {task_id}"
        path = f"/task/{task_id}/field/{field_id}"
        self._json("POST", path, json={"value": value}, what=what, task=True)

    def _json(
        self,
        method: str,
        path: str,
        params: Mapping[str, Any] | None = None,
        *,
        json: Any = None,
        what: str,
        task: bool = False,
        team: str | None = None,
    ) -> dict[str, Any]:
        """One request, paced (and retried by ClickUpRetry): its JSON, or the error it means."""
        self._pace()
        retried = self.counter.retries
        self.counter.attempt(method)  # the first try; ClickUpRetry counts the others
        try:
            response = self._session.request(
                method,
                self.api_url + path,
                params=params,
                json=json,
                headers={"Authorization": self._token.get_secret_value()},
                timeout=self.timeout,
            )
        except (requests.ConnectionError, requests.Timeout) as exc:
            attempts = self.counter.retries - retried + 1
            raise ClickUpUnavailable(
                f"cannot reach ClickUp to {what} after {attempts} attempts "
                f"({type(exc).__name__}); check clickup-api-url or try again later"
            ) from exc
        remaining = _number(response.headers.get("X-RateLimit-Remaining"))
        self._remaining = int(remaining) if remaining is not None else None
        self._reset = reset = _number(response.headers.get("X-RateLimit-Reset"))
        if response.status_code == 429:
            wait = max(0.0, reset - self._clock()) if reset is not None else 0.0
            raise ClickUpUnavailable(
                f"ClickUp kept refusing to {what} for the rate limit ({_body(response)}; "
                f"next reset in {wait:.0f}s); try again later",
                429,
                _code(response),
            )
        if response.status_code >= 400:
            raise _error(response, what, task=task, team=team)
        try:
            data = response.json() if response.content else {}
        except ValueError as exc:
            raise ClickUpUnavailable(
                f"ClickUp answered {response.status_code} with a body that is not JSON when "
                f"asked to {what}; try again later",
                response.status_code,
            ) from exc
        return data if isinstance(data, dict) else {}

    def _pace(self) -> None:
        """Slow down before a 429: when the window is (nearly) spent, wait for its reset."""
        if self._remaining is None or self._reset is None or self._remaining > RESERVE:
            return
        wait = self._reset - self._clock() + 0.25
        self._remaining = None
        if 0 < wait <= self.max_rate_limit_wait:
            self.counter.waited += wait
            self._sleep(wait)


def _number(value: str | None) -> float | None:
    """A rate-limit header's number; None when absent or not a finite one (`inf`, `nan`)."""
    try:
        number = float(value) if value is not None else None
    except ValueError:
        return None
    return number if number is not None and math.isfinite(number) else None


def _error_json(response: requests.Response) -> dict[str, Any]:
    try:
        data = response.json()
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _code(response: requests.Response) -> str:
    return str(_error_json(response).get("ECODE") or "")


def _body(response: requests.Response) -> str:
    """`STATUS ECODE err` as ClickUp sent it (or the start of a non-JSON body)."""
    data = _error_json(response)
    if "err" in data or "ECODE" in data:
        return f"{response.status_code} {data.get('ECODE', '')} {data.get('err', '')}".strip()
    return f"{response.status_code} {response.text[:200].strip()}".strip()


def _error(response: requests.Response, what: str, *, task: bool, team: str | None) -> ClickUpError:
    status, code, body = response.status_code, _code(response), _body(response)
    if status == 404 and code == "APP_001":
        return ClickUpConfigError(
            f"ClickUp has no such route to {what} ({body}); check clickup-api-url (it ends "
            "in /api/v2)",
            status,
            code,
        )
    if task and (code == "ITEM_013" or status == 404):
        return ClickUpNotFound(f"ClickUp has no such task to {what} ({body})", status, code)
    if task and code == "OAUTH_027":
        # What ClickUp answers for an id that never existed, or one the token cannot see.
        return ClickUpNotFound(
            f"ClickUp has no task the token can see to {what} ({body})", status, code
        )
    if code == "FIELD_033":
        return ClickUpQuotaExceeded(
            f"ClickUp refused to {what} ({body}): the workspace's plan has used up its "
            "custom-field writes (the Free plan allows 60 in the workspace's lifetime). "
            "Upgrade the ClickUp plan, or stop mirroring (remove clickup-token or the mirror "
            "job); no further mirror writes are attempted in this run",
            status,
            code,
        )
    if team is not None and code == "OAUTH_027":
        return ClickUpConfigError(
            f"ClickUp refused to {what} ({body}): the token cannot see workspace {team}; "
            "check clickup-team-id (the number after app.clickup.com/ in ClickUp's URLs)",
            status,
            code,
        )
    if status == 401 or code.startswith("OAUTH_"):
        return ClickUpConfigError(
            f"ClickUp refused the token to {what} ({body}); check that the clickup-token "
            "input holds a personal API token (pk_...) of a workspace member, sent without "
            "'Bearer'",
            status,
            code,
        )
    if status >= 500:
        return ClickUpUnavailable(
            f"ClickUp failed to {what} after retries ({body}); try again later", status, code
        )
    return ClickUpError(f"ClickUp refused to {what} ({body})", status, code)
