"""A directory of issues as Markdown files with a YAML front matter: the offline stand-in for
GitHub used by the demo and tests."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from ai_context.core.duration_field import Time
from ai_context.core.errors import UsageError
from ai_context.core.fields import explain
from ai_context.core.models import Issue


class FrontMatter(BaseModel):
    """An issue file's header as people write it: `number: "7"` and a day without a time
    (`2026-05-26`, midnight) read; times without an offset are UTC (Issue's rule); keys that
    are no Issue field are ignored."""

    model_config = ConfigDict(extra="ignore")

    number: int
    title: str
    body: str = ""
    state: Literal["open", "closed"] = "open"
    state_reason: str | None = None
    labels: list[str] = []
    assignees: list[str] = []
    author: str | None = None
    author_association: str | None = None
    comments: int | None = None
    updated_at: Time | None = None
    closed_at: Time | None = None
    html_url: str = ""
    repository: str = ""
    is_pull_request: bool = False

    @field_validator("number", "comments", mode="before")
    @classmethod
    def _not_a_bool(cls, value: Any) -> Any:
        if isinstance(value, bool):  # YAML's `true`: a typo, not issue number 1
            raise ValueError(f"{value} is not a number")
        return value


# A `---` line opens the header (spaces after it allowed) and another (spaces around it) ends it.
_OPENING_RE = re.compile(r"---[^\S\n]*\n")
_FRONT_MATTER_RE = re.compile(r"---[^\S\n]*\n(.*?)^[^\S\n]*---[^\S\n]*(?:\n|\Z)", re.S | re.M)


class StoreError(UsageError):
    """A store file that cannot be read; the message names the file and what to fix."""


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """`---\\nyaml\\n---\\nbody` -> (header, body); text without a header is all body."""
    normalised = text.removeprefix("\ufeff")
    if not _OPENING_RE.match(normalised):
        return {}, normalised
    matter = _FRONT_MATTER_RE.match(normalised)
    if matter is None:
        raise ValueError("the front matter has no closing '---' line")
    loaded = yaml.safe_load(matter.group(1)) or {}
    if not isinstance(loaded, dict):
        raise ValueError("the front matter is not a YAML mapping")
    return loaded, normalised[matter.end() :]


def issue_from_file(path: Path, repository: str = "") -> Issue:
    try:
        header, body = split_front_matter(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError) as exc:
        raise StoreError(f"{path}: cannot read issue file: {exc}") from exc
    header.setdefault("title", path.stem)
    header.setdefault("repository", repository)
    if "number" not in header:
        raise StoreError(f"{path}: the front matter needs 'number: N'")
    try:
        matter = FrontMatter.model_validate({**header, "body": body})
    except ValidationError as exc:
        raise StoreError(f"{path}: bad front matter: {explain(exc)}") from exc
    return Issue(**dict(matter))


class DirectoryStore:
    """Issues from `*.md` files in one directory."""

    def __init__(self, root: Path, repository: str = "local/examples") -> None:
        if not root.is_dir():
            raise StoreError(f"{root}: not a directory of issue files")
        self.root = root
        self.repository = repository
        self._issues: dict[int, Issue] = {}
        for path in sorted(root.glob("*.md")):
            issue = issue_from_file(path, repository)
            if issue.number in self._issues:
                raise StoreError(f"{path}: issue number {issue.number} is used twice")
            self._issues[issue.number] = issue

    def list_issues(self, state: str = "open") -> list[Issue]:
        return [i for _, i in sorted(self._issues.items()) if state in ("all", i.state)]

    def get_issue(self, number: int) -> Issue:
        try:
            return self._issues[number]
        except KeyError:
            raise StoreError(f"{self.root}: no issue #{number}") from None
