"""One cache entry and its file's JSON, checked by the field kit when read back: resume and the
hooks read an entry at every checkpoint, and pydantic would cost them its start-up."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, fields
from datetime import datetime
from functools import partial
from typing import Any

from ai_context.core.block.model import (
    Block,
    BlockError,
    block_data,
    block_from_data,
    format_timestamp,
)
from ai_context.core.fields import FieldError, as_text, as_time, as_whole

ENTRY_VERSION = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class CacheEntry:
    """One task's local copy. `base_revision` is the revision of the issue's block this copy
    was last made from or pushed as; the copy has unpushed changes when its own revision
    differs from it."""

    version: int = ENTRY_VERSION
    repository: str
    issue: int
    actor: str | None = None  # the actor that wrote this entry on this machine
    block: Block
    text: str = ""  # the block's canonical text, for people reading the file
    last_updated: str | None = None
    revision: str  # content hash of `text`
    base_revision: str | None = None
    body: str | None = None  # the issue body as last read or written
    saved_at: datetime

    @property
    def dirty(self) -> bool:
        """The local copy holds changes the issue has never had."""
        return self.revision != self.base_revision


class EntryError(FieldError):
    """A file's JSON that is no entry (`loc` "" for the whole file)."""


def entry_data(entry: CacheEntry) -> dict[str, Any]:
    """The entry as its file holds it: the fields in order, the block's too (`paths`, derived
    from Files touched, left out), times as `2026-05-26T15:00:00Z`."""
    block = block_data(entry.block)
    del block["paths"]
    data = {f.name: getattr(entry, f.name) for f in fields(entry)}
    return data | {"block": block, "saved_at": format_timestamp(entry.saved_at)}


# --- reading a file back: one check per kind of field --------------------------------------


def _issue(loc: str, value: object) -> int:
    number = as_whole(loc, value, EntryError)
    if number <= 0:
        raise EntryError(loc, "an issue number is 1 or more")
    return number


_text = partial(as_text, error=EntryError)


def _maybe_text(loc: str, value: object) -> str | None:
    return None if value is None else _text(loc, value)


def _block(loc: str, value: object) -> Block:
    if not isinstance(value, dict):
        raise EntryError(loc, "must be the block's fields as an object")
    try:
        return block_from_data(value)
    except BlockError as exc:
        raise EntryError(loc if exc.loc == "block" else f"{loc}.{exc.loc}", exc.msg) from exc


# The fields in declaration order (the first problem is the one reported): (name, check,
# required).
_FIELDS: tuple[tuple[str, Callable[[str, Any], Any], bool], ...] = (
    ("version", partial(as_whole, error=EntryError), False),
    ("repository", _text, True),
    ("issue", _issue, True),
    ("actor", _maybe_text, False),
    ("block", _block, True),
    ("text", _text, False),
    ("last_updated", _maybe_text, False),
    ("revision", _text, True),
    ("base_revision", _maybe_text, False),
    ("body", _maybe_text, False),
    ("saved_at", partial(as_time, error=EntryError), True),
)


def entry_from_json(raw: bytes | str) -> CacheEntry:
    """A file's text back into its entry, or an EntryError saying where it is wrong. Keys it
    does not know are ignored (what a later version may add)."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise EntryError(
            "", f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except UnicodeDecodeError as exc:
        raise EntryError("", f"not JSON: not UTF-8 text ({exc.reason})") from exc
    except RecursionError:  # [[[[... thousands deep: no entry nests past a few levels
        raise EntryError("", "not JSON: nested too deeply") from None
    except ValueError as exc:  # a number past Python's 4,300 digits
        raise EntryError("", f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise EntryError("", "must be a JSON object")
    values: dict[str, Any] = {}
    for name, check, required in _FIELDS:
        if name in data:
            values[name] = check(name, data[name])
        elif required:
            raise EntryError(name, "is missing")
    return CacheEntry(**values)
