"""The MCP tools' bodies, without the SDK: each takes structured input and returns the same JSON
the command line prints with `--format json` (cli/agent.py's `outcome_json`, the lease JSON, the
check JSON), so an agent reads one shape whichever face it uses.

One `Session` per server: the settings are read once (GITHUB_TOKEN, GITHUB_REPOSITORY or
--repo, AI_CONTEXT_ACTOR or --actor, GITHUB_API_URL, AI_CONTEXT_CACHE) and the GitHub client is
made on first use and kept, so a call after the first pays only for its HTTP round trips.
Failures raise `ToolFailure` with the command line's exit code; outcomes the agent must act on
(a conflict, an incomplete block, a lease held by another) are content, with `exit_code`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, Field

from ai_context.core.block import Block, BlockError, block_from_data
from ai_context.core.errors import AIContextError, Exit

if TYPE_CHECKING:
    from ai_context.adapters.cache import Cache
    from ai_context.adapters.github import GitHub
    from ai_context.jobs.agent import Outcome

T = TypeVar("T")
EXIT_MEANING = {
    Exit.USAGE: "bad input",
    Exit.SERVICE: "GitHub failed",
    Exit.CONFLICT: "conflict",
    Exit.INCOMPLETE: "incomplete state",
}


class ToolFailure(Exception):
    """A tool that could not do its work: the exit code the command line would end with."""

    def __init__(self, code: Exit, message: str) -> None:
        super().__init__(
            f"exit {int(code)} ({EXIT_MEANING.get(code, code.name.lower())}): {message}"
        )
        self.code = code


class PlanItem(BaseModel):
    """One plan step: its text and status (done, in progress, pending, blocked, skipped)."""

    text: str
    status: str | None = Field(default=None, description="done, in progress, pending, ...")


class BlockFields(BaseModel):
    """The AI Context block as fields; `save` stamps Last updated itself."""

    actor: str | None = Field(default=None, description="actor id; default: this server's")
    actor_description: str | None = Field(default=None, description="e.g. Claude Code on X")
    phase: str = Field(description="e.g. implementing")
    chunk: tuple[int, int] | None = Field(default=None, description="[n, of m]")
    plan: list[PlanItem]
    files_touched: str
    decisions: list[str] = []
    blockers: list[str] = []
    next_step: str
    extra: dict[str, str] = {}


def block_of(fields: BlockFields, default_actor: str | None) -> Block:
    data = fields.model_dump()
    data["actor"] = fields.actor or default_actor
    data["plan"] = [{"number": n, **step} for n, step in enumerate(data["plan"], start=1)]
    try:
        return block_from_data(data)
    except BlockError as exc:
        raise ToolFailure(Exit.USAGE, str(exc)) from exc


def issue_number(value: int | str, repository: str) -> int:
    """12, "#12" or an issue URL of this server's repository."""
    from ai_context.core.models import issue_ref  # noqa: PLC0415

    try:
        ref = issue_ref(str(value))
    except ValueError as exc:
        raise ToolFailure(Exit.USAGE, str(exc)) from exc
    if ref.repository and ref.repository.lower() != repository.lower():
        raise ToolFailure(
            Exit.USAGE, f"the issue URL is in {ref.repository}; this server is on {repository}"
        )
    return ref.number


class Session:
    """The server's settings and clients, read once."""

    def __init__(
        self,
        *,
        repo: str | None = None,
        actor: str | None = None,
        cache: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.env = dict(os.environ if env is None else env)
        self._repo, self._cache_path = repo, cache
        self.actor = actor or self.env.get("AI_CONTEXT_ACTOR", "").strip() or None
        self._github: GitHub | None = None
        self._cache: Cache | None = None

    @property
    def repository(self) -> str:
        from ai_context.adapters.clients import default_repository  # noqa: PLC0415

        repo = self._repo or default_repository(self.env)
        if not repo:
            raise ToolFailure(
                Exit.USAGE,
                "no repository: start the server with --repo OWNER/NAME or set GITHUB_REPOSITORY",
            )
        self._repo = repo
        return repo

    def github(self) -> GitHub:
        if self._github is None:
            from ai_context.adapters.clients import github_from_env  # noqa: PLC0415

            repository = self.repository
            self._github = self.run(lambda: github_from_env(repository, self.env))
        return self._github

    def cache(self) -> Cache:
        if self._cache is None:
            from ai_context.adapters.cache import open_cache  # noqa: PLC0415

            self._cache = self.run(lambda: open_cache(self._cache_path, self.env))
        return self._cache

    def run(self, work: Callable[[], T]) -> T:
        """WORK, with the tool's errors carrying the command line's exit codes."""
        from ai_context.adapters.github import GitHubNotFound  # noqa: PLC0415

        try:
            return work()
        except GitHubNotFound as exc:
            raise ToolFailure(
                Exit.USAGE, f"{exc}; check the issue number and the repository"
            ) from exc
        except AIContextError as exc:
            raise ToolFailure(exc.exit_code, str(exc)) from exc

    def outcome(self, work: Callable[[GitHub, Cache], Outcome]) -> dict[str, Any]:
        from ai_context.jobs.agent.output import outcome_json  # noqa: PLC0415

        gh, cache = self.github(), self.cache()
        before = gh.counter.total
        result = self.run(lambda: work(gh, cache))
        return outcome_json(result, gh.counter.total - before)


def now() -> datetime:
    return datetime.now(UTC)


# --- the agent commands -------------------------------------------------------------------


def resume(
    s: Session,
    issue: int | str | None,
    take: Literal["local", "remote"] | None,
    assignee: str | None,
) -> dict[str, Any]:
    from ai_context.adapters.config_file import DEFAULT_CONFIG  # noqa: PLC0415
    from ai_context.jobs import agent  # noqa: PLC0415
    from ai_context.jobs.agent.mirror import agent_mirror_hook  # noqa: PLC0415

    def login() -> str | None:
        from ai_context.adapters.config import owner_of  # noqa: PLC0415

        return assignee or owner_of(s.actor, Path(DEFAULT_CONFIG))

    number = None if issue in (None, "") else issue_number(issue, s.repository)
    return s.outcome(
        lambda gh, cache: agent.resume(
            gh,
            cache,
            number,
            actor=s.actor,
            login=login,
            now=now(),
            take=take,
            mirror=agent_mirror_hook(),
        )
    )


def save(s: Session, issue: int | str, block: Block, dry_run: bool) -> dict[str, Any]:
    from ai_context.jobs import agent  # noqa: PLC0415
    from ai_context.jobs.agent.mirror import agent_mirror_hook  # noqa: PLC0415

    number = issue_number(issue, s.repository)
    return s.outcome(
        lambda gh, cache: agent.save(
            gh,
            cache,
            number,
            block,
            writer=s.actor,
            now=now(),
            dry_run=dry_run,
            mirror=agent_mirror_hook(),
        )
    )


def current_block(s: Session, number: int) -> Block:
    """The block as this machine last wrote or read it (the cache), else the issue's."""
    from ai_context.core.block import parse  # noqa: PLC0415

    entry = s.cache().load(s.repository, number)
    if entry is not None:
        return entry.block
    found = parse(s.run(lambda: s.github().get_issue(number)).body).block
    if found is None:
        raise ToolFailure(Exit.USAGE, f"issue #{number} has no AI Context block yet: use save")
    return found


class CheckpointChanges(BaseModel):
    """What moved since the last save; anything left out stays as the block has it."""

    phase: str | None = None
    done_steps: list[int] = []  # plan step numbers now done
    plan: list[PlanItem] | None = None  # the whole plan, when it changed shape
    files_touched: str | None = None
    add_decisions: list[str] = []
    blockers: list[str] | None = None
    next_step: str | None = None


def checkpoint(s: Session, issue: int | str, changes: CheckpointChanges) -> dict[str, Any]:
    """The current block with CHANGES, saved: a checkpoint without re-sending the block."""
    number = issue_number(issue, s.repository)
    current = current_block(s, number)
    fields = BlockFields(
        actor=s.actor or current.actor,
        actor_description=current.actor_description
        if not s.actor or s.actor == current.actor
        else None,
        phase=changes.phase or current.phase or "",
        chunk=current.chunk,
        plan=changes.plan
        if changes.plan is not None
        else [
            PlanItem(
                text=step.text, status="done" if step.number in changes.done_steps else step.status
            )
            for step in current.plan
        ],
        files_touched=changes.files_touched or current.files_touched or "",
        decisions=[*current.decisions, *changes.add_decisions],
        blockers=changes.blockers if changes.blockers is not None else list(current.blockers),
        next_step=changes.next_step or current.next_step or "",
        extra=dict(current.extra),
    )
    return save(s, number, block_of(fields, s.actor), dry_run=False)


def handoff(
    s: Session,
    issue: int | str,
    to: str,
    *,
    description: str | None,
    next_step: str | None,
    dry_run: bool,
) -> dict[str, Any]:
    from ai_context.jobs import agent  # noqa: PLC0415

    return _finishing(
        s,
        issue,
        lambda gh, cache, number, **hooks: agent.handoff(
            gh, cache, number, to, description=description, next_step=next_step, **hooks
        ),
        dry_run=dry_run,
    )


def done(
    s: Session,
    issue: int | str,
    *,
    pr: str | None,
    followups: list[str],
    shipped: str | None,
    dry_run: bool,
) -> dict[str, Any]:
    from ai_context.jobs import agent  # noqa: PLC0415

    return _finishing(
        s,
        issue,
        lambda gh, cache, number, **hooks: agent.done(
            gh, cache, number, pr=pr, followups=followups, shipped=shipped, **hooks
        ),
        dry_run=dry_run,
    )


def _finishing(
    s: Session, issue: int | str, call: Callable[..., Any], *, dry_run: bool
) -> dict[str, Any]:
    """handoff and done, as the CLI's: written by the session's actor, the lease released once
    the block has landed (a done task holds no one), the ClickUp mirror told."""
    from ai_context.jobs import agent  # noqa: PLC0415
    from ai_context.jobs.agent.mirror import agent_mirror_hook  # noqa: PLC0415

    number = issue_number(issue, s.repository)
    return s.outcome(
        lambda gh, cache: call(
            gh,
            cache,
            number,
            writer=s.actor,
            now=now(),
            dry_run=dry_run,
            release_lease=agent.lease_release(gh),
            mirror=agent_mirror_hook(),
        )
    )
