"""POST /graphql for the loopback GitHub (a mixin of GitHubFake).

Queries run in graphql-core, a real GraphQL executor: a document GitHub would refuse (a field
it does not have, a wrong argument, a fragment on the wrong type) is refused here too, and
aliases, fragments and variables work as they do there. The schema is SDL below, a small
subset of GitHub's public one (tests/test_github_graphql.py checks that every type, field and
argument declared here is in GitHub's, with the same type); the resolvers read the fake's own
issues and comments, so a comment the REST side created is what a query sees.

As GitHub does: a bot's login comes without `[bot]` (`github-actions`, `__typename` Bot,
where REST says `github-actions[bot]`); a repository or issue that is not there is null with a
NOT_FOUND error; a connection needs `first` or `last`, at most 100; errors come with HTTP 200.
"""

from __future__ import annotations

import base64
from functools import cache
from typing import TYPE_CHECKING, Any

from .base import Reply, Request, route
from .github_model import iso

if TYPE_CHECKING:
    from collections.abc import Callable

    from graphql import GraphQLResolveInfo, GraphQLSchema

    from .github import Comment, Issue, Repo
    from .github_model import Edit

SDL = """
scalar BigInt
scalar DateTime
scalar URI

type Query {
  repository(owner: String!, name: String!, followRenames: Boolean = true): Repository
}

type Repository {
  nameWithOwner: String!
  issue(number: Int!): Issue
}

type Issue {
  number: Int!
  body: String!
  comments(after: String, before: String, first: Int, last: Int): IssueCommentConnection!
  userContentEdits(after: String, before: String, first: Int, last: Int): UserContentEditConnection
}

type UserContentEditConnection {
  totalCount: Int!
  pageInfo: PageInfo!
  nodes: [UserContentEdit]
}

type UserContentEdit {
  id: ID!
  diff: String
  editedAt: DateTime!
  editor: Actor
}

type IssueCommentConnection {
  totalCount: Int!
  pageInfo: PageInfo!
  nodes: [IssueComment]
}

type PageInfo {
  hasNextPage: Boolean!
  hasPreviousPage: Boolean!
  startCursor: String
  endCursor: String
}

type IssueComment {
  databaseId: Int
  fullDatabaseId: BigInt
  body: String!
  createdAt: DateTime!
  updatedAt: DateTime!
  url: URI!
  author: Actor
}

interface Actor {
  login: String!
  url: URI!
}

type User implements Actor {
  login: String!
  url: URI!
}

type Bot implements Actor {
  login: String!
  url: URI!
}
"""
MAX_PAGE = 100


class GraphQLEndpoint:
    """The route; GitHubFake supplies `repos`, `comments`, `html_base` and `_comment_json`."""

    @route("POST", "/graphql")
    def graphql(self, req: Request) -> Reply:
        from graphql import graphql_sync

        payload = req.json if isinstance(req.json, dict) else {}
        query, variables = payload.get("query"), payload.get("variables") or {}
        if not isinstance(query, str) or not isinstance(variables, dict):
            return Reply(400, {"message": "Problems parsing JSON", "documentation_url": DOCS})
        result = graphql_sync(schema(), query, root_value=self, variable_values=variables)
        body: dict[str, Any] = {}
        if result.data is not None:
            body["data"] = result.data
        if result.errors:
            body["errors"] = [_github_error(error.formatted) for error in result.errors]
        return Reply(200, body)

    def not_found(self, req: Request) -> Reply:
        """GitHub Enterprise Server answers GraphQL at /api/graphql, beside (not under) the
        REST prefix /api/v3: with that prefix, the path the route above cannot see."""
        prefix = getattr(self, "prefix", "")
        if req.method == "POST" and prefix and req.path == prefix.removesuffix("/v3") + "/graphql":
            return self.graphql(req)
        return super().not_found(req)  # type: ignore[misc, no-any-return]


DOCS = "https://docs.github.com/graphql"


@cache
def schema() -> GraphQLSchema:
    """SDL with the resolvers over the fake's data (built once, on the first query)."""
    from graphql import build_schema

    built = build_schema(SDL)
    fields = {name: built.get_type(name).fields for name in ("Query", "Repository", "Issue")}  # type: ignore[union-attr]
    fields["Query"]["repository"].resolve = _repository
    fields["Repository"]["nameWithOwner"].resolve = lambda repo, info: repo.full_name
    fields["Repository"]["issue"].resolve = _issue
    fields["Issue"]["comments"].resolve = _comments
    fields["Issue"]["body"].resolve = lambda issue, info: issue.body or ""
    fields["Issue"]["userContentEdits"].resolve = _edits
    built.get_type("Actor").resolve_type = lambda value, info, kind: value["__typename"]  # type: ignore[union-attr]
    return built


def _not_found(message: str) -> Exception:
    from graphql import GraphQLError

    return GraphQLError(message, extensions={"type": "NOT_FOUND"})


def _github_error(formatted: dict[str, Any]) -> dict[str, Any]:
    """graphql-core's error as GitHub shapes it: `type` beside `message`, no `extensions`."""
    extensions = formatted.pop("extensions", None) or {}
    return {**({"type": extensions["type"]} if "type" in extensions else {}), **formatted}


def _repository(
    fake: GraphQLEndpoint, info: GraphQLResolveInfo, owner: str, name: str, **_: Any
) -> Repo:
    found = fake.repos.get(f"{owner}/{name}")  # type: ignore[attr-defined]
    if found is None:
        raise _not_found(f"Could not resolve to a Repository with the name '{owner}/{name}'.")
    return found  # type: ignore[no-any-return]


def _issue(repo: Repo, info: GraphQLResolveInfo, number: int) -> Issue:
    found = repo.issues.get(number)
    if found is None or found.pull_request:
        raise _not_found(f"Could not resolve to an Issue with the number of {number}.")
    return found


def _comments(issue: Issue, info: GraphQLResolveInfo, **page: Any) -> dict[str, Any]:
    """One page of the issue's comments, oldest first, as GitHub pages a connection."""
    fake: Any = info.root_value
    return _connection(
        "comments", fake.comments(issue.repo, issue.number), page, lambda c: _comment_node(fake, c)
    )


def _edits(issue: Issue, info: GraphQLResolveInfo, **page: Any) -> dict[str, Any]:
    """The body's revisions, newest first, each with the full text after it (`diff`), as
    GitHub lists them; none until the body is first edited, then the created text too."""
    fake: Any = info.root_value
    newest_first = list(reversed(issue.edits))
    return _connection("userContentEdits", newest_first, page, lambda e: _edit_node(fake, e))


def _connection(
    name: str, everything: list[Any], page: dict[str, Any], node: Callable[[Any], Any]
) -> dict[str, Any]:
    """One page of EVERYTHING as GitHub pages a connection (`first`/`last`, cursors)."""
    first, last = page.get("first"), page.get("last")
    if first is None and last is None:
        raise ValueError(
            f"You must provide a `first` or `last` value to properly paginate the `{name}` "
            "connection."
        )
    for argument, value in (("first", first), ("last", last)):
        if value is not None and not 0 <= value <= MAX_PAGE:
            raise ValueError(
                f"Requesting {value} records on the `{name}` connection exceeds the "
                f"`{argument}` limit of {MAX_PAGE} records."
            )
    start = _position(page.get("after"), -1) + 1
    end = min(_position(page.get("before"), len(everything)), len(everything))
    if first is not None:
        end = min(end, start + first)
    if last is not None:
        start = max(start, end - last)
    chunk = everything[start:end]
    return {
        "totalCount": len(everything),
        "pageInfo": {
            "hasNextPage": end < len(everything),
            "hasPreviousPage": start > 0,
            "startCursor": _cursor(start) if chunk else None,
            "endCursor": _cursor(end - 1) if chunk else None,
        },
        "nodes": [node(item) for item in chunk],
    }


def _cursor(index: int) -> str:
    return base64.b64encode(f"cursor:v2:{index}".encode()).decode()


def _position(cursor: str | None, default: int) -> int:
    if cursor is None:
        return default
    try:
        return int(base64.b64decode(cursor).decode().rsplit(":", 1)[1])
    except (ValueError, IndexError):
        raise ValueError(f"`{cursor}` does not appear to be a valid cursor.") from None


def _comment_node(fake: Any, comment: Comment) -> dict[str, Any]:
    rest = fake._comment_json(comment)  # the REST shape: the same times and URL
    return {
        "databaseId": comment.id,
        "fullDatabaseId": str(comment.id),  # BigInt goes over the wire as a string
        "body": comment.body,
        "createdAt": rest["created_at"],
        "updatedAt": rest["updated_at"],
        "url": rest["html_url"],
        "author": _actor(fake, comment.user),
    }


def _edit_node(fake: Any, edit: Edit) -> dict[str, Any]:
    return {
        "id": f"UCE_fake{edit.id}",
        "diff": edit.text,
        "editedAt": iso(edit.at),
        "editor": _actor(fake, edit.editor),
    }


def _actor(fake: Any, login: str) -> dict[str, Any]:
    """GraphQL's actor: a bot's login without the `[bot]` REST shows, its URL an app's."""
    if login.endswith("[bot]"):
        name = login.removesuffix("[bot]")
        return {"__typename": "Bot", "login": name, "url": f"{fake.html_base}/apps/{name}"}
    return {"__typename": "User", "login": login, "url": f"{fake.html_base}/{login}"}
