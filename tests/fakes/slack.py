"""Loopback stand-in for a Slack incoming webhook.

`POST /services/T…/B…/X…` with JSON `{text, blocks}` answers 200 `ok` (text/plain) and keeps
the message in `.messages`. Like Slack, it answers 400 `invalid_blocks` for Block Kit that
breaks the limits (more than 50 blocks, section text over 3,000 characters, ...), 400
`no_text` for a message with neither text nor blocks, and 404 `no_service` on any other path.
Other answers Slack gives (`channel_is_archived` 410, `invalid_token` 403, 429 with
`Retry-After`) are one `fail_next` away; `min_interval` makes the fake enforce Slack's one
message per second itself.
"""

from __future__ import annotations

import time
from typing import Any

from .base import ANY, FakeServer, Reply, Request, route

MAX_BLOCKS = 50
SECTION_TEXT_MAX = 3000
SECTION_FIELDS_MAX = 10
FIELD_TEXT_MAX = 2000
HEADER_TEXT_MAX = 150
BLOCK_ID_MAX = 255


def block_problem(blocks: Any) -> str | None:
    """Why Slack would refuse BLOCKS, or None when they respect Block Kit's limits."""
    if not isinstance(blocks, list) or len(blocks) > MAX_BLOCKS:
        return f"blocks must be a list of at most {MAX_BLOCKS}"
    for i, block in enumerate(blocks):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            return f"block {i} has no type"
        if len(str(block.get("block_id", ""))) > BLOCK_ID_MAX:
            return f"block {i}: block_id longer than {BLOCK_ID_MAX}"
        text = block.get("text") or {}
        if block["type"] == "header" and len(text.get("text", "")) > HEADER_TEXT_MAX:
            return f"block {i}: header text longer than {HEADER_TEXT_MAX}"
        if block["type"] == "section":
            fields = block.get("fields") or []
            if not text and not fields:
                return f"block {i}: section needs text or fields"
            if len(text.get("text", "")) > SECTION_TEXT_MAX:
                return f"block {i}: section text longer than {SECTION_TEXT_MAX}"
            if len(fields) > SECTION_FIELDS_MAX:
                return f"block {i}: more than {SECTION_FIELDS_MAX} fields"
            if any(len(f.get("text", "")) > FIELD_TEXT_MAX for f in fields):
                return f"block {i}: a field longer than {FIELD_TEXT_MAX}"
    return None


class SlackFake(FakeServer):
    """An incoming webhook on 127.0.0.1; hand `webhook_url` to the code under test."""

    def __init__(
        self,
        webhook_path: str = "/services/T000FAKE/B000FAKE/fakeWebhookSecret0123456",
        *,
        min_interval: float = 0.0,
        latency: float = 0.0,
    ) -> None:
        super().__init__(latency=latency)
        self.webhook_path = webhook_path
        self.min_interval = min_interval  # seconds between accepted messages; 0 = no limit
        self.messages: list[dict[str, Any]] = []  # accepted payloads, in order
        self.rejected: list[tuple[str, Any]] = []  # (reason, payload) of refused messages
        self._last_accepted = 0.0

    @property
    def webhook_url(self) -> str:
        return self.root + self.webhook_path

    def rate_limit_next(self, *, retry_after: int = 1, times: int = 1) -> None:
        """429 `rate_limited` with Retry-After RETRY_AFTER seconds."""
        headers = {"Retry-After": str(retry_after)}
        self.fail_next("POST", ANY, status=429, body="rate_limited", headers=headers, times=times)

    def error_body(self, status: int) -> str:
        known = {
            400: "invalid_payload",
            403: "invalid_token",
            404: "no_service",
            410: "channel_is_archived",
            429: "rate_limited",
        }
        return known.get(status, "internal_error")

    def not_found(self, req: Request) -> Reply:
        return Reply(404, "no_service")

    @route("POST", "/services/{team}/{bot}/{secret}")
    def post_message(self, req: Request, team: str, bot: str, secret: str) -> Reply:
        if req.path != self.webhook_path:
            return Reply(404, "no_service")
        payload = req.json
        if not isinstance(payload, dict):
            return self._reject("invalid_payload", payload)
        if not payload.get("text") and not payload.get("blocks"):
            return self._reject("no_text", payload)
        if "blocks" in payload and block_problem(payload["blocks"]):
            return self._reject("invalid_blocks", payload, block_problem(payload["blocks"]))
        now = time.monotonic()
        if self.min_interval and now - self._last_accepted < self.min_interval:
            retry = max(1, round(self.min_interval - (now - self._last_accepted)))
            return Reply(429, "rate_limited", {"Retry-After": str(retry)})
        self._last_accepted = now
        self.messages.append(payload)
        return Reply(200, "ok")

    def _reject(self, error: str, payload: Any, reason: str | None = None) -> Reply:
        self.rejected.append((reason or error, payload))
        return Reply(400, error)
