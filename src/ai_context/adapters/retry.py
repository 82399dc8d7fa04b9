"""The retry policy of the ClickUp and Slack adapters: urllib3's `Retry` on their requests
session, as PyGithub's `GithubRetry` is on GitHub's. Each service says which answers it retries
and how long an answer asks it to wait (`asked_wait`); PolicyRetry counts every retry, honours
that wait up to `max_wait` (beyond it the answer goes back as it came) and waits in `increment`
through a `sleep` a caller may replace (with `clock`, for a wait named as a time).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from urllib3.exceptions import MaxRetryError
from urllib3.util.retry import Retry

if TYPE_CHECKING:
    from urllib3.connectionpool import ConnectionPool
    from urllib3.response import BaseHTTPResponse


class PolicyRetry(Retry):
    def __init__(
        self,
        *,
        on_retry: Callable[[str, float], None],  # (method, seconds waited), once per retry
        max_wait: float,
        sleep: Callable[[float], None],
        clock: Callable[[], float] = time.time,
        **kwargs: Any,
    ) -> None:
        self.on_retry, self.max_wait, self._sleep, self._clock = on_retry, max_wait, sleep, clock
        super().__init__(**kwargs)

    def new(self, **kw: Any) -> Self:
        kept = {"on_retry": self.on_retry, "max_wait": self.max_wait, "sleep": self._sleep}
        return super().new(**{**kept, "clock": self._clock, **kw})

    def asked_wait(self, response: BaseHTTPResponse) -> float | None:
        """Seconds RESPONSE asks to wait before trying again; None: the backoff."""
        del response
        return None

    def increment(
        self,
        method: str | None = None,
        url: str | None = None,
        response: BaseHTTPResponse | None = None,
        error: Exception | None = None,
        _pool: ConnectionPool | None = None,
        _stacktrace: TracebackType | None = None,
    ) -> Self:
        asked = None if response is None else self.asked_wait(response)
        if asked is not None and asked > self.max_wait:
            raise MaxRetryError(_pool, url or "", None)  # type: ignore[arg-type]
        retry = super().increment(method, url, response, error, _pool, _stacktrace)
        backoff = self.backoff_factor * 2.0 ** (len(retry.history) - 1)
        wait = min(self.backoff_max, backoff) if asked is None else asked
        self.on_retry(method or "GET", 0.0 if asked is None else asked)
        if wait > 0:
            self._sleep(wait)
        return retry

    def sleep(self, response: BaseHTTPResponse | None = None) -> None:
        """Nothing: `increment` has waited already."""
