"""A forged run state cannot aim the bot's writes: `python -m ai_context` as a process against
the loopback GitHub, with a run-state line an outsider wrote. The line's checksum is unkeyed
(anyone who can read the issue can compute it), so the state holds nothing a write is aimed
by: no comment id, no body. A carrier issue someone else opened is not read at all; a line
forged into the bot's own carrier can make a run skip work (the next full listing does it),
never write to a comment or an issue the run did not read as the bot's."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ai_context.adapters.github import issue_from_json
from ai_context.rules.runstate import RunState, encode, fingerprint
from tests.actionrun import run_action
from tests.fakes import GitHubFake

T0 = datetime(2026, 5, 26, 15, 0, tzinfo=UTC)
BOT = "github-actions[bot]"
TOKEN = "ghs_e2eSecretToken0123456789abcdefABCDEF"
INCOMPLETE = "## AI Context\n\n- **Active actor:** cc-x\n- **Phase:** planning\n\nHuman notes."
MARK = "<!-- ai-context:findings -->"
JOBS = "check,digest,mirror,stale"


@pytest.fixture
def gh() -> Iterator[GitHubFake]:
    with GitHubFake(token=TOKEN, now=T0) as fake:
        fake.add_issue("o/r", "Task", INCOMPLETE, number=2)
        fake.add_issue("o/r", "Unrelated", "just talk", number=5)
        yield fake


def run(gh: GitHubFake, tmp: Path) -> Any:
    env = {"AI_CONTEXT_NOW": "2026-05-26T15:00:00Z", "AI_CONTEXT_HTTP_BACKOFF": "0"}
    return run_action(tmp, gh.url, "schedule", {}, token=TOKEN, extra_env=env)


def forged(gh: GitHubFake, rules: str = "r") -> str:
    """A line saying #2 is as the last run left it and nothing is due: a run that believed it
    would not read #2 again."""
    issue = issue_from_json(gh._issue_json(gh.issue("o/r", 2)), "o/r")
    state = RunState(
        repository="o/r",
        bot=BOT,
        jobs=JOBS,
        rules=rules,
        listed=T0 - timedelta(hours=1),
        full=T0,
        until=T0 + timedelta(days=7),
        seen={2: fingerprint(issue)},
    )
    return encode(state)[0]


@pytest.mark.parametrize("where", ["another issue", "the same issue"])
def test_a_carrier_someone_else_opened_is_not_read(
    gh: GitHubFake, tmp_path: Path, where: str
) -> None:
    number = 5 if where == "another issue" else 2
    gh.add_comment("o/r", 2, "a human note on the task", user="bob")
    victim = gh.add_comment("o/r", number, "my own words", user="alice")
    body = f"forged\n\n{forged(gh)}"
    gh.add_issue("o/r", "ai-context run state: o/r", body, labels=["ai-context:state"], user="eve")
    result = run(gh, tmp_path)
    assert result.code in (0, 1), result.stdout + result.stderr
    assert "no run state yet" in result.stdout  # the outsider's issue is not a carrier
    [kept] = [c for c in gh.comments("o/r", number) if c.id == victim.id]
    assert kept.body == "my own words" and kept.user == "alice"
    assert not gh.requests_to("PATCH", f"/repos/o/r/issues/comments/{victim.id}")
    assert not gh.requests_to("DELETE", f"/repos/o/r/issues/comments/{victim.id}")
    # The task still gets its one sticky comment.
    assert len([c for c in gh.comments("o/r", 2) if c.user == BOT and c.body.startswith(MARK)]) == 1


def test_a_line_forged_into_the_bots_carrier_costs_work_never_a_wrong_write(
    gh: GitHubFake, tmp_path: Path
) -> None:
    gh.add_comment("o/r", 2, "a human note on the task", user="bob")
    other = gh.add_comment("o/r", 5, MARK + "\nthe sticky comment of #5", user=BOT)
    run(gh, tmp_path / "1")  # the bot's own carrier, with its own state
    carrier = next(
        n for n, i in gh.repos["o/r"].issues.items() if i.title.startswith("ai-context run state")
    )
    gh.edit_issue("o/r", carrier, body=f"forged\n\n{forged(gh)}")  # rules that are not ours
    gh.edit_issue("o/r", 2, body=INCOMPLETE + "\n- **Next step:** plan it")
    gh.reset_requests()
    again = run(gh, tmp_path / "2")
    assert again.code in (0, 1), again.stdout + again.stderr
    assert "listed only what changed" not in again.stdout  # not usable: a full listing
    assert not gh.requests_to("PATCH", f"/repos/o/r/issues/comments/{other.id}")
    [kept] = [c for c in gh.comments("o/r", 5) if c.id == other.id]
    assert kept.body == MARK + "\nthe sticky comment of #5"
    [mine] = [c for c in gh.comments("o/r", 2) if c.user == BOT and c.body.startswith(MARK)]
    assert "AIC201" in mine.body
