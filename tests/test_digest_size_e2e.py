"""A scheduled digest over 10,000 open tasks posts its comment: under GitHub's 65,536
characters, every task remembered, each category's first rows shown and the rest counted; the
next day, when 6,667 of them went stale, the changes are cut and counted too."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ai_context.rules.digest.state import find_state
from tests.actionrun import run_action
from tests.conftest import SEED_BLOCK
from tests.fakes import GitHubFake

BOT = "github-actions[bot]"
TASKS = 10_000
ROW = re.compile(r"^\| .*?\[\\#\d+\]", re.M)  # each row links its task, `[\#12](...)`


def test_a_digest_of_10000_open_tasks_posts_its_comment(tmp_path: Path) -> None:
    now = datetime(2026, 5, 26, 15, 0, tzinfo=UTC)
    with GitHubFake() as gh:
        for n in range(1, TASKS + 1):
            when = now - timedelta(minutes=n)
            text = SEED_BLOCK if n % 3 else SEED_BLOCK.replace("(chunk 3 of 5)", "blocked")
            gh.add_issue("o/r", f"Task {n}", text, number=n, created_at=when, updated_at=when)
        for day in ("2026-05-26", "2026-05-27"):  # the next day, the tasks in progress are stale
            (tmp_path / day / "workspace/.github").mkdir(parents=True)
            result = run_action(
                tmp_path / day,
                gh.url,
                "schedule",
                {},
                inputs={"jobs": "digest", "max-writes": "500"},
                extra_env={"AI_CONTEXT_NOW": f"{day}T15:00:00Z"},
                timeout=600,
            )
            assert result.code == 0, result.stdout + result.stderr
        (digest_issue,) = [
            i for i in gh.repos["o/r"].issues.values() if "ai-context:digest" in i.labels
        ]
        comments = [c.body for c in gh.comments("o/r", digest_issue.number) if c.user == BOT]
    assert len(comments) == 2
    for comment in comments:
        assert len(comment) <= 65_536
        assert len(find_state(comment).state.tasks) == TASKS
        visible = comment.split("\n[//]: #", 1)[0]
        assert len(visible) > 30_000 and len(ROW.findall(visible)) > 100
        assert "more not shown here (a comment holds 65,536 characters): [the full list]" in visible
    changes = comments[1].split("### Since the last digest", 1)[1].split("\n### ", 1)[0]
    listed = changes.count("in progress → stuck")
    assert 0 < listed < 6_667
    assert f"…and {6_667 - listed} more changes not shown here: [the full list]" in changes
