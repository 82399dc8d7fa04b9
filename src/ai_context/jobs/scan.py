"""The scan of a scheduled run: which issues its jobs judge, read as cheaply as the run state
allows, and the run state written back once the jobs are done (imperative shell).

Listings are of open issues, most recently updated first. The run state lives in an issue of
the repository that runs the Action (the carrier, labelled `ai-context:state`), written at the
end of every run that changed something: the first page of the listing brings it, and the run
reads on only while issues are newer than its time. Judged are every open task on a full
listing, else the tasks changed since the last run and those whose `due` minute has come.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from ai_context.adapters.config import Config
from ai_context.adapters.github import GitHub, GitHubNotFound, IssuePage
from ai_context.core.block.locate import find
from ai_context.core.errors import ConfigError
from ai_context.core.models import Issue
from ai_context.rules import runstate
from ai_context.rules.repositories import Selector, owners_to_list, select
from ai_context.rules.runstate import MAX_AGE, Mark, RunState, fingerprint
from ai_context.rules.sticky import MAX_COMMENT, OWNED_LABELS

STATE_LABEL = "ai-context:state"
DIGEST_LABEL = "ai-context:digest"
CARRIER_TEXT = (
    "ai-context keeps its run state for {repository} here: a hidden line below remembers "
    "what its last scheduled run saw, so the next run reads only what changed. Leave this "
    "issue open; deleting the line (or closing the issue) costs one full run."
)
SLACK = timedelta(minutes=10)  # how far a state's times may run ahead of GitHub's and the run's


def carrier_title(repository: str) -> str:
    return f"ai-context run state: {repository}"


def is_task(issue: Issue) -> bool:
    """An issue is a task when its body has a block (or it still wears our labels)."""
    return bool(find(issue.body)) or any(label in OWNED_LABELS for label in issue.labels)


def carriers(issues: list[Issue], bot: str) -> dict[str, Issue]:
    """The bot's carriers among ISSUES by the repository (lower case) whose state they hold,
    named by the title, else by a state line; the oldest of two."""
    found: dict[str, Issue] = {}
    prefix = carrier_title("").lower()
    for issue in sorted(issues, key=lambda i: -i.number):
        if STATE_LABEL not in issue.labels or (issue.author or "").lower() != bot.lower():
            continue
        title = issue.title.lower()
        names = {title.removeprefix(prefix)} if title.startswith(prefix) else set()
        if not names:
            names = {runstate.named(line, "repo") or "" for line in runstate.lines(issue.body)}
        for name in names - {""}:
            found[name] = issue
    return found


@dataclass
class Judged:
    """A task as the run left it: the issue after its writes, its next due minute, whether the
    run wrote to it (moving its `updated_at` past the listing's), its findings' mark."""

    issue: Issue
    due: datetime | None = None
    wrote: bool = False
    mark: Mark | None = None


@dataclass
class Scan:
    """One repository's scan: what the jobs judge, and what the next run state will hold.
    GITHUB serves the repository scanned, HOME the one holding the carriers."""

    github: GitHub
    home: GitHub
    jobs: str
    rules: str
    bot: str
    now: datetime
    full: str = ""  # why every open issue was listed; '' when only what changed
    previous: RunState | None = None
    carrier: Issue | None = None
    tasks: list[Issue] = field(default_factory=list)
    others: list[Issue] = field(default_factory=list)  # listed issues that are no tasks (no body)
    ours: list[Issue] = field(default_factory=list)  # our carriers and digest issue, as listed
    closed: list[Issue] | None = None  # closed since the last run, when the listing showed them
    listed: datetime | None = None  # from when the next run lists (`_mark_listed`)
    started: datetime | None = None  # GitHub's clock when the listing began
    # Issues listed again but unchanged: their fingerprint and updated_at.
    kept: dict[int, tuple[str, datetime | None]] = field(default_factory=dict)
    judged: dict[int, Judged] = field(default_factory=dict)
    pages: int = 0
    facts: str | None = None  # the digest's facts this run left (None: as the last run left)
    changes: datetime | None = None  # when time next moves a digest task (set with facts)
    listed_all: bool = False  # every open issue was listed (ours among them)

    @property
    def repository(self) -> str:
        return self.github.repository

    @property
    def first_seen(self) -> datetime:
        """When the scheduled runs first saw this repository's tasks (the state's, else now)."""
        prev = self.previous
        return prev.first if prev is not None and prev.first is not None else self.now

    def remembered(self) -> dict[int, Mark]:
        """The marks of the open tasks this run did not judge, as the last run left them."""
        prev = self.previous
        if self.full or prev is None:
            return {}
        return {n: m for n, m in prev.marks.items() if n not in self.judged}

    def state(self) -> RunState:
        """The run state this scan leaves: dues of the tasks judged now and of the unchanged
        ones carried over; fingerprints of what the next listing shows again."""
        prev = self.previous
        if self.full or prev is None:
            until, full_at, dues, marks = self.now + MAX_AGE, self.now, {}, {}
        else:
            until, full_at, dues, marks = prev.until, prev.full, dict(prev.due), dict(prev.marks)
        listed = max([t for t in (self.listed, prev.listed if prev else None) if t], default=None)
        near = listed or self.now
        seen = {n: p for n, (p, when) in self.kept.items() if when is None or when >= near}
        for task in self.tasks:  # listed, and judged by no job (a run without the check)
            if task.number not in self.judged and _after(task, near):
                seen[task.number] = fingerprint(task)
        for number, judged in self.judged.items():
            dues.pop(number, None)
            marks.pop(number, None)
            if judged.due is not None:
                dues[number] = judged.due
            if judged.mark is not None:
                marks[number] = judged.mark
            if judged.issue.state == "open" and (judged.wrote or _after(judged.issue, near)):
                seen[number] = fingerprint(judged.issue)
        for number in [n for n, when in dues.items() if when >= until]:
            del dues[number]
        count = len(self.tasks) if self.full else (prev.tasks if prev else 0)
        facts = self.facts if self.facts is not None else (prev.facts if prev else "")
        changes = self.changes if self.facts is not None else (prev.changes if prev else None)
        return RunState(
            repository=self.repository,
            bot=self.bot,
            jobs=self.jobs,
            rules=self.rules,
            listed=listed or self.now,
            full=full_at,
            until=until,
            tasks=count,
            first=self.first_seen,
            due=dues,
            seen=seen,
            facts=facts,
            changes=changes,
            marks=marks,
        )

    @property
    def changed(self) -> bool:
        """Anything to judge or report this run: a task changed, came, went or fell due."""
        return bool(self.full or self.tasks or self.others or self.closed)


def scan(
    github: GitHub,
    *,
    jobs: str,
    rules: str,
    bot: str,
    now: datetime,
    asked: str,
    progress: Callable[[IssuePage], None],
    closed: bool = False,
) -> Scan:
    """Scan the repository GITHUB serves (the one that holds its own carrier): what changed
    since its run state, or every open issue when the state is not usable or ASKED says why.
    CLOSED: the issues closed since too (the digest); the carrier is then looked for on the
    first page or by its label."""
    out = Scan(github=github, home=github, jobs=jobs, rules=rules, bot=bot, now=now)
    pages = _pages(github, "all" if closed else "open", None, progress)
    read: list[Issue] = []
    for page in pages:
        _read(out, read, page)
        out.carrier = out.carrier or carriers(page.issues, bot).get(github.repository.lower())
        if page.number == 1:  # what changes from now on is newer than this
            _mark_listed(out, page)
        if out.carrier is not None or closed:
            break
    if out.carrier is None and closed:
        out.carrier = carriers(labelled(out), bot).get(github.repository.lower())
    _read_state(out, asked)
    if not out.full:
        assert out.previous is not None
        since = out.previous.listed
        while read and read[-1].updated_at is not None and read[-1].updated_at >= since:
            more = next(pages, None)
            if more is None:
                break
            _read(out, read, more)
        listed = [i for i in read if i.updated_at is None or i.updated_at >= since]
        if closed:
            out.closed = [i for i in listed if i.state == "closed"]
        _incremental(out, [i for i in listed if i.state == "open"], read)
        if not out.full:
            return out
        out.closed = None
    if closed:  # every open issue, from a listing of those alone
        read, pages = [], _pages(github, "open", None, progress)
    for page in pages:
        _read(out, read, page)
    _sort(out, read)
    out.listed_all = True
    return out


def _sort(out: Scan, issues: list[Issue]) -> None:
    """ISSUES (every open one listed) into the scan's tasks and its other issues (no body)."""
    for issue in issues:
        if not _ours(issue):
            if is_task(issue):
                out.tasks.append(issue)
            else:
                out.others.append(_light(issue))


def _read(out: Scan, read: list[Issue], page: IssuePage) -> None:
    out.pages += 1
    read += page.issues
    out.ours += [i for i in page.issues if _ours(i) and i.state == "open"]


def labelled(out: Scan) -> list[Issue]:
    """The open carriers, by their label (one listing), added to OUT's own issues."""
    found = out.github.list_issues("open", labels=[STATE_LABEL])
    out.ours += [i for i in found if i.number not in {o.number for o in out.ours}]
    return found


def _after(issue: Issue, when: datetime) -> bool:
    return issue.updated_at is None or issue.updated_at >= when


def _light(issue: Issue) -> Issue:
    """An issue that is no task, without its body (the digest only names it)."""
    return replace(issue, body="")


def _ours(issue: Issue) -> bool:
    """One of ai-context's own issues (a carrier, the digest issue): never a task."""
    return STATE_LABEL in issue.labels or DIGEST_LABEL in issue.labels


def repositories_of(
    github: GitHub,
    selectors: Sequence[Selector],
    *,
    log: Callable[[str], None],
    warn: Callable[[str], None],
) -> list[str]:
    """The repositories `repositories:` names: exact names as written, at no cost; each owner
    a pattern names listed once (ceil(repositories/100) calls, one more for a user). LOG says
    what each pattern chose and left out, WARN that one chose nothing; an owner GitHub does
    not know is bad configuration (exit 2)."""
    listed = {}
    for owner in owners_to_list(selectors):
        try:
            listed[owner.lower()] = github.owner_repositories(owner)
        except GitHubNotFound as exc:
            raise ConfigError(
                f"repositories: GitHub shows this token no organisation or user {owner!r} "
                f"({exc.status}); check the owner's name in the config file, and that the "
                "token's GitHub App is installed there"
            ) from exc
    chosen = select(selectors, listed)
    for line in chosen.notes:
        log(f"ai-context: repositories: {line}")
    for line in chosen.empty:
        warn(f"repositories: {line}")
    return chosen.names


def scan_other(
    github: GitHub,
    home: GitHub,
    carrier: Issue | None,
    *,
    jobs: str,
    rules: str,
    bot: str,
    now: datetime,
    asked: str,
    progress: Callable[[IssuePage], None],
) -> Scan:
    """Scan another repository of the run (`repositories:`), whose CARRIER is in HOME: every
    issue updated since a usable state, open or closed, else every open issue."""
    out = Scan(github=github, home=home, jobs=jobs, rules=rules, bot=bot, now=now)
    out.carrier = carrier
    _read_state(out, asked)
    read: list[Issue] = []
    if not out.full:
        assert out.previous is not None
        for page in _pages(github, "all", out.previous.listed, progress):
            _read(out, read, page)
            if page.number == 1:
                _mark_listed(out, page)
        out.closed = [i for i in read if i.state == "closed"]
        _incremental(out, [i for i in read if i.state == "open"], read)
        if not out.full:
            return out
        out.closed, read = None, []
    for page in _pages(github, "open", None, progress):
        _read(out, read, page)
        if page.number == 1:
            _mark_listed(out, page)
    _sort(out, read)
    out.listed_all = True
    return out


def _pages(
    github: GitHub,
    state: str,
    since: datetime | None,
    progress: Callable[[IssuePage], None],
) -> Iterator[IssuePage]:
    for page in github.issue_pages(state, sort="updated", since=since):
        progress(page)
        yield page


def _mark_listed(out: Scan, page: IssuePage) -> None:
    """From when the next run lists: the second after the newest edit the first page shows,
    unless that is within MARGIN of GitHub's answer (an edit a moment older may still be in
    flight): then MARGIN before the answer (or the edit, when GitHub sent no date)."""
    out.started = page.date
    times = [i.updated_at for i in page.issues if i.updated_at and STATE_LABEL not in i.labels]
    if not times:
        return
    newest = max(times)
    settled = page.date - runstate.MARGIN if page.date else newest - runstate.MARGIN
    out.listed = newest + timedelta(seconds=1) if newest < settled else settled


def _read_state(out: Scan, asked: str) -> None:
    """The carrier's state for this run, when its times agree with GitHub's (before the
    carrier's `updated_at`, not ahead of the run's clock), and why the run lists in full."""
    out.previous = _usable(out.carrier, out) if out.carrier else None
    why = "the run state is unreadable, another version's, or for other settings"
    if out.carrier is None:
        why = "no run state yet"
    out.full = runstate.full_reason(out.previous, now=out.now, asked=asked, why_none=why)


def _usable(carrier: Issue, out: Scan) -> RunState | None:
    state = runstate.decode(carrier.body, out.repository, out.bot, out.jobs)
    if state is None or state.rules != out.rules:
        return None
    stamp = carrier.updated_at
    if stamp is not None and state.listed > stamp + SLACK:
        return None
    if state.full > out.now + SLACK or state.until > out.now + MAX_AGE + SLACK:
        return None
    return state


def _incremental(out: Scan, listed: list[Issue], read: list[Issue]) -> None:
    """The tasks to judge from an incremental listing LISTED: those changed since the last run
    and those due (from the pages READ, else read one by one), unless listing every open
    issue costs less (then OUT.full says so, and the caller lists on)."""
    prev = out.previous
    assert prev is not None
    for issue in listed:
        if _ours(issue) or not is_task(issue):
            continue
        if runstate.changed(issue, prev):
            out.tasks.append(issue)
        else:
            out.kept[issue.number] = (fingerprint(issue), issue.updated_at)
    out.others = [_light(i) for i in listed if not is_task(i) and not _ours(i)]
    on_pages = {i.number: i for i in [*read, *listed]}
    judging = {i.number for i in out.tasks}
    due = [n for n in prev.due_now(out.now) if n not in judging]
    unread = [n for n in due if n not in on_pages]
    if len(unread) > max(-(-prev.tasks // 100) - out.pages, 0) + 1:
        out.full = f"{len(unread)} tasks are due, more than listing the rest costs"
        out.tasks, out.kept, out.others = [], {}, []
        return
    for number in due:
        out.kept.pop(number, None)
        found = on_pages[number] if number in on_pages else _read_due(out, number)
        if found is not None and found.state == "open" and is_task(found):
            out.tasks.append(found)
        else:
            out.judged[number] = Judged(Issue(number=number, title="", state="closed"))


def _read_due(out: Scan, number: int) -> Issue | None:
    try:
        issue = out.github.get_issue(number)
    except GitHubNotFound:
        return None
    return None if issue.is_pull_request else issue


def ensure_carrier(found: Scan, *, log: Callable[[str], None], line: str = "") -> Issue:
    """The scan's carrier, created now (holding LINE) when the repository has none yet."""
    if found.carrier is None:
        text = CARRIER_TEXT.format(repository=found.repository)
        body = f"{text}\n\n{line}" if line else text
        title = carrier_title(found.repository)
        found.carrier = found.home.create_issue(title, body, [STATE_LABEL])
        log(f"ai-context: created #{found.carrier.number} to hold the run state")
    return found.carrier


def save(found: Scan, *, dry_run: bool, log: Callable[[str], None]) -> int:
    """Write the scan's run state into its carrier when it changed (creating the carrier the
    first time): a conditional re-read, one PATCH and a read of the edit history
    (jobs/bodywrite.py). Returns the writes made (in a dry run, that would be)."""
    state = found.state()
    carrier = found.carrier
    limit = runstate.MAX_ENCODED
    if carrier is not None:  # the body holds 65,536 characters, the text around ours included
        own = sum(len(line) for line in runstate.lines(carrier.body))
        limit = min(limit, MAX_COMMENT - (len(carrier.body) - own) - 4)
    line, kept = runstate.encode(state, limit)
    if carrier is not None and line in runstate.lines(carrier.body):
        return 0
    if found.previous is not None and _same(found.previous, kept) and not _moved(found, kept):
        return 0  # only the time moved: the next run lists a little more, for free
    what = f"run state of {found.repository}: {len(kept.due)} due, {len(kept.seen)} seen"
    if dry_run:
        log(f"[dry-run] would write the {what}")
        return 1
    github = found.home
    if carrier is None:
        log(f"ai-context: {what} (#{ensure_carrier(found, log=log, line=line).number})")
        return 1
    from ai_context.jobs.bodywrite import commit_body  # noqa: PLC0415 - a run that writes
    from ai_context.rules.overwrite import Region  # noqa: PLC0415

    github.pace_write()  # before the re-read, so the PATCH goes on what GitHub holds
    fresh = github.get_issue(carrier.number, known=carrier)
    jobs = found.jobs
    region = Region(
        own=lambda body: runstate.line_of(body, jobs),
        put=lambda body: runstate.replace_line(body, line, jobs),
    )
    planned = runstate.replace_line(fresh.body, line, jobs)
    done = commit_body(github, carrier.number, read=fresh.body, planned=planned, region=region)
    if not done.landed:
        log(f"ai-context: run state not written on #{carrier.number}: {done.problem}")
        return done.writes
    log(f"ai-context: {what} (#{carrier.number})")
    return done.writes


def _moved(found: Scan, new: RunState) -> bool:
    """Worth moving `listed` on: issues changed, or a page's worth of unchanged ones was listed
    again."""
    prev = found.previous
    if prev is None or new.listed == prev.listed:
        return False
    return bool(found.tasks or found.others or found.closed or len(found.kept) >= 100)


def _same(old: RunState, new: RunState) -> bool:
    """The same dues, marks, fingerprints and bounds: nothing worth a write."""
    return (
        old.due == new.due
        and old.marks == new.marks
        and old.full == new.full
        and old.until == new.until
        and old.facts == new.facts
        and old.changes == new.changes
        and all(old.seen.get(n) == p for n, p in new.seen.items())
    )


# Settings that do not change a finding (`config` is where the file is: its sections count).
_NOT_RULES = frozenset(
    {"config", "github_token", "clickup_token", "slack_webhook_url", "now", "dry_run", "full"}
    | {"max_writes", "write_interval", "http_retries", "http_backoff"}
)


def rules_parts(config: Config) -> list[object]:
    """What the findings depend on besides the issues, for runstate.rules_key: the settings
    (not the secrets, the clock, or how the run writes) and the config file's sections."""
    names = sorted(set(type(config).model_fields) - _NOT_RULES)
    settings = [(name, str(getattr(config, name))) for name in names]
    sections = [config.check, config.stale, config.lease, config.mirror]
    digest = [config.digest] if config.digest_on else []
    actors = [repr(actor) for actor in config.actors.actors]  # the map's repr is its address
    return [settings, actors, *(repr(section) for section in [*sections, *digest])]
