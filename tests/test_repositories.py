"""`repositories:` beyond exact names: `owner/<glob>` and `{owner, topic, name}` entries, the
owner's listing that resolves them (the adapter, at the HTTP level), the pure selection, and
scheduled digests and reports over an owner's repositories against the loopback GitHub."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import pytest
import responses
import yaml
from hypothesis import given
from hypothesis import strategies as st
from responses import matchers

from ai_context.adapters.github import GitHub, GitHubConfigError, GitHubNotFound
from ai_context.core.errors import ConfigError
from ai_context.core.models import Issue, Listed
from ai_context.core.secret import Secret
from ai_context.jobs.scan import STATE_LABEL, repositories_of, scan_other
from ai_context.rules.digest.build import parse_digest_section
from ai_context.rules.repositories import Selector, select
from ai_context.rules.runstate import RunState, encode
from tests.actionrun import scheduled
from tests.conftest import API, SEED_BLOCK, adapter, run_process
from tests.fakes import GitHubFake


def repo_json(full_name: str, **extra: Any) -> dict[str, Any]:
    return {"full_name": full_name, "topics": [], "archived": False, "fork": False, **extra}


def sel(entry: Any) -> Selector:
    (found,) = parse_digest_section(None, [entry], "c.yml").repositories
    return found


# --- the adapter ------------------------------------------------------------------------------


@responses.activate
def test_an_organisations_repositories_come_100_a_page_with_their_topics() -> None:
    page2 = f"{API}/orgs/acme/repos?type=all&per_page=100&page=2"
    first = [repo_json(f"acme/r{n}", topics=["ai-context"] if n == 3 else []) for n in range(100)]
    responses.get(
        f"{API}/orgs/acme/repos",
        json=first,
        headers={"Link": f'<{page2}>; rel="next", <{page2}>; rel="last"'},
        match=[matchers.query_param_matcher({"type": "all", "per_page": "100"})],
    )
    responses.get(
        f"{API}/orgs/acme/repos",
        json=[repo_json("acme/last", archived=True, private=True, disabled=True, fork=True)],
        match=[matchers.query_param_matcher({"type": "all", "per_page": "100", "page": "2"})],
    )
    gh = adapter()
    found = gh.owner_repositories("acme")
    assert len(found) == 101 and found[3].topics == ("ai-context",)
    assert found[-1] == Listed("acme/last", (), archived=True, disabled=True, fork=True)
    assert gh.counter.total == 2  # ceil(101/100) pages, nothing per repository


@responses.activate
def test_an_owner_that_is_no_organisation_is_listed_as_a_user() -> None:
    responses.get(f"{API}/orgs/ariel/repos", status=404, json={"message": "Not Found"})
    responses.get(
        f"{API}/users/ariel/repos",
        json=[repo_json("ariel/dotfiles")],
        match=[matchers.query_param_matcher({"type": "owner", "per_page": "100"})],
    )
    gh = adapter()
    assert [r.full_name for r in gh.owner_repositories("ariel")] == ["ariel/dotfiles"]
    assert gh.counter.total == 2


@responses.activate
def test_an_owner_github_does_not_know_is_not_found() -> None:
    responses.get(f"{API}/orgs/ghost/repos", status=404, json={"message": "Not Found"})
    responses.get(f"{API}/users/ghost/repos", status=404, json={"message": "Not Found"})
    with pytest.raises(GitHubNotFound, match="list the repositories of ghost"):
        adapter().owner_repositories("ghost")


@responses.activate
def test_a_refused_listing_says_what_the_token_needs() -> None:
    message = "Resource protected by organization SAML enforcement."
    responses.get(f"{API}/orgs/acme/repos", status=403, json={"message": message})
    with pytest.raises(GitHubConfigError, match=r"repositories of acme .*metadata: read") as exc:
        adapter().owner_repositories("acme")
    assert exc.value.status == 403 and len(responses.calls) == 1  # a refusal is not retried


@responses.activate
def test_a_5xx_on_the_listing_is_retried() -> None:
    responses.get(f"{API}/orgs/acme/repos", status=502, json={"message": "Bad gateway"})
    responses.get(f"{API}/orgs/acme/repos", json=[repo_json("acme/api")])
    gh = adapter(retries=2)
    assert [r.full_name for r in gh.owner_repositories("acme")] == ["acme/api"]
    assert gh.counter.calls == 1 and gh.counter.retries == 1


# --- the entries and the selection (pure) -----------------------------------------------------


def test_the_entry_forms() -> None:
    assert sel("acme/api").exact and str(sel("acme/api")) == "acme/api"
    assert not sel("acme/*").exact and sel("acme/*").name == "*"
    topic = sel({"owner": "acme", "topic": "ai-context"})
    assert not topic.exact and str(topic) == "{owner: acme, topic: ai-context}"
    both = sel({"owner": "acme", "topic": "x", "name": "svc-*"})
    assert both.fits(Listed("ACME/Svc-Pay", ("X",)))  # owner, name and topic: any case
    assert not both.fits(Listed("acme/svc-pay")) and not both.fits(Listed("acme/web", ("x",)))


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ("acme", "repositories: 'acme' is not owner/name; write owner/name, owner/<glob>"),
        ("a/b/c", "'a/b/c' is not owner/name"),
        ({"owner": "acme", "topics": "x"}, "unknown key 'topics'; a mapping takes owner, topic"),
        ({"topic": "x"}, "owner: None is not a GitHub login; write owner/name"),
        ({"owner": "acme", "name": ""}, "name: '' is not a name or glob"),
        (
            {"owner": "acme", "name": None},
            "repositories: {'owner': 'acme', 'name': None}: name: None is not a name or glob; "
            "write owner/name",
        ),
        ({"owner": "acme", "topic": None}, "topic: None is not a topic; write owner/name"),
        ({"owner": "acme", "topic": 3}, "topic: 3 is not a topic"),
        (7, "7 is not a repository; write owner/name, owner/<glob> (acme/* for all of acme's)"),
    ],
)
def test_a_bad_entry_names_the_key_and_what_to_write(entry: Any, says: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(says)):
        parse_digest_section(None, [entry], "c.yml")
    with pytest.raises(ConfigError, match=re.escape("c.yml: digest.repositories: ")):
        parse_digest_section({"repositories": [entry]}, None, "c.yml")


def test_forks_only_when_named_archived_and_disabled_left_out_with_a_line() -> None:
    listed = {
        "acme": [
            Listed("acme/api", ("x",)),
            Listed("acme/old", ("x",), archived=True),
            Listed("acme/off", ("x",), disabled=True),
            Listed("acme/fork", ("x",), fork=True),
        ]
    }
    chosen = select([sel({"owner": "acme", "topic": "x"}), sel("acme/fork")], listed)
    assert chosen.names == ["acme/api", "acme/fork"]
    (note,) = chosen.notes
    assert note == (
        "{owner: acme, topic: x}: 1 matched; left out: acme/old (archived), acme/off "
        "(disabled), acme/fork (a fork: name it exactly to read it)"
    )
    many = {"acme": [Listed(f"acme/a{n:02}", archived=True) for n in range(12)]}
    (line,) = select([sel("acme/a*")], many).notes
    assert line.endswith("acme/a09 (archived) and 2 more")
    nothing = select([sel("acme/zz-*")], listed)
    assert nothing.names == [] and nothing.empty == [
        "acme/zz-* matches no repository of acme that this token can see, archived, disabled "
        "and forks left out"
    ]


OWNERS = ("acme", "Acme", "bob")
NAMES = st.text("ab-", min_size=1, max_size=3)
LISTED = st.builds(
    Listed,
    full_name=st.builds(lambda o, n: f"{o}/{n}", st.sampled_from(OWNERS), NAMES),
    topics=st.lists(st.sampled_from(("x", "Y", "z")), max_size=2).map(tuple),
    archived=st.booleans(),
    disabled=st.booleans(),
    fork=st.booleans(),
)
ENTRIES = st.one_of(
    st.builds(lambda o, n: f"{o}/{n}", st.sampled_from(OWNERS), st.text("ab-*?", min_size=1)),
    st.fixed_dictionaries(
        {"owner": st.sampled_from(OWNERS), "topic": st.sampled_from(("x", "y"))},
        optional={"name": st.text("ab*", min_size=1, max_size=3)},
    ),
)


@given(st.lists(ENTRIES, max_size=5), st.lists(LISTED, max_size=12))
def test_the_selection_is_what_the_entries_say(entries: list[Any], repos: list[Listed]) -> None:
    selectors = parse_digest_section(None, entries, "c.yml").repositories
    listed: dict[str, list[Listed]] = {}
    for repo in repos:
        listed.setdefault(repo.full_name.split("/")[0].lower(), []).append(repo)
    chosen = select(selectors, listed)
    lower = [n.lower() for n in chosen.names]
    assert len(lower) == len(set(lower))  # once each
    exact = {str(s).lower() for s in selectors if s.exact}
    assert exact <= set(lower)  # a name written in full costs no listing and is always read
    for name in set(lower) - exact:
        matches = [r for r in repos if r.full_name.lower() == name]
        assert matches and any(  # a pattern chose it: it fits, and it is live and no fork
            s.fits(r) and not (r.archived or r.disabled or r.fork)
            for s in selectors
            for r in matches
        )
        owner, _, short = name.partition("/")
        assert any(
            s.owner.lower() == owner and fnmatchcase(short, s.name.lower()) for s in selectors
        )
    patterns = [s for s in selectors if not s.exact]
    assert len(chosen.notes) == len(patterns) >= len(chosen.empty)


@responses.activate
def test_exact_names_cost_nothing_and_each_owner_is_listed_once() -> None:
    responses.get(f"{API}/orgs/acme/repos", json=[repo_json("acme/api"), repo_json("acme/web")])
    gh, lines = adapter(), []
    entries = ["other/exact", "acme/a*", "acme/*", {"owner": "ACME", "topic": "x"}]
    selectors = parse_digest_section(None, entries, "c.yml").repositories
    names = repositories_of(gh, selectors, log=lines.append, warn=lines.append)
    assert names == ["other/exact", "acme/api", "acme/web"]
    assert gh.counter.total == 1  # acme once, for three patterns; other/exact not at all
    assert lines[-1] == (
        "repositories: {owner: ACME, topic: x} matches no repository of ACME that this token "
        "can see, archived, disabled and forks left out"
    )
    assert repositories_of(gh, selectors[:1], log=lines.append, warn=lines.append) == [
        "other/exact"
    ]
    assert gh.counter.total == 1


@responses.activate
def test_an_owner_github_does_not_know_is_bad_configuration() -> None:
    responses.get(f"{API}/orgs/ghost/repos", status=404, json={"message": "Not Found"})
    responses.get(f"{API}/users/ghost/repos", status=404, json={"message": "Not Found"})
    selectors = parse_digest_section(None, ["ghost/*"], "c.yml").repositories
    says = "repositories: GitHub shows this token no organisation or user 'ghost' (404)"
    with pytest.raises(ConfigError, match=re.escape(says)):
        repositories_of(adapter(), selectors, log=print, warn=print)


# --- scheduled runs and reports against the loopback GitHub ------------------------------------

DAY_AGO = datetime.now(UTC).replace(microsecond=0) - timedelta(days=1)
TOPIC = "repositories: [{owner: acme, topic: ai-context}]\n"
FILLERS = 120  # acme's other repositories: its listing is two pages


@pytest.fixture
def gh() -> Iterator[GitHubFake]:
    with GitHubFake() as fake:
        for name in ("api", "web", "old", "fork"):
            fake.add_repo(f"acme/{name}", topics=["ai-context"])
        fake.add_repo("acme/old", archived=True)
        fake.add_repo("acme/fork", fork=True)
        for n in range(FILLERS):
            fake.add_repo(f"acme/filler-{n:03}")
        for k, repo in enumerate(("o/r", "acme/api", "acme/web", "acme/old", "acme/fork")):
            for n in range(1, 4):
                when = DAY_AGO - timedelta(minutes=10 * n + k)
                at = {"created_at": when, "updated_at": when}
                fake.add_issue(repo, f"{repo} {n}", SEED_BLOCK, number=n, **at)
        fake.add_issue("acme/filler-000", "not ours", SEED_BLOCK, number=1)
        yield fake


def test_a_digest_over_an_owners_topic_reads_exactly_its_live_repositories(
    gh: GitHubFake, tmp_path: Path
) -> None:
    first = scheduled(gh, tmp_path / "1", TOPIC, jobs="digest")
    assert first.code == 0, first.stdout + first.stderr
    read = {r.path.split("/issues")[0] for r in gh.requests if "/issues" in r.path}
    assert read == {"/repos/o/r", "/repos/acme/api", "/repos/acme/web"}
    assert (
        "ai-context: repositories: {owner: acme, topic: ai-context}: 2 matched; left out: "
        "acme/fork (a fork: name it exactly to read it), acme/old (archived)\n"
    ) in first.stdout
    comment = next(c.body for c in gh._comments.values() if "acme/web#3" in c.body)
    assert "acme/api#1" in comment and "acme/old" not in comment and "filler" not in comment
    carriers = sorted(
        i.title for i in gh.repos["o/r"].issues.values() if "ai-context:state" in i.labels
    )
    assert carriers == [f"ai-context run state: {r}" for r in ("acme/api", "acme/web", "o/r")]
    assert scheduled(gh, tmp_path / "2", TOPIC, jobs="digest").code == 0  # lists the carriers, once
    gh.reset_requests()
    third = scheduled(gh, tmp_path / "3", TOPIC, jobs="digest")
    assert third.code == 0 and "nothing changed since the last run" in third.stdout
    assert [r for r in gh.requests if r.method != "GET"] == []
    pages = math.ceil((FILLERS + 4) / 100)
    listing = gh.count("GET", "/orgs/{org}/repos")
    calls = gh.count()
    print(
        f"rerun over {{owner: acme, topic}}: {calls} calls = {calls - listing} for 3 "
        f"repositories + {listing} listing pages"
    )
    assert listing == pages == 2
    assert calls - listing <= 2 * 3


def test_a_pattern_that_matches_nothing_warns_and_an_unknown_owner_stops_before_writes(
    gh: GitHubFake, tmp_path: Path
) -> None:
    empty = scheduled(gh, tmp_path / "1", "repositories: [acme/nothing-*]\n", jobs="digest")
    assert empty.code == 0, empty.stdout + empty.stderr
    assert "::warning title=ai-context%3A repositories::repositories: acme/nothing-* matches" in (
        empty.stdout + empty.stderr
    )
    gh.reset_requests()
    ghost = scheduled(gh, tmp_path / "2", "repositories: [ghost/*]\n", jobs="digest")
    assert ghost.code == 2
    assert "shows this token no organisation or user 'ghost' (404)" in ghost.stdout + ghost.stderr
    assert [r for r in gh.requests if r.method != "GET"] == []


def test_an_exact_name_github_does_not_know_stops_the_run_before_any_write(
    tmp_path: Path,
) -> None:
    with GitHubFake() as fake:
        fake.add_repo("o/r")
        fake.add_issue("o/r", "T", SEED_BLOCK.replace("Files touched", "Filez"))  # check writes
        done = scheduled(fake, tmp_path, "repositories: [o/nope]\n")
        writes = [(r.method, r.path) for r in fake.requests if r.method != "GET"]
    assert done.code == 2, done.stdout + done.stderr
    says = (
        "repositories: GitHub shows this token no repository 'o/nope' (404); check the name in "
        "the config file, and that the token can read it"
    )
    assert says in done.stdout + done.stderr
    assert writes == []


def test_a_full_listing_of_another_repository_finds_its_digest_issue_at_no_cost(
    gh: GitHubFake, tmp_path: Path
) -> None:
    digest = gh.add_issue("acme/api", "Digest", "the team's digest", labels=["ai-context:digest"])
    first = scheduled(gh, tmp_path, "repositories: [acme/api, acme/web]\n", jobs="digest")
    assert first.code == 0, first.stdout + first.stderr
    listings = gh.requests_to("GET", "/repos/{owner}/{repo}/issues")
    assert [r.path for r in listings if r.path != "/repos/o/r/issues" and r.arg("labels")] == []
    assert gh.count("GET", f"/repos/acme/api/issues/{digest.number}/comments") == 1


def test_a_due_task_closed_since_the_last_run_is_judged_from_the_listing() -> None:
    with GitHubFake() as fake:
        now = fake.clock.now().replace(microsecond=0)
        for n in (1, 2):
            at = now - timedelta(days=2)
            fake.add_issue("acme/x", f"T{n}", SEED_BLOCK, number=n, created_at=at, updated_at=at)
        fake.edit_issue("acme/x", 2, state="closed", state_reason="completed")
        before = now - timedelta(hours=1)
        state = RunState(
            repository="acme/x",
            bot="bot",
            jobs="digest",
            rules="r",
            listed=before,
            full=before,
            until=now + timedelta(days=6),
            tasks=2,
            due={2: before},
        )
        line, _ = encode(state)
        labels = (STATE_LABEL,)
        carrier = Issue(number=9, title="", body=line, labels=labels, updated_at=before)
        home = GitHub(Secret("t"), "o/r", api_url=fake.url, write_interval=0, backoff=0)
        found = scan_other(
            home.for_repository("acme/x"),
            home,
            carrier,
            jobs="digest",
            rules="r",
            bot="bot",
            now=now,
            asked="",
            progress=lambda page: None,
        )
        paths = [r.path for r in fake.requests]
    assert found.full == "" and found.tasks == []
    assert found.judged[2].issue.state == "closed"
    assert paths == ["/repos/acme/x/issues"]  # one listing since the last run; #2 not read again


def test_the_reports_read_an_owners_pattern(gh: GitHubFake, tmp_path: Path) -> None:
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github/ai-context.yml").write_text(
        "repositories: [acme/a*, acme/w*, acme/fork]\n", encoding="utf-8"
    )
    env = {"GITHUB_TOKEN": "t", "GITHUB_API_URL": gh.url, "AI_CONTEXT_NOW": "2026-05-26T15:00:00Z"}
    done = run_process(["digest", "--format", "json"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["repositories"] == ["acme/api", "acme/fork", "acme/web"]
    assert gh.count("GET", "/orgs/{org}/repos") == 2  # acme once, two pages


def test_the_readmes_entries_load() -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text("utf-8")
    [block] = [
        b for b in re.findall(r"```yaml\n(.*?)```", readme, re.S) if b.startswith("repositories:")
    ]
    entries = yaml.safe_load(block)["repositories"]
    selectors = parse_digest_section(None, entries, "README.md").repositories
    assert [s.exact for s in selectors] == [True, False, False, False]
    assert selectors[3] == Selector(owner="acme", topic="team-a", name="web-*")
