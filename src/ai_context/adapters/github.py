"""GitHub adapter: the only module that imports PyGithub, lazily (when a client is made, so
`validate` and the local hooks never pay for it). Reads come back as the answer's JSON
(`requestJsonAndCheck`; a lazy object's `raw_data` would fetch each issue again), turned into
plain models (github_json.py). Ours: the retry rules, the call count, errors that say what to do.
"""

from __future__ import annotations

import copy
import functools
import json
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime
from http import HTTPStatus
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote, urlsplit

from ai_context.adapters.clients import GITHUB_API_URL
from ai_context.adapters.github_json import (
    comment_from_json,
    git_commit_from_json,
    issue_from_json,
    repository_from_json,
)
from ai_context.adapters.retry_after import http_time, retry_after
from ai_context.core.block.model import format_timestamp
from ai_context.core.errors import ServiceError, ServiceRefused
from ai_context.core.fields import utc, whole
from ai_context.core.models import Comment, GitCommit, Issue
from ai_context.core.secret import Secret

if TYPE_CHECKING:
    from github.Requester import Requester
    from urllib3 import Retry

    from ai_context.core.models import Listed

# What GitHub asks every REST client to send: its JSON media type and the API version the
# client was written against (without them, `Accept: */*` and whatever version is default).
API_HEADERS = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
# Without a retry-after header nor a spent quota, GitHub asks for at least a minute.
SECONDARY_RATE_WAIT = 60.0
# Methods retried after a 5xx or a lost answer: sending them twice does what sending once does.
IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "PATCH", "DELETE"})
# What `_send` gives back for an expected refusal (its `refused` statuses).
REFUSED: Any = object()


class GitHubError(ServiceError):
    """GitHub could not do what we asked; `status` is the HTTP status when there was one."""

    service = "GitHub"


class GitHubUnavailable(GitHubError):
    """5xx, timeouts or rate limits that outlasted the retries: exit 3."""


class GitHubNoAnswer(GitHubUnavailable):
    """The request was sent and its answer did not come in time: a write may still land."""


class GitHubConfigError(GitHubError, ServiceRefused):
    """Bad token or missing permission: the user must change the workflow (exit 2)."""


class GitHubNotFound(GitHubError):
    pass


class GitHubConflict(GitHubError):
    """422: e.g. a git ref that already exists or an update that is not a fast-forward."""


@dataclass
class CallCounter:
    """HTTP attempts made, retries and 304 answers (`not_modified`) included; shared by the
    adapter and its retry policy."""

    calls: int = 0
    retries: int = 0
    not_modified: int = 0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def add(self, calls: int = 0, retries: int = 0, not_modified: int = 0) -> None:
        with self._lock:
            self.calls += calls
            self.retries += retries
            self.not_modified += not_modified

    @property
    def total(self) -> int:
        """Every round trip, retries and 304s included."""
        return self.calls + self.retries


class GitHub:
    """One repository on one GitHub (github.com or Enterprise Server at `api_url`)."""

    def __init__(
        self,
        token: Secret,
        repository: str,
        *,
        api_url: str = GITHUB_API_URL,
        timeout: int = 15,
        write_interval: float = 1.0,
        retries: int = 5,
        backoff: float = 1.0,
        max_rate_limit_wait: float = 300,
        counter: CallCounter | None = None,
        on_wait: Callable[[float, str], None] | None = None,
    ) -> None:
        """ON_WAIT is told (seconds, what for) before the client waits for GitHub."""
        _check_repository(repository, "; set GITHUB_REPOSITORY")
        problem = url_problem(api_url)
        if problem is not None:
            raise GitHubConfigError(f"environment variable GITHUB_API_URL: {problem}")
        value = token.get_secret_value()
        if not value:
            raise GitHubConfigError(
                "the GitHub token is empty; set the github-token input (GITHUB_TOKEN or "
                "GH_TOKEN for the command line)"
            )
        from github import Auth, Github  # noqa: PLC0415
        from github.Requester import Requester  # noqa: PLC0415

        self.repository = repository
        self.counter = counter or CallCounter()
        self._retries = retries
        base = api_url.rstrip("/")
        policy = _retry_class()(
            counter=self.counter,
            notify=on_wait,
            query_path=Requester.get_graphql_prefix(urlsplit(base).path),
            total=retries,
            backoff_factor=backoff,
            max_rate_limit_wait=max_rate_limit_wait,
            status_forcelist=[*range(500, 600), 429],  # GithubRetry adds 403
            allowed_methods=IDEMPOTENT | {"POST"},  # which POSTs: GitHubRetry.increment
            raise_on_status=False,  # the last answer comes back, to be explained
        )
        self._requester: Requester = Github(
            auth=Auth.Token(value),
            base_url=base,
            timeout=timeout,
            user_agent="ai-context",
            per_page=100,
            retry=policy,
            seconds_between_requests=None,
            seconds_between_writes=write_interval or None,
            api_version=API_HEADERS["X-GitHub-Api-Version"],
        ).requester
        self._repo = f"/repos/{repository}"  # PyGithub puts the base URL in front
        self._write_interval = write_interval
        self._last_write = float("-inf")  # when the last write (any verb but GET) ended

    def __repr__(self) -> str:
        return f"GitHub(repository={self.repository!r}, token=***)"

    def for_repository(self, repository: str) -> GitHub:
        """A client for another REPOSITORY on the same GitHub: the same token, retries, call
        counter and connections (a run over many repositories opens one, not one each)."""
        _check_repository(repository)
        other = copy.copy(self)
        other.repository, other._repo = repository, f"/repos/{repository}"
        return other

    # --- reads ----------------------------------------------------------------------------

    def list_issues(
        self,
        state: str = "open",
        *,
        labels: Sequence[str] = (),
        sort: str | None = None,
        limit: int | None = None,
        since: datetime | None = None,
    ) -> list[Issue]:
        """Issues (not pull requests), 100 a page, filtered by GitHub, newest first by SORT
        (created, updated, comments) when given. Pages stop once LIMIT issues are in hand."""
        found: list[Issue] = []
        pages = self.issue_pages(state, labels=labels, sort=sort, since=since)
        for page in pages:
            found += page.issues
            if limit is not None and len(found) >= limit:
                return found[:limit]
        return found

    def issue_pages(
        self,
        state: str = "open",
        *,
        labels: Sequence[str] = (),
        sort: str | None = None,
        since: datetime | None = None,
    ) -> Iterator[IssuePage]:
        """list_issues one page at a time, so a caller can stop early, report progress and
        keep no more than a page of bodies in hand. A page's `last` is the number of the last
        page when GitHub's `Link` header names it (it does on the first pages); its `date` is
        GitHub's clock when it answered."""
        filters: dict[str, Any] = {"state": state}
        if labels:
            filters["labels"] = ",".join(labels)
        if sort is not None:
            filters.update(sort=sort, direction="desc")
        if since is not None:  # updated at or after: GitHub filters, we pay for no more
            filters["since"] = utc_text(since)
        listing = self._raw_pages("list issues", self._repo + "/issues", filters)
        for number, (headers, raw) in enumerate(listing):
            links = _links(headers)
            last = links.get("last")
            yield IssuePage(
                issues=[
                    issue_from_json(item, self.repository)
                    for item in raw
                    if "pull_request" not in item
                ],
                number=number + 1,
                last=_page_number(last) if last else (None if "next" in links else number + 1),
                items=len(raw),
                repository=self.repository,
                date=http_time(headers.get("date")),
            )

    def get_issue(self, number: int, *, known: Issue | None = None) -> Issue:
        """Issue NUMBER as GitHub has it now. With a dated copy KNOWN, the read is conditional
        (`If-Modified-Since`, to the second): a 304 returns KNOWN and costs no rate limit."""
        headers = unless_modified(known, number, self.repository)
        url = f"{self._repo}/issues/{number}"
        _, data = self._send(f"read issue #{number}", "GET", url, headers=headers)
        if data is None and headers and known is not None:  # 304: no body
            self.counter.add(not_modified=1)
            return known
        return issue_from_json(data, self.repository)

    def list_comments(self, number: int) -> list[Comment]:
        pages = self._pages(f"list comments of #{number}", f"/issues/{number}/comments")
        return [comment_from_json(c) for c in pages]

    def list_repo_comments(self, since: datetime) -> list[Comment]:
        """Every comment of the repository updated at or after SINCE, 100 a page: one listing
        that settles the races of a whole run's new comments (jobs/settle.py)."""
        what, filters = "list the repository's comments", {"since": utc_text(since)}
        return [comment_from_json(c) for c in self._pages(what, "/issues/comments", filters)]

    def owner_repositories(self, owner: str) -> list[Listed]:
        """Every repository of OWNER the token can see, with its topics and flags, 100 a page:
        an organisation's (`type=all`: private ones too), else (404) a user's own."""
        what, org, user = f"list the repositories of {owner}", f"/orgs/{owner}", f"/users/{owner}"
        try:
            pages = list(self._raw_pages(what, f"{org}/repos", {"type": "all"}))
        except GitHubNotFound:  # no such organisation: a user's
            pages = list(self._raw_pages(what, f"{user}/repos", {"type": "owner"}))
        return [repository_from_json(r) for _, page in pages for r in page]

    @property
    def rate_limit(self) -> tuple[int, int] | None:
        """(remaining, limit) from the last response's headers; costs no call."""
        remaining, limit = self._requester.rate_limiting
        return None if remaining < 0 else (remaining, limit)

    def graphql(self, query: str, variables: Mapping[str, Any]) -> dict[str, Any]:
        """QUERY with VARIABLES on GitHub's GraphQL endpoint; the answer's `data`. Counted,
        and retried like a read (a query writes nothing)."""
        from github import GithubException  # noqa: PLC0415

        def ask() -> tuple[dict[str, Any], Any]:
            try:
                return self._requester.graphql_query(query, dict(variables))
            except GithubException as exc:  # PyGithub raises on `errors`: we explain them
                if isinstance(exc.data, dict) and exc.data.get("errors"):
                    return exc.headers or {}, exc.data
                raise

        try:
            _, answer = self._counted("query GitHub's GraphQL API", ask, retried=True)
        finally:
            self._last_write = time.monotonic()  # a POST: PyGithub spaces it as a write
        return graphql_data(answer)

    # --- writes ---------------------------------------------------------------------------

    def create_issue(self, title: str, body: str, labels: Sequence[str] = ()) -> Issue:
        payload = {"title": title, "body": body, "labels": list(labels)}
        data = self._json("create an issue", "POST", "/issues", payload)
        return issue_from_json(data, self.repository)

    def update_issue_body(self, number: int, body: str) -> Issue:
        data = self._json(f"update issue #{number}", "PATCH", f"/issues/{number}", {"body": body})
        return issue_from_json(data, self.repository)

    def create_comment(self, number: int, body: str) -> Comment:
        path = f"/issues/{number}/comments"
        return comment_from_json(self._json(f"comment on #{number}", "POST", path, {"body": body}))

    def edit_comment(self, comment_id: int, body: str) -> Comment:
        path = f"/issues/comments/{comment_id}"
        what = f"edit comment {comment_id}"
        return comment_from_json(self._json(what, "PATCH", path, {"body": body}))

    def delete_comment(self, comment_id: int) -> None:
        what = f"delete comment {comment_id}"
        self._json(what, "DELETE", f"/issues/comments/{comment_id}", refused=(404,))

    def add_labels(self, number: int, labels: Iterable[str]) -> None:
        """Adds labels (GitHub creates a missing label with its default colour)."""
        names = list(labels)
        if names:
            self._json(f"label #{number}", "POST", f"/issues/{number}/labels", {"labels": names})

    def remove_label(self, number: int, label: str) -> None:
        path = f"/issues/{number}/labels/{quote(label, safe='')}"
        self._json(f"unlabel #{number}", "DELETE", path, refused=(404,))

    def pace_write(self) -> None:
        """Wait out PyGithub's spacing before the next write, so a read made right after is
        as fresh as it can be when that write goes."""
        wait = self._last_write + self._write_interval - time.monotonic()
        if wait > 0:
            time.sleep(wait)

    # --- git refs and commits (leases) ----------------------------------------------------
    # Refs are GitHub's one compare-and-swap: creating an existing ref and a non-fast-forward
    # update both answer 422, which these methods return as False ("you lost, re-read").

    def get_ref(self, ref: str) -> str | None:
        """The commit sha REF ("refs/...") points at, or None when there is no such ref."""
        path = f"/git/ref/{_ref_path(ref)}"
        # 409: the repository is empty
        data = self._json(f"read ref {ref}", "GET", path, refused=(404, 409))
        return None if data is REFUSED else str(data["object"]["sha"])

    def matching_refs(self, prefix: str) -> dict[str, str]:
        """Every ref whose name starts with PREFIX ("refs/..."), name -> sha, in one call."""
        path = f"/git/matching-refs/{_ref_path(prefix)}"
        # 409: the repository is empty, so it has no refs at all
        data = self._json(f"list refs {prefix}", "GET", path, refused=(409,))
        if data is REFUSED:
            return {}
        return {str(r["ref"]): str(r["object"]["sha"]) for r in data or ()}

    def create_ref(self, ref: str, sha: str) -> bool:
        """Create REF at SHA; False when it already exists (422)."""
        payload = {"ref": ref, "sha": sha}
        return (
            self._json(f"create ref {ref}", "POST", "/git/refs", payload, refused=(422,))
            is not REFUSED
        )

    def update_ref(self, ref: str, sha: str, *, force: bool = False) -> bool:
        """Move REF to SHA; False (422) when that is not a fast-forward or REF is gone."""
        path, payload = f"/git/refs/{_ref_path(ref)}", {"sha": sha, "force": force}
        return (
            self._json(f"update ref {ref}", "PATCH", path, payload, refused=(422,)) is not REFUSED
        )

    def delete_ref(self, ref: str) -> bool:
        """Delete REF; False when it was already gone."""
        path = f"/git/refs/{_ref_path(ref)}"
        return self._json(f"delete ref {ref}", "DELETE", path, refused=(404, 422)) is not REFUSED

    def create_commit(self, message: str, tree: str, parents: Iterable[str] = ()) -> GitCommit:
        """A commit object in the git database; no ref moves."""
        payload = {"message": message, "tree": tree, "parents": list(parents)}
        return git_commit_from_json(self._json("create a commit", "POST", "/git/commits", payload))

    def get_commit(self, sha: str) -> GitCommit:
        return git_commit_from_json(
            self._json(f"read commit {sha[:12]}", "GET", f"/git/commits/{sha}")
        )

    def create_tree(self, files: Mapping[str, str]) -> str:
        """A tree of FILES (path -> text, sent inline: one call, no blobs); its sha."""
        entries = [
            {"path": path, "mode": "100644", "type": "blob", "content": text}
            for path, text in sorted(files.items())
        ]
        return str(self._json("create a tree", "POST", "/git/trees", {"tree": entries})["sha"])

    # --- plumbing -------------------------------------------------------------------------

    def _json(
        self,
        what: str,
        verb: str,
        path: str,
        payload: dict[str, Any] | None = None,
        *,
        refused: Collection[int] = (),
    ) -> Any:
        """VERB the repository's PATH; the answer's JSON (None without a body), or REFUSED for
        one of the REFUSED statuses: an outcome the caller expects (already gone, a lost race)."""
        return self._send(what, verb, self._repo + path, payload=payload, refused=refused)[1]

    def _pages(
        self, what: str, path: str, params: Mapping[str, Any] | None = None
    ) -> Iterator[dict[str, Any]]:
        """The items of a list, 100 a page, until there are no more or the caller stops."""
        for _, data in self._raw_pages(what, self._repo + path, params):
            yield from data

    def _raw_pages(
        self, what: str, path: str, params: Mapping[str, Any] | None = None
    ) -> Iterator[tuple[dict[str, Any], list[Any]]]:
        """The pages of 100 of the list at PATH (from the API's root) with their answers'
        headers, following `Link: rel="next"`."""
        url: str | None = path
        query: dict[str, Any] | None = {**(params or {}), "per_page": self._requester.per_page}
        while url:
            headers, data = self._send(what, "GET", url, params=query)
            yield headers, list(data or ())
            url, query = _links(headers).get("next"), None

    def _send(
        self,
        what: str,
        verb: str,
        url: str,
        *,
        payload: dict[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        refused: Collection[int] = (),
    ) -> tuple[dict[str, Any], Any]:
        """One counted REST request: (the answer's headers, its JSON); REFUSED for one of the
        REFUSED statuses."""

        def ask() -> tuple[dict[str, Any], Any]:
            return self._requester.requestJsonAndCheck(
                verb, url, dict(params or {}), {**API_HEADERS, **(headers or {})}, payload
            )

        try:
            return self._counted(what, ask, retried=verb in IDEMPOTENT, refused=refused)
        finally:
            if verb != "GET":
                self._last_write = time.monotonic()

    def _counted(
        self,
        what: str,
        ask: Callable[[], tuple[dict[str, Any], Any]],
        *,
        retried: bool,
        refused: Collection[int] = (),
    ) -> tuple[dict[str, Any], Any]:
        """ASK once (urllib3 retries it, GitHubRetry counting each retry), its failures
        turned into our errors with a message that says what to do."""
        from github import GithubException  # noqa: PLC0415
        from requests import RequestException  # noqa: PLC0415

        self.counter.add(calls=1)
        try:
            return ask()
        except GithubException as exc:
            if exc.status in refused:
                return {}, REFUSED
            retried = retried and self._retries > 0
            raise _from_status(what, exc.status, exc.data, exc.headers or {}, retried) from exc
        except RequestException as exc:
            raise _unreachable(what, exc) from exc


@functools.cache
def _retry_class() -> Callable[..., Retry]:
    """GitHubRetry, made with the first client (its base class's import waits until then)."""
    from github import GithubRetry  # noqa: PLC0415
    from urllib3 import Retry  # noqa: PLC0415
    from urllib3.exceptions import ConnectTimeoutError, MaxRetryError  # noqa: PLC0415

    class GitHubRetry(GithubRetry):
        """PyGithub's GithubRetry held to our rules, counting every retry it grants:
        - a POST that reached GitHub may have landed: after a 5xx or a lost answer it is not
          sent again; a GraphQL query (QUERY_PATH) writes nothing and is retried like a read;
        - a rate limit is retried for every method after the wait GitHub asks for, unless it
          is longer than `max_rate_limit_wait` (the answer then goes back at once, as it does
          for a 5xx asking for such a wait);
        - a 403 naming a secondary limit in its body only waits `secondary_rate_wait`, once."""

        def __init__(
            self,
            *,
            counter: CallCounter,
            query_path: str,
            notify: Callable[[float, str], None] | None = None,
            **kwargs: Any,
        ) -> None:
            self.counter, self.query_path, self.rate_wait = counter, query_path, 0.0
            self.notify = notify
            super().__init__(**kwargs)

        def new(self, **kw: Any) -> GitHubRetry:
            kept = {"counter": self.counter, "query_path": self.query_path, "notify": self.notify}
            return super().new(**{**kept, **kw})

        def get_retry_after(self, response: Any) -> float | None:
            """The project's one reader of `retry-after`: `1.5` or `soon` is no wait (the
            backoff then), where urllib3's own raises InvalidHeader and drops the retry."""
            return retry_after(str(response.headers.get("retry-after") or ""))

        def sleep(self, response: Any = None) -> None:
            """urllib3's wait before a retry, told to NOTIFY first (seconds, what for)."""
            wait = self.get_backoff_time()
            if self.respect_retry_after_header and response is not None:
                wait = self.get_retry_after(response) or wait
            if self.notify is not None and wait > 0:
                limited = response is not None and response.status in (403, 429)
                self.notify(
                    wait, "GitHub's rate limit" if limited else "a retry after GitHub failed"
                )
            super().sleep(response)

        def increment(  # type: ignore[override]
            self,
            method: str | None = None,
            url: str | None = None,
            response: Any = None,
            error: Exception | None = None,
            _pool: Any = None,
            _stacktrace: Any = None,
        ) -> Retry:
            limited = response is not None and response.status in (403, 429)
            landed = not isinstance(error, ConnectTimeoutError)  # else it was never sent
            query = urlsplit(url or "").path == self.query_path
            sent_post = method == "POST" and not limited and landed and not query
            if sent_post or _waits_too_long(self, response, limited):
                if error is not None:
                    raise error.with_traceback(_stacktrace)
                raise MaxRetryError(_pool, url or "", None)  # the answer goes back as it came
            # urllib3's own count (MaxRetryError once spent, the answer going back as it
            # came): GithubRetry's would wait on a 403 by its message alone.
            retry: GitHubRetry = Retry.increment(
                self, method, url, response, error, _pool, _stacktrace
            )
            if limited:
                retry.rate_wait = _rate_wait(self, response, url or "")
            self.counter.add(retries=1)
            return retry

        def get_backoff_time(self) -> float:
            return max(self.rate_wait, super().get_backoff_time())

    return GitHubRetry


def _waits_too_long(policy: Any, response: Any, limited: bool) -> bool:
    """RESPONSE, no rate limit, asks for a wait beyond POLICY's `max_rate_limit_wait` (a 503's
    `retry-after: 86400`): it goes back at once rather than hold the run that long."""
    after = None if response is None or limited else policy.get_retry_after(response)
    return after is not None and after > policy.max_rate_limit_wait


def _rate_wait(policy: Any, response: Any, url: str) -> float:
    """Seconds POLICY (a GitHubRetry) waits before asking again after RESPONSE (a 403 or 429).
    Raises when the answer goes back now: MaxRetryError, for it to go back as it came, or,
    once its body was read, PyGithub's exception carrying that body."""
    from github.Requester import Requester  # noqa: PLC0415
    from urllib3.exceptions import MaxRetryError  # noqa: PLC0415

    wait = rate_limit_wait(response.status, response.headers)
    if wait is None:  # only the body can tell
        data = _json_object(policy.get_content(response, url))
        once = not any(h.status == 403 for h in policy.history)
        limit = Requester.isSecondaryRateLimitError(str(data.get("message") or ""))
        if not (once and limit) or policy.secondary_rate_wait > policy.max_rate_limit_wait:
            raise Requester.createException(response.status, response.headers, data)
        return float(policy.secondary_rate_wait)
    if wait > policy.max_rate_limit_wait:
        raise MaxRetryError(None, url, None)  # type: ignore[arg-type]
    return wait


@dataclass(frozen=True)
class IssuePage:
    """One page of an issue listing (pull requests left out); `last` is the last page's number
    when known, `items` what GitHub sent, `date` GitHub's clock when it answered."""

    issues: list[Issue]
    number: int
    last: int | None
    items: int
    repository: str = ""
    date: datetime | None = None


def _links(headers: Mapping[str, Any]) -> dict[str, str]:
    """The `Link` header's URLs by their rel (next, last, ...)."""
    from requests.utils import parse_header_links  # noqa: PLC0415

    links = parse_header_links(str(headers.get("link") or ""))
    return {str(ln["rel"]): str(ln["url"]) for ln in links if ln.get("rel") and ln.get("url")}


def _page_number(url: str) -> int | None:
    value = parse_qs(urlsplit(url).query).get("page", [""])[0]
    return whole(value)


def rate_limit_wait(status: int, headers: Mapping[str, str]) -> float | None:
    """Seconds GitHub asks us to wait, or None when STATUS with HEADERS is no rate limit:
    `retry-after`, else a spent quota until its reset (+1 s); a 429 is always a rate limit."""
    if status not in (403, 429):
        return None
    after = retry_after(str(headers.get("retry-after") or ""))
    if after is not None:
        return after
    if str(headers.get("x-ratelimit-remaining", "")).strip() == "0":
        reset = whole(str(headers.get("x-ratelimit-reset") or "").strip())
        if reset is not None:
            return max(0.0, reset - time.time()) + 1
        return SECONDARY_RATE_WAIT
    return SECONDARY_RATE_WAIT if status == 429 else None


def _json_object(content: bytes) -> dict[str, Any]:
    """A failure's body as a JSON object (PyGithub's errors take one); text otherwise."""
    text = content.decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    return data if isinstance(data, dict) else {"message": text}


def graphql_data(answer: Any) -> dict[str, Any]:
    """The `data` of a GraphQL ANSWER; its first error, as our error, when it has `errors`."""
    errors = answer.get("errors") if isinstance(answer, dict) else None
    if errors:
        first = errors[0] if isinstance(errors, list) and isinstance(errors[0], dict) else {}
        message = str(first.get("message") or errors)
        if first.get("type") == "RATE_LIMITED":
            raise GitHubUnavailable(
                f"GitHub's GraphQL API is rate limited ({message}); try again later"
            )
        raise GitHubError(f"GitHub's GraphQL API refused the query: {message}")
    data = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(data, dict):
        raise GitHubError("GitHub's GraphQL API answered without data; try again later")
    return data


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


_REASONS = (
    ("connection refused", "connection refused"),
    ("name or service not known", "the host name does not resolve"),
    ("nodename nor servname", "the host name does not resolve"),
    ("temporary failure in name resolution", "the host name does not resolve"),
    ("timed out", "timed out"),
    ("certificate", "TLS certificate problem"),
)


def failure_reason(exc: BaseException) -> str:
    """A few words on why a request failed, without the HTTP library's internals."""
    text = str(exc).lower()
    return next((reason for clue, reason in _REASONS if clue in text), type(exc).__name__)


def _unreachable(what: str, exc: BaseException) -> GitHubError:
    """No answer at all: a timeout, or no connection."""
    from requests.exceptions import ConnectTimeout, Timeout  # noqa: PLC0415

    if isinstance(exc, Timeout) and not isinstance(exc, ConnectTimeout):
        return GitHubNoAnswer(f"GitHub did not answer in time to {what}; try again later")
    if isinstance(exc, Timeout):
        return GitHubUnavailable(f"GitHub did not answer in time to {what}; try again later")
    return GitHubUnavailable(
        f"cannot reach GitHub to {what} ({failure_reason(exc)}); check the network and "
        "GITHUB_API_URL, then try again"
    )


def _from_status(
    what: str, status: int, data: Any, headers: Mapping[str, str], retried: bool
) -> GitHubError:
    """An answer of 400 or more as our error, GitHub's reason in its message."""
    message = reason(status, data)
    wait = rate_limit_wait(status, headers)
    if status == 401:
        return GitHubConfigError(
            f"GitHub refused the token to {what} ({status} {message}); check the "
            "github-token input (GITHUB_TOKEN or GH_TOKEN for the command line)",
            status,
        )
    if status == 403 and wait is None and "rate limit" not in message.lower():
        return GitHubConfigError(
            f"GitHub refused to {what} ({status} {message}); the token needs "
            f"{permission_for(what)} (the job's `permissions:`, or the token's scopes). The "
            "Action needs `issues: write` and `contents: read`, nothing more",
            status,
        )
    if status == 404:
        return GitHubNotFound(f"GitHub found nothing to {what} (404 {message})", status)
    if status == 422:
        return GitHubConflict(f"GitHub could not {what} (422 {message})", status)
    if status in (403, 429):  # a rate limit (a refusal was answered above)
        wait = SECONDARY_RATE_WAIT if wait is None else wait
        until = datetime.fromtimestamp(time.time() + wait, UTC).strftime("%H:%M:%S")
        return GitHubUnavailable(
            f"GitHub refused to {what} for its rate limit ({status} {message}) longer than "
            f"this run waits; try again after {until} UTC (in {wait:.0f} s)",
            status,
        )
    if status >= 500 and retried:
        return GitHubUnavailable(
            f"GitHub kept failing to {what} after retries ({status} {message}); "
            "try again later or check https://www.githubstatus.com",
            status,
        )
    if status >= 500:  # a write that may have landed is not re-sent
        return GitHubUnavailable(
            f"GitHub failed to {what} ({status} {message}); try again later", status
        )
    return GitHubError(f"GitHub could not {what} ({status} {message})", status)


def reason(status: int, data: Any) -> str:
    """GitHub's reason for a failed answer: its JSON `message`, else its body's text (on one
    line, cut), else the status's own text, so a message never ends in an empty `(503 )`."""
    if isinstance(data, dict):
        text = str(data.get("message") or data.get("data") or "")
    else:
        text = str(data or "")
    text = " ".join(text.split())
    if text:
        return text if len(text) <= 200 else text[:199] + "…"
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "no reason given"


def permission_for(what: str) -> str:
    """The one permission a refused call needs: `metadata` to list an owner's repositories,
    `contents` for git refs (an agent's leases), `issues` for the rest."""
    reads = what.startswith(("read", "list", "query"))
    if "repositories of" in what:
        return "`metadata: read` on them (a GitHub App installed there; GITHUB_TOKEN has one)"
    if any(word in what for word in ("ref", "commit", "tree")):
        return "`contents: read`" if reads else "`contents: write` (an agent's token, for leases)"
    return "`issues: read`" if reads else "`issues: write`"


def unless_modified(known: Issue | None, number: int, repository: str) -> dict[str, str]:
    """The conditional header for re-reading NUMBER, when KNOWN is a dated copy of that issue
    (of this repository, when the copy says which)."""
    if known is None or known.updated_at is None or known.number != number:
        return {}
    if known.repository and known.repository != repository:
        return {}
    return {"If-Modified-Since": format_datetime(utc(known.updated_at), usegmt=True)}


def utc_text(when: datetime) -> str:
    """WHEN in UTC (naive means UTC), as GitHub's `since` takes it: with a literal Z."""
    return format_timestamp(utc(when))


def _check_repository(repository: str, hint: str = "") -> None:
    if repository.count("/") != 1 or not all(repository.split("/")):
        raise GitHubConfigError(f"repository {repository!r} is not owner/name{hint}")


def _ref_path(ref: str) -> str:
    """`refs/ai-context/leases/6` -> `ai-context/leases/6`, quoted for a URL path."""
    return quote(ref.removeprefix("refs/"), safe="/")
