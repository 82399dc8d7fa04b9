"""The batch read of comments over GitHub's GraphQL API (issue 14): the query against GitHub's
published schema, the fake's schema as a subset of it, the answer -> models, and each fallback
to the REST read (responses at the HTTP level). The transport, `GitHub.graphql`, has its own
tests (tests/test_github_graphql.py)."""

from __future__ import annotations

import gzip
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import requests
import responses
from graphql import (
    GraphQLInterfaceType,
    GraphQLObjectType,
    GraphQLSchema,
    build_client_schema,
    build_schema,
    parse,
    validate,
)
from responses import matchers

from ai_context.adapters.github import GitHub, comment_from_json
from ai_context.adapters.github_graphql import (
    author_login,
    comment_from_node,
    comments_query,
    parse_comments,
)
from ai_context.core.secret import Secret
from ai_context.jobs.comments import read_many
from tests.fakes import GitHubFake
from tests.fakes.github_graphql import SDL

SAMPLES = Path(__file__).parent / "samples" / "schemas"
API = "https://ghe.example.com/api/v3"
REPO = f"{API}/repos/acme/shop"
TOKEN = Secret("ghs_" + "x" * 36)
BOT = "github-actions[bot]"
MARKER = "<!-- ai-context:findings -->"


@cache
def github_schema() -> GraphQLSchema:
    """GitHub's public schema (tests/samples/README.md says where it comes from)."""
    with gzip.open(SAMPLES / "github-graphql.schema.json.gz", "rt", encoding="utf-8") as f:
        return build_client_schema(json.load(f))


# ---- the documents against GitHub's schema ---------------------------------------------------


def test_our_query_validates_against_githubs_schema() -> None:
    document = parse(comments_query([1, 42, 9999]))
    assert validate(github_schema(), document) == []


def test_the_schema_check_catches_a_field_github_does_not_have() -> None:
    wrong = comments_query([1]).replace("fullDatabaseId", "fullDatabaseID")
    errors = validate(github_schema(), parse(wrong))
    assert [e.message for e in errors] == [
        "Cannot query field 'fullDatabaseID' on type 'IssueComment'. "
        "Did you mean 'fullDatabaseId' or 'databaseId'?"
    ]


def test_our_query_validates_against_the_fakes_schema() -> None:
    assert validate(build_schema(SDL), parse(comments_query([3, 4]))) == []


def test_the_fakes_schema_is_a_subset_of_githubs() -> None:
    """Every type, field, argument and interface the fake declares is GitHub's, same types."""
    ours, theirs = build_schema(SDL), github_schema()
    checked = 0
    for name, kind in ours.type_map.items():
        if name.startswith("__"):
            continue
        real = theirs.get_type(name)
        assert real is not None and type(real) is type(kind), name
        if not isinstance(kind, GraphQLObjectType | GraphQLInterfaceType):
            continue
        assert isinstance(real, GraphQLObjectType | GraphQLInterfaceType)
        assert {i.name for i in kind.interfaces} <= {i.name for i in real.interfaces}, name
        for field_name, field in kind.fields.items():
            assert field_name in real.fields, f"{name}.{field_name}"
            assert str(field.type) == str(real.fields[field_name].type), f"{name}.{field_name}"
            for arg_name, arg in field.args.items():
                where = f"{name}.{field_name}({arg_name})"
                assert arg_name in real.fields[field_name].args, where
                assert str(arg.type) == str(real.fields[field_name].args[arg_name].type), where
            checked += 1
    assert checked >= 20


# ---- the answer -> models ------------------------------------------------------------------


def node(cid: int | str | None, body: str, author: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "fullDatabaseId": None if cid is None else str(cid),
        "body": body,
        "createdAt": "2026-05-26T15:00:00Z",
        "updatedAt": "2026-05-26T15:05:00Z",
        "url": f"https://ghe.example.com/acme/shop/issues/7#issuecomment-{cid}",
        "author": author,
    }


BOT_NODE = {"__typename": "Bot", "login": "github-actions"}
USER_NODE = {"__typename": "User", "login": "ana"}


def issue(*nodes: dict[str, Any], more: bool = False, total: int | None = None) -> Any:
    return {
        "comments": {
            "totalCount": len(nodes) if total is None else total,
            "pageInfo": {"hasNextPage": more, "endCursor": "Y3Vyc29y" if nodes else None},
            "nodes": list(nodes),
        }
    }


def test_a_node_gives_the_comment_the_rest_listing_gives() -> None:
    rest = comment_from_json(
        {
            "id": 2_600_000_001,  # beyond GraphQL's Int: why fullDatabaseId
            "body": MARKER,
            "user": {"login": BOT, "type": "Bot"},
            "created_at": "2026-05-26T15:00:00Z",
            "updated_at": "2026-05-26T15:05:00Z",
            "html_url": "https://ghe.example.com/acme/shop/issues/7#issuecomment-2600000001",
            "issue_url": f"{REPO}/issues/7",
        }
    )
    assert comment_from_node(node(2_600_000_001, MARKER, BOT_NODE), 7) == rest


@pytest.mark.parametrize(
    ("author", "login"),
    [
        ({"__typename": "Bot", "login": "github-actions"}, BOT),  # as GitHub answers today
        ({"__typename": "Bot", "login": BOT}, BOT),  # should GitHub add the suffix one day
        ({"__typename": "User", "login": "ana"}, "ana"),
        ({"__typename": "User", "login": "dependabot-fan"}, "dependabot-fan"),
        (None, "ghost"),  # a deleted account: REST's login for it
    ],
)
def test_logins_are_spelt_as_rest_spells_them(author: dict[str, Any] | None, login: str) -> None:
    assert author_login(author) == login


def test_an_answer_splits_into_read_paged_and_broken() -> None:
    data = {
        "repository": {
            "i1": issue(node(11, "hi", USER_NODE), node(12, MARKER, BOT_NODE)),
            "i2": issue(),
            "i3": issue(node(31, "x", USER_NODE), more=True),
            "i4": None,  # a missing issue
            "i5": issue(node(None, "x", USER_NODE)),  # a null id
            "i6": {"comments": None},
            "i7": issue(node(71, "x", USER_NODE), total=2),  # fewer nodes than it has
        }
    }
    read, paged, broken = parse_comments(data, [1, 2, 3, 4, 5, 6, 7, 8])
    assert [(c.id, c.author) for c in read[1]] == [(11, "ana"), (12, BOT)]
    assert read[2] == []
    assert set(read) == {1, 2}
    assert paged == [3]
    assert broken == [4, 5, 6, 7, 8]
    assert parse_comments(None, [1]) == ({}, [], [1])


# ---- the transport and the fallbacks (responses) -------------------------------------------


def at(address: str) -> re.Pattern[str]:
    """ADDRESS, with or without the default port (some clients write `:443` into their URLs)."""
    scheme, rest = address.split("://", 1)
    host, _, path = rest.partition("/")
    return re.compile(rf"{scheme}://{re.escape(host)}(:443)?/{re.escape(path)}(\?.*)?$")


GRAPHQL = at("https://ghe.example.com/api/graphql")


def adapter(api_url: str = API) -> GitHub:
    return GitHub(TOKEN, "acme/shop", api_url=api_url, write_interval=0, backoff=0)


def rest_comments(number: int, *comments: dict[str, Any]) -> None:
    responses.get(at(f"{REPO}/issues/{number}/comments"), json=list(comments))


def rest_comment(cid: int, body: str, login: str) -> dict[str, Any]:
    return {
        "id": cid,
        "body": body,
        "user": {"login": login, "type": "Bot" if login.endswith("[bot]") else "User"},
        "created_at": "2026-05-26T15:00:00Z",
        "updated_at": "2026-05-26T15:00:00Z",
        "html_url": f"https://ghe.example.com/acme/shop/issues/1#issuecomment-{cid}",
    }


def answer(**issues: Any) -> dict[str, Any]:
    return {"data": {"repository": issues}}


def read(gh: GitHub, numbers: list[int]) -> tuple[dict[int, list[Any]], list[str]]:
    logged: list[str] = []
    return read_many(gh, numbers, logged.append), logged


@responses.activate
def test_one_query_reads_the_comments_of_many_issues() -> None:
    responses.post(
        GRAPHQL,
        json=answer(i1=issue(node(11, MARKER, BOT_NODE)), i2=issue(node(21, "hi", USER_NODE))),
        match=[
            matchers.json_params_matcher(
                {"variables": {"owner": "acme", "name": "shop"}}, strict_match=False
            )
        ],
    )
    got, logged = read(adapter(), [1, 2])
    assert [(c.id, c.author, c.body) for c in got[1]] == [(11, BOT, MARKER)]
    assert [c.id for c in got[2]] == [21]
    assert len(responses.calls) == 1 and logged == []


@responses.activate
def test_a_single_issue_is_read_by_rest() -> None:
    """One REST listing costs what one query costs, and it is the proven path."""
    rest_comments(1, rest_comment(11, MARKER, BOT))
    got, _ = read(adapter(), [1])
    assert [c.id for c in got[1]] == [11]
    assert [c.request.method for c in responses.calls] == ["GET"]


@responses.activate
def test_an_issue_with_more_than_a_page_is_read_by_rest() -> None:
    responses.post(
        GRAPHQL,
        json=answer(i1=issue(node(11, "hi", USER_NODE), more=True, total=101), i2=issue()),
    )
    rest_comments(1, rest_comment(11, "hi", "ana"), rest_comment(12, MARKER, BOT))
    got, logged = read(adapter(), [1, 2])
    assert [c.id for c in got[1]] == [11, 12]  # all of them, ours among them
    assert got[2] == []
    assert logged == []  # not a failure: the REST read is the way to page


@pytest.mark.parametrize(
    "failure",
    [
        {"status": 502, "json": {"message": "Server Error"}},
        {"status": 401, "json": {"message": "Bad credentials"}},
        {"status": 200, "json": {"errors": [{"message": "Field 'fullDatabaseId' doesn't exist"}]}},
        {"status": 200, "json": {"data": None, "errors": [{"type": "RATE_LIMITED"}]}},
        {"status": 200, "body": "<html>not json</html>"},
    ],
    ids=["http-502", "http-401", "validation-errors", "rate-limited", "not-json"],
)
@responses.activate
def test_a_failed_query_falls_back_to_rest_for_its_issues(failure: dict[str, Any]) -> None:
    responses.post(GRAPHQL, **failure)
    rest_comments(1, rest_comment(11, MARKER, BOT))
    rest_comments(2)
    got, logged = read(adapter(), [1, 2])
    assert [(c.id, c.author) for c in got[1]] == [(11, BOT)]
    assert got[2] == []
    assert len(logged) == 1 and "GraphQL read of 2 issues' comments failed" in logged[0]


@pytest.mark.parametrize(
    "part",
    [
        None,  # the issue is missing from the answer
        {"comments": None},
        issue(node(None, MARKER, BOT_NODE)),  # a null id
        issue(node(21, MARKER, BOT_NODE) | {"createdAt": None}),
        issue(node(21, MARKER, BOT_NODE) | {"author": "github-actions"}),  # not an object
    ],
    ids=["missing", "null-comments", "null-id", "null-time", "malformed-author"],
)
@responses.activate
def test_a_broken_part_falls_back_to_rest_for_that_issue(part: Any) -> None:
    repository = {"i1": issue(node(11, "hi", USER_NODE))}
    if part is not None:
        repository["i2"] = part
    responses.post(GRAPHQL, json={"data": {"repository": repository}})
    rest_comments(2, rest_comment(21, MARKER, BOT))
    got, logged = read(adapter(), [1, 2])
    assert [c.id for c in got[1]] == [11]
    assert [(c.id, c.author) for c in got[2]] == [(21, BOT)]
    assert logged == [
        "ai-context: the GraphQL answer lacked the comments of #2; "
        "reading those issues' comments one by one"
    ]
    assert [c.request.method for c in responses.calls] == ["POST", "GET"]


@responses.activate
def test_a_null_repository_falls_back_for_every_issue() -> None:
    responses.post(GRAPHQL, json={"data": {"repository": None}})
    rest_comments(1)
    rest_comments(2)
    got, logged = read(adapter(), [1, 2])
    assert got == {1: [], 2: []}
    assert len(logged) == 1 and "#1, #2" in logged[0]


@responses.activate
def test_many_issues_take_one_query_per_hundred() -> None:
    numbers = list(range(1, 251))

    def reply(request: Any) -> tuple[int, dict[str, str], str]:
        query = json.loads(request.body)["query"]
        asked = [n for n in numbers if f"i{n}: issue(number: {n})" in query]
        return 200, {}, json.dumps(answer(**{f"i{n}": issue() for n in asked}))

    responses.add_callback(responses.POST, GRAPHQL, callback=reply)
    got, _ = read(adapter(), numbers)
    assert sorted(got) == numbers
    assert len(responses.calls) == 3


# ---- the loopback fake answers as GitHub does ----------------------------------------------


def test_the_fake_pages_spells_bots_as_graphql_does_and_reports_not_found() -> None:
    page = "comments(first: 2, after: $after) { totalCount pageInfo { hasNextPage endCursor } "
    query = (
        'query($after: String) { repository(owner: "o", name: "r") { '
        f"i1: issue(number: 1) {{ {page} nodes {{ body author {{ __typename login }} }} }} }} "
        "i9: issue(number: 9) { number } } }"
    )
    with GitHubFake() as gh:
        gh.add_issue("o/r", "Task", "")
        for n, user in enumerate(["ana", BOT, "ben"]):
            gh.add_comment("o/r", 1, f"c{n}", user=user)

        def post(body: dict[str, Any]) -> dict[str, Any]:
            reply = requests.post(
                f"{gh.url}/graphql", json=body, headers={"Authorization": "token t"}, timeout=5
            )
            assert reply.status_code == 200
            answer: dict[str, Any] = reply.json()
            return answer

        first = post({"query": query, "variables": {}})
        comments = first["data"]["repository"]["i1"]["comments"]
        assert comments["totalCount"] == 3 and comments["pageInfo"]["hasNextPage"] is True
        assert comments["nodes"][1]["author"] == {"__typename": "Bot", "login": "github-actions"}
        assert first["data"]["repository"]["i9"] is None
        assert first["errors"][0]["type"] == "NOT_FOUND"
        assert first["errors"][0]["path"] == ["repository", "i9"]
        after = comments["pageInfo"]["endCursor"]
        second = post({"query": query, "variables": {"after": after}})["data"]["repository"]["i1"]
        assert [n["body"] for n in second["comments"]["nodes"]] == ["c2"]
        assert second["comments"]["pageInfo"]["hasNextPage"] is False
        too_many = post(
            {
                "query": comments_query([1]).replace("first: 100", "first: 101"),
                "variables": {"owner": "o", "name": "r"},
            }
        )
        assert "exceeds the `first` limit of 100" in too_many["errors"][0]["message"]
        unknown = post({"query": "{ viewer { login } }"})
        assert "data" not in unknown and "viewer" in unknown["errors"][0]["message"]
    assert gh.errors == []
