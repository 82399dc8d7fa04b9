"""Where the reports (`digest`, `summary`, `status`, `report`) read their issues from.

Live, from GitHub: the repositories named by `--repo OWNER/NAME` (repeatable), else the
repository as everywhere (GITHUB_REPOSITORY, then the origin remote) plus the config file's
`repositories:`; each repository is listed once (open issues, and those closed within the
window), as the Action does. Offline, from `--issues-dir DIR` (a folder of Markdown files).
The token is GITHUB_TOKEN (or GH_TOKEN), the API GITHUB_API_URL. Either way the settings are
the Action's (adapters/config.py: the config file, its defaults), under the flags given.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ai_context.cli.common import add_format, duration_arg, repo_arg, timestamp_arg
from ai_context.core.errors import UsageError

if TYPE_CHECKING:
    from ai_context.adapters.config import Config
    from ai_context.adapters.github import GitHub
    from ai_context.core.models import Issue, IssueRef

_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+$")


def add_source_options(p: argparse.ArgumentParser, formats: tuple[str, ...]) -> None:
    """The options every report shares: where to read, the clock, the rules, the format."""
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
        "--source",
        dest="issues_dir",
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
        default=None,
        help="how far back closed issues count as shipped, e.g. 24h (default: the config's "
        "digest.window, else 24h)",
    )
    p.add_argument(
        "--stale-after",
        type=duration_arg,
        default=None,
        help="e.g. 90m, 24h, 3d (default: the config's stale-after, else 24h)",
    )
    p.add_argument(
        "--templates", type=Path, metavar="DIR", help="your templates, tried before ours"
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
    """The issues a report reads, the settings, and what it needs to say where they came from."""

    repos: list[str]
    config: Config
    github: Callable[[str], GitHub] | None = None
    offline: Any = None  # adapters.store.DirectoryStore
    explicit: bool = False  # the repositories came from --repo

    @property
    def live(self) -> bool:
        return self.offline is None


def open_source(args: argparse.Namespace) -> Source:
    """Where to read, from the options, the environment and the config file."""
    from ai_context.adapters import clients  # noqa: PLC0415
    from ai_context.adapters.config import load_config  # noqa: PLC0415

    config = load_config(os.environ, Path.cwd())
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
    if not repos:
        default = clients.default_repository(os.environ)
        repos = [*([default] if default else []), *config.digest.repositories]
    repos = list(dict.fromkeys(r.strip() for r in repos))
    bad = [r for r in repos if not _REPO.match(r)]
    if bad:
        raise UsageError(f"--repo {bad[0]!r} is not OWNER/NAME")
    if not repos:
        raise UsageError(
            "no repository to read: pass --repo OWNER/NAME (or set GITHUB_REPOSITORY, or list "
            "repositories: in the config file), or --issues-dir DIR to read files offline"
        )
    clients.github_token(os.environ)  # now, before any read: a UsageError naming the variables
    return Source(repos=repos, config=config, github=_connector(config), explicit=bool(args.repos))


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


def window_of(args: argparse.Namespace, source: Source) -> timedelta:
    given: timedelta | None = args.window
    return given or source.config.digest.window


def stale_after_of(args: argparse.Namespace, source: Source) -> timedelta:
    given: timedelta | None = args.stale_after
    return given or source.config.stale_after


def read_all(source: Source, since: datetime) -> list[Issue]:
    """Every issue a report looks at: one listing of open and one of recently closed issues
    per repository (offline: every file)."""
    if not source.live:
        return source.offline.list_issues("all")  # type: ignore[no-any-return]
    from ai_context.jobs.digest import read_issues  # noqa: PLC0415

    assert source.github is not None
    issues: list[Issue] = []
    for repo in source.repos:
        with service_errors(repo):
            issues += read_issues(source.github(repo), since)
    return issues


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


class service_errors:
    """GitHub's failures as the command line reports them, naming the repository: one that does
    not exist (or an issue that does not) is bad usage (2); the others keep their kind (a
    refused token 2, GitHub down 3: core.errors)."""

    def __init__(self, repo: str) -> None:
        self.repo = repo

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        from ai_context.adapters.github import GitHubError, GitHubNotFound  # noqa: PLC0415

        if isinstance(exc, GitHubNotFound):
            raise UsageError(f"{self.repo}: {exc}; check --repo and the issue number") from exc
        if isinstance(exc, GitHubError):
            raise type(exc)(f"{self.repo}: {exc}", exc.status) from exc


def finish(out: TextIO, text: str) -> None:
    out.write(text if text.endswith("\n") else text + "\n")
