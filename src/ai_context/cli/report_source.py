"""Where the reports (`digest`, `summary`, `status`, `report`) read their issues from: GitHub
(`--repo`, else an issue URL's repository, else the default one plus the config's
`repositories:`) or `--issues-dir` offline, with the Action's settings and config file, so a
task falls in the same category in both."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ai_context.cli.common import add_format, duration_arg, repo_arg, timestamp_arg
from ai_context.core.errors import UsageError
from ai_context.core.models import IssueRef

if TYPE_CHECKING:
    from ai_context.adapters.config import Config
    from ai_context.adapters.github import GitHub, IssuePage
    from ai_context.core.models import Issue
    from ai_context.jobs.digest.job import Gathered
    from ai_context.rules.digest.build import DigestConfig
    from ai_context.rules.repositories import Selector

_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+$")
NO_REPOSITORY = (
    "no repository to read: pass --repo OWNER/NAME (or set GITHUB_REPOSITORY, or list "
    "repositories: in the config file), or --issues-dir DIR to read files offline"
)
_FILTERS = (
    ("actor", "ID", "only the tasks of this actor id (repeat for several)"),
    (
        "owner",
        "LOGIN",
        "only the tasks this GitHub login owns: assigned, or actors.<id>.owner (repeat for "
        "several)",
    ),
    ("label", "NAME", "only issues with this label (repeat: any of them)"),
)


def add_source_options(
    p: argparse.ArgumentParser,
    formats: tuple[str, ...],
    *,
    filters: tuple[str, ...] = ("actor", "owner", "label"),
) -> None:
    """The options every report shares: where to read, the clock, the rules, the format, and
    FILTERS (`--actor`, `--owner`, `--label`; `status` names its actor itself)."""
    p.add_argument(
        "--repo",
        dest="repos",
        action="append",
        type=repo_arg,
        metavar="OWNER/NAME",
        help="a repository to read (repeat for several); default GITHUB_REPOSITORY, then the "
        "origin remote, plus the config file's repositories:",
    )
    p.add_argument(
        "--issues-dir",
        type=Path,
        metavar="DIR",
        help="read a directory of issue files instead of GitHub (offline)",
    )
    p.add_argument(
        "--repository",
        default="local/examples",
        metavar="OWNER/NAME",
        help="with --issues-dir: the repository files without one belong to",
    )
    p.add_argument("--now", type=timestamp_arg, help="fix the clock (ISO 8601)")
    p.add_argument(
        "--window",
        type=duration_arg,
        help="how far back closed issues count as shipped, e.g. 24h (default: the config's "
        "digest.window, else 24h)",
    )
    p.add_argument(
        "--stale-after",
        type=duration_arg,
        help="e.g. 90m, 24h, 3d (default: the config file's stale-after, else 24h)",
    )
    p.add_argument(
        "--templates", type=Path, metavar="DIR", help="your templates, tried before ours"
    )
    p.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="the config file (default: .github/ai-context.yml of the checkout you are in)",
    )
    for name, metavar, text in _FILTERS:
        if name in filters:
            p.add_argument(
                f"--{name}", dest=f"{name}s", action="append", metavar=metavar, help=text
            )
    add_format(p, formats)  # text for a terminal (colour on a TTY unless NO_COLOR), md, json


def colour_for(out: TextIO) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org)."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(out, "isatty", None)
    return bool(isatty and isatty())


@dataclass
class Source:
    """The issues a report reads, and what it needs to say where they came from."""

    repos: list[str]
    config: Config
    github: Callable[[str], GitHub] | None = None
    offline: Any = None  # adapters.store.DirectoryStore
    explicit: bool = False  # the repositories came from --repo

    @property
    def live(self) -> bool:
        return self.offline is None


def config_root(start: Path) -> Path:
    """Where the config file's default path starts: the nearest folder from START up that
    holds `.github/ai-context.yml` or is a checkout's top (`.git`); START when none is."""
    for folder in (start, *start.parents):
        if (folder / ".github" / "ai-context.yml").is_file() or (folder / ".git").exists():
            return folder
    return start


def _load_config(config: Path | None) -> Config:
    """The Action's configuration, read from the same file: `--config FILE`,
    AI_CONTEXT_CONFIG, else .github/ai-context.yml of the checkout (found from any folder of
    it); its sections are checked when a report reads them."""
    from ai_context.adapters.config import load_config  # noqa: PLC0415

    env: dict[str, str] = dict(os.environ)
    if config is not None:
        if not config.is_file():
            raise UsageError(f"--config {config}: no such file")
        env["AI_CONTEXT_CONFIG"] = str(config.resolve())
    return load_config(env, config_root(Path.cwd()))


def open_source(args: argparse.Namespace) -> Source:
    """Where to read, from the options, the environment and the config file."""
    from ai_context.adapters import clients  # noqa: PLC0415

    config = _load_config(args.config)
    if args.issues_dir is not None:
        from ai_context.adapters.store import DirectoryStore, StoreError  # noqa: PLC0415

        if args.repos:
            raise UsageError("give either --issues-dir (offline) or --repo (GitHub), not both")
        try:
            store = DirectoryStore(args.issues_dir, args.repository)
        except StoreError as exc:
            raise UsageError(str(exc)) from exc
        return Source(repos=[args.repository], config=config, offline=store)
    repos = list(args.repos or [])
    named = getattr(args, "issue", None)
    if not repos and isinstance(named, IssueRef) and named.repository:
        repos = [named.repository]  # `summary https://github.com/OWNER/NAME/issues/4`
    selectors: tuple[Selector, ...] = ()
    if not repos:
        default = clients.default_repository(os.environ)
        repos, selectors = ([default] if default else []), config.digest.repositories
    repos = list(dict.fromkeys(r.strip() for r in repos))
    bad = [r for r in repos if not _REPO.match(r)]
    if bad:
        raise UsageError(f"--repo {bad[0]!r} is not OWNER/NAME")
    if not repos and not selectors:
        raise UsageError(NO_REPOSITORY)
    clients.github_token(os.environ)  # now, before any read: a UsageError naming the variables
    connect = _connector(config)
    if selectors:
        repos = _with_selected(connect, repos, selectors)
    if not repos:
        raise UsageError(NO_REPOSITORY)
    return Source(repos=repos, config=config, github=connect, explicit=bool(args.repos))


def _with_selected(
    connect: Callable[[str], GitHub], repos: list[str], selectors: tuple[Selector, ...]
) -> list[str]:
    """REPOS, then those SELECTORS name (an owner a pattern names listed once); what a
    pattern left out or matched nothing is said on stderr."""
    from ai_context.jobs.scan import repositories_of  # noqa: PLC0415

    first = selectors[0]  # a client needs a repository; listing an owner reads none
    client = connect(repos[0] if repos else f"{first.owner}/{first.name}")

    def say(line: str) -> None:
        sys.stderr.write(f"{line}\n")

    def warn(line: str) -> None:
        say(f"ai-context: warning: {line}")

    seen = {r.lower() for r in repos}
    named = repositories_of(client, selectors, log=say, warn=warn)
    return [*repos, *(r for r in named if r.lower() not in seen)]


def _connector(config: Config) -> Callable[[str], GitHub]:
    """One client a repository, all counted together (the report's `github calls`)."""
    from ai_context.adapters import clients  # noqa: PLC0415
    from ai_context.adapters.github import CallCounter  # noqa: PLC0415

    counter = CallCounter()

    def connect(repo: str) -> GitHub:
        return clients.github_from_env(repo, os.environ, http=config.http, counter=counter)

    return connect


def now_of(args: argparse.Namespace, source: Source) -> datetime:
    if args.now is not None:
        return args.now  # type: ignore[no-any-return]
    return source.config.now or datetime.now(UTC)


def digest_config(args: argparse.Namespace, source: Source) -> DigestConfig:
    """The Action's DigestConfig (jobs.digest.job.digest_config) from the same settings, with the
    command line's `--window` and `--stale-after` on top."""
    from ai_context.jobs.digest.job import digest_config as config_of  # noqa: PLC0415

    return config_of(source.config, window=args.window, stale_after=args.stale_after)


def read_all(source: Source, now: datetime, window: timedelta) -> Gathered:
    """Every issue a report looks at and the baseline a digest compares with, read as the
    Action reads them (jobs.digest.job.gather); offline: every file, and no baseline."""
    from ai_context.jobs.digest.job import Gathered, gather  # noqa: PLC0415
    from ai_context.rules.digest.state import find_state  # noqa: PLC0415

    if not source.live:
        return Gathered(issues=source.offline.list_issues("all"), previous=find_state(None))
    assert source.github is not None
    repos = [source.github(repo) for repo in source.repos]
    progress = terminal_progress(sys.stderr)
    try:
        with service_errors(", ".join(source.repos)):
            return gather(repos, settings=source.config, window=window, now=now, progress=progress)
    finally:
        if progress is not None:
            sys.stderr.write("\r\x1b[K")  # the progress line goes once the reading is done


def select(issues: list[Issue], args: argparse.Namespace, config: DigestConfig) -> list[Issue]:
    """The issues the filters (`--actor`, `--owner`, `--label`) keep; all without them."""
    from ai_context.rules.digest.build import select_issues  # noqa: PLC0415

    return select_issues(
        issues,
        actors=getattr(args, "actors", None) or (),
        owners=getattr(args, "owners", None) or (),
        labels=getattr(args, "labels", None) or (),
        config=config,
    )


def terminal_progress(stream: TextIO) -> Callable[[IssuePage], None] | None:
    """On a terminal, a progress line on STREAM rewritten with each page read (issues read,
    pages, about how long to go); nothing when STREAM is a pipe or a file."""
    if not stream.isatty():
        return None
    from ai_context.adapters.workflow import Progress  # noqa: PLC0415

    def show(line: str) -> None:
        stream.write(f"\r\x1b[K{line}")

    shown = Progress(show, every_pages=1, writing=False)

    def page(read: IssuePage) -> None:
        shown.page(read.items, read.last, read.repository)
        stream.flush()

    return page


def read_one(source: Source, ref: IssueRef) -> Issue:
    """One issue, by number (in its URL's repository when the reference named one)."""
    repo, number = ref.repository, ref.number
    if not source.live:
        from ai_context.adapters.store import StoreError  # noqa: PLC0415

        try:
            return source.offline.get_issue(number)  # type: ignore[no-any-return]
        except StoreError as exc:
            raise UsageError(str(exc)) from exc
    assert source.github is not None
    if repo and source.explicit and repo.lower() not in {r.lower() for r in source.repos}:
        raise UsageError(f"the issue URL is in {repo} but --repo says {', '.join(source.repos)}")
    where = repo or source.repos[0]
    with service_errors(where):
        return source.github(where).get_issue(number)


@contextmanager
def service_errors(repo: str) -> Iterator[None]:
    """GitHub's failures as the command line reports them, naming the repository: one that does
    not exist (or an issue that does not) is bad usage (2); the others keep their kind (a
    refused token 2, GitHub down 3: core.errors)."""
    from ai_context.adapters.github import GitHubError, GitHubNotFound  # noqa: PLC0415

    try:
        yield
    except GitHubNotFound as exc:
        raise UsageError(f"{repo}: {exc}; check --repo and the issue number") from exc
    except GitHubError as exc:
        raise type(exc)(f"{repo}: {exc}", exc.status) from exc


def finish(out: TextIO, text: str) -> None:
    out.write(text if text.endswith("\n") else text + "\n")
