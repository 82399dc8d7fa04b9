"""The MCP tools' bodies, without the SDK: structured input in, the JSON the command line
prints with `--format json` out, so an agent reads one shape whichever face it uses. A failure
raises `ToolFailure` with the command line's exit code and text.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from functools import cached_property, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, Field, ValidationError

from ai_context.core.block.model import Block, BlockError, block_from_data
from ai_context.core.errors import AIContextError, Exit
from ai_context.core.fields import explain

if TYPE_CHECKING:
    from ai_context.adapters.cache import Cache
    from ai_context.adapters.github import GitHub
    from ai_context.jobs.agent.model import Outcome

T = TypeVar("T")
EXIT_MEANING = {
    Exit.USAGE: "bad input",
    Exit.SERVICE: "GitHub failed",
    Exit.CONFLICT: "conflict",
    Exit.INCOMPLETE: "incomplete state",
}


def _note(line: str) -> None:
    """A tool's note beside its answer (the mirror's, the lease's): stdout is the protocol."""
    sys.stderr.write(line + "\n")


class ToolFailure(Exception):
    """A tool that could not do its work: the exit code the command line would end with."""

    def __init__(self, code: Exit, message: str) -> None:
        super().__init__(
            f"exit {int(code)} ({EXIT_MEANING.get(code, code.name.lower())}): {message}"
        )
        self.code = code


def bad_arguments(exc: ValidationError) -> ToolFailure:
    """Arguments that do not fit a tool (its schema, or a model built from them) as the
    command line's bad input: where and what, one problem after another, never the values."""
    return ToolFailure(Exit.USAGE, f"{explain(exc)}; see the tool's input schema")


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
    """12, "#12" or an issue URL of REPOSITORY."""
    from ai_context.core.models import issue_ref  # noqa: PLC0415

    try:
        ref = issue_ref(str(value))
    except ValueError as exc:
        raise ToolFailure(Exit.USAGE, str(exc)) from exc
    if ref.repository and ref.repository.lower() != repository.lower():
        raise ToolFailure(
            Exit.USAGE, f"the issue URL is in {ref.repository}; this call is on {repository}"
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
        self._github: dict[str, GitHub] = {}

    def repo(self, repo: str | None) -> str:
        """The repository of one call: its REPO argument, else the server's."""
        if repo is not None and repo.strip():
            from ai_context.core.models import repository_name  # noqa: PLC0415

            try:
                return repository_name(repo)
            except ValueError as exc:
                raise ToolFailure(Exit.USAGE, f"repo: {exc}") from exc
        from ai_context.adapters.clients import default_repository  # noqa: PLC0415

        self._repo = self._repo or default_repository(self.env)
        if not self._repo:
            raise ToolFailure(
                Exit.USAGE,
                "no repository: pass repo (OWNER/NAME), start the server with --repo, or set "
                "GITHUB_REPOSITORY",
            )
        return self._repo

    def github(self, repository: str) -> GitHub:
        """The client of REPOSITORY (as `repo` gave it), made once."""
        key = repository.lower()
        if key not in self._github:
            from ai_context.adapters.clients import github_from_env  # noqa: PLC0415

            self._github[key] = self.run(lambda: github_from_env(repository, self.env))
        return self._github[key]

    @cached_property
    def cache(self) -> Cache:
        from ai_context.adapters.cache import open_cache  # noqa: PLC0415

        return self.run(lambda: open_cache(self._cache_path, self.env))

    @cached_property
    def required(self) -> tuple[str, ...]:
        """The fields a complete block needs, read as the command line reads them."""
        from ai_context.adapters.config_file import check_config, config_path  # noqa: PLC0415

        return self.run(lambda: check_config(config_path(self.env), self.env).required)

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

    def outcome(
        self, repo: str, work: Callable[..., Outcome], *, release: bool = False
    ) -> dict[str, Any]:
        """WORK (a job, its own options bound) run as the command line runs it; its JSON. A
        conflict fails with the command line's exit-4 text; RELEASE frees the writer's lease."""
        from ai_context.jobs.agent.finishing import lease_release  # noqa: PLC0415
        from ai_context.jobs.agent.mirror import agent_mirror_hook  # noqa: PLC0415
        from ai_context.jobs.agent.output import outcome_json, outcome_text  # noqa: PLC0415

        gh, cache = self.github(repo), self.cache
        common: dict[str, Any] = {
            "now": now(),
            "required": self.required,
            "mirror": agent_mirror_hook(self.env, Path.cwd(), _note),
        }
        if release:
            common["release_lease"] = lease_release(gh, self.env, Path.cwd(), _note)
        before = gh.counter.total
        result = self.run(lambda: work(gh, cache, **common))
        if result.status == "conflict":
            raise ToolFailure(Exit.CONFLICT, outcome_text(result, None))
        return outcome_json(result, gh.counter.total - before)


def now() -> datetime:
    return datetime.now(UTC)


def resume(
    s: Session,
    issue: int | str | None,
    take: Literal["local", "remote"] | None,
    assignee: str | None,
    repo: str | None = None,
) -> dict[str, Any]:
    from ai_context.adapters.config_file import config_path  # noqa: PLC0415
    from ai_context.jobs.agent import resuming  # noqa: PLC0415

    config = config_path(s.env)

    def login() -> str | None:
        from ai_context.adapters.config import owner_of  # noqa: PLC0415

        return assignee or owner_of(s.actor, config)

    repository = s.repo(repo)
    number = None if issue in (None, "") else issue_number(issue, repository)
    work = partial(resuming.resume, number=number, actor=s.actor, login=login, take=take)
    return s.outcome(repository, work)


def save(
    s: Session,
    issue: int | str,
    block: Block | BlockFields,
    dry_run: bool,
    *,
    take: Literal["local"] | None = None,
    repo: str | None = None,
) -> dict[str, Any]:
    """Write BLOCK (or the block FIELDS give, for the session's actor by default)."""
    if isinstance(block, BlockFields):
        block = block_of(block, s.actor)
    from ai_context.jobs.agent import saving  # noqa: PLC0415

    repository = s.repo(repo)
    number = issue_number(issue, repository)
    options: dict[str, Any] = {"writer": s.actor, "dry_run": dry_run, "take": take}
    return s.outcome(repository, partial(saving.save, number=number, block=block, **options))


def current_block(s: Session, repository: str, number: int) -> Block:
    """The block as this machine last wrote or read it (the cache), else the issue's."""
    from ai_context.core.block.parse import parse  # noqa: PLC0415

    entry = s.cache.load(repository, number)
    if entry is not None:
        return entry.block
    found = parse(s.run(lambda: s.github(repository).get_issue(number)).body).block
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


def checkpoint(
    s: Session,
    issue: int | str,
    changes: CheckpointChanges,
    *,
    take: Literal["local"] | None = None,
    repo: str | None = None,
) -> dict[str, Any]:
    """The current block with CHANGES, saved in its Active actor's name as `save` would: an actor
    who handed the task off becomes its Active actor again only with TAKE "local"."""
    repository = s.repo(repo)
    number = issue_number(issue, repository)
    current = current_block(s, repository, number)
    taking = take == "local" and s.actor is not None
    fields = BlockFields(
        actor=s.actor if taking else current.actor or s.actor,
        actor_description=None if taking else current.actor_description,
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
    return save(s, number, block_of(fields, s.actor), False, take=take, repo=repository)


def handoff(
    s: Session,
    issue: int | str,
    to: str,
    *,
    description: str | None,
    next_step: str | None,
    dry_run: bool,
    take: Literal["local"] | None = None,
    repo: str | None = None,
) -> dict[str, Any]:
    """handoff as the CLI's: written by the session's actor, its lease released."""
    from ai_context.jobs.agent import finishing  # noqa: PLC0415

    repository = s.repo(repo)
    number = issue_number(issue, repository)
    options: dict[str, Any] = {
        "description": description,
        "next_step": next_step,
        "dry_run": dry_run,
    }
    work = partial(finishing.handoff, number=number, to=to, writer=s.actor, take=take, **options)
    return s.outcome(repository, work, release=True)


def done(
    s: Session,
    issue: int | str,
    *,
    pr: str | None,
    followups: list[str],
    shipped: str | None,
    dry_run: bool,
    done_steps: list[int] | None = None,
    take: Literal["local"] | None = None,
    repo: str | None = None,
) -> dict[str, Any]:
    """done as the CLI's: written by the session's actor, its lease released."""
    from ai_context.jobs.agent import finishing  # noqa: PLC0415

    repository = s.repo(repo)
    options: dict[str, Any] = {"pr": pr, "followups": followups, "shipped": shipped}
    options["done_steps"] = done_steps or []
    work = partial(finishing.done, number=issue_number(issue, repository), **options)
    return s.outcome(
        repository, partial(work, writer=s.actor, dry_run=dry_run, take=take), release=True
    )
