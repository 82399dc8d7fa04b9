"""The local cache: this machine's copy of each task's block (docs/design.md §1: a convenience).

One JSON file per task under a directory (default `.ai-context/cache/`), or the seeds' single
file (`.claude/session/active-context.json`) that holds only the active task. An entry records
what reconciliation needs: the block, who wrote it, and the remote revision it was based on
(so a later resume can tell "I have unpushed changes" from "the issue moved on"), plus the
issue body as last read, which `save` uses as its read. Files are replaced atomically: a
reader sees the old entry or the new one, never half of one.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ai_context.adapters.cache_entry import (
    CacheEntry,
    EntryError,
    entry_data,
    entry_for,
    entry_from_json,
)
from ai_context.core.errors import UsageError

DEFAULT_CACHE = Path(".ai-context/cache")
SEED_CACHE_FILE = Path(".claude/session/active-context.json")
CACHE_ENV = "AI_CONTEXT_CACHE"
CONFLICT_LOG = "conflicts.jsonl"
__all__ = [  # the entry itself lives in cache_entry.py
    "CACHE_ENV",
    "DEFAULT_CACHE",
    "SEED_CACHE_FILE",
    "Cache",
    "CacheEntry",
    "CacheError",
    "DirectoryCache",
    "SingleFileCache",
    "append_line",
    "atomic_write",
    "entry_for",
    "open_cache",
]


class CacheError(UsageError):
    """A cache file cannot be read or written: exit 2 with what to do."""


def atomic_write(path: Path, text: str) -> None:
    """Write TEXT to PATH via a temporary file in the same directory and os.replace."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def append_line(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON line; O_APPEND keeps concurrent writers' lines whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, line.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def _read_entry(path: Path) -> CacheEntry | None:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CacheError(f"cannot read cache file {path}: {exc.strerror}") from exc
    try:
        return entry_from_json(raw)
    except EntryError as exc:
        raise CacheError(
            f"cache file {path} is not a valid cache entry ({exc.loc or 'the file'}: {exc.msg}); "
            "move it away and run `ai-context resume ISSUE` to rebuild it from the issue"
        ) from exc


def _dump(entry: CacheEntry) -> str:
    return json.dumps(entry_data(entry), ensure_ascii=False, indent=2) + "\n"


def _same_repo(a: str, b: str) -> bool:
    return a.lower() == b.lower()


class DirectoryCache:
    """One file per task: `<owner>__<name>__<issue>.json` (owners cannot contain `_`)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def __repr__(self) -> str:
        return f"DirectoryCache({str(self.root)!r})"

    @property
    def conflict_log(self) -> Path:
        return self.root / CONFLICT_LOG

    def path_for(self, repository: str, issue: int) -> Path:
        owner, _, name = repository.lower().partition("/")
        return self.root / f"{owner}__{name}__{issue}.json"

    def load(self, repository: str, issue: int) -> CacheEntry | None:
        entry = _read_entry(self.path_for(repository, issue))
        if entry is not None and (
            entry.issue != issue or not _same_repo(entry.repository, repository)
        ):
            return None
        return entry

    def store(self, entry: CacheEntry) -> Path:
        if not (self.root / ".gitignore").exists():
            # A cache is per machine: keep it out of commits without touching the project.
            atomic_write(self.root / ".gitignore", "*\n")
        path = self.path_for(entry.repository, entry.issue)
        atomic_write(path, _dump(entry))
        return path

    def discard(self, repository: str, issue: int) -> None:
        """Forget the task's entry (a save that failed on bad input leaves none behind)."""
        if self.load(repository, issue) is not None:
            self.path_for(repository, issue).unlink(missing_ok=True)

    def _files(self) -> Iterator[Path]:
        try:
            yield from (p for p in self.root.iterdir() if p.suffix == ".json" and p.is_file())
        except FileNotFoundError:
            return

    def recent(self, repository: str, within: timedelta, now: datetime) -> list[CacheEntry]:
        """Entries of REPOSITORY whose file changed within WITHIN of NOW, newest first."""
        return _recent(self._files(), repository, within, now)

    def log_conflict(self, record: dict[str, Any]) -> Path:
        append_line(self.conflict_log, record)
        return self.conflict_log


class SingleFileCache:
    """The seeds' layout: one file for the one active task. Storing another task replaces it,
    unless the file holds changes that never reached their issue."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __repr__(self) -> str:
        return f"SingleFileCache({str(self.path)!r})"

    @property
    def conflict_log(self) -> Path:
        return self.path.with_name(f"{self.path.stem}.{CONFLICT_LOG}")

    def load(self, repository: str, issue: int) -> CacheEntry | None:
        entry = _read_entry(self.path)
        if entry is None or entry.issue != issue or not _same_repo(entry.repository, repository):
            return None
        return entry

    def store(self, entry: CacheEntry) -> Path:
        held = _read_entry(self.path)
        if (
            held is not None
            and held.dirty
            and (held.issue != entry.issue or not _same_repo(held.repository, entry.repository))
        ):
            raise CacheError(
                f"{self.path} holds changes to {held.repository}#{held.issue} that never reached "
                f"the issue; run `ai-context resume {held.issue}` to push or drop them first, or "
                "use a cache directory (one file per task)"
            )
        atomic_write(self.path, _dump(entry))
        return self.path

    def discard(self, repository: str, issue: int) -> None:
        """Forget the task's entry, when the file holds that task (and nothing else)."""
        if self.load(repository, issue) is not None:
            self.path.unlink(missing_ok=True)

    def recent(self, repository: str, within: timedelta, now: datetime) -> list[CacheEntry]:
        return _recent(iter([self.path]), repository, within, now)

    def log_conflict(self, record: dict[str, Any]) -> Path:
        append_line(self.conflict_log, record)
        return self.conflict_log


Cache = DirectoryCache | SingleFileCache


def _recent(
    paths: Iterator[Path], repository: str, within: timedelta, now: datetime
) -> list[CacheEntry]:
    cutoff = (now - within).timestamp()
    found: list[tuple[float, CacheEntry]] = []
    for path in paths:
        try:
            mtime = path.stat().st_mtime
        except FileNotFoundError:
            continue
        if mtime < cutoff:
            continue
        entry = _read_entry(path)
        if entry is not None and _same_repo(entry.repository, repository):
            found.append((mtime, entry))
    found.sort(key=lambda pair: pair[0], reverse=True)
    return [entry for _, entry in found]


def open_cache(location: str | Path | None = None, env: dict[str, str] | None = None) -> Cache:
    """A cache at LOCATION, else $AI_CONTEXT_CACHE, else `.ai-context/cache/`. A path ending
    in `.json` is the single-file layout; anything else is a directory of entries."""
    chosen = location or (env or {}).get(CACHE_ENV) or DEFAULT_CACHE
    path = Path(chosen).expanduser()
    if path.suffix == ".json":
        if path.is_dir():
            raise CacheError(f"cache path {path} is a directory; name a file or drop .json")
        return SingleFileCache(path)
    if path.exists() and not path.is_dir():
        raise CacheError(
            f"cache path {path} is a file; name a directory, or a .json file for one task"
        )
    return DirectoryCache(path)
