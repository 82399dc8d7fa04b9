"""The stale owner's mention reaches them in a newly created comment: GitHub may not notify a
mention added by editing a comment. Scheduled runs of the Action against the loopback GitHub;
plans for the marker and the sticky comment's hidden state."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ai_context.core.block.parse import parse
from ai_context.core.findings import Finding
from ai_context.core.hidden import hide
from ai_context.core.models import Comment
from ai_context.jobs.mention import MENTION_MARKER, plan_mention
from ai_context.rules.stale import Verdict
from ai_context.rules.sticky import MARKER
from tests.conftest import SEED_BLOCK
from tests.fakes import GitHubFake
from tests.test_stale_e2e import BOT, block, run


@pytest.fixture
def gh(github_fake: GitHubFake) -> GitHubFake:
    github_fake.add_repo("o/r")
    return github_fake


def ours(gh: GitHubFake, number: int) -> list[str]:
    return [c.body for c in gh.comments("o/r", number) if c.user == BOT]


def mentions(gh: GitHubFake, number: int) -> list[str]:
    return [b for b in ours(gh, number) if b.startswith(MENTION_MARKER)]


def test_a_task_gone_stale_under_an_existing_comment_gets_one_new_mention_comment(
    gh: GitHubFake, tmp_path: Path
) -> None:
    now = datetime.now(UTC)
    gh.add_issue("o/r", "Task", block(now - timedelta(hours=1)), number=1)
    # A first run while the task is fresh but has a finding: the sticky comment exists.
    gh.edit_issue(
        "o/r", 1, body=block(now - timedelta(hours=1)).replace("- **Next step:**", "- Next:")
    )
    run(gh, tmp_path / "1")
    [sticky] = ours(gh, 1)
    assert "@ariel" not in sticky
    # Three days without an update: stale. The sticky comment is edited, and the owner is
    # told in a new comment, which notifies whatever GitHub does with edits.
    gh.edit_issue("o/r", 1, body=block(now - timedelta(days=3)))
    gh.reset_requests()
    run(gh, tmp_path / "2")
    [told] = mentions(gh, 1)
    assert told.splitlines()[1].startswith("@ariel: task #1 looks stale (no update since ")
    assert gh.count("POST", "/repos/{owner}/{repo}/issues/{number}/comments") == 1
    assert gh.count("PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}") == 1
    # Reruns of the same episode tell nobody again, and write nothing. The first reads the
    # comments once more, as after any comment a run made, and notes so in its run state.
    gh.reset_requests()
    run(gh, tmp_path / "3")
    assert gh.count("POST", "/repos/{owner}/{repo}/issues/{number}/comments") == 0
    assert gh.count("PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}") == 0
    gh.reset_requests()
    run(gh, tmp_path / "4")
    assert [r.method for r in gh.requests if r.method != "GET"] == []
    assert len(mentions(gh, 1)) == 1


def test_a_sticky_comment_created_with_the_mention_needs_no_second_comment(
    gh: GitHubFake, tmp_path: Path
) -> None:
    gh.add_issue("o/r", "Task", block(datetime.now(UTC) - timedelta(days=3)), number=1)
    run(gh, tmp_path / "1")
    run(gh, tmp_path / "2")
    [sticky] = ours(gh, 1)  # created with the mention: creating a comment notifies
    assert sticky.startswith(MARKER) and sticky.count("@ariel") == 1


def verdict() -> Verdict:
    stale = Finding(code="AIC601", severity="warning", message="stale", hint="")
    return Verdict(findings=(stale,), mention="ariel", mention_all=True)


def test_the_marker_alone_is_enough_to_never_tell_twice() -> None:
    parsed = parse(SEED_BLOCK).block
    sticky = Comment(id=1, body=f"{MARKER}\nold table", author=BOT)  # its memory was lost
    episode = "ariel 2026-05-26T14:32:00Z"
    told = Comment(id=2, body=f"{MENTION_MARKER}{episode} -->\n@ariel: ...", author=BOT)
    kwargs = {"block": parsed, "verdict": verdict(), "remembered": None, "bot_login": BOT}
    _, state, ops = plan_mention(6, listed=[sticky, told], **kwargs)  # type: ignore[arg-type]
    assert ops == [] and state is not None and state["mentioned"] == episode
    _, _, ops = plan_mention(6, listed=[sticky], **kwargs)  # type: ignore[arg-type]
    assert [op.kind for op in ops] == ["create_comment"]
    assert ops[0].body is not None and ops[0].body.startswith(f"{MENTION_MARKER}{episode} -->")
    remembered = Comment(id=1, body=f"{MARKER}\n{hide(state)}", author=BOT)
    _, _, ops = plan_mention(6, listed=[remembered], **kwargs)  # type: ignore[arg-type]
    assert [op.kind for op in ops] == ["create_comment"]  # memory is passed, not read, here
    _, _, ops = plan_mention(
        6, listed=[remembered], block=parsed, verdict=verdict(), remembered=state, bot_login=BOT
    )
    assert ops == []
