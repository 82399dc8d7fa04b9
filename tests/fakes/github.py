"""Loopback stand-in for the parts of the GitHub REST API v3 that ai-context uses.

Shapes follow the real payloads (see tests/samples/github/) closely enough for our adapter to
read them as it reads GitHub's: issues and pull requests (PRs appear in the issue list with a
`pull_request` key), comments, labels, the rate limit, and the git database (blobs, trees,
commits, refs) that leases are built on. Error bodies are GitHub's
`{"message", "documentation_url", "status"}`; every reply carries the `x-ratelimit-*` headers.
tests/test_fakes_openapi.py holds every answer to GitHub's OpenAPI description. The state is
in github_model.py, the git database in github_git.py, the account and repository answers in
github_repo.py and GraphQL in github_graphql.py: mixins of the one GitHubFake.

    with GitHubFake() as gh:                 # token "t", acting as github-actions[bot]
        gh.add_issue("o/r", title="Task", body="...", labels=["in-progress"])
        run_code_under_test(api_url=gh.url, token="t")
        assert gh.count("POST", "/repos/{owner}/{repo}/issues/{number}/comments") == 1
"""

from __future__ import annotations

import itertools
import math
import time
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from email.utils import format_datetime
from typing import Any
from urllib.parse import quote, urlencode

from .base import ANY, Clock, FakeServer, HttpError, Reply, Request, route
from .github_git import GitDatabase
from .github_graphql import GraphQLEndpoint
from .github_model import (
    BODY_LIMIT,
    DOCS,
    EMPTY_TREE,
    SECONDARY_LIMIT_MESSAGE,
    Comment,
    Edit,
    Issue,
    Repo,
    _aware,
    _http_date,
    _same,
    iso,
    parse_iso,
)
from .github_repo import RepositoryRoutes


class GitHubFake(GitDatabase, RepositoryRoutes, GraphQLEndpoint, FakeServer):
    """Stateful GitHub REST API on 127.0.0.1. `url` is the API base (GITHUB_API_URL)."""

    def __init__(
        self,
        token: str = "t",  # noqa: S107 - the default test token
        *,
        login: str = "github-actions[bot]",
        rate_limit: int = 5000,
        now: datetime | None = None,
        html_base: str = "https://github.com",
        prefix: str = "",
        latency: float = 0.0,
    ) -> None:
        super().__init__(latency=latency)
        self.prefix = prefix  # e.g. "/api/v3" to look like GitHub Enterprise Server
        self.html_base = html_base
        self._fresh = (token, login, rate_limit, now)
        self.reset()

    def reset(self) -> None:
        """A new fake's state on the same server (conftest's `github_fake`): no repositories,
        comments, faults or recorded calls, the first token only, the clock and limits anew."""
        token, login, rate_limit, now = self._fresh
        self.clear_faults()
        self.reset_requests()
        self.clock = Clock(now)
        self.tokens: dict[str, str] = {token: login}
        self.repos: dict[str, Repo] = {}
        self._comments: dict[int, Comment] = {}
        self._ids = itertools.count(1_000_001)
        self._user_ids: dict[str, int] = {}
        self.rate_limit = rate_limit
        self.rate_used = 0
        self.rate_reset = int(time.time()) + 3600
        # Switches for what the real GitHub may do to leases:
        self.refuse_empty_tree = False  # a commit on the empty tree answers 422
        self.ref_creations_landing_then_502 = 0  # the next N ref creations land, then 502
        self.empty_repos: set[str] = set()  # git database calls answer 409 "empty"
        self.not_modified: list[Request] = []  # the conditional reads answered 304
        self.users: set[str] = set()  # owners that are users (lower case), not organisations

    # ---- seeding and inspection ------------------------------------------------------------
    def add_token(self, token: str, login: str) -> None:
        """Accept TOKEN too, acting as LOGIN (a login ending in [bot] is a Bot)."""
        self.tokens[token] = login

    def add_repo(self, full_name: str, *, default_branch: str = "main", **listed: Any) -> Repo:
        """FULL_NAME, made when new; LISTED sets what an owner's listing shows of it (topics,
        private, archived, disabled, fork)."""
        with self.lock:
            if full_name not in self.repos:
                self.repos[full_name] = Repo(full_name, next(self._ids), default_branch)
            found = self.repos[full_name]
            for name, value in listed.items():
                getattr(found, name)  # an AttributeError for a flag the fake does not know
                setattr(found, name, value)
            return found

    def add_issue(
        self,
        repo: str,
        title: str = "Task",
        body: str | None = "",
        *,
        number: int | None = None,
        labels: Iterable[str] = (),
        state: str = "open",
        state_reason: str | None = None,
        assignees: Iterable[str] = (),
        user: str = "octocat",
        created_at: datetime | None = None,
        updated_at: datetime | None = None,
        closed_at: datetime | None = None,
        pull_request: bool = False,
        author_association: str = "MEMBER",
    ) -> Issue:
        with self.lock:
            r = self.add_repo(repo)
            number = number or max(r.issues, default=0) + 1
            created = created_at or self.clock.now()
            if state == "closed":
                closed_at = closed_at or updated_at or created
                state_reason = state_reason or "completed"
            issue = Issue(
                repo=repo,
                number=number,
                id=next(self._ids),
                title=title,
                body=body,
                user=user,
                created_at=created,
                updated_at=updated_at or closed_at or created,
                state=state,
                state_reason=state_reason,
                closed_at=closed_at,
                labels=[self._label(r, name)["name"] for name in labels],
                assignees=list(assignees),
                pull_request=pull_request,
                author_association=author_association,
            )
            r.issues[number] = issue
            return issue

    def add_pull_request(self, repo: str, title: str = "PR", body: str = "", **kw: Any) -> Issue:
        return self.add_issue(repo, title, body, pull_request=True, **kw)

    def add_comment(
        self,
        repo: str,
        number: int,
        body: str,
        *,
        user: str = "octocat",
        created_at: datetime | None = None,
        updated_at: datetime | None = None,
    ) -> Comment:
        """Seed a comment; the issue's updated_at moves up to the comment's time."""
        with self.lock:
            issue = self.issue(repo, number)
            created = created_at or self.clock.now()
            comment = Comment(
                repo, number, next(self._ids), body, user, created, updated_at or created
            )
            self._comments[comment.id] = comment
            if created_at is None:  # a comment made now, as through the API
                self._touch(issue)
            else:  # seeded history: the issue moves up to the comment's time, not past it
                issue.updated_at = max(issue.updated_at, comment.updated_at)
            return comment

    def add_label(self, repo: str, name: str, color: str = "ededed", description: str = "") -> None:
        with self.lock:
            self._label(self.add_repo(repo), name, color, description)

    def edit_issue(
        self, repo: str, number: int, *, editor: str | None = None, **changes: Any
    ) -> Issue:
        """Change an issue as a person would in the web UI (title, body, state, labels,
        assignees, state_reason) and bump its updated_at; EDITOR (default: the issue's
        author) is who the body's edit history names. Handy inside `before`/`after` hooks."""
        with self.lock:
            issue = self.issue(repo, number)
            self._apply_issue_changes(self.repos[repo], issue, changes, editor=editor or issue.user)
            return issue

    def remove_comment(self, comment_id: int) -> None:
        """Delete a comment as a person would in the web UI. Handy inside hooks."""
        with self.lock:
            comment = self._comments.pop(comment_id)
            self._touch(self.repos[comment.repo].issues[comment.issue_number])

    def issue(self, repo: str, number: int) -> Issue:
        with self.lock:
            return self.repos[repo].issues[number]

    def comments(self, repo: str, number: int) -> list[Comment]:
        with self.lock:
            found = [
                c for c in self._comments.values() if (c.repo, c.issue_number) == (repo, number)
            ]
            return sorted(found, key=lambda c: c.id)

    def create_commit(
        self, repo: str, message: str, parents: Iterable[str] = (), tree: str = EMPTY_TREE
    ) -> str:
        """Store a commit object (no ref moves) and return its sha."""
        with self.lock:
            r = self.add_repo(repo)
            return self._store_commit(r, message, tree, list(parents), self._signature("octocat"))

    def set_ref(self, repo: str, ref: str, sha: str) -> None:
        """Point REF ("refs/...") at SHA unconditionally, as a push would."""
        with self.lock:
            self.add_repo(repo).refs[ref] = sha

    def ref(self, repo: str, ref: str) -> str | None:
        """The sha REF ("refs/...") points at, or None."""
        with self.lock:
            return self.add_repo(repo).refs.get(ref)

    def commit(self, repo: str, sha: str) -> dict[str, Any]:
        with self.lock:
            return self.repos[repo].objects[sha]

    def set_rate_limit(self, remaining: int, *, limit: int | None = None) -> None:
        with self.lock:
            self.rate_limit = limit or self.rate_limit
            self.rate_used = self.rate_limit - remaining

    @property
    def rate_remaining(self) -> int:
        return self.rate_limit - self.rate_used

    # ---- fault helpers ---------------------------------------------------------------------
    def secondary_rate_limit_next(
        self, method: str = ANY, path: str = ANY, *, retry_after: int = 1, times: int = 1
    ) -> None:
        """403 + `retry-after`, GitHub's answer when requests come too fast or too parallel."""
        body = self._error_body(403, SECONDARY_LIMIT_MESSAGE.format("0000:1111:2222:3333:4444"))
        body["documentation_url"] = (
            f"{DOCS}/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"
        )
        headers = {"retry-after": str(retry_after)}
        self.fail_next(method, path, status=403, body=body, headers=headers, times=times)

    def primary_rate_limit_next(
        self,
        method: str = ANY,
        path: str = ANY,
        *,
        status: int = 403,
        reset_in: int = 1,
        times: int = 1,
    ) -> None:
        """STATUS (403 or 429) with x-ratelimit-remaining 0 and x-ratelimit-reset RESET_IN
        seconds ahead (epoch seconds, rounded up), as when the hourly quota is spent."""
        body = self._error_body(status, "API rate limit exceeded for installation ID 1.")
        body["documentation_url"] = f"{DOCS}/overview/rate-limits-for-the-rest-api"
        headers = {
            "x-ratelimit-remaining": "0",
            "x-ratelimit-used": str(self.rate_limit),
            "x-ratelimit-reset": str(math.ceil(time.time()) + reset_in),
        }
        self.fail_next(method, path, status=status, body=body, headers=headers, times=times)

    # ---- plumbing hooks --------------------------------------------------------------------
    def error_body(self, status: int) -> dict[str, str]:
        messages = {404: "Not Found", 500: "Server Error", 502: "Server Error", 503: "Unavailable"}
        return self._error_body(status, messages.get(status, "Error"))

    @staticmethod
    def _error_body(status: int, message: str, **extra: Any) -> dict[str, Any]:
        return {"message": message, **extra, "documentation_url": DOCS, "status": str(status)}

    def _fail(self, status: int, message: str, **extra: Any) -> HttpError:
        return HttpError(status, self._error_body(status, message, **extra))

    def _invalid(self, resource: str, field_: str, code: str, message: str = "") -> HttpError:
        error = {"resource": resource, "code": code, "field": field_}
        if message:
            error["message"] = message
        return self._fail(422, "Validation Failed", errors=[error])

    def check(self, req: Request) -> Reply | None:
        auth = req.headers.get("authorization", "")
        scheme, _, token = auth.partition(" ")
        if not auth:
            return Reply(401, self._error_body(401, "Requires authentication"))
        if scheme.lower() not in ("token", "bearer") or token.strip() not in self.tokens:
            return Reply(401, self._error_body(401, "Bad credentials"))
        self._roll_rate_window()
        if self.rate_remaining <= 0 and req.template != "/rate_limit":
            body = self._error_body(403, "API rate limit exceeded for installation ID 1.")
            return Reply(403, body)
        return None

    def finish(self, req: Request, reply: Reply) -> None:
        self._roll_rate_window()
        free = reply.status in (401, 304) or req.template == "/rate_limit"  # 304: GitHub's rule
        if not free and self.rate_remaining > 0:
            self.rate_used += 1
        reply.headers.update(
            {
                "x-ratelimit-limit": str(self.rate_limit),
                "x-ratelimit-remaining": str(self.rate_remaining),
                "x-ratelimit-used": str(self.rate_used),
                "x-ratelimit-reset": str(self.rate_reset),
                "x-ratelimit-resource": "core",
                "x-github-request-id": f"FAKE:{len(self._requests):08X}",
                "x-github-api-version-selected": "2022-11-28",
                "date": format_datetime(_aware(self.clock.now()), usegmt=True),
            }
        )

    def _roll_rate_window(self) -> None:
        if time.time() >= self.rate_reset:
            self.rate_used = 0
            self.rate_reset = int(time.time()) + 3600

    def _login(self, req: Request) -> str:
        return self.tokens[req.headers["authorization"].partition(" ")[2].strip()]

    # ---- JSON shapes -----------------------------------------------------------------------
    def _api(self, repo: str) -> str:
        return f"{self.url}/repos/{repo}"

    def _user(self, login: str) -> dict[str, Any]:
        uid = self._user_ids.setdefault(login, 5000 + len(self._user_ids))
        api = f"{self.url}/users/{quote(login)}"
        return {
            "login": login,
            "id": uid,
            "node_id": f"U_fake{uid}",
            "avatar_url": f"https://avatars.githubusercontent.com/u/{uid}?v=4",
            "gravatar_id": "",
            "url": api,
            "html_url": f"{self.html_base}/{login}",
            "followers_url": f"{api}/followers",
            "following_url": f"{api}/following{{/other_user}}",
            "gists_url": f"{api}/gists{{/gist_id}}",
            "starred_url": f"{api}/starred{{/owner}}{{/repo}}",
            "subscriptions_url": f"{api}/subscriptions",
            "organizations_url": f"{api}/orgs",
            "repos_url": f"{api}/repos",
            "events_url": f"{api}/events{{/privacy}}",
            "received_events_url": f"{api}/received_events",
            "type": "Bot" if login.endswith("[bot]") else "User",
            "site_admin": False,
        }

    def _label_json(self, repo: str, label: dict[str, Any]) -> dict[str, Any]:
        return {**label, "url": f"{self._api(repo)}/labels/{quote(label['name'])}"}

    def _issue_json(self, issue: Issue) -> dict[str, Any]:
        api, n = self._api(issue.repo), issue.number
        kind = "pull" if issue.pull_request else "issues"
        labels = self.repos[issue.repo].labels
        data: dict[str, Any] = {
            "url": f"{api}/issues/{n}",
            "repository_url": api,
            "labels_url": f"{api}/issues/{n}/labels{{/name}}",
            "comments_url": f"{api}/issues/{n}/comments",
            "events_url": f"{api}/issues/{n}/events",
            "timeline_url": f"{api}/issues/{n}/timeline",
            "html_url": f"{self.html_base}/{issue.repo}/{kind}/{n}",
            "id": issue.id,
            "node_id": f"I_fake{issue.id}",
            "number": n,
            "title": issue.title,
            "user": self._user(issue.user),
            "labels": [self._label_json(issue.repo, labels[name.lower()]) for name in issue.labels],
            "state": issue.state,
            "locked": False,
            "assignee": self._user(issue.assignees[0]) if issue.assignees else None,
            "assignees": [self._user(login) for login in issue.assignees],
            "milestone": None,
            "comments": self._comment_counts(issue.repo)[n],
            "created_at": iso(issue.created_at),
            "updated_at": iso(issue.updated_at),
            "closed_at": iso(issue.closed_at),
            "author_association": issue.author_association,
            "active_lock_reason": None,
            "body": issue.body,
            "performed_via_github_app": None,
            "state_reason": issue.state_reason,
        }
        if issue.pull_request:
            data["draft"] = False
            data["pull_request"] = {
                "url": f"{api}/pulls/{n}",
                "html_url": data["html_url"],
                "diff_url": data["html_url"] + ".diff",
                "patch_url": data["html_url"] + ".patch",
                "merged_at": None,
            }
        return data

    def _comment_counts(self, repo: str) -> Counter[int]:
        return Counter(c.issue_number for c in self._comments.values() if c.repo == repo)

    def _comment_json(self, c: Comment) -> dict[str, Any]:
        api = self._api(c.repo)
        return {
            "url": f"{api}/issues/comments/{c.id}",
            "html_url": f"{self.html_base}/{c.repo}/issues/{c.issue_number}#issuecomment-{c.id}",
            "issue_url": f"{api}/issues/{c.issue_number}",
            "id": c.id,
            "node_id": f"IC_fake{c.id}",
            "user": self._user(c.user),
            "created_at": iso(c.created_at),
            "updated_at": iso(c.updated_at),
            "author_association": "MEMBER",
            "body": c.body,
            "performed_via_github_app": None,
        }

    def _ref_json(self, repo: str, ref: str) -> dict[str, Any]:
        sha = self.repos[repo].refs[ref]
        api = self._api(repo)
        return {
            "ref": ref,
            "node_id": f"REF_fake_{ref}",
            "url": f"{api}/git/{ref}",
            "object": {"sha": sha, "type": "commit", "url": f"{api}/git/commits/{sha}"},
        }

    def _page(self, req: Request, items: list[Any], render: Callable[[Any], Any] = _same) -> Reply:
        """One page of ITEMS (each passed through RENDER), with GitHub's Link header."""
        per_page = min(max(req.int_arg("per_page", 30), 1), 100)
        page = max(req.int_arg("page", 1), 1)
        last = max(1, math.ceil(len(items) / per_page))

        def link(number: int, rel: str) -> str:
            query = {**{k: v[-1] for k, v in req.query.items()}, "page": str(number)}
            return f'<{self.root}{req.path}?{urlencode(query)}>; rel="{rel}"'

        links = []
        if page > 1:
            links.append(link(page - 1, "prev"))
        if page < last:
            links += [link(page + 1, "next"), link(last, "last")]
        if page > 1:
            links.append(link(1, "first"))
        headers = {"link": ", ".join(links)} if links else {}
        chunk = items[(page - 1) * per_page : page * per_page]
        return Reply(200, [render(item) for item in chunk], headers)

    # ---- state helpers ---------------------------------------------------------------------
    def _repo(self, owner: str, repo: str) -> Repo:
        found = self.repos.get(f"{owner}/{repo}")
        if found is None:
            raise self._fail(404, "Not Found")
        return found

    def _issue(self, owner: str, repo: str, number: str) -> Issue:
        found = self._repo(owner, repo).issues.get(int(number))
        if found is None:
            raise self._fail(404, "Not Found")
        return found

    def _label(
        self, repo: Repo, name: str, color: str = "ededed", description: str = ""
    ) -> dict[str, Any]:
        """The repo's label NAME (case-insensitive), created if missing."""
        if name.lower() not in repo.labels:
            lid = next(self._ids)
            repo.labels[name.lower()] = {
                "id": lid,
                "node_id": f"LA_fake{lid}",
                "name": name,
                "color": color,
                "default": False,
                "description": description or None,
            }
        return repo.labels[name.lower()]

    def _label_names(self, repo: Repo, values: Any) -> list[str]:
        if isinstance(values, dict):
            values = values.get("labels", [])
        if not isinstance(values, list):
            raise self._invalid("Label", "labels", "invalid")
        names = [v["name"] if isinstance(v, dict) else str(v) for v in values]
        return list(dict.fromkeys(self._label(repo, n)["name"] for n in names))

    def _check_body(self, resource: str, body: Any) -> None:
        if isinstance(body, str) and len(body) > BODY_LIMIT:
            message = f"body is too long (maximum is {BODY_LIMIT} characters)"
            raise self._invalid(resource, "body", "custom", message)

    def _apply_issue_changes(
        self, repo: Repo, issue: Issue, changes: dict[str, Any], *, editor: str
    ) -> None:
        now = self.clock.now()
        self._check_body("Issue", changes.get("body"))
        if "title" in changes:
            issue.title = changes["title"]
        if "body" in changes and changes["body"] != issue.body:
            self._record_edit(issue, changes["body"] or "", editor, now)
            issue.body = changes["body"]
        if "labels" in changes:
            issue.labels = self._label_names(repo, changes["labels"])
        if "assignees" in changes:
            issue.assignees = list(changes["assignees"])
        state = changes.get("state", issue.state)
        if state == "closed" and issue.state == "open":
            issue.state, issue.closed_at = "closed", now
            issue.state_reason = changes.get("state_reason") or "completed"
        elif state == "open" and issue.state == "closed":
            issue.state, issue.closed_at, issue.state_reason = "open", None, "reopened"
        elif "state_reason" in changes:
            issue.state_reason = changes["state_reason"]
        self._touch(issue)

    def _record_edit(self, issue: Issue, text: str, editor: str, now: datetime) -> None:
        """The body's edit history as GitHub keeps it: the first edit records the text the
        issue was created with too, then one revision an edit, each the full text after it."""
        if not issue.edits:
            original = Edit(next(self._ids), issue.created_at, issue.user, issue.body or "")
            issue.edits.append(original)
        issue.edits.append(Edit(next(self._ids), now, editor, text))

    def _touch(self, issue: Issue) -> None:
        """A change moves updated_at forward, and here at least one second past the last,
        even on a frozen clock, so a conditional re-read (`If-Modified-Since`, whole seconds)
        of an older copy never answers 304. GitHub does not promise that: two edits within
        one second share an updated_at there (the adapter's get_issue says what follows)."""
        issue.updated_at = max(self.clock.now(), _aware(issue.updated_at) + timedelta(seconds=1))

    # ---- issues ----------------------------------------------------------------------------
    @route("GET", "/repos/{owner}/{repo}/issues")
    def list_issues(self, req: Request, owner: str, repo: str) -> Reply:
        issues = list(self._repo(owner, repo).issues.values())
        state = req.arg("state", "open")
        if state != "all":
            issues = [i for i in issues if i.state == state]
        if wanted := [n.strip().lower() for n in (req.arg("labels") or "").split(",") if n.strip()]:
            issues = [i for i in issues if set(wanted) <= {n.lower() for n in i.labels}]
        if since := req.arg("since"):
            try:
                cutoff = parse_iso(since)
            except ValueError:
                raise self._invalid("Issue", "since", "invalid") from None
            issues = [i for i in issues if i.updated_at >= cutoff]
        assignee = req.arg("assignee")
        if assignee == "none":
            issues = [i for i in issues if not i.assignees]
        elif assignee == "*":
            issues = [i for i in issues if i.assignees]
        elif assignee:
            issues = [i for i in issues if assignee in i.assignees]
        if creator := req.arg("creator"):
            issues = [i for i in issues if i.user == creator]
        counts = self._comment_counts(f"{owner}/{repo}")
        keys = {
            "created": lambda i: (i.created_at, i.number),
            "updated": lambda i: (i.updated_at, i.number),
            "comments": lambda i: (counts[i.number], i.number),
        }
        issues.sort(key=keys.get(req.arg("sort") or "created", keys["created"]))
        if req.arg("direction", "desc") != "asc":
            issues.reverse()
        return self._page(req, issues, self._issue_json)

    @route("POST", "/repos/{owner}/{repo}/issues")
    def create_issue(self, req: Request, owner: str, repo: str) -> Reply:
        r = self._repo(owner, repo)
        data = req.json if isinstance(req.json, dict) else {}
        if not data.get("title"):
            raise self._invalid("Issue", "title", "missing_field")
        self._check_body("Issue", data.get("body"))
        issue = self.add_issue(
            r.full_name,
            str(data["title"]),
            data.get("body"),
            labels=self._label_names(r, data.get("labels", [])),
            assignees=data.get("assignees") or ([data["assignee"]] if data.get("assignee") else []),
            user=self._login(req),
        )
        return Reply(201, self._issue_json(issue))

    @route("GET", "/repos/{owner}/{repo}/issues/{number:int}")
    def get_issue(self, req: Request, owner: str, repo: str, number: str) -> Reply:
        """A conditional read as GitHub answers one: `If-Modified-Since` at or after the
        issue's updated_at (whole seconds) is a 304 without a body, which GitHub does not
        count against the rate limit; a 200 carries `Last-Modified`."""
        issue = self._issue(owner, repo, number)
        modified = _aware(issue.updated_at).replace(microsecond=0)
        since = _http_date(req.headers.get("if-modified-since", ""))
        if since is not None and since >= modified:
            self.not_modified.append(req)  # benchmarks/bench_api.py tells these apart
            return Reply(304)
        return Reply(
            200, self._issue_json(issue), {"last-modified": format_datetime(modified, True)}
        )

    @route("PATCH", "/repos/{owner}/{repo}/issues/{number:int}")
    def update_issue(self, req: Request, owner: str, repo: str, number: str) -> Reply:
        issue = self._issue(owner, repo, number)
        changes = req.json if isinstance(req.json, dict) else {}
        if "state" in changes and changes["state"] not in ("open", "closed"):
            raise self._invalid("Issue", "state", "invalid")
        self._apply_issue_changes(self.repos[issue.repo], issue, changes, editor=self._login(req))
        return Reply(200, self._issue_json(issue))

    # ---- comments --------------------------------------------------------------------------
    @route("GET", "/repos/{owner}/{repo}/issues/comments")
    def list_repo_comments(self, req: Request, owner: str, repo: str) -> Reply:
        """GitHub's "List issue comments for a repository": `since` keeps the comments
        updated at or after it; `sort` is created (the order without it, ascending) or
        updated; `direction` is ignored without `sort`; items carry `issue_url`."""
        r = self._repo(owner, repo)
        found = [c for c in self._comments.values() if c.repo == r.full_name]
        if since := req.arg("since"):
            try:
                cutoff = parse_iso(since)
            except ValueError:
                raise self._invalid("IssueComment", "since", "invalid") from None
            found = [c for c in found if c.updated_at >= cutoff]
        if req.arg("sort") == "updated":
            found.sort(key=lambda c: (c.updated_at, c.id))
        else:
            found.sort(key=lambda c: (c.created_at, c.id))
        if req.arg("sort") and req.arg("direction") == "desc":
            found.reverse()
        return self._page(req, found, self._comment_json)

    @route("GET", "/repos/{owner}/{repo}/issues/{number:int}/comments")
    def list_comments(self, req: Request, owner: str, repo: str, number: str) -> Reply:
        issue = self._issue(owner, repo, number)
        found = self.comments(issue.repo, issue.number)
        if since := req.arg("since"):
            found = [c for c in found if c.updated_at >= parse_iso(since)]
        return self._page(req, found, self._comment_json)

    @route("POST", "/repos/{owner}/{repo}/issues/{number:int}/comments")
    def create_comment(self, req: Request, owner: str, repo: str, number: str) -> Reply:
        issue = self._issue(owner, repo, number)
        body = req.json.get("body") if isinstance(req.json, dict) else None
        if not isinstance(body, str) or not body:
            raise self._invalid("IssueComment", "body", "missing_field")
        self._check_body("IssueComment", body)
        comment = self.add_comment(issue.repo, issue.number, body, user=self._login(req))
        return Reply(201, self._comment_json(comment))

    def _comment(self, owner: str, repo: str, comment_id: str) -> Comment:
        comment = self._comments.get(int(comment_id))
        if comment is None or comment.repo != self._repo(owner, repo).full_name:
            raise self._fail(404, "Not Found")
        return comment

    @route("GET", "/repos/{owner}/{repo}/issues/comments/{comment_id:int}")
    def get_comment(self, req: Request, owner: str, repo: str, comment_id: str) -> Reply:
        return Reply(200, self._comment_json(self._comment(owner, repo, comment_id)))

    @route("PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id:int}")
    def update_comment(self, req: Request, owner: str, repo: str, comment_id: str) -> Reply:
        comment = self._comment(owner, repo, comment_id)
        body = req.json.get("body") if isinstance(req.json, dict) else None
        if not isinstance(body, str) or not body:
            raise self._invalid("IssueComment", "body", "missing_field")
        self._check_body("IssueComment", body)
        comment.body, comment.updated_at = body, self.clock.now()
        self._touch(self.repos[comment.repo].issues[comment.issue_number])
        return Reply(200, self._comment_json(comment))

    @route("DELETE", "/repos/{owner}/{repo}/issues/comments/{comment_id:int}")
    def delete_comment(self, req: Request, owner: str, repo: str, comment_id: str) -> Reply:
        comment = self._comment(owner, repo, comment_id)
        del self._comments[comment.id]
        self._touch(self.repos[comment.repo].issues[comment.issue_number])
        return Reply(204)

    # ---- labels ----------------------------------------------------------------------------
    def _issue_labels(self, issue: Issue) -> list[dict[str, Any]]:
        labels = self.repos[issue.repo].labels
        return [self._label_json(issue.repo, labels[n.lower()]) for n in issue.labels]

    @route("GET", "/repos/{owner}/{repo}/issues/{number:int}/labels")
    def list_issue_labels(self, req: Request, owner: str, repo: str, number: str) -> Reply:
        return self._page(req, self._issue_labels(self._issue(owner, repo, number)))

    @route("POST", "/repos/{owner}/{repo}/issues/{number:int}/labels")
    def add_issue_labels(self, req: Request, owner: str, repo: str, number: str) -> Reply:
        issue = self._issue(owner, repo, number)
        added = self._label_names(self.repos[issue.repo], req.json)
        have = {n.lower() for n in issue.labels}
        issue.labels += [n for n in added if n.lower() not in have]
        self._touch(issue)
        return Reply(200, self._issue_labels(issue))

    @route("PUT", "/repos/{owner}/{repo}/issues/{number:int}/labels")
    def set_issue_labels(self, req: Request, owner: str, repo: str, number: str) -> Reply:
        issue = self._issue(owner, repo, number)
        issue.labels = self._label_names(self.repos[issue.repo], req.json)
        self._touch(issue)
        return Reply(200, self._issue_labels(issue))

    @route("DELETE", "/repos/{owner}/{repo}/issues/{number:int}/labels/{name}")
    def remove_issue_label(
        self, req: Request, owner: str, repo: str, number: str, name: str
    ) -> Reply:
        issue = self._issue(owner, repo, number)
        kept = [n for n in issue.labels if n.lower() != name.lower()]
        if len(kept) == len(issue.labels):
            raise self._fail(404, "Label does not exist")
        issue.labels = kept
        self._touch(issue)
        return Reply(200, self._issue_labels(issue))

    @route("GET", "/repos/{owner}/{repo}/labels")
    def list_labels(self, req: Request, owner: str, repo: str) -> Reply:
        r = self._repo(owner, repo)
        return self._page(req, [self._label_json(r.full_name, lb) for lb in r.labels.values()])

    @route("POST", "/repos/{owner}/{repo}/labels")
    def create_label(self, req: Request, owner: str, repo: str) -> Reply:
        r = self._repo(owner, repo)
        data = req.json if isinstance(req.json, dict) else {}
        name = data.get("name")
        if not name:
            raise self._invalid("Label", "name", "missing_field")
        if name.lower() in r.labels:
            raise self._invalid("Label", "name", "already_exists")
        label = self._label(r, name, data.get("color", "ededed"), data.get("description", ""))
        return Reply(201, self._label_json(r.full_name, label))

    @route("GET", "/repos/{owner}/{repo}/labels/{name}")
    def get_label(self, req: Request, owner: str, repo: str, name: str) -> Reply:
        r = self._repo(owner, repo)
        if name.lower() not in r.labels:
            raise self._fail(404, "Not Found")
        return Reply(200, self._label_json(r.full_name, r.labels[name.lower()]))
