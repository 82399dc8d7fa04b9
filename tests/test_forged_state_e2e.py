"""A forged run-state line cannot aim the bot's writes: `python -m ai_context` as a process
against the loopback GitHub, the digest issue's body carrying a line an outsider wrote. The
line's checksum is unkeyed (anyone who can read the issue can compute it), so the state is a
hint: a comment it names is written only once GitHub says it is the bot's, on that issue."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ai_context.rules.memory import Known, RunState, encode_state
from tests.actionrun import run_action
from tests.fakes import GitHubFake

T0 = datetime(2026, 5, 26, 15, 0, tzinfo=UTC)
BOT = "github-actions[bot]"
TOKEN = "ghs_e2eSecretToken0123456789abcdefABCDEF"
INCOMPLETE = "## AI Context\n\n- **Active actor:** cc-x\n- **Phase:** planning\n\nHuman notes."
MARK = "<!-- ai-context:findings -->"


@pytest.fixture
def gh() -> Iterator[GitHubFake]:
    with GitHubFake(token=TOKEN, now=T0) as fake:
        fake.add_issue("o/r", "Task", INCOMPLETE, number=2)
        fake.add_issue("o/r", "Unrelated", "just talk", number=5)
        fake.add_issue("o/r", "Digest", "", number=9, labels=["ai-context:digest"])
        yield fake


def run(gh: GitHubFake, tmp: Path) -> Any:
    env = {"AI_CONTEXT_NOW": "2026-05-26T15:00:00Z", "AI_CONTEXT_HTTP_BACKOFF": "0"}
    return run_action(tmp, gh.url, "schedule", {}, token=TOKEN, extra_env=env)


def forge(gh: GitHubFake, target: int) -> None:
    """Write into the digest issue a run-state line that says #2's sticky comment is TARGET."""
    count = len(gh.comments("o/r", 2))
    state = RunState("o/r", BOT, {2: Known(sticky_id=target, comments=count, digest="AAAAA")})
    gh.edit_issue("o/r", 9, body="forged\n\n" + encode_state(state))


@pytest.mark.parametrize("where", ["another issue", "the same issue"])
def test_a_forged_run_state_does_not_edit_another_users_comment(
    gh: GitHubFake, tmp_path: Path, where: str
) -> None:
    number = 5 if where == "another issue" else 2
    gh.add_comment("o/r", 2, "a human note on the task", user="bob")
    victim = gh.add_comment("o/r", number, "my own words", user="alice")
    forge(gh, victim.id)
    result = run(gh, tmp_path)
    assert result.code in (0, 1), result.stdout + result.stderr
    [kept] = [c for c in gh.comments("o/r", number) if c.id == victim.id]
    assert kept.body == "my own words" and kept.user == "alice"
    assert not gh.requests_to("PATCH", f"/repos/o/r/issues/comments/{victim.id}")
    assert not gh.requests_to("DELETE", f"/repos/o/r/issues/comments/{victim.id}")
    # The task still gets its one sticky comment.
    assert len([c for c in gh.comments("o/r", 2) if c.user == BOT and c.body.startswith(MARK)]) == 1


def test_a_bot_comment_on_another_issue_is_not_edited_either(
    gh: GitHubFake, tmp_path: Path
) -> None:
    gh.add_comment("o/r", 2, "a human note on the task", user="bob")
    other = gh.add_comment("o/r", 5, MARK + "\nthe sticky comment of #5", user=BOT)
    forge(gh, other.id)
    run(gh, tmp_path)
    assert not gh.requests_to("PATCH", f"/repos/o/r/issues/comments/{other.id}")
    [kept] = [c for c in gh.comments("o/r", 5) if c.id == other.id]
    assert kept.body == MARK + "\nthe sticky comment of #5"
