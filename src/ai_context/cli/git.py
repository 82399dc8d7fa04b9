"""`ai-context derive ISSUE`: what git can tell about a task, beside its block.

Run in a checkout so an agent can fix its block from the record of work (docs/seeds/001). Handlers
here do not import cli.py (cli.py imports them), so they report bad usage themselves: the
message on stderr and exit status 2, as cli.py does.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from ai_context.adapters.gitrepo import (
    GitError,
    current_branch,
    head_sha,
    is_repo,
    log,
    remote_repository,
)
from ai_context.adapters.store import DirectoryStore, StoreError, split_front_matter
from ai_context.cli.common import EXIT_OK, EXIT_USAGE, duration_arg
from ai_context.core.block import Block, format_timestamp
from ai_context.core.findings import Finding
from ai_context.rules.gitlog import Derivation, GitRules, derive


class CommandError(Exception):
    """Bad usage or input: exit 2 with the message."""


def fail(message: str) -> int:
    sys.stderr.write(f"ai-context: {message}\n")
    return EXIT_USAGE


def _issue_number(value: str) -> int:
    text = value.strip().lstrip("#")
    if not text.isdigit() or int(text) <= 0:
        raise argparse.ArgumentTypeError(f"{value!r} is not an issue number; write it like 42")
    return int(text)


def add_derive_command(sub: Any) -> None:
    """Register `derive` on cli.py's subparsers."""
    p = sub.add_parser(
        "derive",
        help="show what git says about an issue (commits, authors, files, checkpoints) "
        "beside its block",
    )
    p.add_argument("issue", type=_issue_number, metavar="ISSUE", help="issue number, e.g. 42")
    p.add_argument("--repo", type=Path, default=Path("."), metavar="PATH", help="git checkout")
    p.add_argument("--rev", default="HEAD", help="history to read (default HEAD)")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--body-file", metavar="FILE", help="the issue body (Markdown), or -")
    source.add_argument("--issues-dir", type=Path, metavar="DIR", help="directory issue store")
    p.add_argument(
        "--repository",
        metavar="OWNER/NAME",
        help="count owner/repo#N only for this repository (default: from the origin remote)",
    )
    p.add_argument(
        "--behind-after", type=duration_arg, default=None, help="block behind git after (def. 1h)"
    )
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(handler=cmd_derive)


def _body(args: argparse.Namespace, stdin: TextIO) -> str | None:
    if args.issues_dir is not None:
        try:
            return DirectoryStore(args.issues_dir).get_issue(args.issue).body
        except StoreError as exc:
            raise CommandError(str(exc)) from exc
    if args.body_file is None:
        return None
    if args.body_file == "-":
        text = stdin.read()
    else:
        path = Path(args.body_file)
        try:
            text = path.read_bytes().decode("utf-8")
        except FileNotFoundError:
            raise CommandError(f"{path}: no such file") from None
        except UnicodeDecodeError as exc:
            raise CommandError(f"{path}: not UTF-8 text (byte {exc.start})") from None
        except OSError as exc:
            raise CommandError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        return split_front_matter(text)[1]
    except ValueError:
        return text


def cmd_derive(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    try:
        body = _body(args, stdin)
        repo: Path = args.repo
        if args.rev.startswith("-"):
            raise CommandError(f"--rev {args.rev!r}: a revision does not start with '-'")
        if not is_repo(repo):
            raise CommandError(f"{repo}: not a git checkout; pass --repo with the path of one")
        rules = GitRules(behind_after=args.behind_after) if args.behind_after else GitRules()
        # git pre-filters on the number's digits (every way of naming the issue contains
        # them); derive applies the exact rules.
        repository = args.repository or remote_repository(repo)
        commits = log(repo, rev=args.rev, grep=str(args.issue))
        result = derive(args.issue, commits, body, repo=repository, rules=rules)
        branch, head = current_branch(repo), head_sha(repo)
    except (CommandError, GitError) as exc:
        return fail(str(exc))
    if args.format == "json":
        out.write(json.dumps(derivation_json(result, branch, head), ensure_ascii=False) + "\n")
    else:
        out.write(render_derivation(result, repo, branch, head, has_body=body is not None))
    return EXIT_OK


def _finding_json(f: Finding) -> dict[str, Any]:
    return {
        "code": f.code,
        "severity": f.severity,
        "line": f.line,
        "message": f.message,
        "hint": f.hint,
    }


def derivation_json(d: Derivation, branch: str | None, head: str | None) -> dict[str, Any]:
    """Stable JSON: keys may be added, never renamed."""
    return {
        "issue": d.issue,
        "branch": branch,
        "head": head,
        "git": {
            "commits": [
                {
                    "sha": c.sha,
                    "subject": c.subject,
                    "author_name": c.author_name,
                    "author_email": c.author_email,
                    "timestamp": format_timestamp(c.timestamp),
                    "added": list(c.added),
                    "modified": list(c.modified),
                    "removed": list(c.removed),
                }
                for c in d.commits
            ],
            "authors": [a.model_dump(mode="json") for a in d.authors],
            "files": [f.model_dump(mode="json") for f in d.files],
            "checkpoints": [
                {
                    "sha": e.sha,
                    "timestamp": format_timestamp(e.timestamp),
                    "checkpoint": e.checkpoint.model_dump() if e.checkpoint else None,
                    "problem": e.problem.model_dump() if e.problem else None,
                }
                for e in d.checkpoints
            ],
            "first_activity": format_timestamp(d.first_activity) or None,
            "last_activity": format_timestamp(d.last_activity) or None,
        },
        "block": d.block.model_dump(mode="json") if d.block else None,
        "block_findings": [_finding_json(f) for f in d.block_findings],
        "findings": [_finding_json(f) for f in d.findings],
    }


def _block_lines(block: Block) -> list[str]:
    lines = [
        f"  Active actor:  {block.actor or '-'}",
        f"  Phase:         {block.phase or '-'}"
        + (f" (chunk {block.chunk[0]} of {block.chunk[1]})" if block.chunk else ""),
        f"  Last updated:  {format_timestamp(block.last_updated) or '-'}",
    ]
    if block.plan:
        lines.append("  Plan:")
        lines.extend(
            f"    {s.number}. {s.text}" + (f" ({s.status})" if s.status else "") for s in block.plan
        )
    lines.append(f"  Files touched: {block.files_touched or '-'}")
    lines.append(f"  Next step:     {block.next_step or '-'}")
    return lines


def render_derivation(
    d: Derivation, repo: Path, branch: str | None, head: str | None, *, has_body: bool
) -> str:
    where = f"{branch or '(detached)'} @ {(head or '')[:7] or '(no commits)'}"
    lines = [f"ai-context derive #{d.issue} in {repo} ({where})", ""]
    if not d.commits:
        lines.append(f"git: no commit names #{d.issue}")
    else:
        lines.append(
            f"git: {len(d.commits)} commit{'s' if len(d.commits) != 1 else ''} naming #{d.issue}, "
            f"{format_timestamp(d.first_activity)} → {format_timestamp(d.last_activity)}"
        )
        last = d.commits[0]
        lines.append(
            f"  last activity: {format_timestamp(last.timestamp)} {last.short} {last.subject[:70]}"
        )
        lines.append("  authors:")
        lines.extend(
            f"    {a.name} <{a.email}>: {a.commits} commit{'s' if a.commits != 1 else ''}, "
            f"last {format_timestamp(a.last)}"
            for a in d.authors
        )
        if d.checkpoints:
            lines.append("  checkpoints:")
            for e in d.checkpoints:
                if e.checkpoint is not None:
                    step = f"step {e.checkpoint.step}" if e.checkpoint.step else "no step"
                    lines.append(
                        f"    {e.sha[:7]} {format_timestamp(e.timestamp)} {step}: "
                        f"{e.checkpoint.text} (v{e.checkpoint.version})"
                    )
                elif e.problem is not None:
                    lines.append(f"    {e.sha[:7]} not read: {e.problem.message}")
        lines.append(f"  files ({len(d.files)}):")
        for f in d.files:
            mark = (
                ""
                if f.covered is None
                else ("  covered" if f.covered else "  NOT in Files touched")
            )
            gone = " (removed)" if f.removed else ""
            lines.append(
                f"    {f.path}{gone}: {f.commits} commit{'s' if f.commits != 1 else ''}, "
                f"last {f.last_sha[:7]}{mark}"
            )
    lines.append("")
    if d.block is not None:
        lines.append("block:")
        lines.extend(_block_lines(d.block))
    elif has_body:
        lines.append("block: none found in the body")
    else:
        lines.append("block: not given (pass --body-file or --issues-dir to compare)")
    if d.findings:
        lines.append("")
        lines.append("findings:")
        for finding in d.findings:
            lines.append(f"  {finding.code} {finding.severity} {finding.message}")
            lines.append(f"    hint: {finding.hint}")
    return "\n".join(lines) + "\n"
