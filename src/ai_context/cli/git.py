"""`ai-context derive ISSUE`: what git can tell about a task, beside its block, so an agent can fix
its block from the record of work (docs/seeds/001).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any, TextIO

from ai_context.adapters.gitrepo import current_branch, head_sha, is_repo, log
from ai_context.adapters.store import DirectoryStore, split_front_matter
from ai_context.cli.common import (
    add_checkout,
    add_format,
    add_issue,
    add_repo,
    duration_arg,
    named_repository,
    read_input,
)
from ai_context.core.block.model import Block, block_data, format_timestamp
from ai_context.core.errors import Exit, UsageError
from ai_context.rules.checks import finding_json
from ai_context.rules.gitlog.compare import GitRules
from ai_context.rules.gitlog.derive import Derivation, derive


def add_derive_command(sub: Any) -> None:
    """Register `derive` on cli/main.py's subparsers."""
    p = sub.add_parser(
        "derive",
        help="show what git says about an issue (commits, authors, files, checkpoints) "
        "beside its block",
    )
    add_issue(p)
    add_checkout(p, "the git checkout to read (default: the current directory)")
    p.add_argument("--rev", default="HEAD", help="history to read (default HEAD)")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--body-file", metavar="FILE", help="the issue body (Markdown), or -")
    source.add_argument("--issues-dir", type=Path, metavar="DIR", help="directory issue store")
    add_repo(p)  # counts OWNER/NAME#N only for this repository
    p.add_argument(
        "--behind-after", type=duration_arg, default=None, help="block behind git after (def. 1h)"
    )
    add_format(p)
    p.set_defaults(handler=cmd_derive)


def _body(args: argparse.Namespace, stdin: TextIO, issue: int) -> str | None:
    if args.issues_dir is not None:
        return DirectoryStore(args.issues_dir).get_issue(issue).body
    if args.body_file is None:
        return None
    _, text = read_input(args.body_file, stdin)
    try:
        return split_front_matter(text)[1]
    except ValueError:
        return text


def cmd_derive(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    issue: int = args.issue.number
    body = _body(args, stdin, issue)
    repo: Path = args.checkout or Path(".")
    if args.rev.startswith("-"):
        raise UsageError(f"--rev {args.rev!r}: a revision does not start with '-'")
    if not is_repo(repo):
        raise UsageError(f"{repo}: not a git checkout; pass --checkout with the path of one")
    rules = GitRules(behind_after=args.behind_after) if args.behind_after else GitRules()
    # git pre-filters on the number's digits (every way of naming the issue contains them);
    # derive applies the exact rules.
    repository = named_repository(args, os.environ, repo)
    commits = log(repo, rev=args.rev, grep=str(issue))
    result = derive(issue, commits, body, repo=repository, rules=rules)
    branch, head = current_branch(repo), head_sha(repo)
    if args.format == "json":
        out.write(json.dumps(derivation_json(result, branch, head), ensure_ascii=False) + "\n")
    else:
        out.write(render_derivation(result, repo, branch, head, has_body=body is not None))
    return int(Exit.OK)


_COMMIT = {"author_name", "author_email", "timestamp", "added", "modified", "removed"}


def derivation_json(d: Derivation, branch: str | None, head: str | None) -> dict[str, Any]:
    """Stable JSON: keys may be added, never renamed."""
    return {
        "issue": d.issue,
        "branch": branch,
        "head": head,
        "git": {
            "commits": [
                {"sha": c.sha, "subject": c.subject, **c.model_dump(mode="json", include=_COMMIT)}
                for c in d.commits
            ],
            "authors": [a.model_dump(mode="json") for a in d.authors],
            "files": [f.model_dump(mode="json") for f in d.files],
            "checkpoints": [e.model_dump(mode="json") for e in d.checkpoints],
            "first_activity": format_timestamp(d.first_activity) or None,
            "last_activity": format_timestamp(d.last_activity) or None,
        },
        "block": block_data(d.block) if d.block else None,
        "block_findings": [finding_json(f) for f in d.block_findings],
        "findings": [finding_json(f) for f in d.findings],
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
