"""The link: which ClickUp task an issue body names (a `ClickUp:` line, a URL, a CU- token)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from pydantic import BaseModel, ConfigDict

# A custom task id is a prefix of letters (and digits) and a number: DEV-123.
_CUSTOM_ID = r"[A-Za-z][A-Za-z0-9]{0,15}-\d{1,12}"
_NATIVE_ID = r"[0-9a-z]{3,24}"
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
_CUSTOM_RE = re.compile(_CUSTOM_ID)
_NATIVE_RE = re.compile(_NATIVE_ID)
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


class Link(BaseModel):
    """Which ClickUp task an issue names, and where in its body (1-based line)."""

    model_config = ConfigDict(frozen=True)

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


def _closes(line: str, run: str, fence: str) -> bool:
    return run[0] == fence[0] and len(run) >= len(fence) and not line.strip()[len(run) :]


def _outside_fences(body: str) -> Iterator[tuple[int, str]]:
    fence: str | None = None
    for number, line in enumerate(body.splitlines(), start=1):
        opened = _FENCE_RE.match(line)
        if fence is None:
            if opened:
                fence = opened.group(1)
                continue
            yield number, line
        elif opened and _closes(line, opened.group(1), fence):
            fence = None


def _from_url(match: re.Match[str], line: int, team_id: str | None) -> Link | None:
    task, team = match.group("id"), match.group("team")
    if _CUSTOM_RE.fullmatch(task):
        return Link(
            task_id=task.upper(), custom=True, team_id=team or team_id, line=line, text=match[0]
        )
    if _NATIVE_RE.fullmatch(task):
        return Link(task_id=task, team_id=team or team_id, line=line, text=match.group(0))
    return None


def _from_value(value: str, line: int, team_id: str | None) -> Link | None:
    """The value of a `ClickUp:` line: a URL, a CU- token, a custom id or a bare task id."""
    if url := _URL_RE.search(value):
        return _from_url(url, line, team_id)
    if token := _CU_TOKEN_RE.search(value):
        return Link(task_id=token.group("id"), team_id=team_id, line=line, text=token.group(0))
    word = value.strip().strip("`*_[]()<>#").strip()
    if _CUSTOM_RE.fullmatch(word):
        return Link(task_id=word.upper(), custom=True, team_id=team_id, line=line, text=word)
    if _NATIVE_RE.fullmatch(word):
        return Link(task_id=word, team_id=team_id, line=line, text=word)
    return None


def find_link(body: str, team_id: str | None = None) -> Link | None:
    """The ClickUp task an issue body names, outside code fences, or None.

    In order: a `ClickUp: <url or id>` line, the first app.clickup.com/t/ URL, the first
    `CU-<id>` token (ClickUp's own GitHub convention). TEAM_ID (the clickup-team-id setting)
    resolves custom ids when the URL does not carry the workspace.
    """
    url: Link | None = None
    token: Link | None = None
    for number, line in _outside_fences(body):
        labelled = _LABEL_RE.match(line)
        if labelled:
            found = _from_value(labelled.group("value"), number, team_id)
            if found is not None:
                return found
        if url is None and (match := _URL_RE.search(line)):
            url = _from_url(match, number, team_id)
        if token is None and (match := _CU_TOKEN_RE.search(line)):
            token = Link(task_id=match["id"], team_id=team_id, line=number, text=match[0])
    return url or token
