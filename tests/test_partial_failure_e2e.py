"""One failed write does not stop a scheduled run: `python -m ai_context` as a process against
the loopback GitHub, one issue's writes failing."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

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
        fake.add_issue("o/r", "First", INCOMPLETE, number=2)
        fake.add_issue("o/r", "Second", INCOMPLETE, number=3)
        fake.add_issue("o/r", "Third", INCOMPLETE, number=4)
        fake.add_issue("o/r", "Digest", "", number=9, labels=["ai-context:digest"])
        yield fake


def run(gh: GitHubFake, tmp: Path) -> Any:
    env = {"AI_CONTEXT_NOW": "2026-05-26T15:00:00Z", "AI_CONTEXT_HTTP_BACKOFF": "0"}
    return run_action(tmp, gh.url, "schedule", {}, token=TOKEN, extra_env=env)


def stickies(gh: GitHubFake, number: int) -> list[Any]:
    return [c for c in gh.comments("o/r", number) if c.user == BOT and c.body.startswith(MARK)]


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/repos/o/r/issues/3/labels"), ("POST", "/repos/o/r/issues/3/comments")],
    ids=["label", "comment"],
)
def test_a_failed_write_on_one_issue_is_reported_and_the_rest_is_done(
    gh: GitHubFake, tmp_path: Path, method: str, path: str
) -> None:
    gh.fail_next(method, path, status=503, body="", times=None)
    result = run(gh, tmp_path)
    assert result.code == 3, result.stdout + result.stderr
    # The issues before and after the failed one, and the digest, were all done.
    for number in (2, 4):
        assert len(stickies(gh, number)) == 1
        assert "ai-context:incomplete" in gh.issue("o/r", number).labels
    assert any(c.body.startswith("<!-- ai-context:digest") for c in gh.comments("o/r", 9))
    # What failed is said, with GitHub's reason, in the log and in the summary.
    assert "#3" in result.stdout and "503 Service Unavailable" in result.stdout
    assert "(503 )" not in result.text
    assert "failed" in result.summary.lower() and "#3" in result.summary
    assert "Traceback" not in result.stderr


def test_the_next_run_finishes_what_failed(gh: GitHubFake, tmp_path: Path) -> None:
    gh.fail_next("POST", "/repos/o/r/issues/3/labels", status=503, body="", times=None)
    assert run(gh, tmp_path / "1").code == 3
    gh.clear_faults()
    again = run(gh, tmp_path / "2")
    assert again.code == 0, again.stdout + again.stderr
    assert "ai-context:incomplete" in gh.issue("o/r", 3).labels
    assert len(stickies(gh, 3)) == 1


def test_a_comment_post_slower_than_the_timeout_is_not_sent_again(
    gh: GitHubFake, tmp_path: Path
) -> None:
    """The POST lands after the client gave up (15 s): a listing right then misses it, so a
    resend would make a second comment. The run does not resend; the next run's read finds it."""
    landed = threading.Event()
    path = "/repos/o/r/issues/3/comments"
    gh.before("POST", path, lambda _req: time.sleep(16))
    gh.after("POST", path, lambda _req: landed.set())
    result = run(gh, tmp_path / "1")
    assert landed.wait(30)
    assert result.code == 3, result.stdout + result.stderr
    assert "#3" in result.stdout and "did not answer in time" in result.stdout
    assert len(stickies(gh, 3)) == 1  # the slow one, alone
    assert gh.count("POST", path) == 1
    assert len(stickies(gh, 2)) == 1 and len(stickies(gh, 4)) == 1
    again = run(gh, tmp_path / "2")
    assert again.code == 0, again.stdout + again.stderr
    assert len(stickies(gh, 3)) == 1 and gh.count("POST", path) == 1
