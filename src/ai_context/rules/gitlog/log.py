"""`git log` output read into commits (gitrepo.py runs git and hands the text here)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import UTC, datetime

from ai_context.core.events import Commit
from ai_context.core.fields import whole

# `git log` output, one record per commit: RS sha US author US email US committer-time US
# message US, then (with -z --name-status) NUL, newline and NUL-separated status/path pairs.
LOG_FORMAT = "%x1e%H%x1f%an%x1f%ae%x1f%ct%x1f%B%x1f"
_RS, _US = "\x1e", "\x1f"


class GitLogError(ValueError):
    """`git log` output that is not in LOG_FORMAT."""


def parse_log_record(record: str) -> Commit:
    """One record of LOG_FORMAT output (without its leading RS); the time is the committer date,
    when the work landed in this history."""
    head = record.split(_US, 4)
    if len(head) != 5:
        raise GitLogError(f"git log record has {len(head)} fields, expected 5: {record[:60]!r}")
    sha, name, email, seconds, rest = head
    message, sep, changes = rest.rpartition(_US)
    stamp = whole(seconds)
    if not sep or stamp is None:
        raise GitLogError(f"git log record for {sha[:12]!r} is not in the expected format")
    # A added, D removed, anything else (M, T: a type change) modified; --no-renames.
    changed: dict[str, list[str]] = {"A": [], "D": [], "M": []}
    fields = changes.lstrip("\0\n").split("\0")
    for status, path in zip(fields[0::2], fields[1::2], strict=False):
        if status.strip() and path:
            changed.get(status.strip()[0], changed["M"]).append(path)
    # Trusted, typed values straight from git: skip validation, it is the hot path.
    return Commit.model_construct(
        sha=sha.lower(),
        message=message.rstrip("\n"),
        author_name=name,
        author_email=email,
        timestamp=datetime.fromtimestamp(stamp, UTC),
        added=tuple(changed["A"]),
        modified=tuple(changed["M"]),
        removed=tuple(changed["D"]),
    )


def parse_log_stream(chunks: Iterable[str]) -> Iterator[Commit]:
    """Commits from LOG_FORMAT output delivered in chunks of any size, as they arrive."""
    pending = ""
    for chunk in chunks:
        pending += chunk
        parts = pending.split(_RS)
        pending = parts.pop()
        for part in parts:
            if part:
                yield parse_log_record(part)
    if pending:
        yield parse_log_record(pending)
