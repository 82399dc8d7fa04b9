"""One mirror run over ClickUp: read the current values (in pages for a full rebuild), compare,
write only what changed, and report. Takes the ClickUp adapter as an argument."""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ai_context.adapters.clickup import (
    ClickUp,
    ClickUpConfigError,
    ClickUpError,
    ClickUpNotFound,
    ClickUpQuotaExceeded,
    ClickUpUnavailable,
)
from ai_context.adapters.templates import Templates
from ai_context.core.findings import Finding
from ai_context.core.models import Issue
from ai_context.rules.actors import ActorMap
from ai_context.rules.mirror.clickup import FieldMatch, Task, resolve_field
from ai_context.rules.mirror.link import IssueKey, Link, issue_key, mirrored_from, taken
from ai_context.rules.mirror.targets import (
    MirrorConfig,
    Target,
    duplicate_field,
    not_found,
    targets,
)
from ai_context.rules.mirror.text import same_value

Result = Literal["written", "would_write", "unchanged", "not_found", "no_field", "skipped"]


@dataclass
class Mirrored:
    """What happened to one issue's mirror."""

    target: Target
    result: Result = "skipped"
    task: Task | None = None

    @property
    def number(self) -> int:
        return self.target.issue.number

    @property
    def task_id(self) -> str:
        """The task's id as ClickUp gave it, else as the link wrote it."""
        return self.task.id if self.task else self.target.link.task_id


@dataclass
class MirrorReport:
    items: list[Mirrored] = field(default_factory=list)
    findings: dict[int, list[Finding]] = field(default_factory=dict)  # issue -> findings
    notes: list[str] = field(default_factory=list)  # one-line, run-wide, not errors
    errors: list[str] = field(default_factory=list)  # run-wide errors
    exit_code: int = 0

    def count(self, result: Result) -> int:
        return sum(1 for item in self.items if item.result == result)

    def fail(self, message: str, exit_code: int) -> None:
        """A run-wide error: said once, and the run's exit code at least EXIT_CODE."""
        self.errors.append(message)
        self.exit_code = max(self.exit_code, exit_code)

    def add_finding(self, number: int, finding: Finding) -> None:
        self.findings.setdefault(number, []).append(finding)


@dataclass
class _Run:
    """One run's state: caches, the notes already given, whether writes may go on."""

    store: ClickUp
    config: MirrorConfig
    team_id: str | None
    dry_run: bool
    log: Callable[[str], None]
    report: MirrorReport = field(default_factory=MirrorReport)
    noted_lists: set[str] = field(default_factory=set)
    writes_stopped: bool = False
    team_checked: bool = False
    # The issues of this run -> the task each one mirrors ("" for none: no block, no link,
    # not trusted): a field naming one of them for another task is a stale claim.
    claims: dict[IssueKey, str] = field(default_factory=dict)
    # The mirror field per list, for tasks that do not carry it themselves.
    by_list: dict[str, FieldMatch] = field(default_factory=dict)

    def resolve(self, task: Task) -> FieldMatch:
        """The mirror field: the task's own fields first, then its list's (read once)."""
        name = self.config.field
        match = resolve_field(task.fields, name)
        if match.status != "missing" or not task.list_id:
            return match
        if task.list_id not in self.by_list:
            try:
                fields = self.store.list_fields(task.list_id)
            except ClickUpNotFound:
                fields = ()
            self.by_list[task.list_id] = resolve_field(fields, name)
        return self.by_list[task.list_id]

    def fetch(self, item: Mirrored) -> Task | None:
        link = item.target.link
        try:
            return self.store.get_task(link.task_id, custom=link.custom, team_id=link.team_id)
        except ClickUpNotFound as exc:
            self._gone(item, exc)
            return None

    def _gone(self, item: Mirrored, exc: ClickUpError) -> None:
        item.result = "not_found"
        detail = f"{exc.status} {exc.code}".strip()
        self.report.add_finding(item.number, not_found(item.target.link, detail))

    def prefetch(self, items: Sequence[Mirrored]) -> dict[str, Task]:
        """Current values for many tasks in pages of 100, filtered by list, else by the field
        (one task read first names its id and the workspace). Paging stops once it would cost
        more reads than reading the rest one by one can save."""
        found: dict[str, Task] = {}
        links = [i.target.link for i in items]
        team = self.team_id or next((link.team_id for link in links if link.team_id), None)
        by_field = not self.config.lists
        custom_fields: str | None = None
        if team is None or by_field:
            for item in items:  # the first task that can be read
                task = self.fetch(item)
                if task is None:
                    continue
                found[item.target.link.key] = item.task = task
                team = team or task.team_id
                if by_field:
                    match = self.resolve(task)
                    if match.status != "found" or match.field is None:
                        return found
                    rule = {"field_id": match.field.id, "operator": "IS NOT NULL"}
                    custom_fields = json.dumps([rule], separators=(",", ":"))
                break
        if team is None:
            return found
        remaining = {
            i.target.link.key
            for i in items
            if i.target.link.key not in found and i.result != "not_found"
        }
        page = 0
        while remaining and page < len(remaining):
            tasks, last = self.store.team_tasks(
                team, page, list_ids=self.config.lists, custom_fields=custom_fields
            )
            page += 1
            for task in tasks:
                for key in _keys(task, team):
                    if key in remaining:
                        found[key] = task
                        remaining.discard(key)
            if last:
                break
        return found

    def check_team(self, task: Task) -> None:
        """A task of another workspace than clickup-team-id says the setting is wrong: each
        task read by id works anyway, but a full rebuild's pages would read the wrong one."""
        if self.team_checked or not self.team_id or not task.team_id:
            return
        self.team_checked = True
        if task.team_id != self.team_id:
            self.report.fail(
                f"clickup-team-id is {self.team_id}, but ClickUp task {task.id} is in workspace "
                f"{task.team_id}: set clickup-team-id to {task.team_id} (the number after "
                "app.clickup.com/ in ClickUp's URLs)",
                2,
            )

    def mirror(self, item: Mirrored, task: Task) -> None:
        item.task = task
        self.check_team(task)
        target = item.target
        match = self.resolve(task)
        if match.status == "duplicate":
            item.result = "no_field"
            finding = duplicate_field(target.link, match, self.config.field, task.list_id)
            self.report.add_finding(item.number, finding)
            return
        if match.status != "found" or match.field is None:
            item.result = "no_field"
            self._note_field(task, match)
            return
        fld = match.field
        current = next((f.value for f in task.fields if f.id == fld.id), None)
        other = mirrored_from(current, target.issue)
        if other is not None and self.claims.get(other, target.link.key) == target.link.key:
            item.result = "skipped"  # another issue's mirror, which this run does not void
            self.report.add_finding(item.number, taken(target.link, other))
            return
        if same_value(current, target.text):
            item.result = "unchanged"
            return
        if self.writes_stopped:
            item.result = "skipped"
            return
        where = f"ClickUp task {task.id} field {self.config.field} from #{item.number}"
        if self.dry_run:
            item.result = "would_write"
            self.log(f"[dry-run] would set {where} ({len(target.text)} chars):")
            old = current if isinstance(current, str) else ""
            for line in diff(old, target.text, task.id, item.number).split("\n"):
                self.log(line)  # a log line is one line (Workflow.log folds newlines)
            return
        try:
            self.store.set_field(task.id, fld.id, target.text)
        except ClickUpNotFound as exc:
            self._gone(item, exc)
            return
        except ClickUpQuotaExceeded as exc:
            item.result = "skipped"
            self.writes_stopped = True
            self.report.fail(str(exc), 2)
            return
        item.result = "written"
        self.log(f"set {where} ({len(target.text)} chars)")

    def _note_field(self, task: Task, match: FieldMatch) -> None:
        if task.list_id in self.noted_lists:
            return
        self.noted_lists.add(task.list_id)
        name = self.config.field
        if match.status == "wrong_type" and match.field is not None:
            self.report.notes.append(
                f"ClickUp field {name} on list {task.list_id} is a {match.field.type} field: "
                f"make it a Text field named {name}"
            )
        elif match.candidates:
            near = ", ".join(f"'{f.name}'" for f in match.candidates)
            self.report.notes.append(
                f"ClickUp field {name} not found on list {task.list_id}, but {near} is there "
                f"(names match exactly): rename it {name} in ClickUp, or set `mirror.field: "
                f"{match.candidates[0].name}` in the config file"
            )
        else:
            self.report.notes.append(
                f"ClickUp field {name} not found on list {task.list_id}: create a Text field "
                f"named {name} at the space level, or name your field in the config file's "
                "`mirror.field`"
            )


def _keys(task: Task, team: str) -> list[str]:
    keys = [task.id]
    if task.custom_id:
        keys.append(Link(task_id=task.custom_id, custom=True, team_id=team).key)
    return keys


def diff(old: str, new: str, task_id: str, number: int) -> str:
    """Old and new field values as a unified diff, for a dry run; every line starts with `| `,
    since a log line of issue or ClickUp text that starts with `::` is a workflow command."""
    lines = difflib.unified_diff(
        old.splitlines(),
        new.splitlines(),
        fromfile=f"ClickUp {task_id} (now)",
        tofile=f"from #{number}",
        lineterm="",
    )
    return "\n".join(f"| {line}" for line in lines)


def run_mirror(
    issues: Sequence[Issue],
    store: ClickUp,
    *,
    config: MirrorConfig,
    templates: Templates,
    team_id: str | None = None,
    full: bool = False,
    dry_run: bool = False,
    log: Callable[[str], None] = print,
    actors: ActorMap | None = None,
) -> MirrorReport:
    """Mirror every linked issue among ISSUES; FULL reads current values in pages. A link is
    followed only when trusted (ACTORS: the config's `actors:`), and a field that mirrors
    another issue (one this run does not see link elsewhere) is not written."""
    run = _Run(store, config, team_id=team_id, dry_run=dry_run, log=log)
    report = run.report
    wanted, findings = templates.run(targets, issues, config=config, team_id=team_id, actors=actors)
    run.claims = {issue_key(i): "" for i in issues}
    run.claims.update({issue_key(t.issue): t.link.key for t in wanted})
    report.findings.update(findings)
    report.items = [Mirrored(t) for t in wanted]
    try:
        known = run.prefetch(report.items) if full and len(report.items) > 1 else {}
        for item in report.items:
            if item.result == "not_found":
                continue
            try:
                task = item.task or known.get(item.target.link.key) or run.fetch(item)
                if task is not None:
                    run.mirror(item, task)
            except (ClickUpConfigError, ClickUpUnavailable):
                raise
            except ClickUpError as exc:  # a refusal about this task alone: the run goes on
                item.result = "skipped"
                report.errors.append(f"#{item.number}: {exc}")
    except ClickUpConfigError as exc:
        report.fail(str(exc), 2)
    except ClickUpError as exc:  # unavailable after retries, or a refused listing
        report.fail(str(exc), 3)
    return report
