"""Leases against the loopback GitHub, whose git refs answer 422 like GitHub's: claims,
renewals, releases and take-overs, the calls each costs, and races with exactly one winner.

The 20-claimer race runs AI_CONTEXT_RACE_ROUNDS rounds: 200 by default, as issue 6 asks (about
20 s); set fewer for a quick local loop.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import pytest

from ai_context.adapters.github import GitHub
from ai_context.cli import main as cli
from ai_context.core.secret import Secret
from ai_context.jobs.lease import Outcome, claim, release, who
from ai_context.rules.lease import EMPTY_TREE, LeaseConfig, LeaseError, LeaseRecord
from tests.fakes import GitHubFake
from tests.fakes.base import Request

T0 = datetime(2026, 5, 26, 15, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)
REF = "refs/ai-context/leases/6"
ROUNDS = int(os.environ.get("AI_CONTEXT_RACE_ROUNDS", "200"))
T = TypeVar("T")


@pytest.fixture
def gh() -> Iterator[GitHubFake]:
    with GitHubFake(now=T0, rate_limit=10**9) as fake:  # the races make thousands of calls
        fake.add_repo("o/r")
        yield fake


def store(gh: GitHubFake) -> GitHub:
    return GitHub(Secret("t"), "o/r", api_url=gh.url, write_interval=0, backoff=0)


def at(when: datetime) -> Callable[[], datetime]:
    return lambda: when


def seed(gh: GitHubFake, actor: str, expires: datetime, issue: int = 6) -> str:
    """A lease held by ACTOR, written straight into the fake."""
    record = LeaseRecord(issue=issue, actor=actor, acquired=T0 - 2 * HOUR, expires=expires)
    sha = gh.create_commit("o/r", record.message())
    gh.set_ref("o/r", f"refs/ai-context/leases/{issue}", sha)
    return sha


def calls(api: GitHub, action: Callable[[], T]) -> tuple[T, int]:
    before = api.counter.total
    result = action()
    return result, api.counter.total - before


def test_claim_a_free_lease_in_three_calls(gh: GitHubFake) -> None:
    api = store(gh)
    outcome, n = calls(api, lambda: claim(api, 6, "cc-a", ttl=2 * HOUR, now=at(T0)))
    assert outcome.result == "won" and n == 3
    assert outcome.lease is not None and gh.ref("o/r", REF) == outcome.lease.sha
    commit = gh.commit("o/r", outcome.lease.sha)
    assert commit["tree"] == EMPTY_TREE and commit["parents"] == []
    assert json.loads(commit["message"]) == {
        "issue": 6,
        "actor": "cc-a",
        "acquired": "2026-05-26T15:00:00Z",
        "expires": "2026-05-26T17:00:00Z",
    }


def test_claim_a_held_lease_is_refused_in_two_calls(gh: GitHubFake) -> None:
    sha = seed(gh, "cc-b", T0 + HOUR)
    api = store(gh)
    outcome, n = calls(api, lambda: claim(api, 6, "cc-a", ttl=HOUR, now=at(T0)))
    assert outcome.result == "held" and n == 2
    assert outcome.lease is not None and outcome.lease.record.actor == "cc-b"
    assert gh.ref("o/r", REF) == sha


def test_claim_again_extends_your_own_lease(gh: GitHubFake) -> None:
    sha = seed(gh, "cc-a", T0 + HOUR)
    outcome = claim(store(gh), 6, "cc-a", ttl=3 * HOUR, now=at(T0))
    assert outcome.result == "won" and outcome.lease is not None
    assert outcome.lease.record.acquired == T0 - 2 * HOUR  # tenure kept
    assert outcome.lease.record.expires == T0 + 3 * HOUR and outcome.lease.parent == sha


def test_expired_lease_is_taken_over_in_four_calls(gh: GitHubFake) -> None:
    old = seed(gh, "cc-b", T0 - HOUR)
    api = store(gh)
    outcome, n = calls(api, lambda: claim(api, 6, "cc-a", ttl=HOUR, now=at(T0)))
    assert outcome.result == "won" and n == 4
    assert outcome.lease is not None and outcome.lease.record.acquired == T0
    assert gh.commit("o/r", outcome.lease.sha)["parents"] == [old]  # a fast-forward


def test_renew_only_your_own(gh: GitHubFake) -> None:
    api = store(gh)
    assert (
        claim(api, 6, "cc-a", ttl=HOUR, renewing=True, now=at(T0)).result == "lost"
    )  # nothing to renew
    seed(gh, "cc-b", T0 - HOUR)
    assert claim(api, 6, "cc-a", ttl=HOUR, renewing=True, now=at(T0)).result == "held"  # not yours
    seed(gh, "cc-a", T0 - HOUR)  # yours, expired, and nobody took it: renewing still works
    outcome, n = calls(api, lambda: claim(api, 6, "cc-a", ttl=HOUR, renewing=True, now=at(T0)))
    assert outcome.result == "won" and n == 4
    assert outcome.lease is not None and outcome.lease.record.expires == T0 + HOUR


def test_release_deletes_only_your_lease_where_you_read_it(gh: GitHubFake) -> None:
    api = store(gh)
    assert release(api, 6, "cc-a").result == "free"
    theirs = seed(gh, "cc-b", T0 + HOUR)
    assert release(api, 6, "cc-a").result == "held" and gh.ref("o/r", REF) == theirs
    assert release(api, 6, "cc-a", expected="f" * 40).result == "held"  # moved since you read
    assert gh.ref("o/r", REF) == theirs
    won = claim(api, 7, "cc-a", ttl=HOUR, now=at(T0))
    assert won.lease is not None
    outcome, n = calls(api, lambda: release(api, 7, "cc-a"))
    assert outcome.result == "released" and n == 3
    assert gh.ref("o/r", "refs/ai-context/leases/7") is None
    again = claim(api, 7, "cc-a", ttl=HOUR, now=at(T0))
    assert again.lease is not None
    outcome, n = calls(api, lambda: release(api, 7, "cc-a", expected=again.lease.sha))
    assert outcome.result == "released" and n == 2


def test_who(gh: GitHubFake) -> None:
    api = store(gh)
    assert who(api, 6) == Outcome(result="free", issue=6)
    seed(gh, "cc-b", T0 + HOUR)
    outcome = who(api, 6)
    assert outcome.result == "held" and outcome.lease is not None
    assert outcome.lease.describe(T0) == (
        f"#6 is held by cc-b until 2026-05-26T16:00:00Z (1h left; lease {outcome.lease.sha[:12]})"
    )


def test_a_claim_whose_answer_was_lost_but_landed_is_won(gh: GitHubFake) -> None:
    def lands(req: Request) -> None:
        gh.set_ref("o/r", req.json["ref"], req.json["sha"])

    gh.fail_next("POST", "/repos/{owner}/{repo}/git/refs", status=502)
    gh.before("POST", "/repos/{owner}/{repo}/git/refs", lands)
    outcome = claim(store(gh), 6, "cc-a", ttl=HOUR, now=at(T0))
    assert outcome.result == "won" and outcome.lease is not None
    assert gh.ref("o/r", REF) == outcome.lease.sha


def test_a_ref_that_is_not_a_lease_is_reported(gh: GitHubFake) -> None:
    gh.set_ref("o/r", REF, gh.create_commit("o/r", "not json"))
    with pytest.raises(LeaseError, match="is not a lease: the lease commit's message is not JSON"):
        claim(store(gh), 6, "cc-a", ttl=HOUR, now=at(T0))


def test_prefix_is_configurable(gh: GitHubFake) -> None:
    config = LeaseConfig(prefix="refs/agents/")
    assert claim(store(gh), 6, "cc-a", ttl=HOUR, config=config, now=at(T0)).result == "won"
    assert gh.ref("o/r", "refs/agents/6") is not None and gh.ref("o/r", REF) is None


# --- races ---------------------------------------------------------------------------------


def race(
    stores: list[GitHub], rounds: int, attempt: Callable[[int, int, GitHub], Outcome]
) -> list[list[Outcome]]:
    """Every store attempts at once in each round: one thread per store, a barrier per round."""
    results: list[list[Any]] = [[None] * len(stores) for _ in range(rounds)]
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(stores))

    def worker(i: int) -> None:
        for r in range(rounds):
            try:
                barrier.wait()
                results[r][i] = attempt(r, i, stores[i])
            except BaseException as exc:  # surfaced below, not lost in the thread
                errors.append(exc)
                barrier.abort()
                return

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(stores))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


def connected(gh: GitHubFake, n: int) -> list[GitHub]:
    """N adapters, each with its connection open (one at a time: the fake's accept queue is
    short, and real clients would hold theirs open too)."""
    stores = [store(gh) for _ in range(n)]
    for s in stores:
        s.get_ref("refs/warm/up")
    return stores


def test_twenty_claimers_exactly_one_winner_every_round(gh: GitHubFake) -> None:
    stores = connected(gh, 20)

    def attempt(r: int, i: int, api: GitHub) -> Outcome:
        return claim(api, 1000 + r, f"cc-{i}", ttl=HOUR, now=at(T0))

    for r, outcomes in enumerate(race(stores, ROUNDS, attempt)):
        winners = [o for o in outcomes if o.result == "won"]
        assert len(winners) == 1, f"round {r}: {[o.result for o in outcomes]}"
        winner = winners[0].lease
        assert winner is not None
        assert gh.ref("o/r", f"refs/ai-context/leases/{1000 + r}") == winner.sha
        for o in outcomes:  # every loser saw the winner
            assert o.lease is not None and o.lease.record.actor == winner.record.actor


def test_two_actors_taking_over_an_expired_lease_one_wins(gh: GitHubFake) -> None:
    for r in range(ROUNDS):
        seed(gh, "cc-gone", T0 - HOUR, issue=2000 + r)
    stores = connected(gh, 2)

    def attempt(r: int, i: int, api: GitHub) -> Outcome:
        return claim(api, 2000 + r, f"cc-{i}", ttl=HOUR, now=at(T0))

    for outcomes in race(stores, ROUNDS, attempt):
        assert sorted(o.result for o in outcomes) == ["held", "won"]
        won = next(o for o in outcomes if o.result == "won")
        lost = next(o for o in outcomes if o.result == "held")
        assert won.lease is not None and lost.lease is not None
        assert lost.lease.sha == won.lease.sha  # the loser re-read and saw the winner


def test_renewal_racing_a_take_over_one_wins(gh: GitHubFake) -> None:
    for r in range(ROUNDS):
        seed(gh, "cc-0", T0 - HOUR, issue=3000 + r)  # expired, its holder renews late
    stores = connected(gh, 2)

    def attempt(r: int, i: int, api: GitHub) -> Outcome:
        if i == 0:
            return claim(api, 3000 + r, "cc-0", ttl=HOUR, renewing=True, now=at(T0))
        return claim(api, 3000 + r, "cc-1", ttl=HOUR, now=at(T0))

    for r, outcomes in enumerate(race(stores, ROUNDS, attempt)):
        assert [o.result for o in outcomes].count("won") == 1
        holder = next(o for o in outcomes if o.result == "won").lease
        assert holder is not None
        assert gh.ref("o/r", f"refs/ai-context/leases/{3000 + r}") == holder.sha


# --- the command line ----------------------------------------------------------------------


@pytest.fixture
def env(gh: GitHubFake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith(("INPUT_", "AI_CONTEXT_", "GITHUB_", "GH_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("GITHUB_TOKEN", "t")
    monkeypatch.setenv("GITHUB_REPOSITORY", "o/r")
    monkeypatch.setenv("GITHUB_API_URL", gh.url)
    monkeypatch.chdir(tmp_path)
    gh.add_issue("o/r", "Task", "", number=6)  # claim checks that the issue exists
    return tmp_path


def test_cli_claim_held_renew_who_release(
    gh: GitHubFake, env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["claim", "6", "--actor", "cc-a", "--ttl", "2h"]) == 0
    assert "cc-a holds the lease until" in capsys.readouterr().out
    assert cli.main(["claim", "#6", "--actor", "cc-b", "--format", "json"]) == 4
    held = json.loads(capsys.readouterr().out)
    assert held["result"] == "held" and held["actor"] == "cc-a" and held["calls"] == 2
    assert cli.main(["renew", "6", "--actor", "cc-b"]) == 4
    assert "#6 is held by cc-a until" in capsys.readouterr().out
    assert cli.main(["renew", "6", "--actor", "cc-a", "--ttl", "90m"]) == 0
    assert cli.main(["who", "6"]) == 0
    assert "held by cc-a" in capsys.readouterr().out
    assert cli.main(["release", "6", "--actor", "cc-b"]) == 4
    assert cli.main(["release", "6", "--actor", "cc-a"]) == 0
    assert cli.main(["who", "6"]) == 0
    assert "free" in capsys.readouterr().out.splitlines()[-1]
    assert cli.main(["renew", "6", "--actor", "cc-a"]) == 4
    assert "holds no lease on it; claim it first" in capsys.readouterr().out


def test_cli_actor_aliases_and_config(
    gh: GitHubFake, env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (env / ".github").mkdir()
    (env / ".github/ai-context.yml").write_text(
        "lease: {prefix: refs/agents/, ttl: 30m}\n"
        "actors: {copilot: {aliases: [app/github-copilot, app/copilot-swe-agent]}}\n",
        encoding="utf-8",
    )
    assert cli.main(["claim", "6", "--actor", "app/github-copilot", "--format", "json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert gh.ref("o/r", "refs/agents/6") == first["lease"]
    # The bot was renamed; the lease is still its own.
    assert cli.main(["renew", "6", "--actor", "app/copilot-swe-agent", "--format", "json"]) == 0
    renewed = json.loads(capsys.readouterr().out)
    assert renewed["acquired"] == first["acquired"]


def test_cli_usage_config_and_service_errors(
    gh: GitHubFake, env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["claim", "six", "--actor", "cc-a"]) == 2
    assert "'six' is not an issue number" in capsys.readouterr().err
    (env / ".github").mkdir()
    (env / ".github/ai-context.yml").write_text("lease: {ttl: forever}\n", encoding="utf-8")
    assert cli.main(["claim", "6", "--actor", "cc-a"]) == 2
    assert ".github/ai-context.yml: lease: ttl" in capsys.readouterr().err
    (env / ".github/ai-context.yml").write_text("", encoding="utf-8")
    gh.fail_next("POST", "/repos/{owner}/{repo}/git/commits", status=502)
    assert cli.main(["claim", "6", "--actor", "cc-a"]) == 3
    assert "GitHub failed to create a commit" in capsys.readouterr().err
    monkeypatch.delenv("GITHUB_REPOSITORY")
    assert cli.main(["who", "6"]) == 2
    assert "pass --repo OWNER/NAME" in capsys.readouterr().err
    monkeypatch.delenv("GITHUB_TOKEN")
    assert cli.main(["who", "6", "--repo", "o/r"]) == 2
    assert "set GITHUB_TOKEN" in capsys.readouterr().err


# --- GitHub as it may really be (issue 15, item 11) -----------------------------------------


def test_claim_wins_when_github_refuses_the_empty_tree(gh: GitHubFake) -> None:
    gh.refuse_empty_tree = True
    api = store(gh)
    outcome, n = calls(api, lambda: claim(api, 6, "cc-a", ttl=HOUR, now=at(T0)))
    assert outcome.result == "won" and outcome.lease is not None
    assert n == 5  # read ref, commit (422), tree, commit, create ref
    tree = gh.commit("o/r", outcome.lease.sha)["tree"]
    assert tree != EMPTY_TREE and [e["path"] for e in gh.repos["o/r"].objects[tree]["tree"]] == [
        "LEASE"
    ]
    # Remembered for the run: the next lease commit goes straight to that tree.
    outcome, n = calls(api, lambda: claim(api, 7, "cc-a", ttl=HOUR, now=at(T0)))
    assert outcome.result == "won" and n == 3
    assert gh.commit("o/r", outcome.lease.sha)["tree"] == tree  # type: ignore[union-attr]
    assert who(api, 6).lease is not None and release(api, 6, "cc-a").result == "released"


def test_twenty_claimers_one_winner_with_the_empty_tree_refused(gh: GitHubFake) -> None:
    gh.refuse_empty_tree = True
    stores = connected(gh, 20)
    rounds = min(ROUNDS, 50)

    def attempt(r: int, i: int, api: GitHub) -> Outcome:
        return claim(api, 5000 + r, f"cc-{i}", ttl=HOUR, now=at(T0))

    for r, outcomes in enumerate(race(stores, rounds, attempt)):
        winners = [o for o in outcomes if o.result == "won"]
        assert len(winners) == 1, f"round {r}: {[o.result for o in outcomes]}"
        winner = winners[0].lease
        assert winner is not None
        assert gh.ref("o/r", f"refs/ai-context/leases/{5000 + r}") == winner.sha
        assert all(o.lease is not None and o.lease.sha == winner.sha for o in outcomes)


def test_a_ref_creation_answered_502_that_landed_holds_the_lease(
    gh: GitHubFake, env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gh.ref_creations_landing_then_502 = 1
    assert cli.main(["claim", "6", "--actor", "cc-a"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("#6: cc-a holds the lease until")
    assert lines[1] == (
        "note: GitHub answered the ref write with an error, but the ref reads back as this "
        "lease: it landed, and the lease is yours"
    )
    sha = lines[0].rsplit("(lease ", 1)[1].rstrip(")")
    assert gh.ref("o/r", REF) == sha
    assert gh.count("POST", "/repos/{owner}/{repo}/git/refs") == 1  # no retry into a 422
    assert cli.main(["who", "6", "--actor", "cc-a", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["mine"] is True


def test_a_ref_creation_answered_502_that_did_not_land_is_exit_3(
    gh: GitHubFake, env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gh.fail_next("POST", "/repos/{owner}/{repo}/git/refs", status=502)
    assert cli.main(["claim", "6", "--actor", "cc-a"]) == 3
    assert capsys.readouterr().err.startswith("ai-context: GitHub failed to create ref")
    assert gh.ref("o/r", REF) is None


def test_an_empty_repository_is_exit_2_saying_what_to_do(
    gh: GitHubFake, env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gh.empty_repos.add("o/r")
    assert cli.main(["claim", "6", "--actor", "cc-a"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines()[0] == (
        "ai-context: o/r is empty (GitHub answers 409 to git writes): a lease needs a "
        "repository with at least one commit; push one (a README will do) and claim again"
    )
    assert not gh.repos["o/r"].refs and not gh.repos["o/r"].objects  # nothing written
