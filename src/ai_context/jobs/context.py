"""What a job gets in an Action run: the route the event asked for, the run's configuration
(one `Config`, its sections typed) and the run's shared state.

Kept apart from the faces so jobs can take it without importing the Action (which imports them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from ai_context.adapters.clients import GITHUB_API_URL
from ai_context.adapters.config import Config
from ai_context.adapters.github import GitHub, GitHubNotFound
from ai_context.adapters.workflow import Workflow
from ai_context.core.events import Commit
from ai_context.core.findings import Finding
from ai_context.core.models import Issue
from ai_context.jobs.comments import is_task
from ai_context.rules.sticky import WriteBudget


@dataclass
class Route:
    """What one event asks for: the jobs, and either given issues or a full scan."""

    jobs: tuple[str, ...]
    issues: list[Issue] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)
    scan_all: bool = False
    skipped: str = ""
    commits: list[Commit] = field(default_factory=list)  # a push's commits, oldest first


@dataclass
class RunContext:
    """Everything a job needs in an Action run; jobs add to outputs, summary and stats."""

    settings: Config
    github: GitHub
    workflow: Workflow
    now: datetime
    route: Route
    outputs: dict[str, str] = field(default_factory=dict)
    summary: list[str] = field(default_factory=list)
    api_calls: dict[str, Callable[[], int]] = field(default_factory=dict)
    exit_codes: list[int] = field(default_factory=list)
    event: str = ""
    # The environment holds the tokens: never in a repr, a log line or a traceback's locals.
    workflow_env: Mapping[str, str] = field(default_factory=dict, repr=False)
    github_api_url: str = GITHUB_API_URL
    # Findings jobs that run before check add to an issue's sticky comment (e.g. the mirror's).
    findings: dict[int, list[Finding]] = field(default_factory=dict)
    # The run's GitHub writes against max-writes (RunContext.__post_init__ sets the limit).
    writes: WriteBudget = field(default_factory=lambda: WriteBudget(0))
    _issues: list[Issue] | None = None
    _open: list[Issue] | None = None

    def __post_init__(self) -> None:
        self.writes.limit = self.settings.max_writes

    def open_issues(self) -> list[Issue]:
        """Every open issue of the repository, listed once per run (100 a page)."""
        if self._open is None:
            self._open = self.github.list_issues("open")
        return self._open

    def issues(self) -> list[Issue]:
        """The tasks this run is about, fetched once and shared by every job."""
        if self._issues is None:
            if self.route.scan_all:
                self._issues = [issue for issue in self.open_issues() if is_task(issue)]
            else:
                self._issues = _issues_for(self.route, self.github, self.workflow)
        return self._issues


Job = Callable[[RunContext], None]


def _issues_for(plan: Route, github: GitHub, wf: Workflow) -> list[Issue]:
    issues = list(plan.issues)
    for number in plan.numbers:
        try:
            issue = github.get_issue(number)
        except GitHubNotFound:
            wf.log(f"ai-context: #{number} named by a commit does not exist; skipped")
            continue
        if issue.is_pull_request:  # "Merge pull request #7" names a PR, not a task
            wf.log(f"ai-context: #{number} named by a commit is a pull request; skipped")
            continue
        issues.append(issue)
    return [issue for issue in issues if is_task(issue)]


def threshold_hit(findings: Sequence[Finding], settings: Config) -> int:
    """1 when a finding reaches the user's fail-on threshold, else 0."""
    levels = {"error": ("error",), "warning": ("error", "warning")}.get(settings.fail_on, ())
    return 1 if any(f.severity in levels for f in findings) else 0
