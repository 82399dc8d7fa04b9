"""What every `ai-context` command shares: one registration function per common flag (`--repo`,
ISSUE, `--actor`, `--format`), so they read and fail the same way everywhere, and the resolvers
that turn them and their environment fallbacks into values. Kept light: building the parser
must not import requests, pydantic or jinja2."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, TextIO, TypeVar

from ai_context.core.durations import parse_duration
from ai_context.core.errors import UsageError
from ai_context.core.fields import utc
from ai_context.core.models import IssueRef, issue_ref, repository_name

if TYPE_CHECKING:
    from pathlib import Path  # at run time only where used: `validate` needs no pathlib

T = TypeVar("T")
ACTOR_ENV = "AI_CONTEXT_ACTOR"
ACTOR_MAX = 100  # characters: an actor id is a short name, not a document
ENVIRONMENT_HELP = (
    "environment: GITHUB_TOKEN (or GH_TOKEN), GITHUB_REPOSITORY (default for --repo), "
    "AI_CONTEXT_ACTOR (default for --actor), GITHUB_API_URL (default https://api.github.com), "
    "CLICKUP_TOKEN and CLICKUP_API_URL (default https://api.clickup.com/api/v2)"
)


def stderr_note(line: str) -> None:
    """A command's note beside its answer: on stderr, so a `--format json` answer stays whole."""
    sys.stderr.write(line + "\n")


def _argument(parse: Callable[[str], T]) -> Callable[[str], T]:
    """PARSE as an argparse type: the message of its ValueError is the usage error."""

    def convert(value: str) -> T:
        try:
            return parse(value)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return convert


issue_arg = _argument(issue_ref)  # `12`, `#12` or `https://github.com/OWNER/NAME/issues/12`
repo_arg = _argument(repository_name)
any_duration_arg = _argument(parse_duration)  # a flag whose command judges the range (`--ttl`)


def timestamp_arg(value: str) -> datetime:
    """`--now` and friends: ISO 8601, UTC when no offset is given."""
    try:
        return utc(datetime.fromisoformat(value))
    except (ValueError, OverflowError):  # OverflowError: 0001-01-01T00:00:00+01:00
        raise argparse.ArgumentTypeError(
            f"{value!r} is not an ISO 8601 time; write it like 2026-05-27T09:00:00Z"
        ) from None


def duration_arg(value: str) -> timedelta:
    """A duration flag (`--stale-after`, `--window`): longer than zero, as in the config file."""
    duration = any_duration_arg(value)
    if duration <= timedelta(0):
        raise argparse.ArgumentTypeError(f"{value!r} is not a duration longer than zero")
    return duration


def add_issue(p: argparse.ArgumentParser, *, nargs: str | None = None, what: str = "") -> None:
    """The positional ISSUE (`12`, `#12` or its URL)."""
    p.add_argument(
        "issue",
        type=issue_arg,
        nargs=nargs,
        metavar="ISSUE",
        help=what or "the issue: 12, #12 or https://github.com/OWNER/NAME/issues/12",
    )


def add_repo(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--repo",
        type=repo_arg,
        metavar="OWNER/NAME",
        help="the GitHub repository (default: an issue URL's, $GITHUB_REPOSITORY, then the "
        "checkout's origin remote)",
    )


def add_checkout(p: argparse.ArgumentParser, what: str = "a local git checkout") -> None:
    from pathlib import Path  # noqa: PLC0415 - start-up: validate builds no --checkout

    p.add_argument("--checkout", type=Path, default=None, metavar="PATH", help=what)


def add_actor(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--actor", metavar="ID", help=f"your actor id, e.g. cc-ariel-laptop (default ${ACTOR_ENV})"
    )


def add_format(p: argparse.ArgumentParser, choices: Sequence[str] = ("text", "json")) -> None:
    """`--format`; with json, an error is a JSON object on stdout too."""
    p.add_argument("--format", choices=tuple(choices), default=choices[0])


def named_repository(
    args: argparse.Namespace, env: Mapping[str, str], checkout: Path | None = None
) -> str | None:
    """--repo, else an issue URL's repository, else $GITHUB_REPOSITORY, else the origin remote.
    An issue URL in another repository than --repo (or than another URL) is refused."""
    given: str | None = getattr(args, "repo", None)
    value = getattr(args, "issue", None)
    refs = value if isinstance(value, list) else [value]
    named = {r.repository for r in refs if isinstance(r, IssueRef) and r.repository}
    for other in named:
        if given and other.lower() != given.lower():
            raise UsageError(f"the issue URL is in {other} but --repo says {given}")
    if len({n.lower() for n in named}) > 1:
        raise UsageError(f"the issue URLs name several repositories ({', '.join(sorted(named))})")
    repository = given or next(iter(named), None)
    if repository is None:
        from ai_context.adapters.clients import default_repository  # noqa: PLC0415

        repository = default_repository(env, checkout)
    return repository or None


def resolve_repository(
    args: argparse.Namespace, env: Mapping[str, str], checkout: Path | None = None
) -> str:
    """The repository a command works on (`named_repository`); exit 2 when there is none."""
    repository = named_repository(args, env, checkout)
    if repository is None:
        raise UsageError(
            "no repository: pass --repo OWNER/NAME, set GITHUB_REPOSITORY, or run inside a "
            "clone whose `origin` remote points at GitHub"
        )
    return repository


def check_actor(actor: str) -> str:
    """The one rule for an actor id (`save`, `claim`...): one short word."""
    if not actor or any(ch.isspace() for ch in actor) or len(actor) > ACTOR_MAX:
        shown = actor if len(actor) <= 40 else actor[:40] + "..."
        raise UsageError(
            f"actor id {shown!r} must be one word of at most {ACTOR_MAX} characters, "
            "e.g. cc-ariel-laptop"
        )
    return actor


def resolve_actor(
    args: argparse.Namespace, env: Mapping[str, str], *, required: bool = False
) -> str | None:
    """--actor, else $AI_CONTEXT_ACTOR; checked by `check_actor`."""
    given: str | None = getattr(args, "actor", None)
    actor = given if given is not None else (env.get(ACTOR_ENV, "").strip() or None)
    if actor is None:
        if required:
            raise UsageError(f"which actor? pass --actor ID or set {ACTOR_ENV}")
        return None
    return check_actor(actor)


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, its width found as shutil.get_terminal_size finds it but without
    importing shutil (and bz2, lzma): argparse builds one for every add_argument call, so
    every command paid for that import at start-up."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24) -> None:
        super().__init__(prog, indent_increment, max_help_position, terminal_columns() - 2)


def terminal_columns() -> int:
    """shutil.get_terminal_size().columns: COLUMNS when set, else the terminal's, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def _not_utf8(name: str, where: str) -> UsageError:
    return UsageError(f"{name}: not UTF-8 text ({where}); save it as UTF-8")


def read_input(name: str, stdin: TextIO) -> tuple[str, str]:
    """The name to show and the UTF-8 text of file NAME, or of stdin (`<stdin>`) for `-`.
    Stdin is read as bytes when it has them and checked either way, so text that is not
    UTF-8 is exit 2 here and never a UnicodeEncodeError later."""
    if name != "-":
        return name, read_file(name)
    buffer = getattr(stdin, "buffer", None)
    try:
        if buffer is not None:
            return "<stdin>", bytes(buffer.read()).decode("utf-8")
        text = stdin.read()
        text.encode("utf-8")  # lone surrogates (surrogateescape'd bytes) cannot be
    except UnicodeDecodeError as exc:
        raise _not_utf8("<stdin>", f"byte {exc.start}") from None
    except UnicodeEncodeError as exc:
        raise _not_utf8("<stdin>", f"character {exc.start}") from None
    return "<stdin>", text


def read_file(name: str | Path) -> str:
    """A file's UTF-8 text; UsageError saying what is wrong with it otherwise."""
    try:
        return _read_bytes(name).decode("utf-8")
    except FileNotFoundError:
        raise UsageError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{name}: is a directory; pass the files in it") from None
    except UnicodeDecodeError as exc:
        raise _not_utf8(str(name), f"byte {exc.start}") from None
    except OSError as exc:
        raise UsageError(f"{name}: cannot read: {exc.strerror}") from None


def _read_bytes(name: str | Path) -> bytes:
    """The file's bytes through the os module: half the cost of a Path or a buffered file
    object, which `validate` over 2,000 files pays 2,000 times."""
    fd = os.open(name, os.O_RDONLY)
    try:
        return b"".join(iter(lambda: os.read(fd, 1 << 20), b""))
    finally:
        os.close(fd)
