"""The sticky comment and our labels: plans for every case, and hostile text stays data."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from ai_context.core.findings import Finding
from ai_context.core.models import Comment, Issue
from ai_context.rules.sticky import (
    LABEL_INCOMPLETE,
    LABEL_INVALID,
    MARKER,
    fit,
    needs_comments,
    plan_comment,
    plan_labels,
    render_findings,
)

BOT = "github-actions[bot]"
ERR = Finding(
    code="AIC201",
    severity="error",
    message="required field 'Phase' is missing",
    line=3,
    hint="Add it.",
)
WARN = Finding(code="AIC105", severity="warning", message="plan step 1 has no status", line=5)


def comment(cid: int, body: str, author: str = BOT, minute: int = 0) -> Comment:
    return Comment(
        id=cid, body=body, author=author, created_at=datetime(2026, 5, 26, 15, minute, tzinfo=UTC)
    )


def test_created_when_findings_and_none_exists() -> None:
    ops = plan_comment(1, [ERR], [comment(5, "human text", "ana")], BOT)
    assert [o.kind for o in ops] == ["create_comment"]
    assert ops[0].body is not None and ops[0].body.startswith(MARKER)


def test_nothing_when_no_findings_and_none_exists() -> None:
    assert plan_comment(1, [], [], BOT) == []


def test_unchanged_comment_is_left_alone() -> None:
    existing = comment(5, render_findings([ERR]))
    assert plan_comment(1, [ERR], [existing], BOT) == []


def test_changed_findings_edit_in_place() -> None:
    existing = comment(5, render_findings([ERR]))
    ops = plan_comment(1, [WARN], [existing], BOT)
    assert [(o.kind, o.comment_id) for o in ops] == [("edit_comment", 5)]


def test_gone_findings_turn_into_all_clear_not_deleted() -> None:
    ops = plan_comment(1, [], [comment(5, render_findings([ERR]))], BOT)
    assert [o.kind for o in ops] == ["edit_comment"]
    assert ops[0].body is not None and "no findings now" in ops[0].body
    assert plan_comment(1, [], [comment(5, ops[0].body)], BOT) == []


def test_race_duplicates_deleted_oldest_kept() -> None:
    body = render_findings([ERR])
    ops = plan_comment(1, [ERR], [comment(8, body, minute=2), comment(7, body, minute=1)], BOT)
    assert [(o.kind, o.comment_id) for o in ops] == [("delete_comment", 8)]


def test_marker_from_someone_else_is_not_ours() -> None:
    forged = comment(5, render_findings([]), author="mallory")
    ops = plan_comment(1, [ERR], [forged], BOT)
    assert [o.kind for o in ops] == ["create_comment"]


def test_hostile_messages_are_escaped() -> None:
    evil = Finding(
        code="AIC103",
        severity="warning",
        message="cannot read: | @here <script>x</script> {{ 7*7 }} [a](b)",
    )
    body = render_findings([evil])
    row = body.splitlines()[5]
    assert len(re.findall(r"(?<!\\)\|", row)) == 6  # the message's | did not add a cell
    assert "<script>" not in body and "@here" not in body and "[a](b)" not in body


def test_long_comment_is_cut_with_notice() -> None:
    many = [
        Finding(code="AIC103", severity="warning", message="x" * 900, line=i) for i in range(200)
    ]
    body = render_findings(many)
    assert len(body) <= 65_536
    assert "more not shown (comment size limit)" in body
    assert fit("h\n", ["r\n"] * 3, "t") == "h\nr\nr\nr\nt"


def issue(labels: tuple[str, ...] = (), comments: int | None = 0) -> Issue:
    return Issue(number=4, title="t", labels=labels, comments=comments)


def test_labels_match_findings() -> None:
    assert [(o.kind, o.labels) for o in plan_labels(issue(), [ERR])] == [
        ("add_labels", (LABEL_INCOMPLETE, LABEL_INVALID))
    ]
    stale = issue((LABEL_INVALID, LABEL_INCOMPLETE, "bug"))
    assert [(o.kind, o.labels) for o in plan_labels(stale, [WARN])] == [
        ("remove_label", (LABEL_INCOMPLETE,)),
        ("remove_label", (LABEL_INVALID,)),
    ]
    assert plan_labels(issue((LABEL_INVALID, LABEL_INCOMPLETE)), [ERR]) == []


def test_comments_read_only_when_needed() -> None:
    assert not needs_comments(issue(comments=0), [ERR])  # no comments: nothing to find
    assert needs_comments(issue(comments=3), [ERR])
    assert not needs_comments(issue(comments=3), [])  # clean and unlabelled
    assert needs_comments(issue((LABEL_INVALID,), comments=1), [])  # must clear
    assert needs_comments(issue(comments=None), [WARN])  # unknown count: read
