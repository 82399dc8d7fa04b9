"""No silent lost update: an edit that lands while a body write is on its way (the fake holds
the PATCH at the door, the edit lands, then the PATCH goes) is re-applied when it left the
block alone, or restored with the write reported as a conflict (exit 4, both copies)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import SecretStr

from ai_context.adapters.cache import DirectoryCache
from ai_context.adapters.github import GitHub
from ai_context.core.block.model import Block
from ai_context.core.block.parse import parse
from ai_context.core.block.render import render
from ai_context.core.models import BodyHistory
from ai_context.jobs.agent import finishing, resuming, saving
from ai_context.jobs.agent.model import Outcome
from ai_context.rules.overwrite import UNKNOWN, Region, judge, merge3, predecessor
from ai_context.rules.runstate import decode
from tests.actionrun import scheduled
from tests.conftest import SEED_BLOCK
from tests.fakes import GitHubFake

REPO = "acme/shop"
ISSUE = f"/repos/{REPO}/issues/1"
T = datetime(2026, 5, 26, 14, 32, tzinfo=UTC)
SEED = parse(SEED_BLOCK).block
assert SEED is not None
HUMAN = "Booking history for users.\r\n\r\nAcceptance: *all* bookings listed  \r\n"
PERSON = "\r\nAdded by a person while the PATCH was on its way.\r\n"


def block(next_step: str = "Finish unit tests") -> Block:
    assert SEED is not None
    return replace(SEED, next_step=next_step)


@pytest.fixture
def fake(github_fake: GitHubFake) -> GitHubFake:
    github_fake.add_issue(
        REPO, "Booking history", HUMAN, assignees=["ariel"], labels=["in-progress"]
    )
    return github_fake


def github(fake: GitHubFake) -> GitHub:
    return GitHub(SecretStr("t"), REPO, api_url=fake.url, write_interval=0, backoff=0, retries=1)


def body(fake: GitHubFake) -> str:
    return fake.issue(REPO, 1).body or ""


def while_held(
    fake: GitHubFake, command: Callable[[], Outcome], edit: Callable[[], None]
) -> Outcome:
    """Run COMMAND; hold its first body PATCH at the door, let EDIT land, then let it go."""
    held = fake.hold("PATCH", ISSUE)
    result: list[Outcome] = []
    worker = threading.Thread(target=lambda: result.append(command()))
    worker.start()
    held.wait()
    edit()
    held.release()
    worker.join(60)
    assert result, "the command did not finish"
    return result[0]


def test_a_person_edit_landing_while_the_patch_is_held_is_re_applied(
    fake: GitHubFake, tmp_path: Path
) -> None:
    cache = DirectoryCache(tmp_path)
    out = while_held(
        fake,
        lambda: saving.save(github(fake), cache, 1, block(), writer=None, now=T),
        lambda: fake.edit_issue(REPO, 1, body=body(fake) + PERSON, editor="ana"),
    )
    assert (out.status, out.wrote_remote) == ("ok", True)
    assert body(fake).endswith(HUMAN + PERSON)  # the person's edit is back
    assert parse(body(fake)).block == replace(block(), last_updated=T)  # and so is the block
    assert any("re-applied" in note for note in out.notes)
    entry = cache.load(REPO, 1)
    assert entry is not None and entry.body == body(fake) and not entry.dirty


def test_a_person_edit_of_the_block_while_the_patch_is_held_is_restored_and_a_conflict(
    fake: GitHubFake, tmp_path: Path
) -> None:
    cache = DirectoryCache(tmp_path)
    saving.save(github(fake), cache, 1, block(), writer=None, now=T)
    by_hand = body(fake).replace("Finish unit tests", "Ask Noa first (edited by hand)")
    mine = block("Open the PR")
    out = while_held(
        fake,
        lambda: saving.save(
            github(fake), cache, 1, mine, writer=None, now=T + timedelta(minutes=5)
        ),
        lambda: fake.edit_issue(REPO, 1, body=by_hand, editor="ana"),
    )
    assert out.status == "conflict"
    assert body(fake) == by_hand  # the person's block is back, as they wrote it
    assert out.decision is not None and out.decision.remote is not None
    assert out.decision.remote.next_step == "Ask Noa first (edited by hand)"
    assert out.decision.local is not None and out.decision.local.next_step == "Open the PR"
    assert out.conflict_log is not None
    [record] = [json.loads(line) for line in Path(out.conflict_log).read_text().splitlines()]
    assert "Open the PR" in record["local"] and "edited by hand" in record["remote"]
    entry = cache.load(REPO, 1)  # the refused block waits in the cache, unpushed
    assert entry is not None and entry.dirty and entry.block.next_step == "Open the PR"


def test_another_agents_save_landing_while_the_patch_is_held_is_kept(
    fake: GitHubFake, tmp_path: Path
) -> None:
    """Two sessions of one actor save at once: the one whose PATCH went last put the other's
    block back and is told (conflict); the other's save stands."""
    cache = DirectoryCache(tmp_path / "mine")
    saving.save(github(fake), cache, 1, block(), writer=None, now=T)
    theirs = DirectoryCache(tmp_path / "theirs")
    resuming.resume(github(fake), theirs, 1, now=T + timedelta(minutes=1))
    later = T + timedelta(minutes=5)

    def they_save() -> None:
        done = saving.save(github(fake), theirs, 1, block("Theirs"), writer=None, now=later)
        assert done.status == "ok"

    out = while_held(
        fake,
        lambda: saving.save(github(fake), cache, 1, block("Mine"), writer=None, now=later),
        they_save,
    )
    assert out.status == "conflict"
    issue_block = parse(body(fake)).block
    assert issue_block is not None and issue_block.next_step == "Theirs"
    assert body(fake).endswith(HUMAN)


def test_handoff_re_applies_an_edit_that_landed_while_its_patch_was_held(
    fake: GitHubFake, tmp_path: Path
) -> None:
    cache = DirectoryCache(tmp_path)
    saving.save(github(fake), cache, 1, block(), writer=None, now=T)
    out = while_held(
        fake,
        lambda: finishing.handoff(
            github(fake),
            cache,
            1,
            "cc-noa-desktop",
            now=T + timedelta(minutes=5),
        ),
        lambda: fake.edit_issue(REPO, 1, body=body(fake) + PERSON, editor="ana"),
    )
    assert out.status == "ok"
    assert body(fake).endswith(HUMAN + PERSON)
    handed = parse(body(fake)).block
    assert handed is not None and handed.actor == "cc-noa-desktop"


def test_no_edit_between_costs_one_history_read_and_no_second_write(
    fake: GitHubFake, tmp_path: Path
) -> None:
    saving.save(github(fake), DirectoryCache(tmp_path), 1, block(), writer=None, now=T)
    assert fake.count("PATCH") == 1 and fake.count("POST", "/graphql") == 1


def test_an_unreadable_history_still_catches_a_block_replaced_after_the_write(
    fake: GitHubFake, tmp_path: Path
) -> None:
    """GraphQL down: the re-read still tells the writer when its block is gone."""
    fake.fail_next("POST", "/graphql", status=502, times=None)
    theirs = render(replace(block("Theirs"), actor="cc-noa-desktop"), markers=True)
    fake.after("PATCH", ISSUE, lambda _: fake.edit_issue(REPO, 1, body=theirs), times=1)
    out = saving.save(github(fake), DirectoryCache(tmp_path), 1, block(), writer=None, now=T)
    assert out.status == "conflict"
    assert out.decision is not None and out.decision.remote is not None
    assert out.decision.remote.next_step == "Theirs"


# --- the rules, pure ----------------------------------------------------------------------

REGION = Region(
    own=lambda body: body.split("\n", 1)[0], put=lambda body: "MINE\n" + body.split("\n", 1)[1]
)


def test_predecessor_is_the_revision_before_ours() -> None:
    history = BodyHistory(body="c", edits=("c", "ours", "lost", "read"), complete=True)
    assert predecessor(history, "ours") == "lost"
    assert predecessor(history, "ours\n".replace("\n", "\r\n").strip()) == "lost"
    assert predecessor(BodyHistory(body="x", edits=("x",), complete=True), "ours") == UNKNOWN
    assert predecessor(BodyHistory(body="o", edits=("o",), complete=True), "o") is None
    assert predecessor(BodyHistory(body="o", edits=("o",), complete=False), "o") == UNKNOWN
    assert predecessor(BodyHistory(body="o", edits=("o", None), complete=True), "o") == UNKNOWN


def test_judge_reapplies_outside_the_region_and_restores_inside_it() -> None:
    read = "BLOCK\nhuman text\n"
    assert judge(read=read, lost=read, region=REGION).kind == "clean"
    assert judge(read=read, lost=None, region=REGION).kind == "clean"
    outside = judge(read=read, lost="BLOCK\nhuman text, edited\n", region=REGION)
    assert (outside.kind, outside.want) == ("reapply", "MINE\nhuman text, edited\n")
    inside = judge(read=read, lost="OTHER BLOCK\nhuman text\n", region=REGION)
    assert (inside.kind, inside.want) == ("restore", "OTHER BLOCK\nhuman text\n")


def test_merge3_combines_changes_to_different_lines_and_refuses_the_same_line() -> None:
    base = "a\nb\nc\nd\n"
    assert merge3(base, "A\nb\nc\nd\n", "a\nb\nc\nD\n") == "A\nb\nc\nD\n"
    assert merge3(base, "a\nb\nc\nd\nnew\n", "a\nB\nc\nd\n") == "a\nB\nc\nd\nnew\n"
    assert merge3(base, "a\nX\nc\nd\n", "a\nY\nc\nd\n") is None
    assert merge3(base, "a\nX\nc\nd\n", "a\nX\nc\nd\n") == "a\nX\nc\nd\n"
    assert merge3(base, "a\nins\nb\nc\nd\n", "a\nB\nc\nd\n") is None  # insert where changed


lines = st.lists(st.text(alphabet="abc \r", max_size=4).map(lambda s: s + "\n"), max_size=6)


@given(lines, lines, lines)
def test_merge3_never_drops_a_side_it_claims_to_have_merged(
    base: list[str], mine: list[str], theirs: list[str]
) -> None:
    b, m, t = "".join(base), "".join(mine), "".join(theirs)
    assert merge3(b, m, b) == m and merge3(b, b, t) == t
    merged = merge3(b, m, t)
    if merged is not None:  # what each side added is in the result
        for text in (m, t):
            added = [line for line in text.splitlines(True) if line not in b.splitlines(True)]
            assert all(line in merged.splitlines(True) for line in added)


# --- the Action's own body write: the run state on the digest issue -------------------------

BOT, TOKEN = "github-actions[bot]", "ghs_SECRETsecretSECRET0123456789"
BROKEN = "## AI Context\n\n- **Active actor:** cc-x\n- **Phase:** planning\n"


def scheduled_run(gh: GitHubFake, tmp: Path) -> None:
    result = scheduled(gh, tmp, token=TOKEN, jobs="check")
    assert result.code == 0, result.stdout + result.stderr


def test_an_agent_save_landing_while_the_run_state_patch_is_held_is_kept(tmp_path: Path) -> None:
    with GitHubFake() as gh:
        gh.add_token(TOKEN, BOT)
        for n in range(1, 5):
            gh.add_issue("o/r", f"Task {n}", BROKEN if n % 2 == 0 else SEED_BLOCK, number=n)
        scheduled_run(gh, tmp_path / "1")
        (carrier,) = [
            n for n, i in gh.repos["o/r"].issues.items() if "ai-context:state" in i.labels
        ]
        gh.edit_issue("o/r", 2, body=SEED_BLOCK)  # fixed: the next run remembers a change
        agents = render(block("Agent's step on the run state's issue"), markers=True) + "\n\n"
        held = gh.hold("PATCH", f"/repos/o/r/issues/{carrier}")
        run = threading.Thread(target=scheduled_run, args=(gh, tmp_path / "2"))
        run.start()
        held.wait()
        gh.edit_issue("o/r", carrier, body=agents + (gh.issue("o/r", carrier).body or ""))
        held.release()
        run.join(120)
        text = gh.issue("o/r", carrier).body or ""
        kept = parse(text).block
        assert kept is not None and kept.next_step == "Agent's step on the run state's issue"
        remembered = decode(text, "o/r", BOT, "check")
        assert remembered is not None and 2 in remembered.due  # fixed: it goes stale by itself


class Answers:
    """A GraphQL client that answers each query with the next of ANSWERS."""

    repository = REPO

    def __init__(self, *answers: dict[str, object]) -> None:
        self.answers = list(answers)

    def graphql(self, query: str, variables: object) -> dict[str, object]:
        return self.answers.pop(0)


def test_the_history_answer_is_read_and_a_malformed_one_refused() -> None:
    from ai_context.adapters.github import GitHubError
    from ai_context.adapters.github_edits import read_history

    edits = {"pageInfo": {"hasNextPage": False}, "nodes": [{"diff": "new"}, {"diff": None}]}
    good = {"repository": {"issue": {"body": "new", "userContentEdits": edits}}}
    assert read_history(Answers(good), 1) == BodyHistory(
        body="new", edits=("new", None), complete=True
    )
    never_edited = {"repository": {"issue": {"body": "b", "userContentEdits": None}}}
    assert read_history(Answers(never_edited), 1) == BodyHistory(body="b", complete=True)
    for bad in ({"repository": None}, {"repository": {"issue": {"body": None}}}, {}):
        with pytest.raises(GitHubError, match="edit history"):
            read_history(Answers(bad), 1)
