"""An issue's body and its latest revisions, from GitHub's edit history (GraphQL's
`userContentEdits`, newest first, full texts): GitHub's PATCH takes no precondition, so an edit
that lands between a writer's re-read and its PATCH is found only there.
"""

from __future__ import annotations

from typing import Any

from ai_context.adapters.github import GitHub, GitHubError
from ai_context.core.models import BodyHistory

REVISIONS = 20  # a write finds its own revision among the newest few

QUERY = """
query BodyHistory($owner: String!, $name: String!, $number: Int!, $first: Int!) {
  repository(owner: $owner, name: $name) {
    issue(number: $number) {
      body
      userContentEdits(first: $first) {
        pageInfo { hasNextPage }
        nodes { diff }
      }
    }
  }
}
"""


def read_history(client: GitHub, number: int) -> BodyHistory:
    """Issue NUMBER's body now and its REVISIONS latest revisions; GitHubError when the
    answer is not one (the caller then cannot tell what a write overwrote)."""
    owner, name = client.repository.split("/", 1)
    variables = {"owner": owner, "name": name, "number": int(number), "first": REVISIONS}
    data = client.graphql(QUERY, variables)
    try:
        issue: Any = data["repository"]["issue"]
        body = issue["body"]
        edits = issue["userContentEdits"] or {"nodes": [], "pageInfo": {"hasNextPage": False}}
        texts = tuple(_text(node) for node in edits["nodes"] or ())
        complete = not edits["pageInfo"]["hasNextPage"]
    except (KeyError, TypeError) as exc:
        raise GitHubError(f"issue #{number}'s edit history: an answer without {exc}") from None
    if not isinstance(body, str):
        raise GitHubError(f"issue #{number}'s edit history: an answer without its body")
    return BodyHistory(body=body, edits=texts, complete=complete)


def _text(node: Any) -> str | None:
    diff = node.get("diff") if isinstance(node, dict) else None
    return diff if isinstance(diff, str) else None
