"""The GitHub fake answers in the shapes GitHub's own REST description gives.

The end-to-end tests and benchmarks run against tests/fakes/github.py; a fake that drifted from
GitHub would let them pass against a GitHub that does not exist. GitHub's OpenAPI description
(npm `@octokit/openapi`, subset vendored by scripts/vendor_openapi_subset.py, provenance in
tests/samples/README.md) is the referee: one scenario drives the fake through every operation
it serves, mostly through our adapter, and each answer (status and JSON) is validated against
the operation's response schema, each request body against its requestBody schema, each query
parameter against the operation's parameters.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import requests

from ai_context.adapters.github import GitHub, GitHubNotFound
from ai_context.core.secret import Secret
from tests.fakes import GitHubFake
from tests.fakes.base import Reply, Request

SPEC_FILE = Path(__file__).resolve().parent / "samples/schemas/github-rest-subset.json.gz"
T0 = datetime(2026, 5, 26, 14, 0, tzinfo=UTC)
LEASE = "refs/ai-context/leases/7"
TOKEN = "t"  # GitHubFake's default token
METHODS = ("get", "post", "put", "patch", "delete")
# Answers GitHub gives that its description leaves out: `/orgs/{org}/repos` declares only 200,
# yet a login that is no organisation (a user's) answers 404 Not Found, which the adapter reads
# as "list the user's repositories instead".
UNDECLARED = {("GET", "/orgs/{org}/repos", 404)}


def openapi_to_json_schema(node: Any) -> Any:
    """OpenAPI 3.0 schema -> JSON Schema: `nullable: true` becomes a "null" type (and a None
    in an `enum`); a nullable schema without `type` (an allOf of a $ref) becomes anyOf null."""
    if isinstance(node, list):
        return [openapi_to_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: openapi_to_json_schema(value) for key, value in node.items()}
    if out.pop("nullable", None) is not True:
        return out
    if "enum" in out:
        out["enum"] = [*out["enum"], None]
    if "type" in out:
        types = out["type"] if isinstance(out["type"], list) else [out["type"]]
        out["type"] = [*types, "null"]
        return out
    return {"anyOf": [out, {"type": "null"}]}


SPEC: dict[str, Any] = json.loads(gzip.decompress(SPEC_FILE.read_bytes()))
COMPONENTS = openapi_to_json_schema(SPEC["components"])
OPERATIONS = [(m.upper(), p) for p, item in SPEC["paths"].items() for m in METHODS if m in item]

_DATE_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")
FORMATS = jsonschema.FormatChecker(formats=())
FORMATS.checks("date-time")(lambda v: not isinstance(v, str) or bool(_DATE_TIME.match(v)))
FORMATS.checks("uri")(lambda v: not isinstance(v, str) or bool(re.match(r"https?://[^/]+", v)))


def resolve(node: dict[str, Any]) -> dict[str, Any]:
    """NODE, or the component its `$ref` names (responses, parameters, request bodies)."""
    while "$ref" in node:
        _, _, kind, name = node["$ref"].split("/", 3)
        node = SPEC["components"][kind][name]
    return node


def problems(schema: Any, instance: Any) -> list[str]:
    """Every way INSTANCE breaks the OpenAPI SCHEMA (refs resolve against the components)."""
    root = {"allOf": [openapi_to_json_schema(schema)], "components": COMPONENTS}
    validator = jsonschema.Draft202012Validator(root, format_checker=FORMATS)
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message[:300]}"
        for e in sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
    ]


def _pattern(template: str) -> re.Pattern[str]:
    parts = re.split(r"\{(\w+)\}", template)
    regex = "".join(
        re.escape(part) if i % 2 == 0 else (".+" if part == "ref" else "[^/]+")
        for i, part in enumerate(parts)
    )
    return re.compile(regex + "$")


_PATTERNS = {template: _pattern(template) for template in SPEC["paths"]}


def operation_of(method: str, path: str) -> tuple[str, str] | None:
    """(METHOD, the description's path template) for a concrete request, the most literal
    template winning (`/issues/comments` over `/issues/{issue_number}`), or None."""
    found = [
        t for t, p in _PATTERNS.items() if p.match(path) and method.lower() in SPEC["paths"][t]
    ]
    if not found:
        return None
    return method, max(found, key=lambda t: len(re.sub(r"\{\w+\}", "", t)))


def spec_operation(method: str, template: str) -> dict[str, Any]:
    op: dict[str, Any] = SPEC["paths"][template][method.lower()]
    return op


class RecordingFake(GitHubFake):
    """The fake, keeping every answer as the client received it (JSON round-tripped)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.exchanges: list[tuple[Request, int, Any]] = []

    def finish(self, req: Request, reply: Reply) -> None:
        super().finish(req, reply)
        body = None if reply.body is None or reply.status == 204 else reply.body
        self.exchanges.append((req, reply.status, json.loads(json.dumps(body))))


def _call(fake: GitHubFake, method: str, path: str, token: str = TOKEN, **kw: Any) -> Any:
    headers = {"Authorization": f"token {token}"}
    response = requests.request(method, fake.url + path, headers=headers, timeout=5, **kw)
    return response.json() if response.content else None


def _drive_adapter(fake: GitHubFake) -> None:
    """Every call the adapter makes, the answers it treats as outcomes included (304, 404 on
    a read, 422 on a ref race, 409 on an empty repository)."""
    gh = GitHub(Secret("t"), "o/r", api_url=fake.url, write_interval=0, backoff=0, retries=0)
    issue = gh.create_issue("New task", "Body\n", ["in-progress"])
    gh.list_issues("open")
    gh.list_issues("all", labels=["bug"], sort="updated", since=T0)
    gh.get_issue(issue.number)
    gh.get_issue(issue.number, known=issue)  # 304 Not Modified
    with pytest.raises(GitHubNotFound):
        gh.get_issue(999)
    gh.update_issue_body(issue.number, "Edited\n")
    comment = gh.create_comment(issue.number, "first")
    gh.edit_comment(comment.id, "edited")
    gh.list_comments(issue.number)
    gh.list_repo_comments(T0)
    gh.delete_comment(comment.id)
    gh.add_labels(issue.number, ["blocked", "bug"])
    gh.remove_label(issue.number, "blocked")
    tree = gh.create_tree({"lease.json": '{"holder": "a"}'})
    first = gh.create_commit("lease 7", tree)
    gh.get_commit(first.sha)
    assert gh.create_ref(LEASE, first.sha)
    assert not gh.create_ref(LEASE, first.sha)  # 422: it exists
    second = gh.create_commit("renew", tree, [first.sha])
    assert gh.update_ref(LEASE, second.sha)
    assert not gh.update_ref(LEASE, first.sha)  # 422: not a fast-forward
    assert gh.get_ref(LEASE) == second.sha
    assert gh.get_ref("refs/ai-context/leases/8") is None  # 404
    assert gh.matching_refs("refs/ai-context/leases/") == {LEASE: second.sha}
    assert gh.delete_ref(LEASE)
    assert not gh.delete_ref(LEASE)  # 422: already gone
    empty = GitHub(Secret("t"), "o/empty", api_url=fake.url, write_interval=0, retries=0)
    assert empty.get_ref(LEASE) is None  # 409: the repository is empty
    assert {r.full_name for r in gh.owner_repositories("o")} == {"o/r", "o/empty", "o/old"}
    assert [r.full_name for r in gh.owner_repositories("octocat")] == ["octocat/hello"]  # 404, user


def _drive_the_rest(fake: GitHubFake) -> None:
    """The routes the adapter does not call (yet), through plain requests."""
    _call(fake, "GET", "/rate_limit")
    _call(fake, "GET", "/user", token="u")
    _call(fake, "GET", "/user")  # 403: an installation token has no user
    _call(fake, "GET", "/repos/o/r")
    _call(fake, "GET", "/repos/o/r/issues/1/labels")
    _call(fake, "PUT", "/repos/o/r/issues/1/labels", json={"labels": ["bug", "docs"]})
    _call(fake, "GET", "/repos/o/r/labels")
    _call(fake, "POST", "/repos/o/r/labels", json={"name": "ready", "color": "0e8a16"})
    _call(fake, "POST", "/repos/o/r/labels", json={"name": "ready"})  # 422: exists
    _call(fake, "GET", "/repos/o/r/labels/bug")
    comment_id = fake.comments("o/r", 1)[0].id
    _call(fake, "GET", f"/repos/o/r/issues/comments/{comment_id}")
    _call(fake, "POST", "/repos/o/r/issues/1/comments", json={"body": ""})  # 422
    _call(fake, "POST", "/repos/o/r/git/blobs", json={"content": "aGk=", "encoding": "base64"})


@pytest.fixture(scope="module")
def fake() -> Iterator[RecordingFake]:
    with RecordingFake(now=T0) as server:
        server.add_token("u", "octocat")
        server.add_label("o/r", "bug", "d73a4a", "Something is not working")
        server.add_issue("o/r", "Seeded", "Seed\n", labels=["bug"], assignees=["octocat"])
        server.add_issue("o/r", "Done", "", state="closed")
        server.add_pull_request("o/r", "A pull request")
        server.add_comment("o/r", 1, "hello")
        server.add_repo("o/empty")
        server.add_repo("o/old", topics=["ai-context"], archived=True, fork=True, private=False)
        server.add_repo("octocat/hello", private=False)
        server.users.add("octocat")
        server.empty_repos.add("o/empty")
        _drive_adapter(server)
        _drive_the_rest(server)
        assert not server.errors, server.errors
        yield server


def _exchanges(fake: RecordingFake, method: str, template: str) -> list[tuple[Request, int, Any]]:
    return [e for e in fake.exchanges if operation_of(e[0].method, e[0].path) == (method, template)]


def test_the_fakes_routes_are_operations_of_the_description() -> None:
    """Every REST route of the fake is a path + method GitHub describes (GraphQL aside)."""
    shape = {re.sub(r"\{\w+\}", "{}", t) for t in SPEC["paths"]}
    routes = {
        (method, re.sub(r"\{[\w:]+\}", "{}", template))
        for klass in GitHubFake.__mro__
        for fn in vars(klass).values()
        if hasattr(fn, "_route")
        for method, template in [fn._route]
        if template != "/graphql"
    }
    missing = sorted(
        (m, t) for m, t in routes if not any(t == s and m.lower() in _methods(s) for s in shape)
    )
    assert missing == []
    assert len(routes) == len(OPERATIONS)  # the vendored subset is exactly what the fake serves


def _methods(shape: str) -> set[str]:
    return {
        m for t, item in SPEC["paths"].items() if re.sub(r"\{\w+\}", "{}", t) == shape for m in item
    }


def test_the_scenario_reaches_every_operation_and_nothing_else(fake: RecordingFake) -> None:
    reached = {operation_of(req.method, req.path) for req, _, _ in fake.exchanges}
    assert reached == set(OPERATIONS)


@pytest.mark.parametrize(
    ("method", "template"), OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS]
)
def test_answers_match_the_description(fake: RecordingFake, method: str, template: str) -> None:
    """Each answer's status is one the operation declares; its JSON fits that status's schema."""
    responses = spec_operation(method, template)["responses"]
    failures = []
    for req, status, body in _exchanges(fake, method, template):
        declared = responses.get(str(status), responses.get("default"))
        if declared is None and (method, template, status) in UNDECLARED:
            assert body["message"] == "Not Found"  # GitHub's basic error
            continue
        if declared is None:
            failures.append(f"{req.method} {req.path}: status {status} is not declared")
            continue
        schema = resolve(declared).get("content", {}).get("application/json", {}).get("schema")
        if schema is None:  # GitHub's error bodies are JSON even where none is described
            if body is not None and status < 400:
                failures.append(f"{req.method} {req.path} {status}: a body where none is described")
            continue
        failures += [f"{req.method} {req.path} {status}: {p}" for p in problems(schema, body)]
    assert failures == []


@pytest.mark.parametrize(
    ("method", "template"), OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS]
)
def test_requests_match_the_description(fake: RecordingFake, method: str, template: str) -> None:
    """What the adapter (and the scenario) sends: bodies fit the requestBody schema, query
    parameters are declared and fit theirs."""
    op = spec_operation(method, template)
    declared = {
        p["name"]: p["schema"]
        for p in map(
            resolve, [*SPEC["paths"][template].get("parameters", []), *op.get("parameters", [])]
        )
        if p["in"] == "query"
    }
    body_schema = resolve(op.get("requestBody", {})).get("content", {}).get("application/json", {})
    failures = []
    for req, _, _ in _exchanges(fake, method, template):
        for name, values in req.query.items():
            if name not in declared:
                failures.append(f"{req.method} {req.path}: query parameter {name!r} is undeclared")
                continue
            value: Any = values[-1]
            if openapi_to_json_schema(declared[name]).get("type") in (
                "integer",
                ["integer", "null"],
            ):
                value = int(value)
            failures += [
                f"{req.method} {req.path} ?{name}: {p}" for p in problems(declared[name], value)
            ]
        if "schema" in body_schema:
            failures += [
                f"{req.method} {req.path} body: {p}"
                for p in problems(body_schema["schema"], req.json)
            ]
        elif req.json is not None:
            failures.append(f"{req.method} {req.path}: a body where none is described")
    assert failures == []


def test_nullable_becomes_a_null_type() -> None:
    """The translation the checks above stand on: without it a null `body` would fail them."""
    schema = {"type": "string", "nullable": True, "enum": ["a"]}
    assert problems(schema, None) == []
    assert problems({"type": "string"}, None) != []
    wrapped = {"allOf": [{"$ref": "#/components/schemas/simple-user"}], "nullable": True}
    assert problems(wrapped, None) == []
    assert problems(wrapped, {"login": "octocat"}) != []  # the referenced schema still applies
