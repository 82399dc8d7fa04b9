"""The link: which ClickUp task an issue body names (a `ClickUp:` line, a URL, a CU- token),
and whether it may be followed: anyone can link any task, so the mirror follows a link only
when the issue's author or its block's actor is trusted, and writes a field only when it does
not already mirror another issue. Otherwise a finding on the issue, and no write."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from ai_context.core.block.syntax import outside_fences
from ai_context.core.findings import Finding
from ai_context.core.models import Issue
from ai_context.rules.actors import ActorMap, identity

# A custom task id is a prefix of letters (and digits) and a number: DEV-123.
_CUSTOM_RE = re.compile(r"[A-Za-z][A-Za-z0-9]{0,15}-\d{1,12}")
_NATIVE_ID = r"[0-9a-z]{3,24}"
_NATIVE_RE = re.compile(_NATIVE_ID)
_URL_RE = re.compile(
    r"https?://app\.clickup\.com/t/(?:(?P<team>\d{1,20})/)?(?P<id>[A-Za-z0-9-]{1,40})(?![\w-])"
)
_LABEL_RE = re.compile(
    r"^\s{0,3}(?:[-*+]\s+)?(?:\*\*|__)?clickup(?:[ _-]task)?(?:\*\*|__)?\s*:\s*(?:\*\*|__)?"
    r"\s*(?P<value>.*)$",
    re.IGNORECASE,
)
# ClickUp's GitHub convention: CU-<id> in a title or message, CU-<id>_<name> in a branch.
_CU_TOKEN_RE = re.compile(r"(?<![\w/-])[Cc][Uu]-(?P<id>" + _NATIVE_ID + r")(?![A-Za-z0-9-])")


class Link(BaseModel):
    """Which ClickUp task an issue names, and where in its body (1-based line)."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    task_id: str
    custom: bool = False  # a custom task id (DEV-123): needs custom_task_ids=true&team_id=
    team_id: str | None = None  # the workspace, from the URL or the clickup-team-id setting
    line: int = 1
    text: str = ""  # as written, for messages

    @property
    def key(self) -> str:
        """Identity of the task across issues: native ids as they are, custom ids per team."""
        return f"{self.team_id or '?'}/{self.task_id.upper()}" if self.custom else self.task_id

    @property
    def resolvable(self) -> bool:
        return not self.custom or self.team_id is not None


def _link(word: str, team_id: str | None, line: int, text: str) -> Link | None:
    """A link to WORD when it is a custom task id (DEV-123) or a native one, else None."""
    if _CUSTOM_RE.fullmatch(word):
        return Link(task_id=word.upper(), custom=True, team_id=team_id, line=line, text=text)
    if _NATIVE_RE.fullmatch(word):
        return Link(task_id=word, team_id=team_id, line=line, text=text)
    return None


def _from_url(match: re.Match[str], line: int, team_id: str | None) -> Link | None:
    return _link(match["id"], match["team"] or team_id, line, match[0])


def _from_value(value: str, line: int, team_id: str | None) -> Link | None:
    """The value of a `ClickUp:` line: a URL, a CU- token, a custom id or a bare task id."""
    if url := _URL_RE.search(value):
        return _from_url(url, line, team_id)
    if token := _CU_TOKEN_RE.search(value):
        return _link(token["id"], team_id, line, token[0])
    word = value.strip().strip("`*_[]()<>#").strip()
    return _link(word, team_id, line, word)


def find_link(body: str, team_id: str | None = None) -> Link | None:
    """The ClickUp task a body names outside code fences, or None: a `ClickUp:` line, else the
    first task URL, else the first `CU-<id>` token. TEAM_ID resolves custom ids without one."""
    url: Link | None = None
    token: Link | None = None
    for index, line in outside_fences(body.splitlines()):
        number = index + 1
        labelled = _LABEL_RE.match(line)
        if labelled and (found := _from_value(labelled["value"], number, team_id)):
            return found
        if url is None and (match := _URL_RE.search(line)):
            url = _from_url(match, number, team_id)
        if token is None and (match := _CU_TOKEN_RE.search(line)):
            token = _link(match["id"], team_id, number, match[0])
    return url or token


# --- may the link be followed ---------------------------------------------------------------

TRUSTED_ASSOCIATIONS = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})
# An issue as the mirror text names it: its URL (any GitHub host), or owner/name#N.
_ISSUE_URL_RE = re.compile(r"https?://[^\s/]+/([\w.-]+/[\w.-]+)/issues/(\d+)(?!\d)")
_ISSUE_REF_RE = re.compile(r"(?<![\w/.-])([\w.-]+/[\w.-]+)#(\d+)(?!\d)")


def trusted(issue: Issue, actor: str | None, actors: ActorMap) -> bool:
    """Whether ISSUE's link may be followed: its author is a member, owner or collaborator
    of the repository (or a login the `actors:` section names), or ACTOR, its block's
    Active actor, is an actor the section lists."""
    if (issue.author_association or "").upper() in TRUSTED_ASSOCIATIONS:
        return True
    # Logins: the owners and the bot aliases (never an actor id, which anyone may register
    # as a login); actor ids: the ids and aliases a block's Active actor names.
    logins = {identity(key) for a in actors.actors for key in (a.owner or "", *a.aliases)}
    ids = {identity(key) for a in actors.actors for key in (a.id, *a.aliases)}
    author = identity(issue.author) if issue.author else None
    return (author is not None and author in logins) or (
        actor is not None and identity(actor) in ids
    )


def untrusted(link: Link, issue: Issue, actor: str | None) -> Finding:
    who = issue.author or "an unknown account"
    association = (issue.author_association or "unknown").lower()
    return Finding(
        code="AIC705",
        severity="warning",
        message=f"ClickUp link {link.text or link.task_id} not followed: the issue's author "
        f"({who}, {association}) is not a member, owner or collaborator of the repository, "
        f"and its block's actor ({actor or 'none'}) is not in the config's actors:",
        line=link.line,
        hint="A maintainer can vouch for it: list the block's actor (or the author's login "
        "as an owner) under actors: in the config file, or link the task from an issue a "
        "member opened.",
    )


IssueKey = tuple[str, int]  # (owner/name in lower case, number)


def issue_key(issue: Issue) -> IssueKey:
    return issue.repository.lower(), issue.number


def mirrored_from(value: object, issue: Issue) -> IssueKey | None:
    """The other issue a ClickUp field VALUE mirrors, when it names issues and not ISSUE;
    None when it names ISSUE, or none at all (empty, or a template without the issue's URL)."""
    if not isinstance(value, str):
        return None
    named = {(repo.lower(), int(n)) for repo, n in _ISSUE_URL_RE.findall(value)}
    named |= {(repo.lower(), int(n)) for repo, n in _ISSUE_REF_RE.findall(value)}
    if not named or issue_key(issue) in named:
        return None
    return sorted(named)[0]


def taken(link: Link, other: IssueKey) -> Finding:
    name = f"{other[0]}#{other[1]}"
    return Finding(
        code="AIC706",
        severity="warning",
        message=f"ClickUp task {link.text or link.task_id} already mirrors {name}: not "
        "written from this issue",
        line=link.line,
        hint=f"Link each ClickUp task from one issue only; to move the mirror here, remove "
        f"the link from {name} (or clear the task's field in ClickUp) first.",
    )
