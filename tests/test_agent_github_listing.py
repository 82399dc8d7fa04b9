"""GitHub.list_issues filters the agent side relies on (resume step 1), against GitHubFake."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from ai_context.adapters.github import GitHub
from ai_context.core.secret import Secret
from tests.fakes import GitHubFake

T0 = datetime(2026, 5, 26, 9, 0, tzinfo=UTC)


def test_label_sort_and_limit_cost_one_call() -> None:
    with GitHubFake() as fake:
        for n, (who, labels, hours) in enumerate(
            [
                ("ariel", ["in-progress"], 1),
                ("ariel", ["in-progress"], 3),
                ("ariel", [], 5),
                ("noa", ["in-progress"], 7),
            ],
            start=1,
        ):
            fake.add_issue(
                "o/r",
                f"Task {n}",
                labels=labels,
                assignees=[who],
                updated_at=T0 + timedelta(hours=hours),
            )
        fake.add_pull_request("o/r", assignees=["ariel"], labels=["in-progress"])
        gh = GitHub(Secret("t"), "o/r", api_url=fake.url, write_interval=0)
        found = gh.list_issues(labels=["in-progress"], sort="updated", limit=1)
        assert [i.number for i in found] == [4]
        assert fake.count() == 1
        everyone = gh.list_issues(labels=["in-progress"], sort="updated")
        assert [i.number for i in everyone] == [4, 2, 1]
