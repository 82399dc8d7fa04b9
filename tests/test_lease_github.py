"""The adapter's git ref and commit calls against the loopback GitHub (422 is "you lost")."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from ai_context.adapters.github import GitHub, GitHubUnavailable
from ai_context.core.secret import Secret
from tests.fakes import GitHubFake

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
REF = "refs/ai-context/leases/7"


@pytest.fixture
def gh() -> Iterator[GitHubFake]:
    with GitHubFake(now=datetime(2026, 5, 26, 15, 0, tzinfo=UTC)) as fake:
        fake.add_repo("o/r")
        yield fake


def adapter(gh: GitHubFake) -> GitHub:
    return GitHub(Secret("t"), "o/r", api_url=gh.url, write_interval=0, backoff=0)


def test_refs_follow_compare_and_swap(gh: GitHubFake) -> None:
    api = adapter(gh)
    assert api.get_ref(REF) is None
    first = api.create_commit('{"actor": "a"}', EMPTY_TREE)
    assert first.message == '{"actor": "a"}' and first.parents == () and first.tree == EMPTY_TREE
    assert api.create_ref(REF, first.sha) is True
    assert api.create_ref(REF, first.sha) is False  # exists: 422
    assert api.get_ref(REF) == first.sha
    child = api.create_commit("renewed", EMPTY_TREE, [first.sha])
    stranger = api.create_commit("unrelated", EMPTY_TREE)
    assert api.update_ref(REF, stranger.sha) is False  # not a fast-forward: 422
    assert api.update_ref(REF, child.sha) is True
    assert api.get_commit(child.sha).parents == (first.sha,)
    assert api.matching_refs("refs/ai-context/leases/") == {REF: child.sha}
    assert api.delete_ref(REF) is True
    assert api.delete_ref(REF) is False  # already gone
    assert api.update_ref(REF, child.sha) is False  # gone: 422 too
    assert api.matching_refs("refs/ai-context/leases/") == {}


def test_ref_calls_fail_loudly_on_outages(gh: GitHubFake) -> None:
    api = adapter(gh)
    gh.fail_next("POST", "/repos/{owner}/{repo}/git/refs", status=502)
    with pytest.raises(GitHubUnavailable):
        api.create_ref(REF, "0" * 40)
    assert gh.count("POST", "/repos/{owner}/{repo}/git/refs") == 1  # a POST is never re-sent


def test_an_empty_repository_has_no_refs(gh: GitHubFake) -> None:
    api = adapter(gh)
    empty = {"message": "Git Repository is empty.", "status": "409"}
    gh.fail_next("GET", "/repos/{owner}/{repo}/git/ref/{ref}", status=409, body=empty)
    gh.fail_next("GET", "/repos/{owner}/{repo}/git/matching-refs/{ref}", status=409, body=empty)
    assert api.get_ref(REF) is None
    assert api.matching_refs("refs/ai-context/leases/") == {}
