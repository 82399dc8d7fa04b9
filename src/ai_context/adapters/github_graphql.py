"""Many issues' comments in one GitHub GraphQL query (the first 100 comments of up to 100
issues, charged to GraphQL's budget), as the same `Comment` models the REST listing gives.

Never a guess: an issue with more comments than the first page, or whose part of the answer is
missing or malformed, comes back unread (and so does every issue of a failed query), for the
caller to read by REST.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ai_context.adapters.github import GitHub, GitHubError
from ai_context.adapters.github_json import parse_time
from ai_context.core.fields import whole
from ai_context.core.models import Comment

BATCH = 100  # issues a query: 100 x 100 comments stays far below GitHub's 500,000-node limit
GHOST = "ghost"  # REST's login for a deleted account, whose comments GraphQL gives no author
BOT_SUFFIX = "[bot]"

FRAGMENT = """
fragment IssueComments on Issue {
  comments(first: 100) {
    totalCount
    pageInfo { hasNextPage endCursor }
    nodes { fullDatabaseId body createdAt updatedAt url author { __typename login } }
  }
}
"""


@dataclass
class CommentsRead:
    """What the queries read: COMMENTS of the issues read whole; UNREAD, the issues to read by
    REST; PROBLEMS, one line for each query or answer that failed."""

    comments: dict[int, list[Comment]] = field(default_factory=dict)
    unread: list[int] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def comments_query(numbers: Sequence[int]) -> str:
    """One query for the comments of issues NUMBERS, one alias each (`i42: issue(number: 42)`);
    `fullDatabaseId`, as comment ids passed GraphQL's Int."""
    aliases = "".join(
        f"    i{int(n)}: issue(number: {int(n)}) {{ ...IssueComments }}\n" for n in numbers
    )
    return (
        "query IssueComments($owner: String!, $name: String!) {\n"
        "  repository(owner: $owner, name: $name) {\n"
        f"{aliases}  }}\n}}\n{FRAGMENT}"
    )


def read_comments(client: GitHub, numbers: Sequence[int]) -> CommentsRead:
    """The comments of issues NUMBERS, one query per BATCH of them."""
    owner, name = client.repository.split("/", 1)
    out = CommentsRead()
    for start in range(0, len(numbers), BATCH):
        chunk = list(numbers[start : start + BATCH])
        try:
            data = client.graphql(comments_query(chunk), {"owner": owner, "name": name})
        except GitHubError as exc:
            out.unread += chunk
            out.problems.append(f"the GraphQL read of {len(chunk)} issues' comments failed ({exc})")
            continue
        read, unread, broken = parse_comments(data, chunk)
        out.comments.update(read)
        out.unread += unread + broken
        if broken:
            shown = ", ".join(f"#{n}" for n in broken)
            out.problems.append(f"the GraphQL answer lacked the comments of {shown}")
    return out


def parse_comments(
    data: Any, numbers: Sequence[int]
) -> tuple[dict[int, list[Comment]], list[int], list[int]]:
    """A query's `data` -> (issue -> its comments, the issues with more than one page, the
    issues whose part is missing, null or malformed)."""
    repository = data.get("repository") if isinstance(data, dict) else None
    read: dict[int, list[Comment]] = {}
    paged: list[int] = []
    broken: list[int] = []
    for number in numbers:
        node = repository.get(f"i{number}") if isinstance(repository, dict) else None
        try:
            comments = issue_comments(node, number)
        except (KeyError, TypeError, ValueError, AttributeError):
            broken.append(number)
            continue
        if comments is None:
            paged.append(number)
        else:
            read[number] = comments
    return read, paged, broken


def issue_comments(node: Any, number: int) -> list[Comment] | None:
    """One issue's comments from its alias; None when they go on past the first page. Raises
    (KeyError, TypeError, ValueError) on a part that is missing, null or not as asked."""
    connection = node["comments"]
    if connection["pageInfo"]["hasNextPage"] is not False:
        return None
    nodes = connection["nodes"]
    if not isinstance(nodes, list) or int(connection["totalCount"]) != len(nodes):
        raise ValueError(f"#{number}: {connection['totalCount']} comments, {len(nodes)} given")
    return [comment_from_node(item, number) for item in nodes]


def comment_from_node(node: Mapping[str, Any], number: int) -> Comment:
    """One IssueComment node -> the Comment the REST listing gives for it."""
    return Comment(
        id=_whole_id(node["fullDatabaseId"]),
        body=str(node["body"]),
        author=author_login(node["author"]),
        created_at=_time(node["createdAt"]),
        updated_at=_time(node["updatedAt"]),
        html_url=str(node["url"]),
        issue_number=number,
    )


def author_login(author: Mapping[str, Any] | None) -> str:
    """The login as REST spells it (a Bot's with `[bot]`, a deleted account `ghost`), so our
    comment is recognised as after a REST read."""
    if author is None:
        return GHOST
    login = str(author["login"])
    if author.get("__typename") == "Bot" and not login.endswith(BOT_SUFFIX):
        return login + BOT_SUFFIX
    return login


def _whole_id(value: Any) -> int:
    """A BigInt id (a string of digits, or a number); ValueError on anything else."""
    number = None if isinstance(value, bool) else whole(str(value), max_digits=19)  # < 2**63
    if number is None:
        raise ValueError(f"not a comment id: {value!r}")
    return number


def _time(value: Any) -> datetime:
    """A comment's time, which GraphQL always gives: a null one means a broken answer."""
    when = parse_time(value)
    if when is None:
        raise ValueError(f"not a time: {value!r}")
    return when
