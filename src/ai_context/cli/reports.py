"""Where the reports (`digest`, `summary`, `status`, `report`) read their issues from.

Live, from GitHub: the repositories named by `--repo OWNER/NAME` (repeatable), else the
repository as everywhere (GITHUB_REPOSITORY, then the origin remote) plus the config file's
`repositories:`; each repository is listed once (open issues, and those closed within the
window), as the Action does. Offline, from `--issues-dir DIR` (a folder of Markdown files).
The token is GITHUB_TOKEN (or GH_TOKEN), the API GITHUB_API_URL.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ai_context.cli.common import UsageError, duration_arg, timestamp_arg

if TYPE_CHECKING:
    from ai_context.adapters.github import GitHub
    from ai_context.core.models import Issue

_ISSUE_URL = re.compile(r"^https?://[^/]+/([^/]+/[^/]+)/(?:issues|pull)/(\d+)(?:[/?#].*)?$")
_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+$")


def add_source_options(p: argparse.ArgumentParser, formats: tuple[str, ...]) -> None:
    """The options every report shares: where to read, the clock, the rules, the format."""
    p.add_argument(
        "--repo",
        dest="repos",
        action="append",
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
        "--stale-after", type=duration_arg, default=None, help="e.g. 90m, 24h, 3d (default 24h)"
    )
    p.add_argument(
        "--templates", type=Path, metavar="DIR", help="your templates, tried before ours"
    )
    p.add_argument(
        "--format",
        choices=formats,
        default="text",
        help="text for a terminal (colour on a TTY unless NO_COLOR is set), md for GitHub, json",
    )


def colour_for(out: TextIO) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org)."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(out, "isatty", None)
    return bool(isatty and isatty())


def issue_ref(text: str) -> tuple[str | None, int]:
    """`12`, `#12`, `owner/name#12` or an issue URL: (repository if named, number)."""
    raw = text.strip()
    url = _ISSUE_URL.match(raw)
    if url:
        return url.group(1), int(url.group(2))
    repo, _, number = raw.rpartition("#")
    if number.isdigit() and int(number) > 0 and (not repo or _REPO.match(repo)):
        return repo or None, int(number)
    raise UsageError(
        f"{text!r} is not an issue; write it like 104, #104, owner/name#104 or the issue's URL"
    )


@dataclass
class Source:
    """The issues a report reads, and what it needs to say where they came from."""

    repos: list[str]
    settings: Any = None  # adapters.config.Settings, when live
    extras: dict[str, Any] = field(default_factory=dict)
    github: Callable[[str], GitHub] | None = None
    offline: Any = None  # adapters.store.DirectoryStore

    @property
    def live(self) -> bool:
        return self.offline is None


def _load_settings() -> tuple[Any, dict[str, Any]]:
    from ai_context.adapters.config import load_settings  # noqa: PLC0415
    from ai_context.core.errors import ConfigError  # noqa: PLC0415

    try:
        return load_settings(os.environ, Path.cwd())
    except ConfigError as exc:
        raise UsageError(str(exc)) from exc


def _default_repo() -> str | None:
    from ai_context.adapters.gitrepo import GitError, remote_repository  # noqa: PLC0415

    named = os.environ.get("GITHUB_REPOSITORY", "").strip()
    if named:
        return named
    try:
        return remote_repository(Path.cwd())
    except GitError:
        return None


def _config_repos(extras: dict[str, Any]) -> list[str]:
    digest = extras.get("digest") or {}
    found = extras.get("repositories") or (
        digest.get("repositories") if isinstance(digest, dict) else None
    )
    if found is None:
        return []
    if not isinstance(found, list) or not all(isinstance(r, str) for r in found):
        raise UsageError("repositories: must be a list of owner/name")
    return found


def open_source(args: argparse.Namespace) -> Source:
    """Where to read, from the options, the environment and the config file."""
    if args.issues_dir is not None:
        from ai_context.adapters.store import DirectoryStore, StoreError  # noqa: PLC0415

        if args.repos:
            raise UsageError("give either --issues-dir (offline) or --repo (GitHub), not both")
        try:
            store = DirectoryStore(args.issues_dir, args.repository)
        except StoreError as exc:
            raise UsageError(str(exc)) from exc
        return Source(repos=[args.repository], offline=store)
    settings, extras = _load_settings()
    repos = list(args.repos or [])
    if not repos:
        default = _default_repo()
        repos = [*([default] if default else []), *_config_repos(extras)]
    repos = list(dict.fromkeys(r.strip() for r in repos))
    bad = [r for r in repos if not _REPO.match(r)]
    if bad:
        raise UsageError(f"--repo {bad[0]!r} is not OWNER/NAME")
    if not repos:
        raise UsageError(
            "no repository to read: pass --repo OWNER/NAME (or set GITHUB_REPOSITORY, or list "
            "repositories: in the config file), or --issues-dir DIR to read files offline"
        )
    if settings.github_token is None:
        raise UsageError(
            "reading GitHub needs a token: set GITHUB_TOKEN (or GH_TOKEN), or pass "
            "--issues-dir DIR to read files offline"
        )
    return Source(repos=repos, settings=settings, extras=extras, github=_connector(settings))


def _connector(settings: Any) -> Callable[[str], GitHub]:
    from ai_context.adapters.github import DEFAULT_API_URL, CallCounter, GitHub  # noqa: PLC0415

    counter = CallCounter()
    api = os.environ.get("GITHUB_API_URL") or DEFAULT_API_URL

    def connect(repo: str) -> GitHub:
        return GitHub(
            settings.github_token,
            repo,
            api_url=api,
            write_interval=0,
            retries=settings.http_retries,
            backoff=settings.http_backoff,
            counter=counter,
        )

    return connect


def now_of(args: argparse.Namespace, source: Source) -> datetime:
    if args.now is not None:
        return args.now  # type: ignore[no-any-return]
    fixed = getattr(source.settings, "now", None)
    return fixed if isinstance(fixed, datetime) else datetime.now(UTC)


def window_of(args: argparse.Namespace, source: Source) -> timedelta:
    if args.window is not None:
        return args.window  # type: ignore[no-any-return]
    digest = source.extras.get("digest") or {}
    raw = digest.get("window") if isinstance(digest, dict) else None
    if raw is None:
        return timedelta(hours=24)
    from ai_context.core.durations import parse_duration  # noqa: PLC0415

    try:
        return parse_duration(str(raw))
    except ValueError as exc:
        raise UsageError(f"digest.window: {exc}") from exc


def stale_after_of(args: argparse.Namespace, source: Source) -> timedelta:
    if args.stale_after is not None:
        return args.stale_after  # type: ignore[no-any-return]
    configured = getattr(source.settings, "stale_after", None)
    return configured if isinstance(configured, timedelta) else timedelta(hours=24)


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


def read_one(source: Source, repo: str | None, number: int) -> Issue:
    """One issue, by number (in `repo` when the reference named one)."""
    if not source.live:
        from ai_context.adapters.store import StoreError  # noqa: PLC0415

        try:
            return source.offline.get_issue(number)  # type: ignore[no-any-return]
        except StoreError as exc:
            raise UsageError(str(exc)) from exc
    assert source.github is not None
    where = repo or source.repos[0]
    with service_errors(where):
        return source.github(where).get_issue(number)


class ServiceFailed(Exception):
    """GitHub failed after retries: exit 3 with the message."""


class service_errors:
    """GitHub's failures as the command line reports them: a repository or issue that does not
    exist, or a token GitHub refuses, is bad usage (2); GitHub down is a service failure (3)."""

    def __init__(self, repo: str) -> None:
        self.repo = repo

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        from ai_context.adapters.github import (  # noqa: PLC0415
            GitHubConfigError,
            GitHubError,
            GitHubNotFound,
        )

        if isinstance(exc, GitHubNotFound):
            raise UsageError(f"{self.repo}: {exc}; check --repo and the issue number") from exc
        if isinstance(exc, GitHubConfigError):
            raise UsageError(f"{self.repo}: {exc}") from exc
        if isinstance(exc, GitHubError):
            raise ServiceFailed(f"{self.repo}: {exc}") from exc


def finish(out: TextIO, text: str) -> None:
    out.write(text if text.endswith("\n") else text + "\n")


def fail_service(exc: ServiceFailed) -> int:
    from ai_context.cli.common import EXIT_SERVICE  # noqa: PLC0415

    sys.stderr.write(f"ai-context: {exc}\n")
    return EXIT_SERVICE
