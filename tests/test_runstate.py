"""The run state (rules/runstate.py, jobs/scan.py): a scheduled run lists only what changed
since the last one and judges the other tasks from the state alone.

Unit tests of the codec (round trip, garbled, foreign, bounded at 10,000 tasks), then runs of
`python -m ai_context action` against the loopback GitHub: a rerun with nothing changed is one
call; a task that goes stale without an edit is flagged; a hand edit between two runs is
seen; a garbled, foreign, old or forged state costs a full listing, never a wrong write.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ai_context.core.models import Issue
from ai_context.rules import runstate
from ai_context.rules.runstate import (
    MAX_ENCODED,
    RunState,
    after_writes,
    decode,
    encode,
    fingerprint,
    full_reason,
    replace_line,
)
from ai_context.rules.sticky import Op
from tests.actionrun import ActionRun, run_action
from tests.conftest import SEED_BLOCK
from tests.fakes import GitHubFake

REPO, BOT, JOBS = "o/r", "github-actions[bot]", "check"
TOKEN = "ghs_SECRETsecretSECRET0123456789"
BROKEN = "## AI Context\n\n- **Active actor:** cc-x\n- **Phase:** planning\n"
NOW = datetime(2026, 5, 26, 15, 0, tzinfo=UTC)
ENV = {"AI_CONTEXT_NOW": "2026-05-26T15:00:00Z"}
STATE_LABEL = "ai-context:state"


def state(n: int, *, seed: int = 1, seen: int = 0) -> RunState:
    """N tasks with dues spread over the week ahead (the worst case for the size), SEEN
    fingerprints."""
    rng = random.Random(seed)  # noqa: S311 - sizes, not secrets
    return RunState(
        repository=REPO,
        bot=BOT,
        jobs=JOBS,
        rules="r",
        listed=NOW,
        full=NOW,
        until=NOW + timedelta(days=7),
        tasks=n,
        due={k: NOW + timedelta(minutes=rng.randrange(1, 7 * 24 * 60)) for k in range(1, n + 1)},
        seen={k: fingerprint(Issue(number=k, title=str(rng.random()))) for k in range(1, seen + 1)},
    )


def floor(s: RunState) -> RunState:
    """S as the codec keeps it: times to the minute (listed to the second)."""
    minute = lambda t: t.replace(second=0, microsecond=0)  # noqa: E731
    return replace(
        s,
        listed=s.listed.replace(microsecond=0),
        full=minute(s.full),
        until=minute(s.until),
        due={n: minute(t) for n, t in s.due.items()},
    )


def test_round_trip_and_the_line_is_found_among_other_text() -> None:
    original = state(50, seen=20)
    line, kept = encode(original)
    assert kept == original
    body = f"Team notes.\n\n{line}\n\nMore notes."
    assert decode(body, REPO, BOT, JOBS) == floor(original)


def test_foreign_missing_or_other_job_sets_read_as_none() -> None:
    line, _ = encode(state(3))
    assert decode(line, "o/other", BOT, JOBS) is None
    assert decode(line, REPO, "someone", JOBS) is None
    assert decode(line, REPO, BOT, "check,digest") is None  # another job set's own line
    assert decode(None, REPO, BOT, JOBS) is None
    assert decode("no state here", REPO, BOT, JOBS) is None


def test_each_job_set_keeps_its_own_line() -> None:
    check, _ = encode(state(3))
    digest, _ = encode(replace(state(4), jobs="digest"))
    body = replace_line(replace_line("Notes.", check, "check"), digest, "digest")
    assert body.startswith("Notes.") and check in body and digest in body
    newer, _ = encode(state(5))
    body = replace_line(body, newer, "check")
    assert newer in body and check not in body and digest in body
    assert decode(body, REPO, BOT, "digest") is not None


@given(at=st.integers(min_value=0, max_value=400), char=st.characters())
def test_a_garbled_state_reads_as_none_never_raises(at: int, char: str) -> None:
    line, _ = encode(state(20))
    garbled = line[:at] + char + line[at + 1 :]
    found = decode(garbled, REPO, BOT, JOBS)
    assert found is None or found == decode(line, REPO, BOT, JOBS)


def test_a_checksum_guards_every_field() -> None:
    line, _ = encode(state(5))
    data = runstate.find_hidden(line, prefix=runstate.PREFIX)
    assert data is not None
    data["tasks"] = 6  # one number changed by hand, the checksum left as it was
    forged = runstate.hide(data, prefix=runstate.PREFIX, compress=True)
    assert decode(forged, REPO, BOT, JOBS) is None


@pytest.mark.parametrize("key", ["listed", "full", "until", "first", "changes"])
def test_a_time_beyond_the_calendar_reads_as_none(key: str) -> None:
    """The checksum is unkeyed: a line forged with a valid sum and a huge time is no state,
    never a traceback."""
    line, _ = encode(state(3))
    data = runstate.find_hidden(line, prefix=runstate.PREFIX)
    assert data is not None
    data[key] = 10**15
    data["sum"] = runstate._checksum([data.get(name) for name in runstate.FIELDS])
    forged = runstate.hide(data, prefix=runstate.PREFIX, compress=True)
    assert decode(forged, REPO, BOT, JOBS) is None


def test_bounded_at_10000_tasks() -> None:
    """Ten thousand dues spread at random over a week fit; more give way from the furthest
    due, and `until` says where the dues kept end."""
    line, kept = encode(state(10_000, seen=500))
    assert len(line) <= MAX_ENCODED and len(kept.due) == 10_000 and len(kept.seen) == 500
    line, kept = encode(state(10_000, seen=500), limit=20_000)
    assert len(line) <= 20_000
    assert kept.seen == {} and 0 < len(kept.due) < 10_000
    assert all(when < kept.until for when in kept.due.values())
    assert min(set(state(10_000).due.values()) - set(kept.due.values())) >= kept.until


def test_after_writes_counts_comments_and_labels() -> None:
    issue = Issue(number=5, title="t", labels=("bug",), comments=2)
    ops = [
        Op(kind="add_labels", issue=5, labels=("ai-context:invalid",)),
        Op(kind="remove_label", issue=5, labels=("bug",)),
        Op(kind="delete_comment", issue=5, comment_id=9),
    ]
    after = after_writes(issue, ops)
    assert after.labels == ("ai-context:invalid",) and after.comments == 1
    created = Op(kind="create_comment", issue=5, body="x")
    assert after_writes(issue, [*ops, created]).comments is None  # the next run reads again


def test_full_reasons() -> None:
    s = floor(state(3))
    assert full_reason(s, now=NOW, asked="") == ""
    assert full_reason(s, now=NOW, asked="asked for (full: true)") == "asked for (full: true)"
    assert "no run state" in full_reason(None, now=NOW, asked="")
    assert "dues end" in full_reason(s, now=NOW + timedelta(days=8), asked="")
    old = replace(s, until=NOW + timedelta(days=30), full=NOW - timedelta(days=8))
    assert "over 7 days" in full_reason(old, now=NOW, asked="")


# --- whole runs ------------------------------------------------------------------------------

DAY_AGO = datetime.now(UTC).replace(microsecond=0) - timedelta(days=1)


@pytest.fixture
def gh() -> Iterator[GitHubFake]:
    with GitHubFake() as fake:
        fake.add_repo(REPO)
        fake.add_token(TOKEN, BOT)
        for n in range(1, 9):
            when = DAY_AGO - timedelta(minutes=n)  # edited some time before the runs
            body = BROKEN if n % 2 == 0 else SEED_BLOCK
            fake.add_issue(REPO, f"Task {n}", body, number=n, created_at=when, updated_at=when)
            fake.add_comment(REPO, n, "A human comment.", user="ana", created_at=when)
        yield fake


def run(
    gh: GitHubFake, tmp: Path, name: str, inputs: dict[str, str] | None = None, **env: str
) -> ActionRun:
    result = run_action(
        tmp / name,
        gh.url,
        "schedule",
        {"schedule": "17 * * * *"},
        token=TOKEN,
        inputs={"jobs": JOBS, **(inputs or {})},
        extra_env={**ENV, **env},
    )
    assert result.code == 0, result.stdout + result.stderr
    return result


def carrier(gh: GitHubFake) -> int:
    (number,) = [n for n, i in gh.repos[REPO].issues.items() if STATE_LABEL in i.labels]
    return number


def run_state(gh: GitHubFake, jobs: str = JOBS, repository: str = REPO) -> RunState:
    """The run state the carrier holds (the carrier is in the repository `o/r`)."""
    for issue in gh.repos["o/r"].issues.values():
        if STATE_LABEL in issue.labels:
            found = decode(issue.body, repository, BOT, jobs)
            if found is not None:
                return found
    raise AssertionError("no run state")


def stickies(gh: GitHubFake, number: int) -> list[str]:
    return [c.body for c in gh.comments(REPO, number) if c.user == BOT]


def test_a_rerun_with_nothing_changed_is_one_call_and_the_state_holds_no_token(
    gh: GitHubFake, tmp_path: Path
) -> None:
    run(gh, tmp_path, "1")
    body = gh.issue(REPO, carrier(gh)).body
    assert TOKEN not in body
    assert set(run_state(gh).due) == {1, 3, 5, 7}  # the complete blocks go stale on their own
    run(gh, tmp_path, "2")  # lists the issues the first run wrote to, once
    gh.reset_requests()
    result = run(gh, tmp_path, "3")
    assert gh.count() == 1, [(r.method, r.path) for r in gh.requests]
    assert "listed only what changed" in result.stdout


def test_a_task_that_goes_stale_without_an_edit_is_flagged(gh: GitHubFake, tmp_path: Path) -> None:
    run(gh, tmp_path, "1")
    run(gh, tmp_path, "2")
    assert stickies(gh, 1) == []
    gh.reset_requests()
    later = run(gh, tmp_path, "3", AI_CONTEXT_NOW="2026-05-28T15:00:00Z")
    assert "listed only what changed" in later.stdout  # no full listing: the state said when
    assert gh.count("GET", "/repos/{owner}/{repo}/issues") == 1  # due, and on the first page
    for n in (1, 3, 5, 7):
        (comment,) = stickies(gh, n)
        assert "AIC304" in comment
    assert not set(run_state(gh).due) & {1, 3, 5, 7}  # stale now: no more change by itself


def test_an_issue_edited_by_hand_between_two_runs_is_seen(gh: GitHubFake, tmp_path: Path) -> None:
    run(gh, tmp_path, "1")
    run(gh, tmp_path, "2")
    gh.edit_issue(REPO, 3, body=BROKEN)  # a complete block broken by hand
    gh.edit_issue(REPO, 4, body=SEED_BLOCK)  # and a broken one fixed
    gh.reset_requests()
    result = run(gh, tmp_path, "3")
    assert "listed only what changed" in result.stdout
    assert "AIC201" in stickies(gh, 3)[0]
    assert "no findings now" in stickies(gh, 4)[0]
    assert gh.issue(REPO, 4).labels == []
    assert gh.count("GET", "/repos/{owner}/{repo}/issues") == 1


@pytest.mark.parametrize("damage", ["garbled", "missing", "foreign", "old", "forged"])
def test_a_damaged_or_old_state_costs_a_full_listing_never_a_wrong_write(
    gh: GitHubFake, tmp_path: Path, damage: str
) -> None:
    run(gh, tmp_path, "1")
    number = carrier(gh)
    body = gh.issue(REPO, number).body
    (line,) = runstate.lines(body)
    good = run_state(gh)
    later = good.listed + timedelta(days=30)
    damaged = {
        "garbled": body.replace(line, line[:60] + "!!" + line[62:]),
        "missing": body.replace(line, ""),
        "foreign": body.replace(line, encode(replace(good, repository="o/other"))[0]),
        "old": body.replace(line, encode(replace(good, full=good.full - timedelta(days=9)))[0]),
        # Lies that would hide changes: a listing time in the future, and no dues at all.
        "forged": body.replace(line, encode(replace(good, listed=later, due={}))[0]),
    }[damage]
    gh.edit_issue(REPO, number, body=damaged)
    gh.edit_issue(REPO, 2, body=SEED_BLOCK)  # fixed: its comment turns all-clear
    # A human deletes our comment on #6 and writes one, as long (its count is unchanged).
    (mine,) = [c for c in gh.comments(REPO, 6) if c.user == BOT]
    gh.remove_comment(mine.id)
    gh.add_comment(REPO, 6, "edited by a human", user="ana", created_at=DAY_AGO)
    gh.reset_requests()
    result = run(gh, tmp_path, "2")
    assert "listed only what changed" not in result.stdout, result.stdout
    for n in range(1, 9):
        assert len(stickies(gh, n)) == (1 if n % 2 == 0 else 0)  # no duplicate, none extra
    assert "no findings now" in stickies(gh, 2)[0]
    assert "AIC201" in stickies(gh, 4)[0]
    assert gh.issue(REPO, 2).labels == []
    comments = [c.body for c in gh.comments(REPO, 6)]
    assert "edited by a human" in comments  # never overwritten
    healed = run_state(gh)
    assert set(healed.due) == {1, 2, 3, 5, 7}  # #2 fixed: it goes stale on its own too


def test_the_human_text_of_the_carrier_is_kept(gh: GitHubFake, tmp_path: Path) -> None:
    run(gh, tmp_path, "1")
    number = carrier(gh)
    gh.edit_issue(REPO, number, body="Read me first, team.\n\n" + gh.issue(REPO, number).body)
    gh.edit_issue(REPO, 6, body=SEED_BLOCK)
    run(gh, tmp_path, "2")
    assert gh.issue(REPO, number).body.startswith("Read me first, team.\n\n")
    assert 6 in run_state(gh).due


def test_a_dry_run_writes_no_state(gh: GitHubFake, tmp_path: Path) -> None:
    run(gh, tmp_path, "dry", {"dry-run": "true"})
    posted = gh.count("POST") - gh.count("POST", "/graphql")  # a GraphQL query reads
    assert posted == gh.count("PATCH") == 0
    assert not [i for i in gh.repos[REPO].issues.values() if STATE_LABEL in i.labels]


def test_full_true_lists_every_issue(gh: GitHubFake, tmp_path: Path) -> None:
    run(gh, tmp_path, "1")
    run(gh, tmp_path, "2")
    gh.reset_requests()
    result = run(gh, tmp_path, "3", {"full": "true"})
    assert "asked for (full: true)" in result.stdout
    writes = [(r.method, r.path) for r in gh.requests if r.method in ("POST", "PATCH", "DELETE")]
    # Nothing changed: nothing written but the run state (the time of its last full listing).
    assert [w for w in writes if w[1] != "/graphql"] == [
        ("PATCH", f"/repos/o/r/issues/{carrier(gh)}")
    ]


def test_due_tasks_off_the_first_page_are_read_one_by_one(tmp_path: Path) -> None:
    with GitHubFake() as gh:
        gh.add_token(TOKEN, BOT)
        for n in range(1, 131):  # #1 and #2 are the least recently updated: page 2
            when = DAY_AGO - timedelta(minutes=200 - n if n > 2 else 500 + n)
            done = SEED_BLOCK.replace("implementing (chunk 3 of 5)", "done")
            body = SEED_BLOCK if n <= 2 else done  # done: nothing to write, nothing due
            gh.add_issue(REPO, f"Task {n}", body, number=n, created_at=when, updated_at=when)
        run(gh, tmp_path, "1")
        run(gh, tmp_path, "2")
        assert set(run_state(gh).due) == {1, 2}
        gh.reset_requests()
        later = run(gh, tmp_path, "3", AI_CONTEXT_NOW="2026-05-28T15:00:00Z")
        assert "listed only what changed" in later.stdout
        assert gh.count("GET", "/repos/{owner}/{repo}/issues") == 1
        reads = [r.path for r in gh.requests_to("GET", "/repos/{owner}/{repo}/issues/{number}")]
        # the two due, then the carrier's re-read before the state is written
        assert reads == [f"/repos/o/r/issues/{n}" for n in (1, 2, carrier(gh))]
        assert "AIC304" in stickies(gh, 1)[0] and "AIC304" in stickies(gh, 2)[0]
