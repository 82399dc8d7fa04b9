"""What a job gets in an Action run: the route the event asked for, the run's configuration
(one `Config`, its sections typed) and the run's shared state.

Kept apart from the faces so jobs can take it without importing the Action (which imports them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ai_context import version
from ai_context.adapters.config import Config
from ai_context.adapters.github import GitHub, GitHubNotFound, IssuePage
from ai_context.adapters.workflow import Progress, Workflow
from ai_context.core.errors import ConfigError
from ai_context.core.events import Commit
from ai_context.core.findings import Finding
from ai_context.core.models import Issue
from ai_context.jobs.scan import (
    Scan,
    carriers,
    is_task,
    labelled,
    repositories_of,
    rules_parts,
    save,
    scan,
    scan_other,
)
from ai_context.rules.runstate import rules_key
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
    # Findings jobs that run before check add to an issue's sticky comment (e.g. the mirror's).
    findings: dict[int, list[Finding]] = field(default_factory=dict)
    progress: Progress | None = None
    # The run's GitHub writes against max-writes (RunContext.__post_init__ sets the limit).
    writes: WriteBudget = field(default_factory=lambda: WriteBudget(0))
    _issues: list[Issue] | None = None
    _scans: dict[str, Scan] = field(default_factory=dict)
    _carriers_listed: bool = False
    _repositories: list[str] | None = None

    def __post_init__(self) -> None:
        self.writes.limit = self.settings.max_writes

    def scanned(self) -> Scan:
        """The run's scan of its repository (a schedule or dispatch run), made once: what
        changed since the run state, or every open issue (jobs/scan.py)."""
        return self.scan_of(self.github.repository)

    def scan_of(self, repository: str) -> Scan:
        """The run's scan of REPOSITORY (its own, or one of `repositories:`), made once."""
        key = repository.lower()
        if key not in self._scans:
            settings = self.settings
            kw: dict[str, Any] = dict(
                jobs=",".join(sorted(self.route.jobs)),
                rules=rules_key(version(), *rules_parts(settings)),
                bot=settings.bot_login,
                now=self.now,
                asked=self._full_asked(),
                progress=self._page_read,
            )
            if key == self.github.repository.lower():
                found = scan(self.github, closed="digest" in self.route.jobs, **kw)
            else:  # one `repositories:` names: unknown to GitHub is bad configuration (exit 2)
                carrier = self._carrier(repository)
                try:
                    found = scan_other(
                        self.github.for_repository(repository), self.github, carrier, **kw
                    )
                except GitHubNotFound as exc:
                    raise ConfigError(
                        f"repositories: GitHub shows this token no repository {repository!r} "
                        f"({exc.status}); check the name in the config file, and that the "
                        "token can read it (its GitHub App installed there)"
                    ) from exc
            why = found.full or "listed only what changed since the last run"
            self.workflow.log(
                f"ai-context: {found.repository}: {why}: {len(found.tasks)} task(s) to judge, "
                f"{found.pages} page(s) read"
            )
            self._scans[key] = found
        return self._scans[key]

    def repositories(self) -> list[str]:
        """The run's own repository, then those `repositories:` names (patterns matched
        against their owners' listings, made once a run)."""
        if self._repositories is None:
            home = self.github.repository

            def warn(line: str) -> None:
                self.workflow.annotate("warning", line, title="ai-context: repositories")

            named = repositories_of(
                self.github, self.settings.digest.repositories, log=self.workflow.log, warn=warn
            )
            self._repositories = [home, *(r for r in named if r.lower() != home.lower())]
        return self._repositories

    def _full_asked(self) -> str:
        """Why this run lists every open issue whatever its run state says ('' if not)."""
        if self.settings.full:
            return "asked for (full: true)"
        if "stale" in self.route.jobs and self.settings.stale.max_active_per_actor is not None:
            return "max-active-per-actor counts every actor's tasks"
        return ""

    def _carrier(self, repository: str) -> Issue | None:
        """The carrier (in this repository) of REPOSITORY's run state: among those the scan
        listed, else among all of them (one listing by the label, made once)."""
        home = self.scanned()
        found = carriers(home.ours, self.settings.bot_login).get(repository.lower())
        if found is None and not home.listed_all and not self._carriers_listed:
            self._carriers_listed = True
            found = carriers(labelled(home), self.settings.bot_login).get(repository.lower())
        return found

    def save_scans(self) -> None:
        """Write each scan's run state (after every job, so it tells of their writes)."""
        for found in self._scans.values():
            if not self.writes.allows(1):  # max-writes: the next run lists again, and goes on
                self.workflow.log(f"ai-context: the run state of {found.repository} is left")
                continue
            self.writes.spend(save(found, dry_run=self.settings.dry_run, log=self.workflow.log))

    def _page_read(self, page: IssuePage) -> None:
        if self.progress is not None:
            self.progress.page(page.items, page.last, page.repository)

    def issues(self) -> list[Issue]:
        """The tasks this run is about, fetched once and shared by every job."""
        if self._issues is None:
            if self.route.scan_all:
                self._issues = self.scanned().tasks
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
