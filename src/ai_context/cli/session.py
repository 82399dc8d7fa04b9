"""`ai-context session save|load` (sp.json, docs/seeds/004) and `ai-context scrub`."""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO, TypeVar

from ai_context.adapters.gitrepo import (
    commits_between,
    current_branch,
    head_sha,
    is_ancestor,
    is_repo,
)
from ai_context.cli.common import add_checkout, add_format, read_file, read_input, timestamp_arg
from ai_context.core.errors import Exit, UsageError
from ai_context.rules.scrub import find, scrub
from ai_context.rules.session.merge import parse_input
from ai_context.rules.session.model import SessionError, SessionFile, dumps, loads, to_json
from ai_context.rules.session.saving import save
from ai_context.rules.session.summary import GitState, counts, render_load, render_save, summarize

T = TypeVar("T")


def add_session_commands(sub: Any) -> None:
    """Register `session save`, `session load` and `scrub` on cli/main.py's subparsers."""
    session = sub.add_parser("session", help="save or load a session file (sp.json)")
    actions = session.add_subparsers(dest="session_command", metavar="ACTION")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--file", type=Path, default=Path("sp.json"), help="default ./sp.json")
        add_checkout(p, "the git checkout (default: the file's directory)")
        p.add_argument("--now", type=timestamp_arg, help="fix the clock (ISO 8601)")

    save_p = actions.add_parser("save", help="write what the agent knows to sp.json")
    save_p.add_argument(
        "--from", dest="source", required=True, metavar="FILE", help="tasks JSON, or - for stdin"
    )
    save_p.add_argument(
        "--overwrite",
        action="store_true",
        help="the agent loaded sp.json this session, so its list is complete: replace the file "
        "instead of merging with it",
    )
    add_format(save_p)
    common(save_p)
    save_p.set_defaults(handler=cmd_session_save)

    load_p = actions.add_parser("load", help="summarise sp.json: age, counts, next task, drift")
    add_format(load_p)
    common(load_p)
    load_p.set_defaults(handler=cmd_session_load)
    session.set_defaults(handler=_session_usage(session))

    scrub_p = sub.add_parser(
        "scrub", help="replace home paths with ~/ and redact secrets and emails"
    )
    scrub_p.add_argument("paths", nargs="*", default=["-"], metavar="PATH", help="file or -")
    scrub_p.add_argument(
        "--check",
        action="store_true",
        help="print file:line:column and kind of each hit (never the value); exit 1 if any",
    )
    add_format(scrub_p)
    scrub_p.set_defaults(handler=cmd_scrub)


def _session_usage(parser: argparse.ArgumentParser) -> Any:
    def handler(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
        del args, out, stdin
        raise UsageError("session needs an action: save or load\n" + parser.format_usage().rstrip())

    return handler


def _shallow(name: str, parse: Callable[[], T]) -> T:
    """PARSE, with JSON nested deeper than Python's recursion limit as bad input (exit 2)."""
    try:
        return parse()
    except RecursionError:
        raise UsageError(
            f"{name}: the JSON is nested too deeply to be a task list; pass "
            '{"tasks": [...], "context_blocks": [...]}'
        ) from None


def _repo(args: argparse.Namespace) -> Path | None:
    repo: Path = args.checkout if args.checkout is not None else args.file.resolve().parent
    return repo if is_repo(repo) else None  # no checkout: skip git, no error (docs/seeds/004)


def _write_atomically(path: Path, text: str) -> None:
    directory = path.resolve().parent
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def cmd_session_save(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    now = args.now or datetime.now(UTC)
    path: Path = args.file
    source, text = read_input(args.source, stdin)
    incoming = _shallow(source, lambda: parse_input(text))
    existing: SessionFile | None = None
    if not args.overwrite and path.exists():
        try:
            existing = _shallow(str(path), lambda: loads(read_file(path)))
        except SessionError as exc:
            raise UsageError(
                f"Cannot save: {path} cannot be merged ({exc}); fix it, or pass --overwrite "
                "to replace it"
            ) from None
    repo = _repo(args)
    branch = current_branch(repo) if repo else None
    commit = head_sha(repo) if repo else None
    result = save(
        existing,
        incoming,
        now=now,
        overwrite=args.overwrite,
        git_branch=branch,
        git_commit=commit,
        home=os.environ.get("HOME"),
    )
    try:
        _write_atomically(path, dumps(result.session))
    except OSError as exc:
        raise UsageError(f"Cannot save: {path}: {exc.strerror}") from exc
    if args.format == "json":
        data = {
            "file": str(path),
            "mode": result.mode,
            "counts": counts(result.session).model_dump(),
            "scrubbed": dict(result.scrubbed),
        }
        out.write(json.dumps(data, ensure_ascii=False) + "\n")
    else:
        out.write(render_save(str(path), result) + "\n")
    return int(Exit.OK)


def _git_state(repo: Path, session: SessionFile) -> GitState:
    head = head_sha(repo)
    saved = session.metadata.git_commit
    ahead = commits_between(repo, saved) if saved and head and saved != head else None
    known = saved is None or head == saved or ahead is not None
    descends = known and (saved is None or head is None or is_ancestor(repo, saved))
    return GitState(
        branch=current_branch(repo), head=head, ahead=ahead, saved_known=known, descends=descends
    )


def cmd_session_load(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    del stdin
    path: Path = args.file
    now = args.now or datetime.now(UTC)
    if not path.exists():
        raise UsageError(
            f"Cannot load: {path} not found; save a session first with "
            "`ai-context session save --from tasks.json`"
        )
    session = _shallow(str(path), lambda: loads(read_file(path)))
    meta = session.metadata
    repo = _repo(args) if (meta.git_commit or meta.git_branch) else None
    git = _git_state(repo, session) if repo else None
    summary = summarize(session, now=now, git=git)
    if args.format == "json":
        data = {
            "file": str(path),
            "age_seconds": int(summary.age.total_seconds()),
            "counts": counts(session).model_dump(),
            "next": summary.next_task.id if summary.next_task else None,
            "git": summary.git_line,
            "warnings": list(summary.warnings),
            "session": to_json(session),
        }
        out.write(json.dumps(data, ensure_ascii=False) + "\n")
    else:
        out.write(render_load(str(path), session, summary) + "\n")
    return int(Exit.OK)


def cmd_scrub(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    paths: list[str] = args.paths
    if not args.check and len(paths) != 1:
        raise UsageError("scrub prints one scrubbed text: pass one PATH (or -), or use --check")
    texts = [read_input(p, stdin) for p in paths]
    as_json = args.format == "json"
    if not args.check:
        clean = scrub(texts[0][1], home=os.environ.get("HOME"))
        out.write(json.dumps({"text": clean}, ensure_ascii=False) + "\n" if as_json else clean)
        return int(Exit.OK)
    home = os.environ.get("HOME")
    hits = [(name, hit) for name, text in texts for hit in find(text, home=home)]
    if as_json:
        found = [{"path": n, "line": h.line, "column": h.column, "kind": h.kind} for n, h in hits]
        out.write(json.dumps({"hits": found}, ensure_ascii=False) + "\n")
    else:
        out.writelines(f"{name}:{hit.line}:{hit.column}: {hit.kind}\n" for name, hit in hits)
    return int(Exit.FINDINGS if hits else Exit.OK)
