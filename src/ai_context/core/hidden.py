"""One codec for the hidden state the bot keeps in its own comments (pure): a JSON object as
url-safe base64 (so no text in it can close the comment around it), deflated and marked `z.`
for the larger states. Reading is tolerant: anything but what `encode` wrote decodes to None,
and inflating stops at MAX_INFLATED bytes.
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
    """STATE as url-safe base64 of compact JSON, keys in the order given (an unchanged state
    encodes to the same text); with COMPRESS, deflated first and marked `z.`."""
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
