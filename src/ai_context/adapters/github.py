"""GitHub adapter (PyGithub): the only module that talks to GitHub. Hands back plain models.

Quota matters, so two PyGithub habits are avoided on purpose:
- reading `issue.pull_request` (or `raw_data`) on a listed issue that is not a pull request
  makes PyGithub fetch the whole issue again; we read the listed JSON as it came;
- the default retry re-sends POSTs on 5xx, which can duplicate a comment; ours retries a POST
  only when GitHub refused it for a rate limit (nothing was created then).
Every HTTP attempt, retries included, is counted.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlsplit

import requests
from github import Auth, Github, GithubException, GithubRetry
from github.GithubObject import GithubObject
from github.Requester import (
    HTTPRequestsConnectionClass,
    HTTPSRequestsConnectionClass,
    Requester,
    RequestsResponse,
)
from pydantic import SecretStr
from urllib3 import Retry

from ai_context.core.errors import ServiceError, ServiceRefused
from ai_context.core.models import Comment, GitCommit, Issue

DEFAULT_API_URL = "https://api.github.com"


class GitHubError(ServiceError):
    """GitHub could not do what we asked; `status` is the HTTP status when there was one."""

    service = "GitHub"


class GitHubUnavailable(GitHubError):
    """5xx, timeouts or rate limits that outlasted the retries: exit 3."""


class GitHubConfigError(GitHubError, ServiceRefused):
    """Bad token or missing permission: the user must change the workflow (exit 2)."""


class GitHubNotFound(GitHubError):
    pass


class GitHubConflict(GitHubError):
    """422: e.g. a git ref that already exists or an update that is not a fast-forward."""


@dataclass
class CallCounter:
    """HTTP attempts made, retries included; shared by the adapter and its retry policy."""

    calls: int = 0
    retries: int = 0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def add(self, calls: int = 0, retries: int = 0) -> None:
        with self._lock:
            self.calls += calls
            self.retries += retries

    @property
    def total(self) -> int:
        return self.calls + self.retries


class _CountingRetry(GithubRetry):
    """GithubRetry that counts attempts and never re-sends a POST that may have landed."""

    counter: CallCounter | None = None

    def new(self, **kw: Any) -> _CountingRetry:
        retry = super().new(**kw)
        retry.counter = self.counter
        return retry

    def is_retry(self, method: str, status_code: int, has_retry_after: bool = False) -> bool:
        if method.upper() == "POST":
            return bool(self.total) and status_code in (403, 429)
        return super().is_retry(method, status_code, has_retry_after)

    def increment(self, *args: Any, **kwargs: Any) -> Retry:  # type: ignore[override]
        if self.counter is not None:
            self.counter.add(retries=1)
        return super().increment(*args, **kwargs)


# What GitHub asks every REST client to send: its JSON media type and the API version the
# client was written against (without them, `Accept: */*` and whatever version is default).
API_HEADERS = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}


def _counted(base: type[Any]) -> type[Any]:
    class Counted(base):  # type: ignore[misc]
        def request(
            self, verb: str, url: str, input: Any, headers: dict[str, str], *rest: Any
        ) -> None:
            sent = {**API_HEADERS, **{k: v for k, v in headers.items() if k != "Accept"}}
            if headers.get("Accept", "*/*") != "*/*":  # a call that asks for another type
                sent["Accept"] = headers["Accept"]
            super().request(verb, url, input, sent, *rest)

        def getresponse(self) -> RequestsResponse:
            counter = getattr(self.retry, "counter", None)
            if counter is not None:
                counter.add(calls=1)
            response: RequestsResponse = super().getresponse()
            return response

    Counted.__name__ = f"Counted{base.__name__}"
    return Counted


Requester.injectConnectionClasses(
    _counted(HTTPRequestsConnectionClass), _counted(HTTPSRequestsConnectionClass)
)
# Injecting classes also switches off PyGithub's connection reuse (meant for its replay tests);
# switch it back on, or every call pays a new TCP (and TLS) handshake.
setattr(Requester, "_Requester__persist", True)  # noqa: B010 - a name-mangled class attribute


def url_problem(url: str) -> str | None:
    """Why URL cannot be an API base URL (`https://api.github.com`,
    `https://ghe.example.com/api/v3`), or None when it can."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError as exc:
        return f"{url!r} is not a URL ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in url):
        return f"{url!r} is not an http(s) URL like https://api.github.com"
    return None


def _raw(obj: GithubObject) -> dict[str, Any]:
    # The base-class property returns the JSON as received; the completable subclass would
    # fetch the object again first.
    data: dict[str, Any] = GithubObject.raw_data.fget(obj)  # type: ignore[attr-defined]
    return data


def _time(value: Any) -> datetime | None:
    if not value:
        return None
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def issue_from_json(data: dict[str, Any], repository: str) -> Issue:
    return Issue(
        number=int(data["number"]),
        title=str(data.get("title") or ""),
        body=str(data.get("body") or ""),
        state="closed" if data.get("state") == "closed" else "open",
        state_reason=data.get("state_reason"),
        labels=tuple(
            str(label["name"] if isinstance(label, dict) else label)
            for label in data.get("labels") or ()
        ),
        assignees=tuple(str(a["login"]) for a in data.get("assignees") or ()),
        author=(data.get("user") or {}).get("login"),
        comments=data.get("comments") if isinstance(data.get("comments"), int) else None,
        updated_at=_time(data.get("updated_at")),
        closed_at=_time(data.get("closed_at")),
        html_url=str(data.get("html_url") or ""),
        repository=repository,
        is_pull_request="pull_request" in data,
    )


def git_commit_from_json(data: dict[str, Any]) -> GitCommit:
    return GitCommit(
        sha=str(data["sha"]),
        message=str(data.get("message") or ""),
        tree=str((data.get("tree") or {}).get("sha") or ""),
        parents=tuple(str(p["sha"]) for p in data.get("parents") or ()),
        author_date=_time((data.get("author") or {}).get("date")),
    )


def comment_from_json(data: dict[str, Any]) -> Comment:
    return Comment(
        id=int(data["id"]),
        body=str(data.get("body") or ""),
        author=str((data.get("user") or {}).get("login") or ""),
        created_at=_time(data.get("created_at")),
        updated_at=_time(data.get("updated_at")),
        html_url=str(data.get("html_url") or ""),
    )


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
            # PyGithub writes the clock time with a literal Z: hand it the time in UTC.
            utc = since.astimezone(UTC) if since.tzinfo else since.replace(tzinfo=UTC)
            filters["since"] = utc
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

    # --- plumbing -------------------------------------------------------------------------

    def _request(self, verb: str, path: str, payload: dict[str, Any] | None = None) -> Any:
        _, data = self._gh.requester.requestJsonAndCheck(
            verb, f"{self._repo.url}{path}", input=payload
        )
        return data


def _ref_path(ref: str) -> str:
    """`refs/ai-context/leases/6` -> `ai-context/leases/6`, quoted for a URL path."""
    return quote(ref.removeprefix("refs/"), safe="/")


class _translated:
    """Turn PyGithub and requests failures into our error classes with a message that helps."""

    def __init__(self, what: str) -> None:
        self.what = what

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        if exc is None or isinstance(exc, GitHubError):
            return
        if isinstance(exc, GithubException):
            raise _from_status(self.what, exc.status, exc.data) from exc
        if isinstance(exc, requests.exceptions.RetryError):
            raise GitHubUnavailable(
                f"GitHub kept failing to {self.what} after retries ({exc}); try again later "
                "or check https://www.githubstatus.com"
            ) from exc
        if isinstance(exc, requests.exceptions.Timeout):
            raise GitHubUnavailable(
                f"GitHub did not answer in time to {self.what}; try again later"
            ) from exc
        if isinstance(exc, requests.exceptions.RequestException):
            raise GitHubUnavailable(f"cannot reach GitHub to {self.what}: {exc}") from exc


def _from_status(what: str, status: int, data: Any) -> GitHubError:
    message = data.get("message", "") if isinstance(data, dict) else str(data or "")
    if status == 401:
        return GitHubConfigError(
            f"GitHub refused the token to {what} ({status} {message}); check the "
            "github-token input",
            status,
        )
    if status == 403 and "rate limit" not in message.lower():
        return GitHubConfigError(
            f"GitHub refused to {what} ({status} {message}); give the workflow "
            "`permissions: issues: write` (and `contents: write` for leases)",
            status,
        )
    if status == 404:
        return GitHubNotFound(f"GitHub found nothing to {what} (404 {message})", status)
    if status == 422:
        return GitHubConflict(f"GitHub could not {what} (422 {message})", status)
    if status in (403, 429) or status >= 500:
        return GitHubUnavailable(
            f"GitHub failed to {what} ({status} {message}) after retries; try again later",
            status,
        )
    return GitHubError(f"GitHub could not {what} ({status} {message})", status)
