"""One codec for the hidden state the bot keeps in its own comments (pure).

The sticky comment remembers the stale rules' evidence and the digest comment the tasks it
listed; both carry a JSON object as base64 inside a line GitHub does not render. Base64 keeps
any text in the state from closing the comment around it. Reading is tolerant: a state that is
absent, too long, garbled, or not an object decodes to None (a human may edit a comment, and
an older or newer version may have written it); it never raises.

The two carriers:
  the sticky comment   `<!-- ai-context:state <base64> -->` (`hide` / `find_hidden`)
  the digest comment   `[//]: # (ai-context-digest:v2:<base64>)`, a Markdown link reference
                       definition that also renders as nothing in Slack and the step summary
                       (rules/digest/state.py writes and reads it).
`encode` writes url-safe base64 (no `+`, `/`: safe in a link title too); `decode` also reads the
standard alphabet that earlier sticky comments carry (such a comment is rewritten once).
The larger states (the digest's, the run state of rules/runstate.py, the digest's facts of
rules/digest/facts.py) use `compress=True`: the JSON is deflated first and the text marked
`z.` (a dot is not base64, so no plain state starts that way); `decode` inflates at most
MAX_INFLATED bytes, so a crafted state cannot blow up.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import zlib
from collections.abc import Mapping
from typing import Any

MAX_ENCODED = 1_000_000  # characters; a GitHub comment holds 65,536
COMMENT_PREFIX = "<!-- ai-context:state "
COMMENT_SUFFIX = " -->"
MAX_INFLATED = 4_000_000  # bytes of JSON a compressed state may inflate to
COMPRESSED = "z."
_BASE64_RE = re.compile(r"[A-Za-z0-9+/_=-]*")


def encode(state: Mapping[str, Any], *, compress: bool = False) -> str:
    """STATE as url-safe base64 of compact JSON, keys in the order given (callers build their
    states in a fixed order, so an unchanged state encodes to the same text and the comment
    is not rewritten); with COMPRESS, deflated first and marked `z.`."""
    data = json.dumps(state, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    if compress:
        packed = base64.urlsafe_b64encode(zlib.compress(data, 9)).decode("ascii")
        return COMPRESSED + packed.rstrip("=")
    return base64.urlsafe_b64encode(data).decode("ascii")


def decode(encoded: str | None) -> dict[str, Any] | None:
    """The object `encode` wrote (plain or compressed); None for anything else. Never raises."""
    compressed = encoded is not None and encoded.startswith(COMPRESSED)
    text = encoded[len(COMPRESSED) :] if encoded and compressed else encoded
    if not text or len(text) > MAX_ENCODED or not _BASE64_RE.fullmatch(text):
        return None
    text = text.replace("-", "+").replace("_", "/")
    try:
        raw = base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
        if compressed:
            inflater = zlib.decompressobj()
            raw = inflater.decompress(raw, MAX_INFLATED)
            if inflater.unconsumed_tail or not inflater.eof:
                return None  # too large, or cut short
        data = json.loads(raw.decode("utf-8"))
    except (binascii.Error, zlib.error, ValueError, RecursionError):  # UnicodeDecodeError too
        return None
    return data if isinstance(data, dict) else None


def hide(state: Mapping[str, Any], *, prefix: str = COMMENT_PREFIX, compress: bool = False) -> str:
    """The hidden line holding STATE (the sticky comment's, unless PREFIX names another)."""
    return f"{prefix}{encode(state, compress=compress)}{COMMENT_SUFFIX}"


def find_hidden(body: str | None, *, prefix: str = COMMENT_PREFIX) -> dict[str, Any] | None:
    """The state `hide` left in a body (the last one wins); None when absent or garbled."""
    if not body:
        return None
    start = body.rfind(prefix)
    if start < 0:
        return None
    encoded = body[start + len(prefix) :].split(COMMENT_SUFFIX, 1)[0]
    return decode(encoded.strip())
