"""The cache and its conflict log in a checkout anyone can fill: a link, a FIFO, a device, a
deep or huge file, a full disk. Each is exit 2 or 3 with a message naming the file, never a
hang, a traceback or a write through a link; the entry a failed write meant to replace stays."""

from __future__ import annotations

import dataclasses
import errno
import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ai_context.adapters.cache import (
    MAX_ENTRY_BYTES,
    CacheError,
    CacheWriteError,
    DirectoryCache,
    SingleFileCache,
    open_cache,
)
from ai_context.core.errors import Exit
from tests.conftest import SEED_BLOCK, run_cli
from tests.fakes import GitHubFake
from tests.test_cache import entry

REPO = "acme/shop"


def entry_path(root: Path, issue: int = 12) -> Path:
    return root / f"acme__shop__{issue}.json"


def test_an_entry_linked_to_dev_zero_is_refused_unread(tmp_path: Path) -> None:
    cache = DirectoryCache(tmp_path)
    entry_path(tmp_path).symlink_to("/dev/zero")
    with pytest.raises(CacheError, match="is a symbolic link") as caught:
        cache.load(REPO, 12)
    assert str(entry_path(tmp_path)) in str(caught.value)
    with pytest.raises(CacheError, match="is a symbolic link"):
        cache.recent(REPO, timedelta(days=1), datetime.now(UTC))


def test_a_fifo_entry_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    os.mkfifo(entry_path(tmp_path))
    with pytest.raises(CacheError, match="is a FIFO"):
        DirectoryCache(tmp_path).load(REPO, 12)


def test_a_200000_deep_entry_is_a_damaged_entry_not_a_recursion_error(tmp_path: Path) -> None:
    entry_path(tmp_path).write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    with pytest.raises(CacheError, match=r"not JSON: nested too deeply"):
        DirectoryCache(tmp_path).load(REPO, 12)


def test_a_number_past_pythons_digit_limit_is_a_damaged_entry(tmp_path: Path) -> None:
    entry_path(tmp_path).write_text('{"issue": ' + "9" * 5000 + "}", encoding="utf-8")
    with pytest.raises(CacheError, match="not JSON: "):
        DirectoryCache(tmp_path).load(REPO, 12)


def test_a_text_of_5000_digits_is_a_damaged_entry(tmp_path: Path) -> None:
    cache = DirectoryCache(tmp_path)
    data = json.loads(cache.store(entry(REPO, 12)).read_text(encoding="utf-8"))
    data["version"] = "9" * 5000
    entry_path(tmp_path).write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(CacheError, match="version: must be a whole number"):
        cache.load(REPO, 12)


def test_an_oversize_entry_is_refused_unread(tmp_path: Path) -> None:
    with entry_path(tmp_path).open("wb") as handle:
        handle.truncate(MAX_ENTRY_BYTES + 1)  # sparse: no disk used
    with pytest.raises(CacheError, match="is larger than 4 MB"):
        DirectoryCache(tmp_path).load(REPO, 12)


def test_a_full_disk_keeps_the_old_entry_whole_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = DirectoryCache(tmp_path)
    path = cache.store(entry(base="old"))
    before = path.read_bytes()

    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(CacheWriteError) as caught:
        cache.store(entry(base="new"))
    assert caught.value.exit_code == Exit.SERVICE
    assert "the disk is full" in str(caught.value) and "is kept" in str(caught.value)
    with pytest.raises(CacheWriteError, match="the disk is full"):
        cache.log_conflict({"issue": 12})
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".gitignore",
        "acme__shop__12.json",
        "conflicts.jsonl",
    ]
    assert (tmp_path / "conflicts.jsonl").read_bytes() == b""
    loaded = cache.load(REPO, 12)
    assert loaded is not None and loaded.base_revision == "old"


def test_a_conflict_log_linked_outside_is_not_appended(tmp_path: Path) -> None:
    outside = tmp_path / "bashrc"
    outside.write_text("echo hello\n", encoding="utf-8")
    root = tmp_path / "cache"
    root.mkdir()
    (root / "conflicts.jsonl").symlink_to(outside)
    with pytest.raises(CacheError, match=r"conflicts\.jsonl is a symbolic link"):
        DirectoryCache(root).log_conflict({"local": "touch /tmp/owned"})
    single = SingleFileCache(root / "active-context.json")
    (root / "active-context.conflicts.jsonl").symlink_to(outside)
    with pytest.raises(CacheError, match="is a symbolic link"):
        single.log_conflict({"local": "touch /tmp/owned"})
    assert outside.read_text(encoding="utf-8") == "echo hello\n"


def test_a_conflict_log_that_is_a_fifo_is_not_written(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "conflicts.jsonl")
    with pytest.raises(CacheError):  # no reader: refused at open, or as a FIFO after it
        DirectoryCache(tmp_path).log_conflict({"issue": 1})


def test_a_cache_folder_linked_elsewhere_is_neither_read_nor_written(tmp_path: Path) -> None:
    elsewhere = tmp_path / "home"
    elsewhere.mkdir()
    (tmp_path / "cache").symlink_to(elsewhere)
    cache = DirectoryCache(tmp_path / "cache")
    with pytest.raises(CacheError, match="is a symbolic link"):
        cache.store(entry())
    with pytest.raises(CacheError, match="is a symbolic link"):
        cache.log_conflict({"issue": 1})
    assert list(elsewhere.iterdir()) == []


def test_a_checkout_folder_linked_on_the_way_to_the_cache_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / ".ai-context").symlink_to(elsewhere)
    monkeypatch.chdir(checkout)
    cache = open_cache()
    with pytest.raises(CacheError, match=r"\.ai-context is a symbolic link"):
        cache.store(entry())
    single = open_cache(".claude/session/active-context.json")
    (checkout / ".claude").symlink_to(elsewhere)
    with pytest.raises(CacheError, match=r"\.claude is a symbolic link"):
        single.store(entry())
    assert list(elsewhere.iterdir()) == []


def test_an_entry_replaced_by_a_link_is_replaced_not_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep\n", encoding="utf-8")
    root = tmp_path / "cache"
    root.mkdir()
    entry_path(root).symlink_to(outside)
    DirectoryCache(root).store(entry())  # os.replace swaps the link for the new entry
    assert outside.read_text(encoding="utf-8") == "keep\n"
    assert not entry_path(root).is_symlink()


def test_a_lone_surrogate_in_the_body_round_trips(tmp_path: Path) -> None:
    cache = DirectoryCache(tmp_path)
    cache.store(dataclasses.replace(entry(), body="a\ud800b"))
    loaded = cache.load(REPO, 12)
    assert loaded is not None and loaded.body == "a\ud800b"


# --- as a user meets it: exit 2 or 3, one message, no traceback --------------------------------


def test_resume_on_a_deep_entry_is_exit_2_with_the_file_named(
    agent_fake: GitHubFake, tmp_path: Path
) -> None:
    (tmp_path / "cache").mkdir()
    entry_path(tmp_path / "cache", 1).write_text("[" * 200_000, encoding="utf-8")
    code, out, err = run_cli(["resume", "1"])
    assert code == Exit.USAGE, out + err
    assert "nested too deeply" in out + err and "acme__shop__1.json" in out + err
    assert "Traceback" not in out + err


def test_save_on_a_full_disk_is_exit_3_and_the_cache_keeps_its_entry(
    agent_fake: GitHubFake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run_cli(["save", "1", "--now", "2026-05-26T14:32:00Z"], SEED_BLOCK)[0] == 0
    path = entry_path(tmp_path / "cache", 1)
    before = path.read_bytes()
    real_write = os.write

    def full(fd: int, data: bytes) -> int:
        if os.readlink(f"/proc/self/fd/{fd}").startswith(str(tmp_path / "cache")):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full)
    block = SEED_BLOCK.replace("Finish unit tests", "Ship it")
    code, out, err = run_cli(
        ["save", "1", "--now", "2026-05-26T15:00:00Z", "--take", "local"], block
    )
    monkeypatch.undo()
    assert code == Exit.SERVICE, out + err
    assert "the disk is full" in out + err and "Traceback" not in out + err
    assert path.read_bytes() == before
    assert json.loads(before)["issue"] == 1


def test_a_conflict_with_the_log_linked_outside_appends_nothing_and_says_why(
    agent_fake: GitHubFake, tmp_path: Path
) -> None:
    assert run_cli(["save", "1"], SEED_BLOCK)[0] == 0
    outside = tmp_path / "bashrc"
    outside.write_text("echo hello\n", encoding="utf-8")
    noa = tmp_path / "noa"
    noa.mkdir()
    (noa / "conflicts.jsonl").symlink_to(outside)
    other = SEED_BLOCK.replace("cc-ariel-laptop", "cc-noa-desktop")
    code, out, err = run_cli(["save", "1", "--cache", str(noa)], other)
    assert code == Exit.USAGE, out + err
    assert "conflicts.jsonl is a symbolic link" in out + err
    assert "run the command again" in out + err and "Traceback" not in out + err
    assert outside.read_text(encoding="utf-8") == "echo hello\n"
