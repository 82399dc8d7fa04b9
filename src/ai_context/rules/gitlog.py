"""What commits say about issues (pure): git is the witness of activity, never of the plan.

Commits come from a push payload's `commits` or from `git log` output (gitrepo.py runs git and
hands the text here). From each message we read the issues it names and, when it is one, the
checkpoint it records; comparing that with an issue's block gives findings (`compare_block`;
`push_findings` for a push event, `derive` for a local history). Nothing here writes a block:
only the agent does (docs/design.md §1).

Issue references (`issues_named`): `#N` (so `Refs #N`, `Fixes: #N`, `closes #N`, ... in any
case), `GH-N`, `owner/repo#N` and `https://<host>/owner/repo/issues/N` (only for `repo` when it
is given; without it, any repository, but issue URLs only on github.com), and the trailer
`AI-Context-Issue: N[, M]`. Not a reference: `#N` glued to a word or a path (`abc#1`,
`/pull/12#3`, `&#123;`), anything inside a code span or a fenced code block.

Checkpoint commits, format v1 (`format_checkpoint` writes it, `read_checkpoint` reads it)::

    ai-context: <step text> completed [issue:N] [step:K]

    AI-Context-Checkpoint: v1

`[step:K]` is optional. The trailer carries the format version, so the subject can change in a
later version without making old commits unreadable (docs/seeds/001: "the regex is the schema"). A
commit with the trailer but a version this tool does not know is reported, never guessed at; so
is a subject in the checkpoint shape without the trailer.

Finding codes (stable):
  AIC501 warning  block behind git: commits naming the issue are newer than Last updated by more
                  than `GitRules.behind_after`
  AIC502 info     files drift: files changed by commits naming the issue are not covered by
                  Files touched (braces expanded; globs with `*`, `?`, `[...]` and `**` allowed;
                  a directory covers everything below it; an entry without a slash matches a
                  file or directory of that name at any depth, as in .gitignore)
  AIC503 warning  a checkpoint commit completed plan step K; the block does not say it is done
  AIC504 warning  a checkpoint commit completed plan step K; the block's plan has no step K
  AIC505 warning  a checkpoint commit in a format version this tool does not read
  AIC506 warning  a checkpoint commit that cannot be read (malformed, or without the version
                  trailer)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from fnmatch import fnmatchcase
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from ai_context.core.block import Block, format_timestamp, parse
from ai_context.core.durations import format_duration
from ai_context.core.findings import Finding

# --- commits ----------------------------------------------------------------------------


class Commit(BaseModel):
    """One commit as both GitHub's push payload and `git log` can describe it."""

    model_config = ConfigDict(frozen=True)

    sha: str
    message: str
    author_name: str = ""
    author_email: str = ""
    timestamp: datetime
    added: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    @field_validator("sha")
    @classmethod
    def _sha(cls, value: str) -> str:
        value = value.strip().lower()
        if not re.fullmatch(r"[0-9a-f]{4,64}", value):
            raise ValueError("a commit sha is 4 to 64 hex digits")
        return value

    @field_validator("timestamp")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            raise ValueError("a commit timestamp must carry a timezone")
        return value.astimezone(UTC)

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0].strip()

    @property
    def short(self) -> str:
        return self.sha[:7]

    @property
    def files(self) -> tuple[str, ...]:
        """Every path the commit added, modified or removed, once each, in that order."""
        return tuple(dict.fromkeys((*self.added, *self.modified, *self.removed)))


class PushPayloadError(ValueError):
    """A push payload that does not have the shape GitHub sends; the message says where."""


def commit_from_push(data: Mapping[str, Any], where: str = "commit") -> Commit:
    """One entry of a push payload's `commits` (or its `head_commit`)."""
    if not isinstance(data, Mapping):
        raise PushPayloadError(f"{where}: expected an object, got {type(data).__name__}")
    author = data.get("author") or {}
    if not isinstance(author, Mapping):
        raise PushPayloadError(f"{where}.author: expected an object")
    try:
        return Commit.model_validate(
            {
                "sha": data.get("id"),
                "message": data.get("message") or "",
                "author_name": author.get("name") or "",
                "author_email": author.get("email") or "",
                "timestamp": data.get("timestamp"),
                "added": tuple(data.get("added") or ()),
                "modified": tuple(data.get("modified") or ()),
                "removed": tuple(data.get("removed") or ()),
            }
        )
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}" for e in exc.errors()
        )
        raise PushPayloadError(f"{where}: {problems}") from None


def commits_from_push(payload: Mapping[str, Any]) -> list[Commit]:
    """The commits of a push event, oldest first as GitHub lists them (at most 20 there)."""
    commits = payload.get("commits")
    if not isinstance(commits, list):
        raise PushPayloadError("push payload: 'commits' is missing or not a list")
    return [commit_from_push(c, f"commits[{i}]") for i, c in enumerate(commits)]


# `git log` output, one record per commit: RS sha US author US email US committer-time US
# message US, then (with -z --name-status) NUL, newline and NUL-separated status/path pairs.
LOG_FORMAT = "%x1e%H%x1f%an%x1f%ae%x1f%ct%x1f%B%x1f"
_RS, _US = "\x1e", "\x1f"


class GitLogError(ValueError):
    """`git log` output that is not in LOG_FORMAT."""


def parse_log_record(record: str) -> Commit:
    """One record of LOG_FORMAT output (without its leading RS).

    The timestamp is the committer date: when the work landed in this history (a rebase moves
    it), which is what "activity" means here.
    """
    head = record.split(_US, 4)
    if len(head) != 5:
        raise GitLogError(f"git log record has {len(head)} fields, expected 5: {record[:60]!r}")
    sha, name, email, seconds, rest = head
    message, sep, changes = rest.rpartition(_US)
    if not sep or not seconds.isdigit():
        raise GitLogError(f"git log record for {sha[:12]!r} is not in the expected format")
    added: list[str] = []
    modified: list[str] = []
    removed: list[str] = []
    fields = changes.lstrip("\0\n").split("\0")
    for i in range(0, len(fields) - 1, 2):
        status, path = fields[i].strip(), fields[i + 1]
        if not status or not path:
            continue
        kind = status[0]
        if kind == "A":
            added.append(path)
        elif kind == "D":
            removed.append(path)
        else:  # M, T (type change); renames and copies are off (--no-renames)
            modified.append(path)
    # Trusted, typed values straight from git: skip validation, it is the hot path.
    return Commit.model_construct(
        sha=sha.lower(),
        message=message.rstrip("\n"),
        author_name=name,
        author_email=email,
        timestamp=datetime.fromtimestamp(int(seconds), UTC),
        added=tuple(added),
        modified=tuple(modified),
        removed=tuple(removed),
    )


def parse_log_stream(chunks: Iterable[str]) -> Iterator[Commit]:
    """Commits from LOG_FORMAT output delivered in chunks of any size, as they arrive."""
    pending = ""
    for chunk in chunks:
        pending += chunk
        parts = pending.split(_RS)
        pending = parts.pop()
        for part in parts:
            if part:
                yield parse_log_record(part)
    if pending:
        yield parse_log_record(pending)


# --- issue references -------------------------------------------------------------------

_NUMBER = r"(\d{1,9})"
# `owner/repo#N` or `#N`, not glued to a word, a path or an entity; bounded repeats only, and
# the look-behind lets a match start only after a separator, so the scan stays linear.
_REF_RE = re.compile(
    r"(?<![\w./&#@-])(?:([A-Za-z0-9][A-Za-z0-9-]{0,38})/([A-Za-z0-9._-]{1,100}))?#"
    + _NUMBER
    + r"(?![\w])"
)
_GH_RE = re.compile(r"(?<![\w./-])GH-" + _NUMBER + r"(?![\w])", re.IGNORECASE)
_URL_RE = re.compile(
    r"https?://([A-Za-z0-9.-]{1,253}(?::\d{1,5})?)/([A-Za-z0-9-]{1,39})/([A-Za-z0-9._-]{1,100})"
    r"/issues/" + _NUMBER + r"(?![\w/])"
)
_GITHUB = ("github.com", "www.github.com")
_TRAILER_RE = re.compile(r"^[ \t]*AI-Context-Issue[ \t]*:[ \t]*(.*)$", re.IGNORECASE | re.MULTILINE)
_TRAILER_NUMBER_RE = re.compile(r"(?<![\w/])#?" + _NUMBER + r"(?![\w])")
_INLINE_CODE_RE = re.compile(r"`[^`\n]*`")
_FENCE_RE = re.compile(r"[ \t]{0,3}(`{3,}|~{3,})")


def _without_code(text: str) -> str:
    """The text with fenced blocks and inline code spans blanked out."""
    kept: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        opened = _FENCE_RE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            kept.append("")
        elif opened:
            fence = opened.group(1)
            kept.append("")
        else:
            kept.append(_INLINE_CODE_RE.sub(" ", line))
    return "\n".join(kept)


def _same_repo(owner: str, name: str, repo: str | None) -> bool:
    return repo is None or f"{owner}/{name}".lower() == repo.strip().lower()


def issues_named(message: str, repo: str | None = None) -> list[int]:
    """Issue numbers a commit message names, in order of first mention, each once.

    `repo` ("owner/name") restricts cross-repository references to that repository.
    """
    found: dict[int, int] = {}  # number -> position of first mention

    def add(number: str, position: int) -> None:
        value = int(number)
        if value > 0 and value not in found:
            found[value] = position

    text = _without_code(message)
    for match in _REF_RE.finditer(text):
        owner, name, number = match.groups()
        if owner is None or _same_repo(owner, name, repo):
            add(number, match.start())
    for match in _GH_RE.finditer(text):
        add(match.group(1), match.start())
    for match in _URL_RE.finditer(text):
        host, owner, name, number = match.groups()
        ours = _same_repo(owner, name, repo) if repo is not None else host.lower() in _GITHUB
        if ours:
            add(number, match.start())
    for match in _TRAILER_RE.finditer(text):
        for number in _TRAILER_NUMBER_RE.finditer(match.group(1)):
            add(number.group(1), match.start(1) + number.start())
    return sorted(found, key=found.__getitem__)


# --- checkpoints ------------------------------------------------------------------------

CHECKPOINT_TRAILER = "AI-Context-Checkpoint"
CHECKPOINT_VERSION = 1
_CHECKPOINT_TRAILER_RE = re.compile(
    r"^[ \t]*AI-Context-Checkpoint[ \t]*:[ \t]*(.*?)[ \t]*$", re.IGNORECASE | re.MULTILINE
)
_VERSION_RE = re.compile(r"v(\d{1,6})", re.IGNORECASE)
_V1_SUBJECT_RE = re.compile(
    r"ai-context: (?P<text>\S.*?) completed \[issue:(?P<issue>\d{1,9})\]"
    r"(?: \[step:(?P<step>\d{1,9})\])?"
)
# A subject in the checkpoint shape, whatever its version: reported when the trailer is missing.
_CHECKPOINT_SHAPE_RE = re.compile(r"ai-context:.* completed \[issue:\d{1,9}\]", re.IGNORECASE)
_MAX_SUBJECT = 1000


class Checkpoint(BaseModel):
    """A plan step an agent recorded as completed, in a commit of its own."""

    model_config = ConfigDict(frozen=True)

    version: int
    issue: int
    step: int | None = None
    text: str


class CheckpointProblem(BaseModel):
    """A commit that claims to be a checkpoint but cannot be read as one; never guessed."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["unknown-version", "malformed", "unversioned"]
    version: str | None = None
    message: str


def format_checkpoint(text: str, issue: int, step: int | None = None) -> str:
    """The message of a checkpoint commit in the current format (v1)."""
    clean = " ".join(text.split())
    if not clean:
        raise ValueError("a checkpoint needs the text of the step it completes")
    if issue <= 0 or (step is not None and step <= 0):
        raise ValueError("issue and step numbers are positive")
    step_part = f" [step:{step}]" if step is not None else ""
    subject = f"ai-context: {clean} completed [issue:{issue}]{step_part}"
    return f"{subject}\n\n{CHECKPOINT_TRAILER}: v{CHECKPOINT_VERSION}\n"


def _read_v1(subject: str) -> Checkpoint | CheckpointProblem:
    match = _V1_SUBJECT_RE.fullmatch(subject) if len(subject) <= _MAX_SUBJECT else None
    if match is None:
        return CheckpointProblem(
            kind="malformed",
            version="v1",
            message="a v1 checkpoint subject reads 'ai-context: <step> completed [issue:N] "
            f"[step:K]'; this one is '{subject[:80]}'",
        )
    step = match.group("step")
    issue = int(match.group("issue"))
    if issue == 0 or step == "0" or (step is not None and int(step) == 0):
        return CheckpointProblem(
            kind="malformed", version="v1", message="issue and step numbers start at 1"
        )
    return Checkpoint(
        version=1,
        issue=issue,
        step=int(step) if step is not None else None,
        text=match.group("text").strip(),
    )


_READERS = {1: _read_v1}


def read_checkpoint(message: str) -> Checkpoint | CheckpointProblem | None:
    """The checkpoint a commit message records; None for an ordinary commit.

    The only reader of checkpoint messages: it dispatches on the trailer's version.
    """
    subject = message.split("\n", 1)[0].strip()
    versions = [m.group(1) for m in _CHECKPOINT_TRAILER_RE.finditer(message)]
    if not versions:
        if _CHECKPOINT_SHAPE_RE.match(subject[:_MAX_SUBJECT]):
            return CheckpointProblem(
                kind="unversioned",
                message=f"subject looks like a checkpoint but has no '{CHECKPOINT_TRAILER}: vN' "
                "trailer, so its format is unknown",
            )
        return None
    if len(set(versions)) > 1:
        return CheckpointProblem(
            kind="malformed",
            version=", ".join(versions),
            message=f"{CHECKPOINT_TRAILER} appears with different versions: " + ", ".join(versions),
        )
    raw = versions[0]
    version = _VERSION_RE.fullmatch(raw)
    if version is None:
        return CheckpointProblem(
            kind="malformed",
            version=raw[:20],
            message=f"{CHECKPOINT_TRAILER} is '{raw[:20]}', not a version such as v1",
        )
    reader = _READERS.get(int(version.group(1)))
    if reader is None:
        return CheckpointProblem(
            kind="unknown-version",
            version=f"v{int(version.group(1))}",
            message=f"unknown checkpoint format v{int(version.group(1))}; this tool reads "
            + ", ".join(f"v{v}" for v in sorted(_READERS)),
        )
    return reader(subject)


def issues_of(commit: Commit, repo: str | None = None) -> list[int]:
    """The issues a commit names, including the one its checkpoint subject records."""
    numbers = issues_named(commit.message, repo)
    checkpoint = read_checkpoint(commit.message)
    if isinstance(checkpoint, Checkpoint) and checkpoint.issue not in numbers:
        numbers.append(checkpoint.issue)
    return numbers


def group_by_issue(commits: Iterable[Commit], repo: str | None = None) -> dict[int, list[Commit]]:
    """Commits per issue they name (a commit naming two issues is under both), in input order."""
    groups: dict[int, list[Commit]] = {}
    for commit in commits:
        for number in issues_of(commit, repo):
            groups.setdefault(number, []).append(commit)
    return groups


# --- path coverage ----------------------------------------------------------------------

_GLOB_CHARS = frozenset("*?[")


def _segments(path: str) -> list[str]:
    return [s for s in path.replace("\\", "/").split("/") if s not in ("", ".")]


def _glob_segments(pattern: list[str], path: list[str]) -> bool:
    reach = {0}  # how many path segments the pattern so far can have consumed
    for seg in pattern:
        if not reach:
            return False
        if seg == "**":
            reach = set(range(min(reach), len(path) + 1))
        else:
            reach = {j + 1 for j in reach if j < len(path) and fnmatchcase(path[j], seg)}
    return len(path) in reach


def path_covered(path: str, entries: Iterable[str]) -> bool:
    """Whether a changed file is covered by one of a block's Files touched entries."""
    segs = _segments(path)
    if not segs:
        return True
    for entry in entries:
        pattern = _segments(entry)
        if not pattern:
            continue
        is_dir = entry.rstrip().endswith(("/", "\\"))
        if len(pattern) == 1 and not is_dir:
            # No slash: a file or directory of that name (or glob) at any depth, as in
            # .gitignore.
            name = pattern[0]
            if _GLOB_CHARS & set(name):
                if any(fnmatchcase(seg, name) for seg in segs):
                    return True
            elif name in segs:
                return True
            continue
        if _GLOB_CHARS & set(entry):
            if _glob_segments(pattern, segs) or _glob_segments([*pattern, "**"], segs):
                return True
        elif segs[: len(pattern)] == pattern:
            return True  # the file itself, or a directory it sits in
    return False


# --- comparing git with a block ---------------------------------------------------------


class GitRules(BaseModel):
    """Settings of the git rules (action inputs or `.github/ai-context.yml` may set them)."""

    model_config = ConfigDict(frozen=True)

    behind_after: timedelta = timedelta(hours=1)
    max_listed: int = 10


def _finding(code: str, severity: str, message: str, line: int | None, hint: str) -> Finding:
    return Finding.model_validate(
        {"code": code, "severity": severity, "message": message, "line": line, "hint": hint}
    )


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def behind_git(
    issue: int,
    block: Block,
    commits: Iterable[Commit],
    *,
    rules: GitRules | None = None,
    field_lines: Mapping[str, int] | None = None,
) -> list[Finding]:
    """AIC501: commits naming the issue landed after Last updated by more than the threshold."""
    rules = rules or GitRules()
    if block.last_updated is None:
        return []  # AIC201 already says Last updated is missing
    cutoff = block.last_updated + rules.behind_after
    late = [c for c in commits if c.timestamp > cutoff]
    if not late:
        return []
    newest = max(late, key=lambda c: c.timestamp)
    return [
        _finding(
            "AIC501",
            "warning",
            f"block is behind git: {_plural(len(late), 'commit')} naming #{issue} landed after "
            f"Last updated {format_timestamp(block.last_updated)}; the newest, {newest.short} "
            f"'{newest.subject[:60]}', is {format_duration(newest.timestamp - block.last_updated)}"
            " later",
            (field_lines or {}).get("last_updated"),
            f"Have the agent save its block (run `ai-context derive {issue}` in the checkout to "
            "see what git says).",
        )
    ]


def uncovered_files(block: Block, commits: Iterable[Commit]) -> list[str]:
    """Files the commits changed that the block's Files touched does not cover, in order."""
    entries = block.paths
    seen: dict[str, None] = {}
    for commit in commits:
        for path in commit.files:
            if path not in seen and not path_covered(path, entries):
                seen[path] = None
    return list(seen)


def files_drift(
    issue: int,
    block: Block,
    commits: Iterable[Commit],
    *,
    rules: GitRules | None = None,
    field_lines: Mapping[str, int] | None = None,
) -> list[Finding]:
    """AIC502 (info): changed files that Files touched does not mention."""
    rules = rules or GitRules()
    missing = uncovered_files(block, commits)
    if not missing:
        return []
    shown = ", ".join(missing[: rules.max_listed])
    more = f" (+{len(missing) - rules.max_listed} more)" if len(missing) > rules.max_listed else ""
    return [
        _finding(
            "AIC502",
            "info",
            f"{_plural(len(missing), 'file')} changed by commits naming #{issue} "
            f"{'is' if len(missing) == 1 else 'are'} not in Files touched: {shown}{more}",
            (field_lines or {}).get("files_touched"),
            "Add them to Files touched (globs such as src/booking/** are fine) at the next save.",
        )
    ]


def checkpoints_of(
    commits: Iterable[Commit],
) -> list[tuple[Commit, Checkpoint | CheckpointProblem]]:
    """Every commit that is (or claims to be) a checkpoint, with what reading it gave."""
    out: list[tuple[Commit, Checkpoint | CheckpointProblem]] = []
    for commit in commits:
        result = read_checkpoint(commit.message)
        if result is not None:
            out.append((commit, result))
    return out


def checkpoint_drift(
    issue: int,
    block: Block,
    commits: Iterable[Commit],
    *,
    field_lines: Mapping[str, int] | None = None,
) -> list[Finding]:
    """AIC503/AIC504 from the issue's checkpoints, AIC505/AIC506 for unreadable ones."""
    lines = field_lines or {}
    latest: dict[int, tuple[Commit, Checkpoint]] = {}
    out: list[Finding] = []
    for commit, result in checkpoints_of(commits):
        if isinstance(result, CheckpointProblem):
            out.append(checkpoint_problem_finding(commit, result))
            continue
        if result.issue != issue or result.step is None:
            continue
        known = latest.get(result.step)
        if known is None or commit.timestamp >= known[0].timestamp:
            latest[result.step] = (commit, result)
    steps = {step.number: step for step in block.plan}
    for number in sorted(latest):
        commit, checkpoint = latest[number]
        step = steps.get(number)
        if step is None:
            out.append(
                _finding(
                    "AIC504",
                    "warning",
                    f"checkpoint {commit.short} completed step {number} "
                    f"('{checkpoint.text[:60]}') but the plan has no step {number}",
                    lines.get("plan"),
                    "Make the plan list every step the agent checkpoints, numbered as in the "
                    "commits.",
                )
            )
        elif step.status not in ("done", "skipped"):
            out.append(
                _finding(
                    "AIC503",
                    "warning",
                    f"checkpoint {commit.short} at {format_timestamp(commit.timestamp)} completed "
                    f"step {number} ('{checkpoint.text[:60]}') but the plan says "
                    f"{step.status or 'no status'}",
                    lines.get("plan"),
                    f"Mark step {number} (done) in the block, or reopen it on purpose and say why "
                    "in Decisions.",
                )
            )
    return out


def checkpoint_problem_finding(commit: Commit, problem: CheckpointProblem) -> Finding:
    """AIC505 for an unknown format version, AIC506 for anything else unreadable."""
    if problem.kind == "unknown-version":
        return _finding(
            "AIC505",
            "warning",
            f"commit {commit.short}: {problem.message}",
            None,
            "Upgrade ai-context to read this checkpoint; it was not guessed at.",
        )
    return _finding(
        "AIC506",
        "warning",
        f"commit {commit.short}: checkpoint not read: {problem.message}",
        None,
        "Write checkpoint commits with `format_checkpoint` (ai-context save does).",
    )


def compare_block(
    issue: int,
    block: Block,
    commits: Iterable[Commit],
    *,
    repo: str | None = None,
    rules: GitRules | None = None,
    field_lines: Mapping[str, int] | None = None,
) -> list[Finding]:
    """Every git rule for one issue: the commits given are filtered to those naming it."""
    naming = [c for c in commits if issue in issues_of(c, repo)]
    if not naming:
        return []
    return [
        *behind_git(issue, block, naming, rules=rules, field_lines=field_lines),
        *files_drift(issue, block, naming, rules=rules, field_lines=field_lines),
        *checkpoint_drift(issue, block, naming, field_lines=field_lines),
    ]


def push_findings(
    payload: Mapping[str, Any],
    bodies: Mapping[int, str],
    *,
    repo: str | None = None,
    rules: GitRules | None = None,
) -> dict[int, list[Finding]]:
    """The git rules for a push event: for each issue given with its body, its findings.

    The router fetches the bodies of the issues the push names (`group_by_issue`); an issue
    whose body has no block gets no git finding (it is not a task).
    """
    commits = commits_from_push(payload)
    out: dict[int, list[Finding]] = {}
    for number, body in bodies.items():
        parsed = parse(body)
        if parsed.block is None:
            out[number] = []
            continue
        out[number] = compare_block(
            number, parsed.block, commits, repo=repo, rules=rules, field_lines=parsed.field_lines
        )
    return out


SESSION_FILE_NAME = "sp.json"


def session_files_changed(commits: Iterable[Commit]) -> list[str]:
    """Session files (`sp.json`, any directory) the commits leave added or modified, in order.

    Commits are taken oldest first, as a push payload lists them; a file whose last change
    removed it is not listed.
    """
    state: dict[str, bool] = {}
    for commit in commits:
        for path in (*commit.added, *commit.modified):
            if path.rsplit("/", 1)[-1] == SESSION_FILE_NAME:
                state.pop(path, None)
                state[path] = True
        for path in commit.removed:
            if path.rsplit("/", 1)[-1] == SESSION_FILE_NAME:
                state[path] = False
    return [path for path, present in state.items() if present]


# --- derive: what git can tell about one task -------------------------------------------


class AuthorActivity(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    email: str
    commits: int
    first: datetime
    last: datetime


class FileActivity(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    commits: int
    last_sha: str
    last_at: datetime
    removed: bool
    covered: bool | None  # None when there is no block to compare with


class CheckpointEntry(BaseModel):
    model_config = ConfigDict(frozen=True)

    sha: str
    timestamp: datetime
    checkpoint: Checkpoint | None = None
    problem: CheckpointProblem | None = None


class Derivation(BaseModel):
    """What git says about one issue, beside what its block says."""

    model_config = ConfigDict(frozen=True)

    issue: int
    commits: tuple[Commit, ...]  # newest first
    authors: tuple[AuthorActivity, ...]
    files: tuple[FileActivity, ...]
    checkpoints: tuple[CheckpointEntry, ...]  # oldest first, as the plan ran
    first_activity: datetime | None
    last_activity: datetime | None
    block: Block | None
    block_findings: tuple[Finding, ...]  # what parsing the body found
    findings: tuple[Finding, ...]  # the git rules


def derive(
    issue: int,
    commits: Iterable[Commit],
    body: str | None,
    *,
    repo: str | None = None,
    rules: GitRules | None = None,
) -> Derivation:
    """Rebuild what git can tell about a task and compare it with the block in `body`."""
    naming = sorted(
        (c for c in commits if issue in issues_of(c, repo)),
        key=lambda c: c.timestamp,
        reverse=True,
    )
    parsed = parse(body) if body is not None else None
    block = parsed.block if parsed is not None else None
    authors: dict[tuple[str, str], list[Commit]] = {}
    files: dict[str, list[Commit]] = {}
    for commit in naming:
        authors.setdefault((commit.author_name, commit.author_email.lower()), []).append(commit)
        for path in commit.files:
            files.setdefault(path, []).append(commit)
    entries = block.paths if block is not None else ()
    author_rows = sorted(
        (
            AuthorActivity(
                name=name,
                email=email,
                commits=len(group),
                first=group[-1].timestamp,
                last=group[0].timestamp,
            )
            for (name, email), group in authors.items()
        ),
        key=lambda a: (-a.commits, a.name),
    )
    file_rows = [
        FileActivity(
            path=path,
            commits=len(group),
            last_sha=group[0].sha,
            last_at=group[0].timestamp,
            removed=path in group[0].removed,
            covered=path_covered(path, entries) if block is not None else None,
        )
        for path, group in sorted(files.items())
    ]
    checkpoints = [
        CheckpointEntry(
            sha=commit.sha,
            timestamp=commit.timestamp,
            checkpoint=result if isinstance(result, Checkpoint) else None,
            problem=result if isinstance(result, CheckpointProblem) else None,
        )
        for commit, result in reversed(checkpoints_of(naming))
    ]
    findings = (
        compare_block(
            issue,
            block,
            naming,
            repo=repo,
            rules=rules,
            field_lines=parsed.field_lines if parsed else None,
        )
        if block is not None
        else [checkpoint_problem_finding(c, p) for c, p in _problems(naming)]
    )
    return Derivation(
        issue=issue,
        commits=tuple(naming),
        authors=tuple(author_rows),
        files=tuple(file_rows),
        checkpoints=tuple(checkpoints),
        first_activity=naming[-1].timestamp if naming else None,
        last_activity=naming[0].timestamp if naming else None,
        block=block,
        block_findings=tuple(parsed.findings) if parsed is not None else (),
        findings=tuple(findings),
    )


def _problems(commits: Iterable[Commit]) -> list[tuple[Commit, CheckpointProblem]]:
    return [(c, r) for c, r in checkpoints_of(commits) if isinstance(r, CheckpointProblem)]
