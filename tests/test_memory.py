"""The run state (issue 14): what a scheduled run remembers of each sticky comment.

Unit tests of the codec (round trip, garbled, foreign, bounded at 10,000 tasks), then runs of
`python -m ai_context action` against the loopback GitHub: a rerun reads only what changed, and
a garbled, missing or lying state leads to a full, correct run (no wrong write, no duplicate).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ai_context.core.hidden import find_hidden, hide
from ai_context.core.models import Issue
from ai_context.rules.memory import (
    ALL_CLEAR,
    MAX_ENCODED,
    PREFIX,
    Known,
    RunState,
    after_run,
    body_digest,
    current_line,
    decode_state,
    encode_state,
    plan_known,
    replace_line,
)
from ai_context.rules.sticky import MARKER, Op, render_findings
from tests.actionrun import run_action
from tests.conftest import SEED_BLOCK
from tests.fakes import GitHubFake

REPO, BOT = "o/r", "github-actions[bot]"
TOKEN = "ghs_SECRETsecretSECRET0123456789"
BROKEN = "## AI Context\n\n- **Active actor:** cc-x\n- **Phase:** planning\n"
ENV = {"AI_CONTEXT_NOW": "2026-05-26T15:00:00Z"}


def state(n: int, *, seed: int = 1, in_order: bool = False) -> RunState:
    """N remembered tasks; IN_ORDER: comment ids grow with the issue numbers (a run posts in
    issue order), else scattered at random (the worst case for the size)."""
    rng = random.Random(seed)  # noqa: S311 - sizes, not secrets
    tasks = {
        number: Known(
            sticky_id=2_500_000_000 + 37 * number
            if in_order
            else rng.randrange(1_000_000_000, 3_000_000_000),
            comments=rng.randrange(1, 40),
            digest=body_digest(f"comment {number} {rng.random()}"),
        )
        for number in range(1, n + 1)
    }
    return RunState(REPO, BOT, tasks)


# --- the codec -------------------------------------------------------------------------------


def test_round_trip_and_the_line_is_found_among_other_text() -> None:
    remembered = state(50)
    line = encode_state(remembered)
    body = f"Some words a human wrote.\n\n{line}\n\nMore words."
    got = decode_state(body, REPO, BOT)
    assert got is not None and got.tasks == remembered.tasks
    assert current_line(body) == line
    assert decode_state(body, "O/R", BOT.upper()) is not None  # names compare without case


def test_foreign_missing_or_other_version_states_read_as_none() -> None:
    line = encode_state(state(5))
    assert decode_state(line, "o/other", BOT) is None
    assert decode_state(line, REPO, "another-bot") is None
    assert decode_state(None, REPO, BOT) is None
    assert decode_state("no state here", REPO, BOT) is None

    data = find_hidden(line, prefix=PREFIX)
    assert data is not None
    data["v"] = 2
    assert decode_state(hide(data, prefix=PREFIX, compress=True), REPO, BOT) is None


@given(st.integers(min_value=len(PREFIX) + 3, max_value=400), st.characters())
def test_a_garbled_state_reads_as_none_never_raises(at: int, char: str) -> None:
    line = encode_state(state(20))
    if at >= len(line) - 4 or line[at] == char:
        return
    garbled = line[:at] + char + line[at + 1 :]
    got = decode_state(garbled, REPO, BOT)
    assert got is None or got.tasks == state(20).tasks


def test_a_checksum_guards_every_entry() -> None:

    data = find_hidden(encode_state(state(3)), prefix=PREFIX)
    assert data is not None
    data["id"][0] += 1  # a sticky id that points elsewhere: never edited
    assert decode_state(hide(data, prefix=PREFIX, compress=True), REPO, BOT) is None


def test_bounded_at_10000_tasks() -> None:
    # Every one of 10,000 tasks with a sticky comment, each saying something else: the line
    # stays under the limit and what is kept is exact (the rest cost a read); with ids in
    # issue order 9 in 10 are kept, with ids scattered at random over 4 in 10.
    ordered = state(10_000, in_order=True)
    kept = decode_state(encode_state(ordered), REPO, BOT)
    assert kept is not None and len(kept.tasks) >= 9_000
    assert all(ordered.tasks[n] == k for n, k in kept.tasks.items())
    big = state(10_000)
    line = encode_state(big)
    assert len(line) <= MAX_ENCODED
    kept = decode_state(line, REPO, BOT)
    assert kept is not None and 4_000 < len(kept.tasks) < 10_000
    assert all(big.tasks[n] == k for n, k in kept.tasks.items())
    # 500 broken tasks out of 10,000 (the benchmark's case): all of them fit.
    some = RunState(REPO, BOT, dict(list(big.tasks.items())[:500]))
    assert len(encode_state(some)) < MAX_ENCODED // 4
    assert decode_state(encode_state(some), REPO, BOT) == some


def test_all_clear_entries_give_way_first() -> None:
    tasks = dict(state(4000).tasks)
    for n in range(1, 2001):
        tasks[n] = Known(tasks[n].sticky_id, tasks[n].comments, ALL_CLEAR)
    kept = decode_state(encode_state(RunState(REPO, BOT, tasks), 20_000), REPO, BOT)
    assert kept is not None and 0 < len(kept.tasks) < 2000
    assert all(n > 2000 for n in kept.tasks)


def test_replace_line_keeps_the_text_around_it() -> None:
    body = "Intro by a human.\n\n" + encode_state(state(2)) + "\n\nA footnote."
    new = encode_state(state(3))
    replaced = replace_line(body, new)
    assert replaced.startswith("Intro by a human.\n\n") and replaced.endswith("\n\nA footnote.")
    assert current_line(replaced) == new
    assert replace_line("Only text.", new) == f"Only text.\n\n{new}"


def test_plan_known_edits_by_id_only_when_the_text_differs() -> None:
    body = render_findings(())
    known = Known(sticky_id=77, comments=2, digest=body_digest(body))
    assert plan_known(5, (), known) == []
    from ai_context.core.findings import Finding

    finding = Finding(code="AIC201", severity="error", message="m", line=3)
    (op,) = plan_known(5, (finding,), known)
    assert op.kind == "edit_comment" and op.comment_id == 77


def test_after_run_counts_the_writes_and_forgets_comments_with_their_own_memory() -> None:
    issue = Issue(number=5, title="t", comments=2)
    created = Op(kind="create_comment", issue=5, body=f"{MARKER}\nx")
    assert after_run(issue, [created], sticky=None, known=None, created=9) == Known(
        9, 3, body_digest(f"{MARKER}\nx")
    )
    assert after_run(issue, [created], sticky=None, known=None, created=None) is None
    mention = Op(kind="create_comment", issue=5, body="<!-- ai-context:mention a -->\n@a")
    assert after_run(issue, [mention], sticky=(4, "x"), known=None, created=None) == Known(
        4, 3, body_digest("x")
    )
    with_memory = "x\n<!-- ai-context:state eyJhIjoxfQ== -->"
    assert after_run(issue, [], sticky=(4, with_memory), known=None, created=None) is None
    unknown_count = Issue(number=5, title="t")
    assert after_run(unknown_count, [], sticky=(4, "x"), known=None, created=None) is None


# --- whole runs ------------------------------------------------------------------------------


@pytest.fixture
def gh() -> Iterator[GitHubFake]:
    with GitHubFake() as fake:
        fake.add_repo(REPO)
        fake.add_token(TOKEN, BOT)
        for n in range(1, 9):
            fake.add_issue(REPO, f"Task {n}", BROKEN if n % 2 == 0 else SEED_BLOCK, number=n)
            fake.add_comment(REPO, n, "A human comment.", user="ana")
        yield fake


def run(gh: GitHubFake, tmp: Path, name: str) -> None:
    result = run_action(
        tmp / name,
        gh.url,
        "schedule",
        {"schedule": "17 * * * *"},
        token=TOKEN,
        inputs={"jobs": "check"},
        extra_env=ENV,
    )
    assert result.code == 0, result.stdout + result.stderr


def carrier(gh: GitHubFake) -> int:
    (number,) = [n for n, i in gh.repos[REPO].issues.items() if "ai-context:digest" in i.labels]
    return number


def stickies(gh: GitHubFake, number: int) -> list[str]:
    return [c.body for c in gh.comments(REPO, number) if c.user == BOT]


def comment_reads(gh: GitHubFake) -> int:
    """Issues whose comments were read: REST listings, and the issues GraphQL queries named."""
    queried = sum(
        r.json["query"].count(": issue(number:") for r in gh.requests_to("POST", "/graphql")
    )
    return gh.count("GET", "/repos/{owner}/{repo}/issues/{number}/comments") + queried


def test_a_rerun_reads_no_comment_and_the_state_holds_no_token(
    gh: GitHubFake, tmp_path: Path
) -> None:
    run(gh, tmp_path, "1")
    body = gh.issue(REPO, carrier(gh)).body
    assert TOKEN not in body and body != "t"
    assert decode_state(body, REPO, BOT) is not None
    gh.reset_requests()
    run(gh, tmp_path, "2")
    assert comment_reads(gh) == 0
    assert gh.count("PATCH") == gh.count("POST") == gh.count("DELETE") == 0


@pytest.mark.parametrize("damage", ["garbled", "missing", "foreign"])
def test_a_damaged_state_costs_a_full_read_never_a_wrong_write(
    gh: GitHubFake, tmp_path: Path, damage: str
) -> None:
    run(gh, tmp_path, "1")
    number = carrier(gh)
    body = gh.issue(REPO, number).body
    line = current_line(body)
    assert line is not None
    damaged = {
        "garbled": body.replace(line, line[:60] + "!!" + line[62:]),
        "missing": body.replace(line, ""),
        "foreign": body.replace(line, encode_state(RunState("o/other", BOT, {}))),
    }[damage]
    gh.edit_issue(REPO, number, body=damaged)
    gh.edit_issue(REPO, 2, body=SEED_BLOCK)  # fixed: its comment turns all-clear
    gh.reset_requests()
    run(gh, tmp_path, "2")
    assert comment_reads(gh) >= 4  # every issue with findings or our labels was read
    for n in range(1, 9):
        assert len(stickies(gh, n)) == (1 if n % 2 == 0 else 0)  # no duplicate, none extra
    assert "no findings now" in stickies(gh, 2)[0]
    assert "AIC201" in stickies(gh, 4)[0]
    assert gh.issue(REPO, 2).labels == []
    healed = decode_state(gh.issue(REPO, number).body, REPO, BOT)
    assert healed is not None and set(healed.tasks) == {2, 4, 6, 8}


def test_a_remembered_comment_that_is_gone_is_read_and_replaced(
    gh: GitHubFake, tmp_path: Path
) -> None:
    run(gh, tmp_path, "1")
    (mine,) = [c for c in gh.comments(REPO, 4) if c.user == BOT]
    with gh.lock:
        del gh._comments[mine.id]  # deleted by a human ...
    gh.add_comment(REPO, 4, "... who said something else", user="ana")  # ... count unchanged
    gh.edit_issue(REPO, 4, body=BROKEN + "- **Next step:** write the plan\n")  # still broken
    run(gh, tmp_path, "2")
    (now,) = stickies(gh, 4)  # the edit by id answered 404: read, then one new comment
    assert "AIC201" in now and "Next step" not in now


def test_the_human_text_of_the_digest_issue_is_kept(gh: GitHubFake, tmp_path: Path) -> None:
    run(gh, tmp_path, "1")
    number = carrier(gh)
    gh.edit_issue(REPO, number, body="Read me first, team.\n\n" + gh.issue(REPO, number).body)
    gh.edit_issue(REPO, 6, body=SEED_BLOCK)
    run(gh, tmp_path, "2")
    assert gh.issue(REPO, number).body.startswith("Read me first, team.\n\n")
    state_now = decode_state(gh.issue(REPO, number).body, REPO, BOT)
    assert state_now is not None and state_now.tasks[6].digest == ALL_CLEAR


def test_a_dry_run_writes_no_state(gh: GitHubFake, tmp_path: Path) -> None:
    result = run_action(
        tmp_path / "dry",
        gh.url,
        "schedule",
        {"schedule": "17 * * * *"},
        token=TOKEN,
        inputs={"jobs": "check", "dry-run": "true"},
        extra_env=ENV,
    )
    assert result.code == 0, result.stdout + result.stderr
    posted = gh.count("POST") - gh.count("POST", "/graphql")  # a GraphQL query reads
    assert posted == gh.count("PATCH") == 0
    assert not [i for i in gh.repos[REPO].issues.values() if "ai-context:digest" in i.labels]


def test_the_digest_job_uses_the_issue_the_check_job_created(
    gh: GitHubFake, tmp_path: Path
) -> None:
    result = run_action(
        tmp_path / "both",
        gh.url,
        "schedule",
        {"schedule": "17 * * * *"},
        token=TOKEN,
        inputs={"jobs": "check,digest"},
        extra_env=ENV,
    )
    assert result.code == 0, result.stdout + result.stderr
    number = carrier(gh)  # exactly one labelled issue
    assert decode_state(gh.issue(REPO, number).body, REPO, BOT) is not None
    assert any(c.user == BOT for c in gh.comments(REPO, number))  # the digest comment
