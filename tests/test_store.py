"""The directory-backed issue store reads the examples into the same models GitHub gives."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from ai_context.adapters.store import DirectoryStore, StoreError, split_front_matter
from ai_context.rules.checks import check_body
from tests.conftest import EXAMPLES


def test_examples_load() -> None:
    store = DirectoryStore(EXAMPLES)
    everything = store.list_issues("all")
    assert [i.number for i in everything] == [101, 102, 103, 104, 105, 106, 107]
    assert [i.number for i in store.list_issues("open")] == [101, 102, 103, 104, 105, 107]
    done = store.get_issue(106)
    assert done.state == "closed" and done.closed_at == datetime(2026, 5, 27, 5, tzinfo=UTC)
    assert store.get_issue(105).labels == ("in-review",)


def test_examples_cover_the_kinds_of_task() -> None:
    now = datetime(2026, 5, 27, 9, tzinfo=UTC)
    store = DirectoryStore(EXAMPLES)
    results = {i.number: check_body(i.body, now=now) for i in store.list_issues("all")}
    assert results[101].findings == ()  # complete
    assert not results[102].complete  # incomplete
    assert [f.code for f in results[103].findings] == ["AIC304"]  # stale
    assert results[104].block is not None and results[104].block.blockers  # blocked
    assert results[105].block is not None and results[105].block.phase == "in review"
    assert results[106].block is not None and results[106].block.phase == "done"
    assert results[107].findings == ()  # CRLF and tolerated variants


def test_front_matter_errors(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("---\ntitle: x\n---\nbody", encoding="utf-8")
    with pytest.raises(StoreError, match="needs 'number: N'"):
        DirectoryStore(tmp_path)
    (tmp_path / "a.md").write_text("---\nnumber: nope\n---\n", encoding="utf-8")
    with pytest.raises(StoreError, match="number"):
        DirectoryStore(tmp_path)
    with pytest.raises(ValueError, match="no closing"):
        split_front_matter("---\nnumber: 1\n")


def test_body_kept_verbatim(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"---\r\nnumber: 3\r\n---\r\nline one\r\n\r\nline two")
    assert DirectoryStore(tmp_path).get_issue(3).body == "line one\r\n\r\nline two"


@pytest.mark.parametrize(
    ("header", "problem"),
    [
        ("number: 1\nlabels: bug", "labels: Input should be a valid list"),
        ("number: 1\nlabels: [bug, 3]", "labels.1: Input should be a valid string"),
        ("number: 1\nstate: gone", "state: Input should be 'open' or 'closed'"),
        (
            "number: 1\nupdated_at: yesterday",
            "updated_at: Input should be a valid datetime or date, input is too short",
        ),
        ("number: 1\ntitle: [a]", "title: Input should be a valid string"),
        ("number: true", "number: True is not a number"),
        (
            "number: 1\ncomments: many",
            "comments: Input should be a valid integer, unable to parse string as an integer",
        ),
    ],
)
def test_bad_front_matter_is_exit_2_naming_the_field(
    tmp_path: Path, header: str, problem: str
) -> None:
    """pydantic checks the front matter (FrontMatter); its message names the field."""
    path = tmp_path / "a.md"
    path.write_text(f"---\n{header}\n---\nbody", encoding="utf-8")
    with pytest.raises(StoreError) as info:
        DirectoryStore(tmp_path)
    assert str(info.value) == f"{path}: bad front matter: {problem}"
    assert info.value.exit_code == 2


def test_front_matter_as_people_write_it(tmp_path: Path) -> None:
    """A quoted number, a day without a time (midnight UTC), a time without an offset (UTC)."""
    text = '---\nnumber: "7"\nupdated_at: 2026-05-26\nclosed_at: 2026-05-27 10:00:00\n---\nb'
    (tmp_path / "a.md").write_text(text, encoding="utf-8")
    issue = DirectoryStore(tmp_path).get_issue(7)
    assert (issue.number, issue.title, issue.body) == (7, "a", "b")
    assert issue.updated_at == datetime(2026, 5, 26, tzinfo=UTC)
    assert issue.closed_at == datetime(2026, 5, 27, 10, tzinfo=UTC)
