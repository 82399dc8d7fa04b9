"""The loopback GitHub's account and repository answers (`/rate_limit`, `/user`,
`/repos/{owner}/{repo}`), in the shapes GitHub's OpenAPI description requires
(tests/test_fakes_openapi.py holds them to it). A mixin of GitHubFake."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .base import Reply, Request, route
from .github_model import DOCS, iso

if TYPE_CHECKING:
    from .base import Clock, HttpError
    from .github_model import Repo


class RepositoryRoutes:
    """Routes that are neither issues nor the git database."""

    if TYPE_CHECKING:  # provided by GitHubFake
        clock: Clock
        html_base: str
        rate_limit: int
        rate_used: int
        rate_reset: int
        rate_remaining: int
        repos: dict[str, Repo]
        users: set[str]

        def _repo(self, owner: str, repo: str) -> Repo: ...
        def _login(self, req: Request) -> str: ...
        def _api(self, repo: str) -> str: ...
        def _fail(self, status: int, message: str, **extra: Any) -> HttpError: ...
        def _page(self, req: Request, items: list[Any], render: Callable[[Any], Any]) -> Reply: ...
        def _user(self, login: str) -> dict[str, Any]: ...
        @staticmethod
        def _error_body(status: int, message: str, **extra: Any) -> dict[str, Any]: ...

    @route("GET", "/rate_limit")
    def get_rate_limit(self, req: Request) -> Reply:
        core = {
            "limit": self.rate_limit,
            "used": self.rate_used,
            "remaining": self.rate_remaining,
            "reset": self.rate_reset,
        }
        search = {"limit": 30, "used": 0, "remaining": 30, "reset": int(time.time()) + 60}
        graphql = {**core, "used": 0, "remaining": self.rate_limit}
        resources = {"core": core, "search": search, "graphql": graphql}
        return Reply(200, {"resources": resources, "rate": core})

    @route("GET", "/user")
    def get_user(self, req: Request) -> Reply:
        login = self._login(req)
        if login.endswith("[bot]"):  # an installation token, like the Actions GITHUB_TOKEN
            body = self._error_body(403, "Resource not accessible by integration")
            body["documentation_url"] = f"{DOCS}/users/users#get-the-authenticated-user"
            return Reply(403, body)
        return Reply(200, {**self._user(login), **self._private_profile()})

    def _private_profile(self) -> dict[str, Any]:
        """What `GET /user` adds to a user for its owner (GitHub's "private-user")."""
        joined = iso(self.clock.now())
        counts = ("followers", "following", "public_repos", "public_gists", "private_gists")
        counts += ("total_private_repos", "owned_private_repos", "disk_usage", "collaborators")
        return {
            **dict.fromkeys(("name", "company", "blog", "location", "email", "bio"), None),
            "hireable": None,
            **dict.fromkeys(counts, 0),
            "created_at": joined,
            "updated_at": joined,
            "two_factor_authentication": True,
        }

    @route("GET", "/repos/{owner}/{repo}")
    def get_repo(self, req: Request, owner: str, repo: str) -> Reply:
        return Reply(200, self._repo_json(self._repo(owner, repo)))

    @route("GET", "/orgs/{org}/repos")
    def list_org_repos(self, req: Request, org: str) -> Reply:
        """An organisation's repositories the token sees (all of them here), by `type`."""
        if org.lower() in self.users or not self._owned(org):
            raise self._fail(404, "Not Found")
        kind = req.query.get("type", ["all"])[-1]
        keep: Callable[[Repo], bool] = {
            "all": lambda r: True,
            "public": lambda r: not r.private,
            "private": lambda r: r.private,
            "forks": lambda r: r.fork,
            "sources": lambda r: not r.fork,
            "member": lambda r: True,
        }[kind]
        return self._page(req, [r for r in self._owned(org) if keep(r)], self._repo_json)

    @route("GET", "/users/{username}/repos")
    def list_user_repos(self, req: Request, username: str) -> Reply:
        """A user's public repositories, as GitHub lists them to anyone but the user."""
        if not self._owned(username):
            raise self._fail(404, "Not Found")
        public = [r for r in self._owned(username) if not r.private]
        return self._page(req, public, self._repo_json)

    def _owned(self, owner: str) -> list[Repo]:
        """OWNER's repositories by name (GitHub's owners are case-insensitive)."""
        prefix = owner.lower() + "/"
        found = [r for r in self.repos.values() if r.full_name.lower().startswith(prefix)]
        return sorted(found, key=lambda r: r.full_name.lower())

    def _repo_json(self, r: Repo) -> dict[str, Any]:
        """A repository as `GET /repos/{owner}/{repo}` answers; the listings send the same."""
        owner, _, name = r.full_name.partition("/")
        api = self._api(r.full_name)
        created = iso(self.clock.now())
        kind = "User" if owner.lower() in self.users else "Organization"
        return {
            "id": r.id,
            "node_id": f"R_fake{r.id}",
            "name": name,
            "full_name": r.full_name,
            "owner": {**self._user(owner), "type": kind},
            "private": r.private,
            "visibility": "private" if r.private else "public",
            "html_url": f"{self.html_base}/{r.full_name}",
            "description": None,
            "fork": r.fork,
            "url": api,
            "issues_url": f"{api}/issues{{/number}}",
            "labels_url": f"{api}/labels{{/name}}",
            "git_refs_url": f"{api}/git/refs{{/sha}}",
            **self._repo_links(r.full_name),
            "created_at": created,
            "updated_at": created,
            "pushed_at": created,
            "homepage": None,
            "language": None,
            "license": None,
            "mirror_url": None,
            **dict.fromkeys(("size", "forks", "forks_count", "network_count"), 0),
            **dict.fromkeys(("watchers", "watchers_count", "stargazers_count"), 0),
            "subscribers_count": 0,
            "has_issues": True,
            **dict.fromkeys(("has_projects", "has_wiki", "has_pages"), False),
            "has_discussions": False,
            "archived": r.archived,
            "disabled": r.disabled,
            "topics": list(r.topics),
            "open_issues": sum(i.state == "open" for i in r.issues.values()),
            "open_issues_count": sum(i.state == "open" for i in r.issues.values()),
            "default_branch": r.default_branch,
            "permissions": {"admin": False, "push": True, "pull": True},
        }

    def _repo_links(self, full_name: str) -> dict[str, str]:
        """The URL templates GitHub's repository object carries (full-repository requires
        them all); none of them is served here."""
        api, web = self._api(full_name), f"{self.html_base}/{full_name}"
        host = web.split("://", 1)[-1].split("/", 1)[0]
        plain = "contributors deployments downloads events forks hooks languages merges"
        plain += " stargazers subscribers subscription tags teams"
        templated = {
            "archive": "/{archive_format}{/ref}",
            "assignees": "/assignees{/user}",
            "blobs": "/git/blobs{/sha}",
            "branches": "/branches{/branch}",
            "collaborators": "/collaborators{/collaborator}",
            "comments": "/comments{/number}",
            "commits": "/commits{/sha}",
            "compare": "/compare/{base}...{head}",
            "contents": "/contents/{+path}",
            "git_commits": "/git/commits{/sha}",
            "git_tags": "/git/tags{/sha}",
            "issue_comment": "/issues/comments{/number}",
            "issue_events": "/issues/events{/number}",
            "keys": "/keys{/key_id}",
            "milestones": "/milestones{/number}",
            "notifications": "/notifications{?since,all,participating}",
            "pulls": "/pulls{/number}",
            "releases": "/releases{/id}",
            "statuses": "/statuses/{sha}",
            "trees": "/git/trees{/sha}",
        }
        return {
            **{f"{name}_url": f"{api}/{name}" for name in plain.split()},
            **{f"{name}_url": api + tail for name, tail in templated.items()},
            "clone_url": f"{web}.git",
            "git_url": f"git://{host}/{full_name}.git",
            "ssh_url": f"git@{host}:{full_name}.git",
            "svn_url": web,
        }
