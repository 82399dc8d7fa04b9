"""One codec for the hidden state the bot keeps in its own comments (pure).

The sticky comment remembers the stale rules' evidence and the digest comment the tasks it
listed; both carry a JSON object as base64 inside a line GitHub does not render. Base64 keeps
any text in the state from closing the comment around it. Reading is tolerant: a state that is
absent, too long, garbled, or not an object decodes to None (a human may edit a comment, and
an older or newer version may have written it); it never raises.

The two carriers:
  the sticky comment   `<!-- ai-context:state <base64> -->` (`hide` / `find_hidden`)
  the digest comment   `[//]: # (ai-context-digest:v1:<base64>)`, a Markdown link reference
                       definition that also renders as nothing in Slack and the step summary
                       (rules/digest.py carries it and calls `encode` / `decode`).
`encode` writes url-safe base64 (no `+`, `/`: safe in a link title too); `decode` also reads the
standard alphabet that earlier sticky comments carry (such a comment is rewritten once).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from typing import Any

MAX_ENCODED = 1_000_000  # characters; a GitHub comment holds 65,536
COMMENT_PREFIX = "<!-- ai-context:state "
COMMENT_SUFFIX = " -->"
_BASE64_RE = re.compile(r"[A-Za-z0-9+/_=-]*")


def encode(state: Mapping[str, Any]) -> str:
    """STATE as url-safe base64 of compact JSON, keys in the order given (callers build their
    states in a fixed order, so an unchanged state encodes to the same text and the comment
    is not rewritten)."""
    data = json.dumps(state, separators=(",", ":"), ensure_ascii=True)
    return base64.urlsafe_b64encode(data.encode("ascii")).decode("ascii")


def decode(encoded: str | None) -> dict[str, Any] | None:
    """The object `encode` wrote; None for anything else. Never raises."""
    if not encoded or len(encoded) > MAX_ENCODED or not _BASE64_RE.fullmatch(encoded):
        return None
    text = encoded.replace("-", "+").replace("_", "/")
    try:
        raw = base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
        data = json.loads(raw.decode("utf-8"))
    except (binascii.Error, ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return None
    return data if isinstance(data, dict) else None


def hide(state: Mapping[str, Any]) -> str:
    """The sticky comment's hidden line holding STATE."""
    return f"{COMMENT_PREFIX}{encode(state)}{COMMENT_SUFFIX}"


def find_hidden(body: str | None) -> dict[str, Any] | None:
    """The state `hide` left in a comment body (the last one wins); None when absent or garbled."""
    if not body:
        return None
    start = body.rfind(COMMENT_PREFIX)
    if start < 0:
        return None
    encoded = body[start + len(COMMENT_PREFIX) :].split(COMMENT_SUFFIX, 1)[0]
    return decode(encoded.strip())
