"""Cut the GitHub REST subset the loopback fake is held to out of GitHub's OpenAPI description.

    npm pack @octokit/openapi && tar xzf octokit-openapi-*.tgz
    python scripts/vendor_openapi_subset.py package/generated/api.github.com.json

writes tests/samples/schemas/github-rest-subset.json.gz: the operations below (the ones
tests/fakes/github.py serves), verbatim, and every component they reach through `$ref`, kept
under `components` as in the source so the refs resolve unchanged. Examples and the prose
descriptions are dropped (they validate nothing and are most of the bytes). Not run by the
tests: they read the file it wrote (tests/test_fakes_openapi.py); re-run it to move to a newer
description, then update the provenance line in tests/samples/README.md.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "tests/samples/schemas/github-rest-subset.json.gz"

# OpenAPI path -> the methods the fake serves there (tests/fakes/github.py, GraphQL aside).
OPERATIONS: dict[str, tuple[str, ...]] = {
    "/rate_limit": ("get",),
    "/user": ("get",),
    "/orgs/{org}/repos": ("get",),
    "/users/{username}/repos": ("get",),
    "/repos/{owner}/{repo}": ("get",),
    "/repos/{owner}/{repo}/issues": ("get", "post"),
    "/repos/{owner}/{repo}/issues/{issue_number}": ("get", "patch"),
    "/repos/{owner}/{repo}/issues/comments": ("get",),
    "/repos/{owner}/{repo}/issues/comments/{comment_id}": ("get", "patch", "delete"),
    "/repos/{owner}/{repo}/issues/{issue_number}/comments": ("get", "post"),
    "/repos/{owner}/{repo}/issues/{issue_number}/labels": ("get", "post", "put"),
    "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}": ("delete",),
    "/repos/{owner}/{repo}/labels": ("get", "post"),
    "/repos/{owner}/{repo}/labels/{name}": ("get",),
    "/repos/{owner}/{repo}/git/blobs": ("post",),
    "/repos/{owner}/{repo}/git/trees": ("post",),
    "/repos/{owner}/{repo}/git/commits": ("post",),
    "/repos/{owner}/{repo}/git/commits/{commit_sha}": ("get",),
    "/repos/{owner}/{repo}/git/ref/{ref}": ("get",),
    "/repos/{owner}/{repo}/git/matching-refs/{ref}": ("get",),
    "/repos/{owner}/{repo}/git/refs": ("post",),
    "/repos/{owner}/{repo}/git/refs/{ref}": ("patch", "delete"),
}
DROPPED = frozenset({"examples", "example", "description"})


def _strip(node: Any) -> Any:
    """NODE without examples and descriptions; a schema property *named* one is kept."""
    if isinstance(node, list):
        return [_strip(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _strip(prop) for name, prop in value.items()}
        elif key not in DROPPED:
            out[key] = _strip(value)
    return out


def _refs(node: Any) -> set[str]:
    if isinstance(node, list):
        return set().union(*map(_refs, node)) if node else set()
    if not isinstance(node, dict):
        return set()
    found = {node["$ref"]} if isinstance(node.get("$ref"), str) else set()
    return found.union(*map(_refs, node.values())) if node else found


def subset(spec: dict[str, Any]) -> dict[str, Any]:
    """The OPERATIONS of SPEC and the components they reach, examples and prose dropped."""
    paths: dict[str, Any] = {}
    for path, methods in OPERATIONS.items():
        item = spec["paths"][path]  # a KeyError here: GitHub renamed or dropped the path
        paths[path] = {m: _strip(item[m]) for m in methods} | (
            {"parameters": _strip(item["parameters"])} if "parameters" in item else {}
        )
    components: dict[str, dict[str, Any]] = {}
    todo = sorted(_refs(paths))
    while todo:
        ref = todo.pop()
        _, _, kind, name = ref.split("/", 3)  # "#/components/<kind>/<name>"
        if name in components.get(kind, {}):
            continue
        node = _strip(spec["components"][kind][name])
        components.setdefault(kind, {})[name] = node
        todo += sorted(_refs(node))
    return {
        "openapi": spec["openapi"],
        "info": {k: spec["info"][k] for k in ("title", "version") if k in spec["info"]},
        "paths": paths,
        "components": {k: dict(sorted(v.items())) for k, v in sorted(components.items())},
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Vendor the GitHub REST subset the fake is held to."
    )
    parser.add_argument("description", type=Path, help="generated/api.github.com.json")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    spec = json.loads(args.description.read_text(encoding="utf-8"))
    text = json.dumps(subset(spec), indent=1, sort_keys=True) + "\n"
    args.out.write_bytes(gzip.compress(text.encode(), compresslevel=9, mtime=0))
    print(f"{args.out}: {len(OPERATIONS)} paths, {len(text)} bytes of JSON", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
