"""The hidden begin marker: format version and content hash, to tell hand edits (pure)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ai_context.core.block.locate import Region
from ai_context.core.block.syntax import FORMAT_VERSION
from ai_context.core.fields import whole
from ai_context.core.findings import Finding, make_finding

_MARKER_ATTR_RE = re.compile(r"([a-z0-9]+)=([A-Za-z0-9]+)")


@dataclass
class Marker:
    version: int | None
    sha256: str | None
    matches: bool


def content_hash(text: str) -> str:
    """SHA-256 of the block text, blind to line endings and trailing spaces GitHub may add.
    Defined for any str: a lone surrogate (bytes that were not UTF-8, read with
    surrogateescape) is hashed as itself rather than raising, so parsing never fails on it."""
    lines = [ln.rstrip() for ln in text.replace("\r\n", "\n").split("\n")]
    import hashlib  # noqa: PLC0415 - only blocks that carry a marker need it (start-up)

    return hashlib.sha256("\n".join(lines).strip().encode("utf-8", "surrogatepass")).hexdigest()


def check_marker(region: Region, findings: list[Finding]) -> Marker | None:
    if region.begin_marker is None:
        return None
    attrs = dict(_MARKER_ATTR_RE.findall(region.begin_marker.text))
    given = attrs.get("v", "")
    version = whole(given)
    digest = attrs.get("sha256")
    if version != FORMAT_VERSION:
        findings.append(
            make_finding(
                "AIC402",
                "warning",
                f"block marker has format version {attrs.get('v', 'none')}; this tool "
                f"writes version {FORMAT_VERSION}",
                region.begin_marker.number,
                "Re-save the block with `ai-context save` to rewrite it in the current format.",
            )
        )
    text = "\n".join([region.heading.text] + [ln.text for ln in region.lines])
    matches = digest is not None and digest == content_hash(text)
    if digest is not None and not matches:
        findings.append(
            make_finding(
                "AIC401",
                "warning",
                "the block was edited by hand since the agent last wrote it (hash mismatch)",
                region.heading.number,
                "Ask the agent to make the change and save the block; hand edits are "
                "overwritten at its next checkpoint.",
            )
        )
    return Marker(version, digest, matches)
