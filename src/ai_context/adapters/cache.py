"""The local cache: this machine's copy of each task's block (docs/design.md §1), one JSON file
per task under a directory or the seeds' single file for the active task, replaced atomically.

The cache lives in a checkout, which anyone can fill: a symbolic link on its path, a FIFO or a
device is refused, never followed, and an entry over MAX_ENTRY_BYTES is refused unread (exit 2
naming the file); a write that fails is exit 3 and leaves the previous entry whole.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ai_context.adapters.cache_entry import CacheEntry, EntryError, entry_data, entry_from_json
from ai_context.core.errors import AIContextError, Exit, UsageError

DEFAULT_CACHE = Path(".ai-context/cache")
CACHE_ENV = "AI_CONTEXT_CACHE"
CONFLICT_LOG = "conflicts.jsonl"
MAX_ENTRY_BYTES = 4 * 1024 * 1024  # an entry (one issue body and its block) is far smaller
# Never follow a link; never wait on a FIFO's writer (a regular file ignores O_NONBLOCK).
_SAFE_OPEN = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class CacheError(UsageError):
    """A cache file cannot be read or written: exit 2 with what to do."""


class CacheWriteError(AIContextError):
    """The disk refused a write (full, read-only, no permission): exit 3; what the cache held
    before is kept whole."""

    exit_code = Exit.SERVICE
    title = "cannot write the local cache"


_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a folder",
    stat.S_IFLNK: "a symbolic link",
}


_REBUILD = "remove it and run `ai-context resume ISSUE` to rebuild the entry from the issue"
_AGAIN = "remove it and run the command again"


def _not_regular(path: Path, what: str, fix: str = _REBUILD) -> CacheError:
    return CacheError(
        f"cache file {path} is {what}; ai-context reads and writes only regular files in its "
        f"cache: {fix}"
    )


def refuse_links(path: Path) -> None:
    """PATH is no symbolic link, nor (when relative) any folder on the way to it."""
    on_the_way = [] if path.is_absolute() else [p for p in reversed(path.parents) if p.name]
    for part in [*on_the_way, path]:
        try:
            mode = os.lstat(part).st_mode
        except FileNotFoundError:
            return
        except OSError as exc:
            raise CacheError(f"cannot read cache path {part}: {exc.strerror}") from exc
        if stat.S_ISLNK(mode):
            raise _not_regular(part, "a symbolic link", _AGAIN)


def _open(path: Path, flags: int, fix: str = _REBUILD) -> int:
    """An fd for PATH, never through a link; FileNotFoundError passes through."""
    try:
        return os.open(path, flags | _SAFE_OPEN, 0o600)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise _not_regular(path, "a symbolic link", fix) from None
        raise CacheError(f"cannot open cache file {path}: {exc.strerror}") from exc


def _regular(fd: int, path: Path, limit: int | None = None, fix: str = _REBUILD) -> None:
    """The open file is a regular one (a FIFO or a device reads without end) within LIMIT."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise _not_regular(path, _KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file"), fix)
    if limit is not None and info.st_size > limit:
        raise _too_big(path, limit)


def _too_big(path: Path, limit: int) -> CacheError:
    return CacheError(
        f"cache file {path} is larger than {limit // (1024 * 1024)} MB, which no entry is; "
        "move it away and run `ai-context resume ISSUE` to rebuild it from the issue"
    )


def read_bounded(path: Path, limit: int = MAX_ENTRY_BYTES) -> bytes | None:
    """PATH's bytes, or None when there is no such file; a link, a FIFO, a device or a file
    over LIMIT bytes is a CacheError."""
    try:
        fd = _open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        _regular(fd, path, limit)
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, 1 << 16):
            size += len(chunk)
            if size > limit:  # it grew since fstat
                raise _too_big(path, limit)
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise CacheError(f"cannot read cache file {path}: {exc.strerror}") from exc
    finally:
        os.close(fd)


def _write_failed(path: Path, exc: OSError) -> CacheWriteError:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        what = "the disk is full: free some space and run the command again"
    else:
        what = "check that its folder can be written, then run the command again"
    return CacheWriteError(
        f"cannot write cache file {path}: {exc.strerror or exc}; {what} (what the cache held "
        "before is kept)"
    )


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def atomic_write(path: Path, data: bytes) -> None:
    """Write DATA to PATH through a temporary file and os.replace (which replaces a link at
    PATH, never writes through it); a failure leaves PATH as it was."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _SAFE_OPEN, 0o600)
    except OSError as exc:
        raise _write_failed(path, exc) from exc
    try:
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise _write_failed(path, exc) from exc
        raise


def _json_bytes(value: Any, **options: Any) -> bytes:
    """JSON as UTF-8; a lone surrogate (an issue body can hold one) kept as its JSON escape."""
    return json.dumps(value, ensure_ascii=False, **options).encode("utf-8", "backslashreplace")


def append_line(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON line (O_APPEND keeps concurrent writers' lines whole), never through a
    link, a FIFO or a device."""
    line = _json_bytes(record, sort_keys=True) + b"\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _write_failed(path, exc) from exc
    fd = _open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, _AGAIN)
    try:
        _regular(fd, path, fix=_AGAIN)
        _write_all(fd, line)
        os.fsync(fd)
    except OSError as exc:
        raise _write_failed(path, exc) from exc
    finally:
        os.close(fd)


def _read_entry(path: Path) -> CacheEntry | None:
    raw = read_bounded(path)
    if raw is None:
        return None
    try:
        return entry_from_json(raw)
    except EntryError as exc:
        raise CacheError(
            f"cache file {path} is not a valid cache entry ({exc.loc or 'the file'}: {exc.msg}); "
            "move it away and run `ai-context resume ISSUE` to rebuild it from the issue"
        ) from exc


def _dump(entry: CacheEntry) -> bytes:
    return _json_bytes(entry_data(entry), indent=2) + b"\n"


def _not_dir(path: Path) -> bool:
    try:
        return not stat.S_ISDIR(path.lstat().st_mode)
    except FileNotFoundError:
        return False


def _same_repo(a: str, b: str) -> bool:
    return a.lower() == b.lower()


def _if_task(entry: CacheEntry | None, repository: str, issue: int) -> CacheEntry | None:
    """ENTRY when it is the entry of issue ISSUE of REPOSITORY."""
    if entry is None or entry.issue != issue or not _same_repo(entry.repository, repository):
        return None
    return entry


@dataclass(frozen=True)
class DirectoryCache:
    """One file per task: `<owner>__<name>__<issue>.json` (owners cannot contain `_`)."""

    root: Path

    @property
    def conflict_log(self) -> Path:
        return self.root / CONFLICT_LOG

    def path_for(self, repository: str, issue: int) -> Path:
        owner, _, name = repository.lower().partition("/")
        return self.root / f"{owner}__{name}__{issue}.json"

    def load(self, repository: str, issue: int) -> CacheEntry | None:
        refuse_links(self.root)
        return _if_task(_read_entry(self.path_for(repository, issue)), repository, issue)

    def store(self, entry: CacheEntry) -> Path:
        refuse_links(self.root)
        if not os.path.lexists(self.root / ".gitignore"):
            # A cache is per machine: keep it out of commits without touching the project.
            atomic_write(self.root / ".gitignore", b"*\n")
        path = self.path_for(entry.repository, entry.issue)
        atomic_write(path, _dump(entry))
        return path

    def discard(self, repository: str, issue: int) -> None:
        """Forget the task's entry (a save that failed on bad input leaves none behind)."""
        if self.load(repository, issue) is not None:
            self.path_for(repository, issue).unlink(missing_ok=True)

    def _files(self) -> Iterator[Path]:
        """The `.json` names in the folder; a link or a FIFO among them is refused on reading."""
        try:
            yield from (p for p in self.root.iterdir() if p.suffix == ".json" and _not_dir(p))
        except FileNotFoundError:
            return

    def recent(self, repository: str, within: timedelta, now: datetime) -> list[CacheEntry]:
        """Entries of REPOSITORY whose file changed within WITHIN of NOW, newest first."""
        refuse_links(self.root)
        return _recent(self._files(), repository, within, now)

    def log_conflict(self, record: dict[str, Any]) -> Path:
        refuse_links(self.root)
        append_line(self.conflict_log, record)
        return self.conflict_log


@dataclass(frozen=True)
class SingleFileCache:
    """The seeds' layout: one file for the one active task. Storing another task replaces it,
    unless the file holds changes that never reached their issue."""

    path: Path

    @property
    def conflict_log(self) -> Path:
        return self.path.with_name(f"{self.path.stem}.{CONFLICT_LOG}")

    def load(self, repository: str, issue: int) -> CacheEntry | None:
        refuse_links(self.path)
        return _if_task(_read_entry(self.path), repository, issue)

    def store(self, entry: CacheEntry) -> Path:
        refuse_links(self.path)
        held = _read_entry(self.path)
        if held is not None and held.dirty and not _if_task(held, entry.repository, entry.issue):
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
        refuse_links(self.path)
        return _recent(iter([self.path]), repository, within, now)

    def log_conflict(self, record: dict[str, Any]) -> Path:
        refuse_links(self.path.parent)
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
            mtime = path.lstat().st_mtime
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
