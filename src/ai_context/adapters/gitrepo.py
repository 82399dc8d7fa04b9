"""A local git checkout, read through the `git` command; `git log` is parsed as it streams."""

from __future__ import annotations

import codecs
import os
import re
import subprocess
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ai_context.core.errors import UsageError

if TYPE_CHECKING:  # the hooks count commits with git alone: no commit models at their start-up
    from ai_context.core.events import Commit

_CHUNK = 1 << 16


class GitError(UsageError):
    """git is missing, the path is not a checkout, or git failed; the message says which."""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    # Output must not depend on the user's pager, locale or config-driven decorations.
    env.update({"GIT_PAGER": "cat", "PAGER": "cat", "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"})
    return env


def _run(repo: Path, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            ["git", "-C", str(repo), *args],
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            env=_env(),
            check=False,
        )
    except FileNotFoundError:
        raise GitError("git is not installed or not on PATH; install git") from None


def is_repo(path: Path) -> bool:
    """Whether `path` is inside a git work tree (False when git itself is missing)."""
    try:
        done = _run(path, ["rev-parse", "--is-inside-work-tree"])
    except GitError:
        return False
    return done.returncode == 0 and done.stdout.strip() == "true"


def _require_repo(path: Path) -> None:
    if not path.is_dir():
        raise GitError(f"{path}: no such directory; pass --checkout with a git checkout")
    if not is_repo(path):
        raise GitError(f"{path}: not a git checkout; pass --checkout with the path of one")


def _answer(repo: Path, args: Sequence[str]) -> str | None:
    """What git ARGS print in the checkout REPO, or None when they fail or print nothing."""
    _require_repo(repo)
    done = _run(repo, args)
    return (done.stdout.strip() or None) if done.returncode == 0 else None


def head_sha(repo: Path) -> str | None:
    """The commit HEAD points at; None in a repository without commits."""
    return _answer(repo, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])


def current_branch(repo: Path) -> str | None:
    """The checked-out branch; None when HEAD is detached."""
    return _answer(repo, ["symbolic-ref", "--quiet", "--short", "HEAD"])


_REMOTE_RE = re.compile(
    r"(?:[:/])([A-Za-z0-9][A-Za-z0-9-]{0,38})/([A-Za-z0-9._-]{1,100}?)(?:\.git)?/?$"
)


def remote_repository(repo: Path) -> str | None:
    """`owner/name` of the origin remote (https or ssh URL), or None when there is none."""
    url = _answer(repo, ["remote", "get-url", "origin"])
    match = _REMOTE_RE.search(url) if url else None
    return f"{match.group(1)}/{match.group(2)}" if match else None


def commits_between(repo: Path, base: str) -> int | None:
    """How many commits HEAD has that `base` lacks; None when `base` is unknown here."""
    _require_repo(repo)
    known = _run(repo, ["cat-file", "-e", f"{base}^{{commit}}"])
    if known.returncode != 0:
        return None
    done = _run(repo, ["rev-list", "--count", f"{base}..HEAD"])
    if done.returncode != 0:
        return None
    return int(done.stdout.strip() or 0)


def is_ancestor(repo: Path, base: str) -> bool:
    _require_repo(repo)
    return _run(repo, ["merge-base", "--is-ancestor", base, "HEAD"]).returncode == 0


def log_command(repo: Path, *, rev: str = "HEAD", grep: str | None = None) -> list[str]:
    """The `git log` command line `log` runs (the benchmark times the same one)."""
    from ai_context.rules.gitlog.log import LOG_FORMAT  # noqa: PLC0415

    args = [
        "git",
        "-C",
        str(repo),
        "-c",
        "log.showSignature=false",
        "log",
        "-z",
        "--no-color",
        "--no-renames",
        "--name-status",
        f"--format={LOG_FORMAT}",
    ]
    if grep is not None:
        # A pre-filter only: fixed string, so git never reads it as a pattern. The exact rules
        # run in Python on what comes back.
        args += ["--fixed-strings", "--regexp-ignore-case", f"--grep={grep}"]
    args += [rev, "--"]
    return args


def log(repo: Path, *, rev: str = "HEAD", grep: str | None = None) -> Iterator[Commit]:
    """Commits reachable from `rev`, newest first, with the files each changed (none for a
    merge); git keeps only those whose message contains `grep`."""
    from ai_context.rules.gitlog.log import parse_log_stream  # noqa: PLC0415

    _require_repo(repo)
    if head_sha(repo) is None:
        return  # no commits yet: nothing to read
    command = log_command(repo, rev=rev, grep=grep)
    process = subprocess.Popen(  # streamed: one subprocess, read as it writes
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env()
    )
    assert process.stdout is not None and process.stderr is not None
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def chunks() -> Iterator[str]:
        assert process.stdout is not None
        while block := process.stdout.read(_CHUNK):
            yield decoder.decode(block)
        yield decoder.decode(b"", final=True)

    try:
        yield from parse_log_stream(chunks())
    finally:
        process.stdout.close()
        error = process.stderr.read().decode("utf-8", errors="replace").strip()
        process.stderr.close()
        code = process.wait()
    if code != 0:
        raise GitError(f"git log failed in {repo}: {error or f'exit status {code}'}")


def commits_after(repo: Path, when: datetime) -> int:
    """How many commits on HEAD were committed after WHEN (0 outside a checkout or history)."""
    stamp = int(when.timestamp()) + 1  # after: a commit in the very second of WHEN is before it
    done = _run(repo, ["rev-list", "--count", f"--since=@{stamp}", "HEAD", "--"])
    return int(done.stdout.strip() or 0) if done.returncode == 0 else 0


def has_changes(repo: Path) -> bool:
    """Whether the work tree holds uncommitted changes to tracked files (untracked ignored)."""
    done = _run(repo, ["status", "--porcelain", "--untracked-files=no"])
    return done.returncode == 0 and bool(done.stdout.strip())
