"""The GitHub fake speaks enough REST v3 for our adapter (adapters/github.py, the client the
end-to-end tests run), with GitHub's errors and limits."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import requests
from github import GithubRetry

from ai_context.adapters.github import GitHub, GitHubConfigError, GitHubUnavailable
from ai_context.core.secret import Secret
from tests.fakes import GitHubFake
from tests.fakes.github import EMPTY_TREE

T0 = datetime(2026, 5, 26, 14, 0, tzinfo=UTC)
ISSUES = "/repos/{owner}/{repo}/issues"
ONE_ISSUE = "/repos/{owner}/{repo}/issues/{number}"
LEASE = "refs/ai-context/leases/7"
TOKEN = "t"  # GitHubFake's default token
AUTH = {"Authorization": f"token {TOKEN}"}


@pytest.fixture
def gh() -> Iterator[GitHubFake]:
    with GitHubFake(now=T0) as fake:
        fake.add_repo("o/r")
        yield fake


def client(fake: GitHubFake, token: str = TOKEN) -> GitHub:
    return GitHub(Secret(token), "o/r", api_url=fake.url, write_interval=0, backoff=0)


def call(fake: GitHubFake, method: str, path: str, token: str = TOKEN, **kw: Any) -> Any:
    headers = {"Authorization": f"token {token}"} if token else {}
    return requests.request(method, fake.url + path, headers=headers, timeout=10, **kw)


# ---- the adapter against the fake ---------------------------------------------------------
def test_the_adapter_lists_issues_across_pages(gh: GitHubFake) -> None:
    for n in range(250):
        gh.add_issue("o/r", f"Task {n}", labels=["in-progress"] if n % 2 else [])
    gh.add_pull_request("o/r", "A pull request")
    gh.add_issue("o/r", "Closed one", state="closed")

    api = client(gh)
    issues = api.list_issues("open")

    assert len(issues) == 250 and issues[0].number == 250
    assert gh.count("GET", ISSUES) == 3  # pages of 100 followed through the Link header
    assert gh.count() == 3 == api.counter.total  # the listing's JSON: no read per issue
    assert {r.arg("per_page") for r in gh.requests_to("GET", ISSUES)} == {"100"}
    # The listing carries the pull request (newest first, like GitHub); the adapter drops it
    # from what it read, without a call per issue.
    [first] = call(gh, "GET", "/repos/o/r/issues?per_page=1").json()
    assert first["number"] == 251 and "pull_request" in first


def test_the_adapter_reads_one_issue(gh: GitHubFake) -> None:
    gh.add_issue("o/r", "Task", "## AI Context\n", labels=["bug"], assignees=["ariel"])

    issue = client(gh).get_issue(1)

    assert (issue.title, issue.body, issue.state) == ("Task", "## AI Context\n", "open")
    assert issue.labels == ("bug",)
    assert issue.author == "octocat"
    assert issue.assignees == ("ariel",)
    assert issue.html_url == "https://github.com/o/r/issues/1"
    assert issue.updated_at == T0
    assert issue.closed_at is None


def test_the_adapter_creates_edits_and_deletes_comments(gh: GitHubFake) -> None:
    gh.add_issue("o/r", "Task")
    api = client(gh)
    gh.clock.advance(hours=1)

    comment = api.create_comment(1, "<!-- ai-context -->\nfindings")
    assert comment.author == "github-actions[bot]"
    user = call(gh, "GET", f"/repos/o/r/issues/comments/{comment.id}").json()["user"]
    assert user["type"] == "Bot"
    assert gh.issue("o/r", 1).updated_at == T0 + timedelta(hours=1)  # a comment bumps it

    api.edit_comment(comment.id, "<!-- ai-context -->\nall clear")
    assert [c.body for c in api.list_comments(1)] == ["<!-- ai-context -->\nall clear"]

    api.delete_comment(comment.id)
    assert gh.comments("o/r", 1) == []
    assert api.list_comments(1) == []


def test_the_adapter_adds_and_removes_labels(gh: GitHubFake) -> None:
    gh.add_issue("o/r", "Task", labels=["bug"])
    api = client(gh)

    api.add_labels(1, ["ai-context:stale"])
    assert gh.issue("o/r", 1).labels == ["bug", "ai-context:stale"]
    api.remove_label(1, "ai-context:stale")
    assert gh.issue("o/r", 1).labels == ["bug"]

    api.add_labels(1, ["area/api"])  # a slash: one quoted path segment to remove it
    api.remove_label(1, "area/api")
    assert gh.issue("o/r", 1).labels == ["bug"]

    api.remove_label(1, "ai-context:stale")  # already gone: the adapter takes GitHub's 404
    gone = call(gh, "DELETE", "/repos/o/r/issues/1/labels/ai-context:stale")
    assert gone.status_code == 404
    assert gone.json()["message"] == "Label does not exist"


def record_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits urllib3 is asked to make between tries (retry-after, else our policy's
    backoff), recorded instead of slept: a test asserts the wait, never a duration."""
    waits: list[float] = []

    def recorded(retry: GithubRetry, response: Any = None) -> None:
        after = retry.get_retry_after(response) if response is not None else None
        waits.append(after if after is not None else retry.get_backoff_time())

    monkeypatch.setattr(GithubRetry, "sleep", recorded)  # our policy extends it
    return waits


def test_the_adapter_waits_out_a_secondary_rate_limit(
    gh: GitHubFake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """retry-after: the wait asked of urllib3 is the header's (read, not timed)."""
    waits = record_waits(monkeypatch)
    gh.add_issue("o/r", "Task")
    gh.secondary_rate_limit_next("GET", ONE_ISSUE, retry_after=7)
    api = client(gh)

    assert api.get_issue(1).title == "Task"

    assert 7 in waits
    assert gh.count("GET", ONE_ISSUE) == 2


def test_the_adapter_waits_out_a_primary_rate_limit_until_its_reset(
    gh: GitHubFake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """x-ratelimit-remaining 0: the wait asked of urllib3 lasts until x-ratelimit-reset (+1 s),
    then one retry. The wait is read where the policy sets it, not timed."""
    waits = record_waits(monkeypatch)
    gh.add_issue("o/r", "Task")
    gh.primary_rate_limit_next("GET", ONE_ISSUE, status=429, reset_in=30)
    api = client(gh)

    assert api.get_issue(1).title == "Task"

    assert any(29 <= wait <= 32 for wait in waits), waits
    assert gh.count("GET", ONE_ISSUE) == 2 and api.counter.retries == 1


def test_the_adapter_waits_a_minute_on_a_429_without_retry_after(
    gh: GitHubFake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 429 is always a rate limit: without retry-after nor a spent quota, GitHub's minute,
    then one retry (a POST too: GitHub refused it, nothing was created)."""
    waits = record_waits(monkeypatch)
    gh.add_issue("o/r", "Task")
    comments = "/repos/o/r/issues/1/comments"
    gh.fail_next("POST", comments, status=429, body={"message": "Too many requests"})
    api = client(gh)

    assert api.create_comment(1, "hello").body == "hello"

    assert waits == [60] and gh.count("POST", comments) == 2 and api.counter.retries == 1
    assert len(gh.comments("o/r", 1)) == 1


@pytest.mark.parametrize(("verb", "sent"), [("GET", 2), ("POST", 1)])
def test_a_lost_answer_is_asked_again_for_a_read_never_for_a_post(
    gh: GitHubFake, verb: str, sent: int
) -> None:
    """The request went out, its answer did not come back in time: a read is asked again; a
    POST may have landed (here the fake did make the comment) and is never sent twice."""
    gh.add_issue("o/r", "Task")
    path = "/repos/o/r/issues/1" if verb == "GET" else "/repos/o/r/issues/1/comments"
    gh.before(verb, path, lambda _request: time.sleep(1.5))  # beyond the 1 s timeout, once
    api = GitHub(Secret(TOKEN), "o/r", api_url=gh.url, write_interval=0, backoff=0, timeout=1)
    if verb == "GET":
        assert api.get_issue(1).title == "Task"
    else:
        with pytest.raises(GitHubUnavailable, match="did not answer in time to comment on #1"):
            api.create_comment(1, "hello")
    assert gh.count(verb, path) == sent == api.counter.total


def test_the_adapter_refuses_a_bad_token(gh: GitHubFake) -> None:
    gh.add_issue("o/r", "Task")
    with pytest.raises(GitHubConfigError, match="refused the token"):
        client(gh, token="wrong").get_issue(1)


def test_the_adapter_works_under_an_enterprise_prefix() -> None:
    with GitHubFake(prefix="/api/v3") as fake:
        fake.add_issue("o/r", "Task")
        assert fake.url.endswith("/api/v3")
        assert client(fake).get_issue(1).title == "Task"
        outside = requests.get(fake.root + "/repos/o/r", headers=AUTH, timeout=5)
        assert outside.status_code == 404


# ---- auth, identity, rate limit ----------------------------------------------------------
def test_auth_accepts_token_and_bearer_and_refuses_the_rest(gh: GitHubFake) -> None:
    assert call(gh, "GET", "/repos/o/r").status_code == 200
    assert (
        requests.get(
            gh.url + "/repos/o/r", headers={"Authorization": "Bearer t"}, timeout=5
        ).status_code
        == 200
    )

    bad = call(gh, "GET", "/repos/o/r", token="nope")
    assert (bad.status_code, bad.json()["message"]) == (401, "Bad credentials")
    missing = call(gh, "GET", "/repos/o/r", token="")
    assert (missing.status_code, missing.json()["message"]) == (401, "Requires authentication")


def test_get_user_is_refused_to_the_actions_token(gh: GitHubFake) -> None:
    refused = call(gh, "GET", "/user")
    assert refused.status_code == 403
    assert refused.json()["message"] == "Resource not accessible by integration"

    gh.add_token("pat", "ariel")
    assert call(gh, "GET", "/user", token="pat").json()["login"] == "ariel"


def test_rate_limit_headers_count_down(gh: GitHubFake) -> None:
    first = call(gh, "GET", "/repos/o/r").headers
    second = call(gh, "GET", "/repos/o/r/issues").headers

    assert first["x-ratelimit-limit"] == "5000"
    assert int(first["x-ratelimit-remaining"]) - int(second["x-ratelimit-remaining"]) == 1
    assert second["x-ratelimit-used"] == "2"
    assert second["x-ratelimit-resource"] == "core"
    assert int(second["x-ratelimit-reset"]) > time.time()
    rate = call(gh, "GET", "/rate_limit").json()["resources"]["core"]
    assert rate["remaining"] == 4998  # asking for the limit does not spend it


def test_spent_quota_and_injected_primary_limits(gh: GitHubFake) -> None:
    gh.set_rate_limit(0)
    spent = call(gh, "GET", "/repos/o/r")
    assert spent.status_code == 403
    assert spent.json()["message"].startswith("API rate limit exceeded")
    assert spent.headers["x-ratelimit-remaining"] == "0"

    gh.set_rate_limit(100)
    armed = time.time()  # the reset is counted from when the limit is armed
    gh.primary_rate_limit_next("GET", "/repos/o/r", status=429, reset_in=2)
    limited = call(gh, "GET", "/repos/o/r")
    assert limited.status_code == 429
    assert limited.headers["x-ratelimit-remaining"] == "0"
    assert int(limited.headers["x-ratelimit-reset"]) >= armed + 2
    assert call(gh, "GET", "/repos/o/r").status_code == 200


def test_secondary_limit_body_and_headers(gh: GitHubFake) -> None:
    gh.secondary_rate_limit_next(retry_after=3)
    answer = call(gh, "POST", "/repos/o/r/issues", json={"title": "x"})
    assert answer.status_code == 403
    assert answer.headers["retry-after"] == "3"
    assert answer.json()["message"].startswith("You have exceeded a secondary rate limit")
    assert "x-ratelimit-remaining" in answer.headers


# ---- issues ------------------------------------------------------------------------------
def test_issue_filters_sorting_and_link_header(gh: GitHubFake) -> None:
    for n in range(1, 6):
        gh.clock.set(T0 + timedelta(hours=n))
        gh.add_issue("o/r", f"T{n}", labels=["a", "b"] if n % 2 else ["a"], assignees=["ariel"])
    gh.clock.advance(hours=1)
    gh.edit_issue("o/r", 2, state="closed")

    def numbers(query: str) -> list[int]:
        return [i["number"] for i in call(gh, "GET", f"/repos/o/r/issues?{query}").json()]

    assert numbers("") == [5, 4, 3, 1]
    assert numbers("state=closed") == [2]
    assert numbers("state=all&direction=asc") == [1, 2, 3, 4, 5]
    assert numbers("labels=a,B") == [5, 3, 1]
    assert numbers("since=2026-05-26T18:00:00Z&state=all") == [5, 4, 2]
    assert numbers("sort=updated&state=all") == [2, 5, 4, 3, 1]
    assert numbers("assignee=none") == []

    page = call(gh, "GET", "/repos/o/r/issues?state=all&per_page=2&page=2")
    links = {v["rel"]: v["url"] for v in requests.utils.parse_header_links(page.headers["link"])}
    assert set(links) == {"prev", "next", "last", "first"}
    assert links["next"].endswith("/repos/o/r/issues?state=all&per_page=2&page=3")
    assert links["last"].endswith("page=3")
    last = call(gh, "GET", "/repos/o/r/issues?state=all&per_page=2&page=3")
    assert "next" not in last.headers["link"]
    assert "link" not in call(gh, "GET", "/repos/o/r/issues?per_page=100").headers


def test_issue_json_has_the_fields_adapters_read(gh: GitHubFake) -> None:
    gh.add_issue("o/r", "Task", labels=["bug"])
    data = call(gh, "GET", "/repos/o/r/issues/1").json()

    assert data["url"] == f"{gh.url}/repos/o/r/issues/1"
    assert data["comments_url"] == f"{gh.url}/repos/o/r/issues/1/comments"
    assert data["html_url"] == "https://github.com/o/r/issues/1"
    assert data["labels"][0]["name"] == "bug" and "color" in data["labels"][0]
    assert data["user"]["login"] == "octocat" and data["user"]["type"] == "User"
    assert data["created_at"] == data["updated_at"] == "2026-05-26T14:00:00Z"
    assert data["closed_at"] is None and data["state_reason"] is None
    assert "pull_request" not in data


def test_create_and_update_issue(gh: GitHubFake) -> None:
    created = call(gh, "POST", "/repos/o/r/issues", json={"title": "New", "labels": ["x"]})
    assert created.status_code == 201
    assert created.json()["user"]["login"] == "github-actions[bot]"
    assert call(gh, "POST", "/repos/o/r/issues", json={"body": "no title"}).status_code == 422

    gh.clock.advance(minutes=5)
    closed = call(gh, "PATCH", "/repos/o/r/issues/1", json={"state": "closed", "body": "b"})
    assert closed.json()["state"] == "closed"
    assert closed.json()["state_reason"] == "completed"
    assert closed.json()["closed_at"] == closed.json()["updated_at"] == "2026-05-26T14:05:00Z"
    reopened = call(gh, "PATCH", "/repos/o/r/issues/1", json={"state": "open"}).json()
    assert (reopened["closed_at"], reopened["state_reason"]) == (None, "reopened")

    relabelled = call(gh, "PATCH", "/repos/o/r/issues/1", json={"labels": [{"name": "y"}]})
    assert [label["name"] for label in relabelled.json()["labels"]] == ["y"]
    assert call(gh, "GET", "/repos/o/r/issues/99").status_code == 404
    assert call(gh, "GET", "/repos/o/missing/issues").json()["message"] == "Not Found"


def test_bodies_over_65536_characters_are_refused(gh: GitHubFake) -> None:
    gh.add_issue("o/r", "Task")
    too_long = "x" * 65537
    answer = call(gh, "POST", "/repos/o/r/issues/1/comments", json={"body": too_long})
    assert answer.status_code == 422
    assert "too long" in answer.json()["errors"][0]["message"]
    assert call(gh, "PATCH", "/repos/o/r/issues/1", json={"body": too_long}).status_code == 422
    ok = call(gh, "PATCH", "/repos/o/r/issues/1", json={"body": too_long[:-1]})
    assert ok.status_code == 200


def test_comments_paginate_and_list_per_repository(gh: GitHubFake) -> None:
    gh.add_issue("o/r", "One")
    gh.add_issue("o/r", "Two")
    for n in range(3):
        gh.add_comment("o/r", 1, f"c{n}", user="ariel")
    gh.add_comment("o/r", 2, "other")

    first = call(gh, "GET", "/repos/o/r/issues/1/comments?per_page=2")
    assert [c["body"] for c in first.json()] == ["c0", "c1"]
    assert 'rel="next"' in first.headers["link"]
    assert [c["body"] for c in call(gh, "GET", "/repos/o/r/issues/comments").json()] == [
        "c0",
        "c1",
        "c2",
        "other",
    ]
    assert call(gh, "GET", "/repos/o/r/issues/1").json()["comments"] == 3
    comment_id = first.json()[0]["id"]
    assert call(gh, "GET", f"/repos/o/r/issues/comments/{comment_id}").json()["body"] == "c0"
    assert call(gh, "DELETE", f"/repos/o/r/issues/comments/{comment_id}").status_code == 204
    assert call(gh, "DELETE", f"/repos/o/r/issues/comments/{comment_id}").status_code == 404


def test_repository_comments_since_paginate_and_name_their_issue(gh: GitHubFake) -> None:
    """As GitHub's REST docs have it: `since` keeps comments updated at or after it (an edit
    brings an old comment back), pages follow the Link header, each item has `issue_url`."""
    gh.add_issue("o/r", "One")
    gh.add_issue("o/r", "Two")
    start = gh.clock.now()
    old = gh.add_comment("o/r", 1, "old", created_at=start - timedelta(hours=2))
    gh.add_comment(
        "o/r", 2, "older, edited since", created_at=start - timedelta(hours=3), updated_at=start
    )
    for n in range(3):
        gh.add_comment("o/r", 1 + n % 2, f"new{n}", created_at=start)
    since = (start - timedelta(minutes=10)).strftime("%Y-%m-%dT%H:%M:%SZ")
    first = call(gh, "GET", f"/repos/o/r/issues/comments?since={since}&per_page=2")
    assert 'rel="next"' in first.headers["link"]
    second = call(gh, "GET", f"/repos/o/r/issues/comments?since={since}&per_page=2&page=2")
    items = first.json() + second.json()
    assert [c["body"] for c in items] == ["older, edited since", "new0", "new1", "new2"]
    assert [c["issue_url"].rsplit("/", 1)[1] for c in items] == ["2", "1", "2", "1"]
    assert old.body not in [c["body"] for c in items]
    assert call(gh, "GET", "/repos/o/r/issues/comments?since=yesterday").status_code == 422


def test_repository_labels(gh: GitHubFake) -> None:
    created = call(gh, "POST", "/repos/o/r/labels", json={"name": "ai-context:stale"})
    assert created.status_code == 201
    again = call(gh, "POST", "/repos/o/r/labels", json={"name": "AI-Context:Stale"})
    assert again.status_code == 422
    assert again.json()["errors"][0]["code"] == "already_exists"
    assert [lb["name"] for lb in call(gh, "GET", "/repos/o/r/labels").json()] == [
        "ai-context:stale"
    ]
    assert call(gh, "GET", "/repos/o/r/labels/ai-context%3Astale").status_code == 200


def test_hooks_change_the_issue_between_a_read_and_a_write(gh: GitHubFake) -> None:
    gh.add_issue("o/r", "Task", "human text\n## AI Context\nold")
    gh.after("GET", "/repos/o/r/issues/1", lambda _: gh.edit_issue("o/r", 1, body="edited"))

    read = call(gh, "GET", "/repos/o/r/issues/1").json()["body"]
    reread = call(gh, "GET", "/repos/o/r/issues/1").json()["body"]

    assert read == "human text\n## AI Context\nold"  # the reader saw the old body...
    assert reread == "edited"  # ...and the change is in place before its next call


# ---- git database and leases -------------------------------------------------------------
def test_git_objects_and_refs_follow_github(gh: GitHubFake) -> None:
    blob = call(gh, "POST", "/repos/o/r/git/blobs", json={"content": "{}", "encoding": "utf-8"})
    assert blob.status_code == 201
    tree = call(
        gh,
        "POST",
        "/repos/o/r/git/trees",
        json={
            "tree": [
                {"path": "l.json", "mode": "100644", "type": "blob", "sha": blob.json()["sha"]}
            ]
        },
    )
    assert tree.status_code == 201
    lease = {"message": '{"actor": "a"}', "tree": tree.json()["sha"], "parents": []}
    first = call(gh, "POST", "/repos/o/r/git/commits", json=lease).json()
    assert first["message"] == '{"actor": "a"}' and first["parents"] == []
    got = call(gh, "GET", f"/repos/o/r/git/commits/{first['sha']}").json()
    assert got["tree"]["sha"] == tree.json()["sha"]

    assert call(gh, "GET", "/repos/o/r/git/ref/ai-context/leases/7").status_code == 404
    create = {"ref": LEASE, "sha": first["sha"]}
    made = call(gh, "POST", "/repos/o/r/git/refs", json=create)
    assert made.status_code == 201
    assert made.json()["object"]["sha"] == first["sha"]
    dup = call(gh, "POST", "/repos/o/r/git/refs", json=create)
    assert (dup.status_code, dup.json()["message"]) == (422, "Reference already exists")
    read = call(gh, "GET", "/repos/o/r/git/ref/ai-context/leases/7").json()
    assert read["ref"] == LEASE and read["object"]["sha"] == first["sha"]

    child = {"message": "renew", "tree": EMPTY_TREE, "parents": [first["sha"]]}
    second = call(gh, "POST", "/repos/o/r/git/commits", json=child).json()
    stranger = {"message": "other", "tree": EMPTY_TREE, "parents": []}
    unrelated = call(gh, "POST", "/repos/o/r/git/commits", json=stranger).json()
    path = "/repos/o/r/git/refs/ai-context/leases/7"
    assert call(gh, "PATCH", path, json={"sha": second["sha"], "force": False}).status_code == 200
    lost = call(gh, "PATCH", path, json={"sha": unrelated["sha"], "force": False})
    assert (lost.status_code, lost.json()["message"]) == (422, "Update is not a fast forward")
    assert call(gh, "PATCH", path, json={"sha": unrelated["sha"], "force": True}).status_code == 200
    assert gh.ref("o/r", LEASE) == unrelated["sha"]

    matching = call(gh, "GET", "/repos/o/r/git/matching-refs/ai-context/leases/").json()
    assert [m["ref"] for m in matching] == [LEASE]
    assert call(gh, "DELETE", path).status_code == 204
    gone = call(gh, "DELETE", path)
    assert (gone.status_code, gone.json()["message"]) == (422, "Reference does not exist")
    orphan = {"message": "x", "tree": EMPTY_TREE, "parents": ["0" * 40]}
    assert call(gh, "POST", "/repos/o/r/git/commits", json=orphan).status_code == 422


def _race(n: int, attempt: Any) -> list[Any]:
    """Run ATTEMPT(i) in N threads released together; return their results."""
    barrier = threading.Barrier(n)
    results: list[Any] = [None] * n

    def run(i: int) -> None:
        barrier.wait()
        results[i] = attempt(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_twenty_claimers_one_winner(gh: GitHubFake) -> None:
    apis = [client(gh) for _ in range(20)]
    tree = apis[0].create_tree({})
    commits = [api.create_commit(f"claim {i}", tree) for i, api in enumerate(apis)]

    won = _race(20, lambda i: apis[i].create_ref(LEASE, commits[i].sha))  # False: 422
    assert won.count(True) == 1
    assert gh.ref("o/r", LEASE) == commits[won.index(True)].sha
    again = call(gh, "POST", "/repos/o/r/git/refs", json={"ref": LEASE, "sha": commits[0].sha})
    assert (again.status_code, again.json()["message"]) == (422, "Reference already exists")


def test_twenty_renewers_compare_and_swap_one_winner(gh: GitHubFake) -> None:
    apis = [client(gh) for _ in range(20)]
    base = gh.create_commit("o/r", "lease held by a")
    gh.set_ref("o/r", LEASE, base)
    tree = apis[0].create_tree({})
    takeovers = [api.create_commit(f"taken by {i}", tree, [base]) for i, api in enumerate(apis)]
    # Every renewer read `base`.
    assert {api.get_ref(LEASE) for api in apis} == {base}

    won = _race(20, lambda i: apis[i].update_ref(LEASE, takeovers[i].sha))  # False: 422
    assert won.count(True) == 1
    assert gh.ref("o/r", LEASE) == takeovers[won.index(True)].sha
    stale = call(gh, "PATCH", "/repos/o/r/git/refs/ai-context/leases/7", json={"sha": base})
    assert (stale.status_code, stale.json()["message"]) == (422, "Update is not a fast forward")
