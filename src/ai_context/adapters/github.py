"""GitHub adapter (PyGithub): the only module that talks to GitHub. Hands back plain models.

Quota matters, so two PyGithub habits are avoided on purpose:
- reading `issue.pull_request` (or `raw_data`) on a listed issue that is not a pull request
  makes PyGithub fetch the whole issue again; we read the listed JSON as it came;
- the default retry re-sends POSTs on 5xx, which can duplicate a comment; ours retries a POST
  only when GitHub refused it for a rate limit (nothing was created then).
Every HTTP attempt, retries included, is counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from github import Auth, Github, GithubException
from pydantic import SecretStr

from ai_context.adapters.github_wire import (
    API_HEADERS,
    CallCounter,
    GitHubConfigError,
    GitHubConflict,
    GitHubError,
    GitHubNotFound,
    GitHubUnavailable,
    _CountingRetry,
    _raw,
    _translated,
    comment_from_json,
    git_commit_from_json,
    issue_from_json,
    url_problem,
)
from ai_context.core.models import Comment, GitCommit, Issue

DEFAULT_API_URL = "https://api.github.com"


class GitHub:
    """One repository on one GitHub (github.com or Enterprise Server at `api_url`)."""

    def __init__(
        self,
        token: SecretStr,
        repository: str,
        *,
        api_url: str = DEFAULT_API_URL,
        timeout: float = 15,
        write_interval: float = 1.0,
        retries: int = 5,
        backoff: float = 1.0,
        max_rate_limit_wait: float = 300,
        counter: CallCounter | None = None,
    ) -> None:
        if repository.count("/") != 1 or not all(repository.split("/")):
            raise GitHubConfigError(
                f"repository {repository!r} is not owner/name; set GITHUB_REPOSITORY"
            )
        problem = url_problem(api_url)
        if problem is not None:
            raise GitHubConfigError(f"environment variable GITHUB_API_URL: {problem}")
        self.repository = repository
        self.counter = counter or CallCounter()
        retry = _CountingRetry(
            total=retries,
            backoff_factor=backoff,
            secondary_rate_wait=60,
            max_rate_limit_wait=max_rate_limit_wait,
            status_forcelist=[*range(500, 600), 429],
            allowed_methods=frozenset({"GET", "HEAD", "OPTIONS", "PUT", "PATCH", "DELETE"}),
        )
        retry.counter = self.counter
        self._gh = Github(
            base_url=api_url.rstrip("/"),
            auth=Auth.Token(token.get_secret_value()),
            per_page=100,
            timeout=int(timeout),
            retry=retry,
            seconds_between_requests=None,
            seconds_between_writes=write_interval or None,
            lazy=True,  # never fetch an object just to build a URL from it
        )
        self._repo = self._gh.get_repo(repository)

    def __repr__(self) -> str:
        return f"GitHub(repository={self.repository!r}, token=***)"

    # --- reads ----------------------------------------------------------------------------

    def list_issues(
        self,
        state: str = "open",
        *,
        assignee: str | None = None,
        labels: Sequence[str] = (),
        sort: str | None = None,
        limit: int | None = None,
        since: datetime | None = None,
    ) -> list[Issue]:
        """Issues (not pull requests), 100 a page, filtered by GitHub, newest first by SORT
        (created, updated, comments) when given. Pages stop once LIMIT issues are in hand."""
        filters: dict[str, Any] = {"state": state}
        if assignee is not None:
            filters["assignee"] = assignee
        if labels:
            filters["labels"] = list(labels)
        if sort is not None:
            filters.update(sort=sort, direction="desc")
        if since is not None:  # updated at or after: GitHub filters, we pay for no more
            filters["since"] = _utc(since)
        found: list[Issue] = []
        with _translated("list issues"):
            for raw in (_raw(i) for i in self._repo.get_issues(**filters)):
                if "pull_request" in raw:
                    continue
                found.append(issue_from_json(raw, self.repository))
                if limit is not None and len(found) >= limit:
                    break
        return found

    def get_issue(self, number: int) -> Issue:
        with _translated(f"read issue #{number}"):
            return issue_from_json(self._request("GET", f"/issues/{number}"), self.repository)

    def list_comments(self, number: int) -> list[Comment]:
        with _translated(f"list comments of #{number}"):
            comments = self._repo.get_issue(number).get_comments()  # get_issue is lazy: no GET
            return [comment_from_json(_raw(c)) for c in comments]

    def list_repo_comments(self, since: datetime) -> list[Comment]:
        """Every comment of the repository updated at or after SINCE, 100 a page: one listing
        that settles the races of a whole run's new comments (jobs/settle.py)."""
        with _translated("list the repository's comments"):
            comments = self._repo.get_issues_comments(since=_utc(since))
            return [comment_from_json(_raw(c)) for c in comments]

    @property
    def rate_limit(self) -> tuple[int, int] | None:
        """(remaining, limit) from the last response's headers; costs no call."""
        # Github.rate_limiting would spend a GET /rate_limit when nothing was asked yet.
        remaining, limit = self._gh.requester.rate_limiting
        return None if limit < 0 else (remaining, limit)

    # --- writes ---------------------------------------------------------------------------

    def create_issue(self, title: str, body: str, labels: Sequence[str] = ()) -> Issue:
        with _translated("create an issue"):
            data = self._request(
                "POST", "/issues", {"title": title, "body": body, "labels": list(labels)}
            )
            return issue_from_json(data, self.repository)

    def update_issue_body(self, number: int, body: str) -> Issue:
        with _translated(f"update issue #{number}"):
            data = self._request("PATCH", f"/issues/{number}", {"body": body})
            return issue_from_json(data, self.repository)

    def create_comment(self, number: int, body: str) -> Comment:
        with _translated(f"comment on #{number}"):
            return comment_from_json(
                self._request("POST", f"/issues/{number}/comments", {"body": body})
            )

    def edit_comment(self, comment_id: int, body: str) -> Comment:
        with _translated(f"edit comment {comment_id}"):
            return comment_from_json(
                self._request("PATCH", f"/issues/comments/{comment_id}", {"body": body})
            )

    def delete_comment(self, comment_id: int) -> None:
        with _translated(f"delete comment {comment_id}"):
            try:
                self._request("DELETE", f"/issues/comments/{comment_id}")
            except GithubException as exc:
                if exc.status != 404:  # already gone is what we wanted
                    raise

    def add_labels(self, number: int, labels: Iterable[str]) -> None:
        """Adds labels (GitHub creates a missing label with its default colour)."""
        names = list(labels)
        if names:
            with _translated(f"label #{number}"):
                self._request("POST", f"/issues/{number}/labels", {"labels": names})

    def remove_label(self, number: int, label: str) -> None:
        with _translated(f"unlabel #{number}"):
            try:
                self._request("DELETE", f"/issues/{number}/labels/{quote(label, safe='')}")
            except GithubException as exc:
                if exc.status != 404:  # already gone is what we wanted
                    raise

    # --- git refs and commits (leases) ----------------------------------------------------
    # Refs are GitHub's one compare-and-swap: creating an existing ref and a non-fast-forward
    # update both answer 422, which these methods return as False ("you lost, re-read").

    def get_ref(self, ref: str) -> str | None:
        """The commit sha REF ("refs/...") points at, or None when there is no such ref."""
        with _translated(f"read ref {ref}"):
            try:
                data = self._request("GET", f"/git/ref/{_ref_path(ref)}")
            except GithubException as exc:
                if exc.status in (404, 409):  # 409: the repository is empty
                    return None
                raise
            return str(data["object"]["sha"])

    def matching_refs(self, prefix: str) -> dict[str, str]:
        """Every ref whose name starts with PREFIX ("refs/..."), name -> sha, in one call."""
        with _translated(f"list refs {prefix}"):
            try:
                data = self._request("GET", f"/git/matching-refs/{_ref_path(prefix)}")
            except GithubException as exc:
                if exc.status == 409:  # the repository is empty: no refs at all
                    return {}
                raise
            return {str(r["ref"]): str(r["object"]["sha"]) for r in data or ()}

    def create_ref(self, ref: str, sha: str) -> bool:
        """Create REF at SHA; False when it already exists (422)."""
        with _translated(f"create ref {ref}"):
            try:
                self._request("POST", "/git/refs", {"ref": ref, "sha": sha})
            except GithubException as exc:
                if exc.status == 422:
                    return False
                raise
            return True

    def update_ref(self, ref: str, sha: str, *, force: bool = False) -> bool:
        """Move REF to SHA; False (422) when that is not a fast-forward or REF is gone."""
        with _translated(f"update ref {ref}"):
            try:
                self._request("PATCH", f"/git/refs/{_ref_path(ref)}", {"sha": sha, "force": force})
            except GithubException as exc:
                if exc.status == 422:
                    return False
                raise
            return True

    def delete_ref(self, ref: str) -> bool:
        """Delete REF; False when it was already gone."""
        with _translated(f"delete ref {ref}"):
            try:
                self._request("DELETE", f"/git/refs/{_ref_path(ref)}")
            except GithubException as exc:
                if exc.status in (404, 422):
                    return False
                raise
            return True

    def create_commit(self, message: str, tree: str, parents: Iterable[str] = ()) -> GitCommit:
        """A commit object in the git database; no ref moves."""
        payload = {"message": message, "tree": tree, "parents": list(parents)}
        with _translated("create a commit"):
            return git_commit_from_json(self._request("POST", "/git/commits", payload))

    def get_commit(self, sha: str) -> GitCommit:
        with _translated(f"read commit {sha[:12]}"):
            return git_commit_from_json(self._request("GET", f"/git/commits/{sha}"))

    def create_tree(self, files: Mapping[str, str]) -> str:
        """A tree of FILES (path -> text, sent inline: one call, no blobs); its sha."""
        entries = [
            {"path": path, "mode": "100644", "type": "blob", "content": text}
            for path, text in sorted(files.items())
        ]
        with _translated("create a tree"):
            return str(self._request("POST", "/git/trees", {"tree": entries})["sha"])

    # --- GraphQL (temporary: the adapter without PyGithub brings its own, same signature) ---

    def graphql(self, query: str, variables: Mapping[str, Any]) -> dict[str, Any]:
        """The `data` of one GraphQL query at api_url's GraphQL endpoint (`.../api/v3` ->
        `.../api/graphql`, else api_url + `/graphql`); GitHubError when it has `errors`."""
        url = self._gh.requester.graphql_url  # PyGithub derives it from api_url as above
        payload = {"query": query, "variables": dict(variables)}
        with _translated("query GitHub's GraphQL API"):
            _, answer = self._gh.requester.requestJsonAndCheck("POST", url, input=payload)
        data = answer.get("data") if isinstance(answer, dict) else None
        errors = answer.get("errors") if isinstance(answer, dict) else None
        if errors or not isinstance(data, dict):
            first = errors[0] if isinstance(errors, list) and errors else {}
            message = (
                first.get("message") or first.get("type") if isinstance(first, dict) else first
            )
            raise GitHubError(f"GitHub's GraphQL API answered with errors: {message}")
        return data

    # --- plumbing -------------------------------------------------------------------------

    def _request(self, verb: str, path: str, payload: dict[str, Any] | None = None) -> Any:
        _, data = self._gh.requester.requestJsonAndCheck(
            verb, f"{self._repo.url}{path}", input=payload
        )
        return data


def _ref_path(ref: str) -> str:
    """`refs/ai-context/leases/6` -> `ai-context/leases/6`, quoted for a URL path."""
    return quote(ref.removeprefix("refs/"), safe="/")


__all__ = [
    "API_HEADERS",
    "DEFAULT_API_URL",
    "CallCounter",
    "GitHub",
    "GitHubConfigError",
    "GitHubConflict",
    "GitHubError",
    "GitHubNotFound",
    "GitHubUnavailable",
    "comment_from_json",
    "git_commit_from_json",
    "issue_from_json",
    "url_problem",
]


def _utc(when: datetime) -> datetime:
    """WHEN in UTC (naive means UTC): PyGithub writes `since` with a literal Z."""
    return when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)
