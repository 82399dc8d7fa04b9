"""Stale and conflicting actors: rules per open task, judged from the block and git (pure).

Never from the issue's `updated_at`, which the bot's own comments and labels move: the
block's Last updated, the lease and the commits that name the issue are the only activity.
AIC601 stale and AIC602 lease expired (warnings) call for `ai-context:stale`; AIC603 claim
race and AIC604 two actors (errors) for `ai-context:conflict`; AIC605 hoarding is a warning.
The evidence behind the findings is remembered in the sticky comment, so a run that cannot
gather it (an `issues` event) judges from the same facts and the comment does not flap.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ai_context.core.block.model import Block, format_timestamp
from ai_context.core.block.parse import Parsed, parse
from ai_context.core.duration_field import AwareTime
from ai_context.core.durations import format_duration
from ai_context.core.events import Commit
from ai_context.core.fields import time_after
from ai_context.core.findings import Finding
from ai_context.core.models import Issue
from ai_context.core.phases import is_terminal
from ai_context.rules.actors import ActorMap
from ai_context.rules.checks import CheckResult
from ai_context.rules.lease import LeaseRecord
from ai_context.rules.stale_config import StaleConfig

STALE_CODES = frozenset({"AIC601", "AIC602"})
CONFLICT_CODES = frozenset({"AIC603", "AIC604"})
SUPERSEDED = "AIC304"  # the block check's own stale warning: AIC601 says it, with an owner
MAX_REMEMBERED_COMMITS = 20
STATE_KEY = "stale"


class CommitSeen(BaseModel):
    """What the sticky comment remembers of a commit that names issues: small, so twenty of
    them fit in its hidden state."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    sha: str = ""
    author_email: str = ""
    author_name: str = ""
    author_login: str = ""
    timestamp: AwareTime
    issues: tuple[int, ...] = ()

    @property
    def identities(self) -> tuple[str, ...]:
        return tuple(i for i in (self.author_email, self.author_login, self.author_name) if i)

    @property
    def key(self) -> tuple[str, ...]:
        return (self.sha,) if self.sha else (*self.identities, self.timestamp.isoformat())


def push_commits(commits: Iterable[Commit], named: Callable[[str], list[int]]) -> list[CommitSeen]:
    """What the stale rules remember of each commit: its author's identities, its time, and
    the issues its message names (NAMED parses)."""
    kept = set(CommitSeen.model_fields) - {"issues"}
    return [
        CommitSeen(**commit.model_dump(include=kept), issues=tuple(named(commit.message)))
        for commit in commits
    ]


class Evidence(BaseModel):
    """What a run knows about one task beyond its block. None or False means not known."""

    model_config = ConfigDict(frozen=True)

    lease: LeaseRecord | None = None
    previous: LeaseRecord | None = None  # the lease record the current one replaced
    leases_read: bool = False  # lease/previous reflect a read of the ref
    commits: tuple[CommitSeen, ...] = ()
    active: tuple[int, ...] | None = None  # open tasks of the Active actor, when counted
    active_actor: str = ""  # whose tasks `active` counts

    def merged(self, fresh: Evidence) -> Evidence:
        """FRESH where this run read it, else what was remembered; commits from both."""
        commits = {c.key: c for c in (*self.commits, *fresh.commits)}
        lease_from = fresh if fresh.leases_read else self
        count_from = fresh if fresh.active is not None else self
        return Evidence(
            lease=lease_from.lease,
            previous=lease_from.previous,
            leases_read=lease_from.leases_read,
            commits=tuple(sorted(commits.values(), key=lambda c: (c.timestamp, c.sha))),
            active=count_from.active,
            active_actor=count_from.active_actor,
        )

    def state(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_defaults=True)

    @classmethod
    def from_state(cls, remembered: Mapping[str, Any] | None) -> Evidence:
        """Evidence remembered in the sticky comment; anything unreadable is forgotten."""
        data = (remembered or {}).get(STATE_KEY)
        if not isinstance(data, Mapping):
            return cls()
        try:
            return cls.model_validate(data)
        except ValidationError:
            return cls()


def active_tasks(
    tasks: Iterable[tuple[int, Block | None]], actors: ActorMap, config: StaleConfig
) -> dict[str, tuple[int, ...]]:
    """Open, non-terminal tasks per actor (aliases counted as one actor)."""
    out: dict[str, list[int]] = {}
    for number, block in tasks:
        if block is None or not block.actor or is_terminal(block.phase):
            continue
        out.setdefault(actors.name(block.actor), []).append(number)
    return {actor: tuple(sorted(numbers)) for actor, numbers in out.items()}


class Verdict(BaseModel):
    """One task's findings, whom to mention while it is stale, and the evidence REMEMBERED.
    STALE_SINCE, SEEN (when the scheduled runs first saw the tasks) and MENTION_ALL let
    jobs/mention.py mention only stale episodes ai-context saw begin."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    findings: tuple[Finding, ...] = ()
    mention: str | None = None
    remembered: Evidence = Evidence()
    stale_since: datetime | None = None
    seen: datetime | None = None
    mention_all: bool = False

    @property
    def codes(self) -> set[str]:
        return {f.code for f in self.findings}

    @property
    def stale(self) -> bool:
        return bool(self.codes & STALE_CODES)

    @property
    def conflict(self) -> bool:
        return bool(self.codes & CONFLICT_CODES)

    @property
    def supersedes(self) -> frozenset[str]:
        return frozenset({SUPERSEDED}) if "AIC601" in self.codes else frozenset()

    def state(self) -> dict[str, Any] | None:
        kept = self.remembered.state()
        return {STATE_KEY: kept} if kept else None


def judge(
    number: int,
    parsed: Parsed,
    evidence: Evidence,
    *,
    now: datetime,
    config: StaleConfig,
    actors: ActorMap,
) -> Verdict:
    """Every stale rule over one open task. Terminal tasks have nothing to answer for."""
    block = parsed.block
    if block is None or is_terminal(block.phase):
        return Verdict()
    now = now.astimezone(UTC)
    lines = parsed.field_lines
    actor_line = lines.get("actor")
    findings: list[Finding] = []
    kept: dict[str, Any] = {}  # the evidence behind the findings, for runs that cannot gather it

    def warn(code: str, message: str, line: int | None, hint: str) -> None:
        findings.append(Finding(code, "warning", message, line, hint))

    stamp = block.last_updated
    if stamp is not None and config.stale_after < now - stamp:
        warn(
            "AIC601",
            f"stale: Last updated {format_timestamp(stamp)} is older than "
            f"{format_duration(config.stale_after)} and Phase is '{block.phase or ''}'",
            lines.get("last_updated"),
            "The Active actor saves a checkpoint, hands the task off, or sets Phase "
            "to done. Comments and labels do not count as activity.",
        )

    lease = evidence.lease
    if lease is not None and lease.expired(now):
        warn(
            "AIC602",
            f"the lease of {lease.actor} on #{number} expired at "
            f"{format_timestamp(lease.expires)} without renewal",
            actor_line,
            f"{lease.actor} renews it (ai-context renew {number} --actor "
            f"{lease.actor}) or releases it; another actor may now claim it.",
        )
        kept.update(lease=lease, leases_read=True)

    if block.actor:
        race = _race(block, evidence.commits, number, actors)
        if race:
            findings.append(_race_finding(block, race, number, actor_line, actors))
            kept.update(commits=race[-MAX_REMEMBERED_COMMITS:])
        two = _two_actors(block.actor, evidence, now, config, actors)
        if two is not None:
            findings.append(replace(two, line=actor_line))
            kept.update(lease=lease, previous=evidence.previous, leases_read=True)
        limit = config.max_active_per_actor
        active = evidence.active
        if (
            limit is not None
            and active is not None
            and actors.same(evidence.active_actor, block.actor)
            and len(active) > limit
        ):
            listed = ", ".join(f"#{n}" for n in active)
            warn(
                "AIC605",
                f"{block.actor} is the Active actor on {len(active)} open tasks "
                f"({listed}), more than max-active-per-actor ({limit})",
                actor_line,
                "Finish or hand off some of them before taking more.",
            )
            kept.update(active=active, active_actor=block.actor)

    verdict = Verdict(findings=tuple(findings), remembered=Evidence(**kept))
    if verdict.stale:
        owner = actors.owner(block.actor) or (actors.owner(lease.actor) if lease else None)
        began = [time_after(stamp, config.stale_after)] if stamp is not None else []
        if lease is not None and lease.expired(now):
            began.append(lease.expires)
        since = min((t for t in began if t is not None), default=None)
        verdict = verdict.model_copy(update={"mention": owner, "stale_since": since})
    return verdict


def _race(
    block: Block, commits: Iterable[CommitSeen], number: int, actors: ActorMap
) -> tuple[CommitSeen, ...]:
    """Commits naming the issue after Last updated whose author is not the Active actor."""
    since = block.last_updated
    out = []
    for commit in commits:
        if number not in commit.issues or (since is not None and commit.timestamp <= since):
            continue
        verdicts = [actors.same(block.actor, who) for who in commit.identities]
        if False in verdicts and True not in verdicts:
            out.append(commit)
    return tuple(out)


def _race_finding(
    block: Block, race: tuple[CommitSeen, ...], number: int, line: int | None, actors: ActorMap
) -> Finding:
    authors = sorted({_author(c, actors) for c in race})
    since = block.last_updated
    after = f" after Last updated {format_timestamp(since)}" if since else ""
    return Finding(
        code="AIC603",
        severity="error",
        message=f"claim race: {len(race)} commit{'s' if len(race) != 1 else ''} naming "
        f"#{number} by {', '.join(authors)}{after}, but the Active actor is {block.actor}",
        line=line,
        hint="One actor works a task at a time: hand off (update Active actor) or stop one "
        "of them. If the author is this actor, add its email under `actors:`.",
    )


def _author(commit: CommitSeen, actors: ActorMap) -> str:
    """The actor id when the map knows the author, else a login or name (not the email)."""
    for who in commit.identities:
        known = actors.get(who)
        if known is not None:
            return known.id
    return commit.author_login or commit.author_name or commit.author_email


def _two_actors(
    actor: str, evidence: Evidence, now: datetime, config: StaleConfig, actors: ActorMap
) -> Finding | None:
    lease, previous = evidence.lease, evidence.previous
    if lease is None:
        return None
    if not lease.expired(now) and actors.same(lease.actor, actor) is not True:
        return Finding(
            code="AIC604",
            severity="error",
            message=f"two actors: {lease.actor} holds the lease until "
            f"{format_timestamp(lease.expires)}, but the Active actor is {actor}",
            hint=f"{lease.actor} releases the lease or the block is handed back to it; "
            "never both working at once.",
        )
    if (
        previous is not None
        and actors.same(previous.actor, lease.actor) is not True
        and previous.expires - lease.acquired > config.clock_skew
    ):
        return Finding(
            code="AIC604",
            severity="error",
            message=f"two actors: {lease.actor} took the lease at "
            f"{format_timestamp(lease.acquired)} while {previous.actor}'s ran until "
            f"{format_timestamp(previous.expires)}",
            hint=f"Check {lease.actor}'s clock and that {previous.actor} has stopped.",
        )
    return None


@dataclass(frozen=True)
class StaleRules:
    """The rules as the check job calls them: per issue, with what the run gathered (FRESH)
    and what the sticky comment remembered."""

    config: StaleConfig
    actors: ActorMap
    now: datetime
    fresh: Mapping[int, Evidence] = field(default_factory=dict)
    # mention-owners: `new` (episodes seen beginning), `all`, or `none`; SEEN as in Verdict.
    mention: str = "new"
    seen: datetime | None = None

    def __call__(
        self, issue: Issue, result: CheckResult, remembered: Mapping[str, Any] | None
    ) -> Verdict:
        if result.block is None or issue.state != "open":
            return Verdict()
        evidence = Evidence.from_state(remembered).merged(self.fresh.get(issue.number, Evidence()))
        verdict = judge(
            issue.number,
            parse(issue.body),
            evidence,
            now=self.now,
            config=self.config,
            actors=self.actors,
        )
        if self.mention == "none":
            return verdict.model_copy(update={"mention": None})
        return verdict.model_copy(update={"seen": self.seen, "mention_all": self.mention == "all"})

    def next_change(
        self, issue: Issue, result: CheckResult, remembered: Mapping[str, Any] | None
    ) -> datetime | None:
        """When time alone next changes the verdict on ISSUE: its Last updated grows older
        than stale-after (AIC601), a lease it knows of expires (AIC602, AIC604)."""
        block = result.block
        if block is None or issue.state != "open" or is_terminal(block.phase):
            return None
        evidence = Evidence.from_state(remembered).merged(self.fresh.get(issue.number, Evidence()))
        now = self.now.astimezone(UTC)
        times = []
        if block.last_updated is not None:
            times.append(time_after(block.last_updated, self.config.stale_after))
        if evidence.lease is not None:
            times.append(evidence.lease.expires)
        later = [t for t in times if t is not None and t >= now]
        return min(later) if later else None
