"""The loopback GitHub's git database (blobs, trees, commits, refs): what leases are built
on, with the switches for what real GitHub may do to them (an empty tree refused, a ref write
answered 502 after it landed, an empty repository). A mixin of GitHubFake."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import TYPE_CHECKING, Any

from .base import Reply, Request, route
from .github_model import EMPTY_TREE, Repo, iso

if TYPE_CHECKING:
    from .base import Clock, HttpError


class GitDatabase:
    """Routes under /repos/{owner}/{repo}/git/."""

    if TYPE_CHECKING:  # provided by GitHubFake
        clock: Clock
        repos: dict[str, Repo]
        refuse_empty_tree: bool
        ref_creations_landing_then_502: int
        empty_repos: set[str]

        def _repo(self, owner: str, repo: str) -> Repo: ...
        def _login(self, req: Request) -> str: ...
        def _fail(self, status: int, message: str, **extra: Any) -> HttpError: ...
        def _invalid(
            self, resource: str, field_: str, code: str, message: str = ""
        ) -> HttpError: ...
        def _ref_json(self, repo: str, ref: str) -> dict[str, Any]: ...

    def _store(self, repo: Repo, kind: str, payload: bytes, obj: dict[str, Any]) -> str:
        sha = hashlib.sha1(f"{kind} {len(payload)}\0".encode() + payload).hexdigest()  # noqa: S324
        repo.objects.setdefault(sha, {"type": kind, "sha": sha, **obj})
        return sha

    def _signature(self, login: str, given: Any = None) -> dict[str, str]:
        given = given if isinstance(given, dict) else {}
        return {
            "name": given.get("name", login),
            "email": given.get("email", f"{login}@users.noreply.github.com"),
            "date": given.get("date", iso(self.clock.now())),
        }

    def _store_commit(
        self, repo: Repo, message: str, tree: str, parents: list[str], author: dict[str, str]
    ) -> str:
        text = f"tree {tree}\n" + "".join(f"parent {p}\n" for p in parents)
        text += f"author {json.dumps(author, sort_keys=True)}\n\n{message}"
        obj = {"message": message, "tree": tree, "parents": parents, "author": author}
        return self._store(repo, "commit", text.encode(), obj)

    def _commit_json(self, repo: Repo, sha: str) -> dict[str, Any]:
        c, api = repo.objects[sha], self._api(repo.full_name)
        return {
            "sha": sha,
            "node_id": f"C_fake{sha[:12]}",
            "url": f"{api}/git/commits/{sha}",
            "html_url": f"{self.html_base}/{repo.full_name}/commit/{sha}",
            "author": c["author"],
            "committer": c["author"],
            "message": c["message"],
            "tree": {"sha": c["tree"], "url": f"{api}/git/trees/{c['tree']}"},
            "parents": [
                {
                    "sha": p,
                    "url": f"{api}/git/commits/{p}",
                    "html_url": f"{self.html_base}/{repo.full_name}/commit/{p}",
                }
                for p in c["parents"]
            ],
            "verification": {
                "verified": False,
                "reason": "unsigned",
                "signature": None,
                "payload": None,
                "verified_at": None,
            },
        }

    def _is_commit(self, repo: Repo, sha: Any) -> bool:
        return isinstance(sha, str) and repo.objects.get(sha, {}).get("type") == "commit"

    @route("POST", "/repos/{owner}/{repo}/git/blobs")
    def create_blob(self, req: Request, owner: str, repo: str) -> Reply:
        r = self._repo(owner, repo)
        self._refuse_if_empty(r)
        data = req.json if isinstance(req.json, dict) else {}
        if not isinstance(data.get("content"), str):
            raise self._invalid("Blob", "content", "missing_field")
        raw = data["content"].encode()
        if data.get("encoding") == "base64":
            raw = base64.b64decode(raw)
        sha = self._store(r, "blob", raw, {"size": len(raw)})
        return Reply(201, {"sha": sha, "url": f"{self._api(r.full_name)}/git/blobs/{sha}"})

    @route("POST", "/repos/{owner}/{repo}/git/trees")
    def create_tree(self, req: Request, owner: str, repo: str) -> Reply:
        r = self._repo(owner, repo)
        self._refuse_if_empty(r)
        data = req.json if isinstance(req.json, dict) else {}
        entries = []
        for entry in data.get("tree") or []:
            sha = entry.get("sha")
            if "content" in entry:
                sha = self._store(r, "blob", entry["content"].encode(), {})
            entries.append({**{k: v for k, v in entry.items() if k != "content"}, "sha": sha})
        payload = json.dumps([data.get("base_tree"), entries], sort_keys=True).encode()
        sha = self._store(r, "tree", payload, {"tree": entries})
        url = f"{self._api(r.full_name)}/git/trees/{sha}"
        return Reply(201, {"sha": sha, "url": url, "tree": entries, "truncated": False})

    def _refuse_if_empty(self, r: Repo) -> None:
        if r.full_name in self.empty_repos:
            raise self._fail(409, "Git Repository is empty.")

    @route("POST", "/repos/{owner}/{repo}/git/commits")
    def create_git_commit(self, req: Request, owner: str, repo: str) -> Reply:
        r = self._repo(owner, repo)
        self._refuse_if_empty(r)
        data = req.json if isinstance(req.json, dict) else {}
        if not isinstance(data.get("message"), str):
            raise self._invalid("Commit", "message", "missing_field")
        tree: Any = data.get("tree")
        if tree == EMPTY_TREE and self.refuse_empty_tree:
            raise self._fail(422, "Tree SHA does not exist")
        if tree != EMPTY_TREE and r.objects.get(tree, {}).get("type") != "tree":
            raise self._fail(422, "Tree SHA does not exist")
        parents = data.get("parents") or []
        if not all(self._is_commit(r, p) for p in parents):
            raise self._fail(422, "Parent SHA does not exist or is not a commit object")
        author = self._signature(self._login(req), data.get("author"))
        sha = self._store_commit(r, data["message"], tree, list(parents), author)
        return Reply(201, self._commit_json(r, sha))

    @route("GET", "/repos/{owner}/{repo}/git/commits/{sha}")
    def get_git_commit(self, req: Request, owner: str, repo: str, sha: str) -> Reply:
        r = self._repo(owner, repo)
        if not self._is_commit(r, sha):
            raise self._fail(404, "Not Found")
        return Reply(200, self._commit_json(r, sha))

    @route("GET", "/repos/{owner}/{repo}/git/ref/{ref:path}")
    def get_ref(self, req: Request, owner: str, repo: str, ref: str) -> Reply:
        r = self._repo(owner, repo)
        self._refuse_if_empty(r)
        if f"refs/{ref}" not in r.refs:
            raise self._fail(404, "Not Found")
        return Reply(200, self._ref_json(r.full_name, f"refs/{ref}"))

    @route("GET", "/repos/{owner}/{repo}/git/matching-refs/{ref:path}")
    def matching_refs(self, req: Request, owner: str, repo: str, ref: str) -> Reply:
        r = self._repo(owner, repo)
        names = sorted(n for n in r.refs if n.startswith(f"refs/{ref}"))
        return Reply(200, [self._ref_json(r.full_name, n) for n in names])

    @route("POST", "/repos/{owner}/{repo}/git/refs")
    def create_ref(self, req: Request, owner: str, repo: str) -> Reply:
        r = self._repo(owner, repo)
        self._refuse_if_empty(r)
        data = req.json if isinstance(req.json, dict) else {}
        ref, sha = data.get("ref"), str(data.get("sha"))
        if not isinstance(ref, str) or not ref.startswith("refs/") or ref.count("/") < 2:
            raise self._fail(422, "Reference name is invalid")
        if not self._is_commit(r, sha):
            raise self._fail(422, "Object does not exist")
        if ref in r.refs:
            raise self._fail(422, "Reference already exists")
        r.refs[ref] = sha
        if self.ref_creations_landing_then_502 > 0:  # written, but the answer is lost
            self.ref_creations_landing_then_502 -= 1
            return Reply(502, self.error_body(502))
        return Reply(201, self._ref_json(r.full_name, ref))

    @route("PATCH", "/repos/{owner}/{repo}/git/refs/{ref:path}")
    def update_ref(self, req: Request, owner: str, repo: str, ref: str) -> Reply:
        r = self._repo(owner, repo)
        data = req.json if isinstance(req.json, dict) else {}
        name, sha = f"refs/{ref}", str(data.get("sha"))
        if name not in r.refs:
            raise self._fail(422, "Reference does not exist")
        if not self._is_commit(r, sha):
            raise self._fail(422, "Object does not exist")
        if not data.get("force") and r.refs[name] not in self._ancestry(r, sha):
            raise self._fail(422, "Update is not a fast forward")
        r.refs[name] = sha
        return Reply(200, self._ref_json(r.full_name, name))

    @route("DELETE", "/repos/{owner}/{repo}/git/refs/{ref:path}")
    def delete_ref(self, req: Request, owner: str, repo: str, ref: str) -> Reply:
        r = self._repo(owner, repo)
        if r.refs.pop(f"refs/{ref}", None) is None:
            raise self._fail(422, "Reference does not exist")
        return Reply(204)

    def _ancestry(self, repo: Repo, sha: str) -> set[str]:
        """SHA and every commit reachable from it through parents."""
        seen, todo = set(), [sha]
        while todo:
            current = todo.pop()
            if current not in seen and self._is_commit(repo, current):
                seen.add(current)
                todo += repo.objects[current]["parents"]
        return seen
