"""GitHub adapter (requests): the only module that talks to GitHub. Hands back plain models.

Every HTTP attempt, retries included, is counted. Retries are urllib3's `Retry` with GitHub's
rules (github_wire.GitHubRetry): reads and idempotent writes are retried on 5xx; a POST only
when GitHub refused it for a rate limit (nothing was created then), since a re-sent POST can
duplicate a comment. Lists are read 100 a page, following the `Link` header.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any
from urllib.parse import quote

import requests
from requests.adapters import HTTPAdapter

from ai_context.adapters.github_json import comment_from_json, git_commit_from_json, issue_from_json
from ai_context.adapters.github_wire import (
    API_HEADERS,
    SECONDARY_RATE_WAIT,
    CallCounter,
    GitHubConfigError,
    GitHubConflict,
    GitHubError,
    GitHubNotFound,
    GitHubRetry,
    GitHubUnavailable,
    HTTPFailure,
    Secret,
    TokenAuth,
    _translated,
    failure_data,
    graphql_data,
    graphql_url,
    response_json,
    unless_modified,
    unmarked_secondary_limit,
    url_problem,
    utc_text,
)
from ai_context.core.models import Comment, GitCommit, Issue

DEFAULT_API_URL = "https://api.github.com"
WRITES = frozenset({"POST", "PATCH", "PUT", "DELETE"})
# What `_request` gives back for an expected refusal (its `refused` statuses).
REFUSED: Any = object()
IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "PATCH", "DELETE"})


class GitHub:
    """One repository on one GitHub (github.com or Enterprise Server at `api_url`)."""

    def __init__(
        self,
        token: Secret,
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
        self._base = f"{api_url.rstrip('/')}/repos/{repository}"
        self._graphql = graphql_url(api_url)
        self._timeout = timeout
        self._retries = retries
        self._max_rate_limit_wait = max_rate_limit_wait
        self._write_interval = write_interval
        self._last_write = float("-inf")  # the first write goes at once
        self._rate: tuple[int, int] | None = None
        self._session = requests.Session()
        self._session.headers.update({**API_HEADERS, "User-Agent": "ai-context"})
        self._session.auth = TokenAuth(token.get_secret_value())

        def policy(methods: frozenset[str]) -> GitHubRetry:
            return GitHubRetry(
                counter=self.counter,
                total=retries,
                backoff_factor=backoff,
                max_rate_limit_wait=max_rate_limit_wait,
                status_forcelist=range(500, 600),
                allowed_methods=methods,
                raise_on_status=False,  # the last answer comes back, to be translated
            )

        rest = HTTPAdapter(max_retries=policy(IDEMPOTENT))
        for scheme in ("http://", "https://"):
            self._session.mount(scheme, rest)
        # A GraphQL query writes nothing: its POST is retried like a read.
        self._session.mount(self._graphql, HTTPAdapter(max_retries=policy(IDEMPOTENT | {"POST"})))

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
            filters["labels"] = ",".join(labels)
        if sort is not None:
            filters.update(sort=sort, direction="desc")
        if since is not None:  # updated at or after: GitHub filters, we pay for no more
            filters["since"] = utc_text(since)
        found: list[Issue] = []
        with _translated("list issues"):
            for raw in self._pages("/issues", filters):
                if "pull_request" in raw:
                    continue
                found.append(issue_from_json(raw, self.repository))
                if limit is not None and len(found) >= limit:
                    break
        return found

    def get_issue(self, number: int, *, known: Issue | None = None) -> Issue:
        """Issue NUMBER as GitHub has it now. With KNOWN (a copy of it, from a payload or a
        listing) whose `updated_at` is set, the read is conditional (`If-Modified-Since`): a
        `304 Not Modified` returns KNOWN and costs nothing against GitHub's primary rate limit
        (counted apart, in `counter.not_modified`). GitHub may or may not honour the header on
        this endpoint; a 200 is always a fresh issue, so the answer is right either way. The
        header has one-second resolution, as `updated_at` has: a second edit within the same
        second as KNOWN's can answer 304 (its own event, or the next scan, brings it)."""
        headers = unless_modified(known, number, self.repository)
        with _translated(f"read issue #{number}"):
            response = self._send("GET", f"{self._base}/issues/{number}", headers=headers)
            if response.status_code == 304 and headers and known is not None:
                self.counter.add(not_modified=1)
                return known
            return issue_from_json(response_json(response), self.repository)

    def list_comments(self, number: int) -> list[Comment]:
        with _translated(f"list comments of #{number}"):
            return [comment_from_json(c) for c in self._pages(f"/issues/{number}/comments")]

    def list_repo_comments(self, since: datetime) -> list[Comment]:
        """Every comment of the repository updated at or after SINCE, 100 a page: one listing
        that settles the races of a whole run's new comments (jobs/settle.py)."""
        with _translated("list the repository's comments"):
            pages = self._pages("/issues/comments", {"since": utc_text(since)})
            return [comment_from_json(c) for c in pages]

    @property
    def rate_limit(self) -> tuple[int, int] | None:
        """(remaining, limit) from the last response's headers; costs no call."""
        return self._rate

    def graphql(self, query: str, variables: Mapping[str, Any]) -> dict[str, Any]:
        """POST QUERY with VARIABLES to GitHub's GraphQL endpoint (`graphql_url`) and return
        the answer's `data`. Counted like any call and retried like a read (a query writes
        nothing). An answer carrying `errors` raises GitHubError with GraphQL's first
        message; a `RATE_LIMITED` one raises GitHubUnavailable."""
        payload = {"query": query, "variables": dict(variables)}
        with _translated("query GitHub's GraphQL API"):
            answer = response_json(self._send("POST", self._graphql, payload=payload))
        return graphql_data(answer)

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
            self._request("DELETE", f"/issues/comments/{comment_id}", refused=(404,))

    def add_labels(self, number: int, labels: Iterable[str]) -> None:
        """Adds labels (GitHub creates a missing label with its default colour)."""
        names = list(labels)
        if names:
            with _translated(f"label #{number}"):
                self._request("POST", f"/issues/{number}/labels", {"labels": names})

    def remove_label(self, number: int, label: str) -> None:
        with _translated(f"unlabel #{number}"):
            path = f"/issues/{number}/labels/{quote(label, safe='')}"
            self._request("DELETE", path, refused=(404,))

    def pace_write(self) -> None:
        """Wait until the next write may go (`write_interval` after the last one), so that a
        read made right after is as fresh as it can be when that write goes."""
        wait = self._last_write + self._write_interval - time.monotonic()
        if wait > 0:
            time.sleep(wait)

    # --- git refs and commits (leases) ----------------------------------------------------
    # Refs are GitHub's one compare-and-swap: creating an existing ref and a non-fast-forward
    # update both answer 422, which these methods return as False ("you lost, re-read").

    def get_ref(self, ref: str) -> str | None:
        """The commit sha REF ("refs/...") points at, or None when there is no such ref."""
        with _translated(f"read ref {ref}"):
            # 409: the repository is empty
            data = self._request("GET", f"/git/ref/{_ref_path(ref)}", refused=(404, 409))
            return None if data is REFUSED else str(data["object"]["sha"])

    def matching_refs(self, prefix: str) -> dict[str, str]:
        """Every ref whose name starts with PREFIX ("refs/..."), name -> sha, in one call."""
        with _translated(f"list refs {prefix}"):
            # 409: the repository is empty, so it has no refs at all
            data = self._request("GET", f"/git/matching-refs/{_ref_path(prefix)}", refused=(409,))
            if data is REFUSED:
                return {}
            return {str(r["ref"]): str(r["object"]["sha"]) for r in data or ()}

    def create_ref(self, ref: str, sha: str) -> bool:
        """Create REF at SHA; False when it already exists (422)."""
        with _translated(f"create ref {ref}"):
            answer = self._request("POST", "/git/refs", {"ref": ref, "sha": sha}, refused=(422,))
            return answer is not REFUSED

    def update_ref(self, ref: str, sha: str, *, force: bool = False) -> bool:
        """Move REF to SHA; False (422) when that is not a fast-forward or REF is gone."""
        with _translated(f"update ref {ref}"):
            payload = {"sha": sha, "force": force}
            answer = self._request("PATCH", f"/git/refs/{_ref_path(ref)}", payload, refused=(422,))
            return answer is not REFUSED

    def delete_ref(self, ref: str) -> bool:
        """Delete REF; False when it was already gone."""
        with _translated(f"delete ref {ref}"):
            answer = self._request("DELETE", f"/git/refs/{_ref_path(ref)}", refused=(404, 422))
            return answer is not REFUSED

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

    # --- plumbing -------------------------------------------------------------------------

    def _request(
        self,
        verb: str,
        path: str,
        payload: dict[str, Any] | None = None,
        *,
        refused: Collection[int] = (),
    ) -> Any:
        """VERB the repository's PATH; the answer's JSON (None when it has no body), or
        REFUSED when GitHub answers one of the REFUSED statuses: an outcome the caller expects
        (already gone, a lost race on a ref), not an error."""
        try:
            return response_json(self._send(verb, f"{self._base}{path}", payload=payload))
        except HTTPFailure as exc:
            if exc.status in refused:
                return REFUSED
            raise

    def _pages(
        self, path: str, params: Mapping[str, Any] | None = None
    ) -> Iterator[dict[str, Any]]:
        """The items of a list, 100 a page, following the `Link: rel="next"` URL (which
        carries the query) until there is none or the caller stops."""
        url: str | None = f"{self._base}{path}"
        query: dict[str, Any] | None = {**(params or {}), "per_page": 100}
        while url:
            response = self._send("GET", url, params=query)
            yield from response_json(response) or ()
            url, query = response.links.get("next", {}).get("url"), None

    def _send(
        self,
        verb: str,
        url: str,
        *,
        payload: dict[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> requests.Response:
        """One counted request (urllib3 retries it, counting each retry); writes are spaced
        `write_interval` seconds apart, as GitHub asks of integrations. An answer of 400 or
        more raises HTTPFailure, for `_translated` to explain."""
        response = self._attempt(verb, url, payload, params, headers)
        if self._retries and unmarked_secondary_limit(response, self._max_rate_limit_wait):
            # GitHub: a secondary rate limit without retry-after or a spent quota asks for at
            # least a minute. urllib3 cannot see it (only the body says so): wait here, once.
            time.sleep(SECONDARY_RATE_WAIT)
            self.counter.add(retries=1)
            response = self._attempt(verb, url, payload, params, headers)
        if response.status_code >= 400:
            retryable = verb in IDEMPOTENT or url == self._graphql
            raise HTTPFailure(
                response.status_code,
                failure_data(response),
                response.headers,
                retried=bool(self._retries) and retryable,
            )
        return response

    def _attempt(
        self,
        verb: str,
        url: str,
        payload: dict[str, Any] | None,
        params: Mapping[str, Any] | None,
        headers: Mapping[str, str] | None,
    ) -> requests.Response:
        if verb in WRITES and url != self._graphql:
            self.pace_write()
        self.counter.add(calls=1)
        try:
            response = self._session.request(
                verb, url, json=payload, params=params, headers=headers, timeout=self._timeout
            )
        finally:
            if verb in WRITES:
                self._last_write = time.monotonic()
        self._note_rate(response.headers)
        return response

    def _note_rate(self, headers: Mapping[str, str]) -> None:
        remaining, limit = headers.get("x-ratelimit-remaining"), headers.get("x-ratelimit-limit")
        if remaining and limit and remaining.isdigit() and limit.isdigit():
            self._rate = (int(remaining), int(limit))


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
    "graphql_url",
    "issue_from_json",
    "url_problem",
]
