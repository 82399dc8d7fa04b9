"""The local cache: entries round-trip, writes are atomic, recency by mtime, both layouts."""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ai_context.adapters.cache import (
    CacheError,
    CacheWriteError,
    DirectoryCache,
    SingleFileCache,
    open_cache,
)
from ai_context.adapters.cache_entry import CacheEntry
from ai_context.core.block.model import format_timestamp
from ai_context.core.block.parse import parse
from ai_context.core.block.render import render
from ai_context.rules.reconcile import revision
from tests.conftest import SEED_BLOCK

NOW = datetime(2026, 5, 26, 15, 0, tzinfo=UTC)
BLOCK = parse(SEED_BLOCK).block
assert BLOCK is not None


def entry(repository: str = "acme/shop", issue: int = 12, base: str | None = "b") -> CacheEntry:
    assert BLOCK is not None
    return CacheEntry(
        repository=repository,
        issue=issue,
        actor="cc-ariel-laptop",
        block=BLOCK,
        text=render(BLOCK),
        last_updated=format_timestamp(BLOCK.last_updated),
        revision=revision(BLOCK),
        base_revision=base,
        body="Human text\n\n" + SEED_BLOCK,
        saved_at=NOW,
    )


def test_entry_round_trips_with_everything_reconciliation_needs(tmp_path: Path) -> None:
    cache = DirectoryCache(tmp_path / "cache")
    path = cache.store(entry())
    assert path == tmp_path / "cache" / "acme__shop__12.json"
    loaded = cache.load("acme/shop", 12)
    assert loaded == entry()
    assert loaded is not None and loaded.block == BLOCK
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["last_updated"] == "2026-05-26T14:32:00Z"
    assert data["actor"] == "cc-ariel-laptop"
    assert data["text"] == render(BLOCK)
    assert (data["repository"], data["issue"], data["base_revision"]) == ("acme/shop", 12, "b")
    assert "paths" not in data["block"]
    assert (tmp_path / "cache" / ".gitignore").read_text() == "*\n"


def test_dirty_means_changes_the_issue_never_had() -> None:
    assert entry(base="b").dirty
    assert not entry(base=revision(BLOCK)).dirty  # type: ignore[arg-type]


def test_load_is_by_repository_and_issue_case_blind(tmp_path: Path) -> None:
    cache = DirectoryCache(tmp_path)
    cache.store(entry("Acme/Shop", 12))
    assert cache.load("acme/shop", 12) is not None
    assert cache.load("acme/shop", 13) is None
    assert cache.load("acme/other", 12) is None


def test_a_failed_write_leaves_the_old_entry_and_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = DirectoryCache(tmp_path)
    path = cache.store(entry(base="old"))
    before = path.read_bytes()

    def disk_full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(CacheWriteError, match="No space left on device; the disk is full"):
        cache.store(entry(base="new"))
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [".gitignore", "acme__shop__12.json"]


def test_recent_is_by_file_time_within_the_window_newest_first(tmp_path: Path) -> None:
    cache = DirectoryCache(tmp_path)
    now = time.time()
    ages = {1: 2 * 3600, 2: 600, 3: 25 * 3600}
    for issue, age in ages.items():
        path = cache.store(entry(issue=issue))
        os.utime(path, (now - age, now - age))
    cache.store(entry("acme/other", 9))
    found = cache.recent("acme/shop", timedelta(hours=24), datetime.fromtimestamp(now, UTC))
    assert [e.issue for e in found] == [2, 1]
    assert DirectoryCache(tmp_path / "missing").recent("acme/shop", timedelta(hours=1), NOW) == []


def test_single_file_layout_holds_the_one_active_task(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "session" / "active-context.json"
    cache = open_cache(path)
    assert isinstance(cache, SingleFileCache)
    clean = revision(BLOCK)  # type: ignore[arg-type]
    cache.store(entry(issue=12, base=clean))
    cache.store(entry(issue=13, base=clean))
    assert cache.load("acme/shop", 12) is None
    assert cache.load("acme/shop", 13) is not None
    now = datetime.now(UTC)
    assert [e.issue for e in cache.recent("acme/shop", timedelta(hours=24), now)] == [13]
    assert cache.log_conflict({"x": 1}).name == "active-context.conflicts.jsonl"


def test_single_file_will_not_drop_another_tasks_unpushed_changes(tmp_path: Path) -> None:
    cache = SingleFileCache(tmp_path / "active-context.json")
    cache.store(entry(issue=12, base="never pushed"))
    with pytest.raises(CacheError, match=r"acme/shop#12 that never reached the issue"):
        cache.store(entry(issue=13))
    cache.store(entry(issue=12, base=revision(BLOCK)))  # type: ignore[arg-type]
    cache.store(entry(issue=13))
    assert cache.load("acme/shop", 13) is not None


def test_open_cache_defaults_env_and_bad_paths(tmp_path: Path) -> None:
    assert isinstance(open_cache(), DirectoryCache)
    assert open_cache().root == Path(".ai-context/cache")  # type: ignore[union-attr]
    chosen = open_cache(None, {"AI_CONTEXT_CACHE": str(tmp_path / "c")})
    assert isinstance(chosen, DirectoryCache) and chosen.root == tmp_path / "c"
    (tmp_path / "file").write_text("x")
    with pytest.raises(CacheError, match="is a file"):
        open_cache(tmp_path / "file")
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(CacheError, match="is a directory"):
        open_cache(tmp_path / "dir.json")


def test_a_damaged_entry_is_an_error_naming_the_file_and_the_fix(tmp_path: Path) -> None:
    cache = DirectoryCache(tmp_path)
    path = cache.store(entry())
    path.write_text('{"repository": "acme/shop", "issue": 12}', encoding="utf-8")
    with pytest.raises(CacheError) as info:
        cache.load("acme/shop", 12)
    assert str(path) in str(info.value) and "ai-context resume" in str(info.value)


def test_conflict_log_appends_one_json_line_per_record(tmp_path: Path) -> None:
    cache = DirectoryCache(tmp_path)
    cache.log_conflict({"choice": None, "issue": 1})
    log = cache.log_conflict({"choice": "local", "issue": 1})
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [r["choice"] for r in records] == [None, "local"]


# --- the entry's JSON without pydantic (issue 14): the same file, the same messages ------------

DROP = object()  # a key taken out of the file


def test_the_file_keeps_the_fields_in_the_order_pydantic_wrote_them(tmp_path: Path) -> None:
    path = DirectoryCache(tmp_path).store(entry())
    data = json.loads(path.read_text(encoding="utf-8"))
    assert list(data) == [
        "version",
        "repository",
        "issue",
        "actor",
        "block",
        "text",
        "last_updated",
        "revision",
        "base_revision",
        "body",
        "saved_at",
    ]
    assert list(data["block"]) == [
        "actor",
        "actor_description",
        "phase",
        "chunk",
        "last_updated",
        "plan",
        "files_touched",
        "decisions",
        "blockers",
        "next_step",
        "extra",
    ]
    assert data["saved_at"] == "2026-05-26T15:00:00Z" and data["block"]["chunk"] == [3, 5]
    assert path.read_text(encoding="utf-8").endswith("}\n")


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ("[1, 2]", "the file: must be a JSON object"),
        ("{not json", "the file: not JSON: "),
        ({"issue": DROP}, "issue: is missing"),
        ({"issue": 0}, "issue: an issue number is 1 or more"),
        ({"issue": "x"}, "issue: must be a whole number, not str"),
        ({"repository": 5}, "repository: must be text, not int"),
        ({"block": [1]}, "block: must be the block's fields as an object"),
        ({"block": {"actor": "two words"}}, "block.actor: the actor id is one word"),
        ({"block": {"plan": [{"number": "x", "text": "a"}]}}, "block.plan.0.number: must be"),
        ({"saved_at": "nope"}, "saved_at: 'nope' is not an ISO 8601 time"),
        ({"revision": None}, "revision: must be text, not nothing"),
    ],
)
def test_a_damaged_field_is_named(
    tmp_path: Path, change: str | dict[str, object], problem: str
) -> None:
    cache = DirectoryCache(tmp_path)
    path = cache.store(entry())
    if isinstance(change, str):
        path.write_text(change, encoding="utf-8")
    else:
        data = json.loads(path.read_text(encoding="utf-8"))
        data.update(change)
        data = {k: v for k, v in data.items() if v is not DROP}
        path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(CacheError) as info:
        cache.load("acme/shop", 12)
    message = str(info.value)
    assert message.startswith(f"cache file {path} is not a valid cache entry ({problem}")
    assert message.endswith("run `ai-context resume ISSUE` to rebuild it from the issue")
    assert info.value.exit_code == 2


def test_what_a_hand_edit_may_write_still_reads(tmp_path: Path) -> None:
    """A file edited by hand: a number as text, a time without offset (UTC), unknown keys."""
    cache = DirectoryCache(tmp_path)
    path = cache.store(entry())
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(issue="12", version=1.0, saved_at="2026-05-26T15:00:00", later="ignored")
    path.write_text(json.dumps(data), encoding="utf-8")
    assert cache.load("acme/shop", 12) == entry()
