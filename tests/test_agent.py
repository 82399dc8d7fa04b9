"""save / resume / handoff / done against the loopback GitHub: what reaches the issue, what the
cache holds, and how many calls each costs."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ai_context.adapters.cache import DirectoryCache
from ai_context.adapters.github import GitHub, GitHubNotFound, GitHubUnavailable
from ai_context.core.block.model import Block
from ai_context.core.block.parse import parse
from ai_context.core.block.render import render
from ai_context.core.models import Issue
from ai_context.core.phases import current_step
from ai_context.core.secret import Secret
from ai_context.jobs.agent import finishing, model, resuming, saving
from ai_context.rules.reconcile import revision
from tests.conftest import SEED_BLOCK
from tests.fakes import GitHubFake, Request

REPO = "acme/shop"
ISSUE = f"/repos/{REPO}/issues/1"
T = datetime(2026, 5, 26, 14, 32, tzinfo=UTC)
SEED = parse(SEED_BLOCK).block
assert SEED is not None
HUMAN = "Booking history for users.\r\n\r\nAcceptance: *all* bookings listed  \r\n"


def block(actor: str = "cc-ariel-laptop", next_step: str = "Finish unit tests") -> Block:
    assert SEED is not None
    return replace(SEED, actor=actor, next_step=next_step)


@pytest.fixture
def fake(github_fake: GitHubFake) -> GitHubFake:
    github_fake.add_issue(
        REPO, "Booking history", HUMAN, assignees=["ariel"], labels=["in-progress"]
    )
    return github_fake


def github(fake: GitHubFake) -> GitHub:
    return GitHub(Secret("t"), REPO, api_url=fake.url, write_interval=0, backoff=0, retries=1)


def body(fake: GitHubFake) -> str:
    return fake.issue(REPO, 1).body or ""


# --- save ---------------------------------------------------------------------------------


def test_first_save_puts_the_block_on_top_and_keeps_the_human_text(
    fake: GitHubFake, tmp_path: Path
) -> None:
    cache = DirectoryCache(tmp_path)
    out = saving.save(github(fake), cache, 1, block(), writer=None, now=T)
    assert (out.status, out.wrote_remote, out.wrote_local) == ("ok", True, True)
    text = body(fake)
    assert text.endswith("\r\n\r\n" + HUMAN)
    assert parse(text).block == replace(block(), last_updated=T)
    assert fake.count() == 4  # read, re-read, PATCH, the edit history (no cached body yet)
    entry = cache.load(REPO, 1)
    assert entry is not None and not entry.dirty and entry.body == text


def test_save_with_a_cached_body_costs_three_calls(fake: GitHubFake, tmp_path: Path) -> None:
    cache = DirectoryCache(tmp_path)
    saving.save(github(fake), cache, 1, block(), writer=None, now=T)
    fake.reset_requests()
    later = T + timedelta(minutes=30)
    out = saving.save(github(fake), cache, 1, block(next_step="Open PR"), writer=None, now=later)
    assert out.status == "ok"
    assert fake.calls == {
        ("GET", "/repos/{owner}/{repo}/issues/{number}"): 1,
        **_patch(1),
        ("POST", "/graphql"): 1,  # the edit history: did the PATCH overwrite anything?
    }
    assert parse(body(fake)).block == replace(block(next_step="Open PR"), last_updated=later)


def _patch(n: int) -> dict[tuple[str, str], int]:
    return {("PATCH", "/repos/{owner}/{repo}/issues/{number}"): n}


def test_an_edit_between_read_and_write_is_not_lost(fake: GitHubFake, tmp_path: Path) -> None:
    """A person edits the issue right after the save's read: the re-read sees it and the block
    is re-applied on the fresh body instead of writing the stale one back."""

    def person_edits(_: Request) -> None:
        fake.edit_issue(REPO, 1, body=body(fake) + "\r\nEdited by a person while saving.\r\n")

    fake.after("GET", ISSUE, person_edits, times=1)
    out = saving.save(github(fake), DirectoryCache(tmp_path), 1, block(), writer=None, now=T)
    assert out.reapplied and out.wrote_remote
    assert body(fake).endswith(HUMAN + "\r\nEdited by a person while saving.\r\n")
    assert parse(body(fake)).block is not None


def test_an_edit_since_the_cached_read_is_not_lost(fake: GitHubFake, tmp_path: Path) -> None:
    cache = DirectoryCache(tmp_path)
    saving.save(github(fake), cache, 1, block(), writer=None, now=T)
    fake.edit_issue(REPO, 1, body="Note added on top.\r\n\r\n" + body(fake) + "P.S.\r\n")
    out = saving.save(
        github(fake), cache, 1, block(next_step="Next"), writer=None, now=T + timedelta(hours=1)
    )
    assert out.reapplied
    text = body(fake)
    assert text.startswith("Note added on top.\r\n\r\n<!-- ai-context:begin")
    assert text.endswith(HUMAN + "P.S.\r\n")


def test_block_changed_by_another_actor_between_read_and_write_is_a_conflict(
    fake: GitHubFake, tmp_path: Path
) -> None:
    cache = DirectoryCache(tmp_path)
    saving.save(github(fake), cache, 1, block(), writer=None, now=T)
    theirs = render(replace(block("cc-noa-desktop", "Noa's step"), last_updated=T))

    def noa_saves(_: Request) -> None:
        fake.edit_issue(REPO, 1, body=theirs + "\n\n" + HUMAN)

    fake.before("GET", ISSUE, noa_saves, times=1)
    fake.reset_requests()
    mine = block(next_step="Mine")
    out = saving.save(github(fake), cache, 1, mine, writer=None, now=T + timedelta(minutes=5))
    assert out.status == "conflict"
    assert fake.count("PATCH") == 0
    assert body(fake) == theirs + "\n\n" + HUMAN
    assert out.decision is not None and out.decision.remote is not None
    assert out.decision.remote.actor == "cc-noa-desktop"
    assert "+- **Next step:** Mine" in out.diff
    entry = cache.load(REPO, 1)
    assert entry is not None and entry.dirty and entry.block.next_step == "Mine"
    assert out.conflict_log is not None
    assert json.loads(Path(out.conflict_log).read_text().splitlines()[-1])["choice"] is None


def test_a_dry_run_conflict_writes_no_log(fake: GitHubFake, tmp_path: Path) -> None:
    cache = DirectoryCache(tmp_path)
    saving.save(github(fake), cache, 1, block(), writer=None, now=T)
    theirs = render(replace(block("cc-noa-desktop", "Noa's step"), last_updated=T))
    fake.edit_issue(REPO, 1, body=theirs + "\n\n" + HUMAN)
    fake.reset_requests()
    mine = block(next_step="Mine")
    later = T + timedelta(minutes=5)
    out = saving.save(github(fake), cache, 1, mine, writer=None, now=later, dry_run=True)
    assert out.status == "conflict" and out.conflict_log is None
    assert list(tmp_path.rglob("conflicts*")) == []
    assert fake.count("PATCH") == 0


def test_save_refuses_an_incomplete_block(fake: GitHubFake, tmp_path: Path) -> None:
    half = Block(actor="cc-ariel-laptop", phase="planning")
    out = saving.save(github(fake), DirectoryCache(tmp_path), 1, half, writer=None, now=T)
    assert out.status == "incomplete"
    assert out.missing == ("Plan", "Files touched", "Next step")
    assert fake.count() == 0 and body(fake) == HUMAN
    assert not any(tmp_path.iterdir())


def test_dry_run_reads_once_and_writes_nothing(fake: GitHubFake, tmp_path: Path) -> None:
    out = saving.save(
        github(fake), DirectoryCache(tmp_path), 1, block(), writer=None, now=T, dry_run=True
    )
    assert out.dry_run and "+## AI Context" in out.diff
    assert fake.count() == 1 and body(fake) == HUMAN
    assert not any(tmp_path.iterdir())


def test_mirror_hook_gets_the_written_issue_and_block(fake: GitHubFake, tmp_path: Path) -> None:
    seen: list[tuple[Issue, Block]] = []
    saving.save(
        github(fake),
        DirectoryCache(tmp_path),
        1,
        block(),
        writer=None,
        now=T,
        mirror=lambda issue, b: seen.append((issue, b)),
    )
    assert [(i.number, b.actor) for i, b in seen] == [(1, "cc-ariel-laptop")]
    assert seen[0][0].body == body(fake)


# --- the human text survives, whatever it is ----------------------------------------------

human_text = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=200
).filter(lambda t: parse(t).region is None and "<!--" not in t and "\r" not in t)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(before=human_text, after=human_text, newline=st.sampled_from(["\n", "\r\n"]))
def test_human_text_outside_the_block_survives_save_byte_for_byte(
    github_server: GitHubFake,
    tmp_path_factory: pytest.TempPathFactory,
    before: str,
    after: str,
    newline: str,
) -> None:
    prefix = before.replace("\n", newline) + (newline * 2 if before else "")
    suffix = newline + after.replace("\n", newline)
    current = render(block("cc-old"), markers=True, newline=newline)
    github_server.repos.clear()
    github_server.add_issue(REPO, "T", prefix + current + suffix)
    cache = DirectoryCache(tmp_path_factory.mktemp("c"))
    resuming.resume(
        github(github_server), cache, 1, actor="cc-old"
    )  # the write guard: read it first
    out = saving.save(
        github(github_server), cache, 1, block("cc-old", "new step"), writer="cc-old", now=T
    )
    assert out.status == "ok"
    text = github_server.issue(REPO, 1).body or ""
    assert text.startswith(prefix) and text.endswith(suffix)
    assert parse(text).block == replace(block("cc-old", "new step"), last_updated=T)


# --- resume -------------------------------------------------------------------------------


def test_resume_named_by_the_cache_costs_one_call(fake: GitHubFake, tmp_path: Path) -> None:
    cache = DirectoryCache(tmp_path)
    saving.save(github(fake), cache, 1, block(), writer=None, now=T)
    fake.reset_requests()
    out = resuming.resume(github(fake), cache)
    assert (out.status, out.source, out.issue) == ("ok", "cache", 1)
    assert out.decision is not None and out.decision.kind == "equal"
    assert fake.count() == 1


def test_resume_on_a_fresh_machine_takes_the_remote(fake: GitHubFake, tmp_path: Path) -> None:
    saving.save(github(fake), DirectoryCache(tmp_path / "a"), 1, block(), writer=None, now=T)
    fresh = DirectoryCache(tmp_path / "b")
    fake.reset_requests()
    out = resuming.resume(github(fake), fresh, 1, actor="cc-ariel-phone")
    assert out.decision is not None and out.decision.kind == "take_remote"
    assert fake.count() == 1
    entry = fresh.load(REPO, 1)
    assert entry is not None and not entry.dirty and entry.actor == "cc-ariel-phone"


def test_resume_finds_the_actors_in_progress_issue_in_one_call(
    fake: GitHubFake, tmp_path: Path
) -> None:
    saving.save(github(fake), DirectoryCache(tmp_path / "a"), 1, block(), writer=None, now=T)
    fake.add_issue(REPO, "Someone else's", assignees=["noa"], labels=["in-progress"])
    fake.reset_requests()
    out = resuming.resume(github(fake), DirectoryCache(tmp_path / "b"), login=lambda: "ariel")
    assert (out.status, out.source, out.issue) == ("ok", "assigned", 1)
    assert fake.count() == 1


def test_resume_picks_by_the_blocks_last_updated_not_the_bots_activity(
    fake: GitHubFake, tmp_path: Path
) -> None:
    saving.save(github(fake), DirectoryCache(tmp_path / "a"), 1, block(), writer=None, now=T)
    newer = render(replace(block(), last_updated=T + timedelta(hours=2)))
    fake.add_issue(REPO, "Newer work", newer, assignees=["ariel"], labels=["in-progress"])
    fake.clock.advance(hours=3)
    fake.add_comment(REPO, 1, "<!-- ai-context:findings -->\nbot", user="github-actions[bot]")
    fake.reset_requests()  # issue 1 is now GitHub's most recently updated, by the bot alone
    out = resuming.resume(github(fake), DirectoryCache(tmp_path / "b"), login=lambda: "ariel")
    assert (out.status, out.source, out.issue) == ("ok", "assigned", 2)
    assert fake.count() == 1


def test_resume_without_a_task_lists_the_open_ones(fake: GitHubFake, tmp_path: Path) -> None:
    fake.add_issue(REPO, "Second", labels=["in-progress"])
    out = resuming.resume(github(fake), DirectoryCache(tmp_path), login="nobody")
    assert out.status == "pick"
    assert sorted(c.number for c in out.candidates) == [1, 2]


def test_resume_pushes_a_save_that_never_reached_the_issue(
    fake: GitHubFake, tmp_path: Path
) -> None:
    """The seed's crash case: the PATCH failed, the local copy is newer and unpushed."""
    cache = DirectoryCache(tmp_path)
    saving.save(github(fake), cache, 1, block(), writer=None, now=T)
    fake.fail_next("PATCH", ISSUE, status=502, times=2)
    later = T + timedelta(minutes=20)
    with pytest.raises(GitHubUnavailable):
        saving.save(github(fake), cache, 1, block(next_step="lost?"), writer=None, now=later)
    assert parse(body(fake)).block != replace(block(next_step="lost?"), last_updated=later)
    out = resuming.resume(github(fake), cache, 1)
    assert out.decision is not None and out.decision.kind == "push_local"
    assert out.wrote_remote
    assert parse(body(fake)).block == replace(block(next_step="lost?"), last_updated=later)
    entry = cache.load(REPO, 1)
    assert entry is not None and not entry.dirty


def test_clock_skew_is_a_conflict_not_an_overwrite(fake: GitHubFake, tmp_path: Path) -> None:
    """Same actor on two machines; the phone's clock is 30 minutes slow. The laptop has
    unpushed work stamped 14:52; the phone saved newer work stamped (wrongly) 14:40. The seed's
    clocks alone would push the laptop's copy over the phone's."""
    laptop, phone = DirectoryCache(tmp_path / "laptop"), DirectoryCache(tmp_path / "phone")
    saving.save(github(fake), laptop, 1, block(), writer=None, now=T)
    resuming.resume(github(fake), phone, 1)
    fake.fail_next("PATCH", ISSUE, status=502, times=2)
    with pytest.raises(GitHubUnavailable):
        saving.save(
            github(fake),
            laptop,
            1,
            block(next_step="laptop"),
            writer=None,
            now=T + timedelta(minutes=20),
        )
    saving.save(
        github(fake), phone, 1, block(next_step="phone"), writer=None, now=T + timedelta(minutes=8)
    )
    fake.reset_requests()
    out = resuming.resume(github(fake), laptop, 1)
    assert out.status == "conflict"
    assert fake.count("PATCH") == 0
    assert parse(body(fake)).block == replace(
        block(next_step="phone"), last_updated=T + timedelta(minutes=8)
    )


def test_take_resolves_a_conflict_and_logs_the_choice(fake: GitHubFake, tmp_path: Path) -> None:
    mine, theirs = DirectoryCache(tmp_path / "mine"), DirectoryCache(tmp_path / "theirs")
    saving.save(github(fake), mine, 1, block(), writer=None, now=T)
    resuming.resume(github(fake), theirs, 1)
    later = T + timedelta(minutes=9)  # Noa takes the task over (the block was Ariel's)
    saving.save(github(fake), theirs, 1, block("cc-noa"), writer=None, now=later, take="local")
    conflict = saving.save(
        github(fake), mine, 1, block(next_step="m"), writer=None, now=T + timedelta(minutes=10)
    )
    assert conflict.status == "conflict"
    assert resuming.resume(github(fake), mine, 1).status == "conflict"
    out = resuming.resume(github(fake), mine, 1, take="local")
    assert out.status == "ok" and out.wrote_remote
    assert parse(body(fake)).block is not None
    assert parse(body(fake)).block.next_step == "m"  # type: ignore[union-attr]
    log = [json.loads(line) for line in mine.conflict_log.read_text().splitlines()]
    assert [r["choice"] for r in log] == [None, None, "local"]
    assert log[-1]["remote"] is not None and "cc-noa" in log[-1]["remote"]
    # the other side now sees the issue moved and its own copy clean: it takes the remote
    again = resuming.resume(github(fake), theirs, 1)
    assert again.decision is not None and again.decision.kind == "take_remote"


def test_take_remote_drops_the_local_copy_into_the_log(fake: GitHubFake, tmp_path: Path) -> None:
    mine, theirs = DirectoryCache(tmp_path / "mine"), DirectoryCache(tmp_path / "theirs")
    saving.save(github(fake), mine, 1, block(), writer=None, now=T)
    resuming.resume(github(fake), theirs, 1)
    later = T + timedelta(minutes=9)  # Noa takes the task over (the block was Ariel's)
    saving.save(github(fake), theirs, 1, block("cc-noa"), writer=None, now=later, take="local")
    saving.save(
        github(fake), mine, 1, block(next_step="m"), writer=None, now=T + timedelta(minutes=10)
    )
    out = resuming.resume(github(fake), mine, 1, take="remote")
    assert out.status == "ok" and not out.wrote_remote
    entry = mine.load(REPO, 1)
    assert entry is not None and entry.block.actor == "cc-noa" and not entry.dirty
    assert "- **Next step:** m" in mine.conflict_log.read_text()


def test_incomplete_state_blocks_proceeding(fake: GitHubFake, tmp_path: Path) -> None:
    half = "## AI Context\n\n- **Active actor:** cc-x\n- **Phase:** planning\n"
    fake.edit_issue(REPO, 1, body=half + "\n" + HUMAN)
    cache = DirectoryCache(tmp_path)
    out = resuming.resume(github(fake), cache, 1)
    assert out.status == "incomplete"
    assert out.missing == ("Last updated", "Plan", "Files touched", "Next step")
    assert fake.count("PATCH") == 0
    # The half block is remembered as read, so the save that completes it passes the guard.
    entry = cache.load(REPO, 1)
    assert entry is not None and entry.block.actor == "cc-x" and not entry.dirty


def test_resume_of_a_task_with_no_state_anywhere_asks_for_every_field(
    fake: GitHubFake, tmp_path: Path
) -> None:
    out = resuming.resume(github(fake), DirectoryCache(tmp_path), 1)
    assert out.status == "incomplete" and out.decision is not None
    assert out.decision.kind == "init" and len(out.missing) == 6


# --- handoff and done ---------------------------------------------------------------------


def test_handoff_sets_actor_and_phase_keeps_the_plan_and_releases_the_lease(
    fake: GitHubFake, tmp_path: Path
) -> None:
    cache = DirectoryCache(tmp_path)
    saving.save(github(fake), cache, 1, block(), writer=None, now=T)
    released: list[tuple[int, str]] = []
    out = finishing.handoff(
        github(fake),
        cache,
        1,
        "cc-noa-desktop",
        description="Claude Code on Noa's desktop",
        now=T + timedelta(hours=1),
        release_lease=lambda issue, actor: released.append((issue.number, actor)),
    )
    assert out.status == "ok"
    written = parse(body(fake)).block
    assert written is not None and SEED is not None
    assert (written.actor, written.phase, written.chunk) == ("cc-noa-desktop", "handoff", None)
    assert written.plan == SEED.plan and written.next_step == "Finish unit tests"
    assert released == [(1, "cc-ariel-laptop")]
    entry = cache.load(REPO, 1)
    assert entry is not None and entry.base_revision == revision(written)


def test_handoff_to_a_bad_actor_id_is_a_clear_error(fake: GitHubFake, tmp_path: Path) -> None:
    cache = DirectoryCache(tmp_path)
    saving.save(github(fake), cache, 1, block(), writer=None, now=T)
    with pytest.raises(model.AgentError, match="one word"):
        finishing.handoff(github(fake), cache, 1, "Noa Levi", now=T)


def test_done_writes_the_final_block(fake: GitHubFake, tmp_path: Path) -> None:
    cache = DirectoryCache(tmp_path)
    saving.save(github(fake), cache, 1, block(), writer=None, now=T)
    out = finishing.done(
        github(fake),
        cache,
        1,
        pr="https://github.com/acme/shop/pull/9",
        followups=["Add metrics", "Backfill old bookings"],
        now=T + timedelta(days=1),
    )
    assert out.status == "ok"
    final = parse(body(fake)).block
    assert final is not None
    assert final.phase == "done" and final.blockers == ()
    assert final.extra["Pull request"] == "https://github.com/acme/shop/pull/9"
    assert final.extra["Shipped"] == "Add UserBookingRepository; Wire into BookingService"
    assert final.extra["Follow-ups"] == "\n    - Add metrics\n    - Backfill old bookings"
    assert body(fake).endswith(HUMAN)
    with pytest.raises(model.AgentError, match="not a URL"):
        finishing.done(github(fake), cache, 1, pr="#9", now=T)


# --- issue 15: no lost work, nothing left behind --------------------------------------------


def test_a_stale_save_by_the_same_actor_on_another_machine_is_a_conflict(
    fake: GitHubFake, tmp_path: Path
) -> None:
    """Issue 15 item 7: one actor, two machines. The desktop saved newer work after the laptop
    last read the issue; the laptop's save must not replace it, whatever the clocks say."""
    laptop, desktop = DirectoryCache(tmp_path / "laptop"), DirectoryCache(tmp_path / "desktop")
    saving.save(github(fake), laptop, 1, block(), writer=None, now=T)
    resuming.resume(github(fake), desktop, 1)
    later = T + timedelta(minutes=8)
    saving.save(github(fake), desktop, 1, block(next_step="desktop"), writer=None, now=later)
    newer = body(fake)
    fake.reset_requests()
    stale = block(next_step="laptop")
    out = saving.save(github(fake), laptop, 1, stale, writer=None, now=T + timedelta(minutes=20))
    assert out.status == "conflict"
    assert fake.count("PATCH") == 0 and body(fake) == newer
    assert out.decision is not None and "this same actor" in out.decision.reasons[0]
    assert any("--take local" in note for note in out.notes)
    entry = laptop.load(REPO, 1)
    assert entry is not None and entry.dirty and entry.block.next_step == "laptop"


def test_save_take_local_replaces_the_moved_block_and_logs_both(
    fake: GitHubFake, tmp_path: Path
) -> None:
    laptop, desktop = DirectoryCache(tmp_path / "laptop"), DirectoryCache(tmp_path / "desktop")
    saving.save(github(fake), laptop, 1, block(), writer=None, now=T)
    resuming.resume(github(fake), desktop, 1)
    later = T + timedelta(minutes=8)
    saving.save(github(fake), desktop, 1, block(next_step="desktop"), writer=None, now=later)
    mine = block(next_step="laptop")
    out = saving.save(
        github(fake), laptop, 1, mine, writer=None, now=T + timedelta(minutes=20), take="local"
    )
    assert out.status == "ok" and out.wrote_remote and out.conflict_log is not None
    written = parse(body(fake)).block
    assert written is not None and written.next_step == "laptop"
    record = json.loads(laptop.conflict_log.read_text().splitlines()[-1])
    assert (record["command"], record["choice"]) == ("save", "local")
    assert "- **Next step:** desktop" in record["remote"]
    entry = laptop.load(REPO, 1)
    assert entry is not None and not entry.dirty and entry.base_revision == revision(written)


def test_a_save_to_a_missing_issue_leaves_no_cache_entry(fake: GitHubFake, tmp_path: Path) -> None:
    """Issue 15 item 8: a failed save on bad input leaves the cache as it was, so a later
    bare resume does not trip over an entry for an issue that does not exist."""
    cache = DirectoryCache(tmp_path)
    saving.save(github(fake), cache, 1, block(), writer=None, now=T)
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(GitHubNotFound):
        saving.save(github(fake), cache, 999, block(), writer=None, now=T + timedelta(minutes=1))
    assert cache.load(REPO, 999) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    out = resuming.resume(github(fake), cache)
    assert (out.status, out.issue, out.source) == ("ok", 1, "cache")


def test_a_save_over_the_body_limit_restores_the_previous_cache_entry(
    fake: GitHubFake, tmp_path: Path
) -> None:
    cache = DirectoryCache(tmp_path)
    saving.save(github(fake), cache, 1, block(), writer=None, now=T)
    previous = cache.load(REPO, 1)
    before = body(fake)
    huge = block(next_step="x" * model.BODY_LIMIT)
    with pytest.raises(model.AgentError, match="GitHub allows 65,536"):
        saving.save(github(fake), cache, 1, huge, writer=None, now=T + timedelta(minutes=1))
    assert cache.load(REPO, 1) == previous
    assert body(fake) == before


def test_an_outage_keeps_the_unpushed_copy_for_resume(fake: GitHubFake, tmp_path: Path) -> None:
    """The other side of item 8: GitHub down is not bad input; the copy waits for resume."""
    cache = DirectoryCache(tmp_path)
    fake.fail_next("PATCH", ISSUE, status=502, times=2)
    with pytest.raises(GitHubUnavailable):
        saving.save(github(fake), cache, 1, block(), writer=None, now=T)
    entry = cache.load(REPO, 1)
    assert entry is not None and entry.dirty


def test_done_closes_open_steps_and_releases_the_lease(fake: GitHubFake, tmp_path: Path) -> None:
    """Issue 15 item 8: no `(in progress)` under `Phase: done`; the finisher holds no lease."""
    cache = DirectoryCache(tmp_path)
    seed = block()
    assert SEED is not None
    blocked = (*SEED.plan[:4], replace(SEED.plan[4], status="blocked"))
    saving.save(github(fake), cache, 1, replace(seed, plan=blocked), writer=None, now=T)
    released: list[tuple[int, str]] = []
    out = finishing.done(
        github(fake),
        cache,
        1,
        now=T + timedelta(hours=2),
        release_lease=lambda issue, actor: released.append((issue.number, actor)),
    )
    assert out.status == "ok"
    final = parse(body(fake)).block
    assert final is not None
    assert [s.status for s in final.plan] == ["done", "done", "done", "skipped", "skipped"]
    assert [s.text for s in final.plan] == [s.text for s in SEED.plan]
    assert current_step(final) is None
    assert final.extra["Shipped"] == "Add UserBookingRepository; Wire into BookingService"
    assert released == [(1, "cc-ariel-laptop")]


def test_a_dry_run_done_releases_nothing(fake: GitHubFake, tmp_path: Path) -> None:
    cache = DirectoryCache(tmp_path)
    saving.save(github(fake), cache, 1, block(), writer=None, now=T)
    before = body(fake)
    released: list[tuple[int, str]] = []
    out = finishing.done(
        github(fake),
        cache,
        1,
        now=T + timedelta(hours=2),
        dry_run=True,
        release_lease=lambda issue, actor: released.append((issue.number, actor)),
    )
    assert out.dry_run and "+  3. Add unit tests for repository (done)" in out.diff
    assert released == [] and body(fake) == before


# --- issue 21: find my task by the block, one listing ------------------------------------------


def test_resume_finds_the_open_task_whose_block_names_this_actor(
    fake: GitHubFake, tmp_path: Path
) -> None:
    """A new machine with only its actor id (no actors: map, no assignee): the open issue whose
    block names it as Active actor, chosen in the one listing."""
    fake.repos.clear()
    fake.add_issue(REPO, "Noa's", render(replace(block("cc-noa-desktop"), last_updated=T)))
    mine = render(replace(block(), last_updated=T))
    fake.add_issue(REPO, "Booking history", mine)
    fake.add_issue(REPO, "Finished", render(replace(block(), phase="done", last_updated=T)))
    fake.reset_requests()
    out = resuming.resume(github(fake), DirectoryCache(tmp_path), actor="cc-ariel-laptop")
    assert (out.status, out.source, out.issue) == ("ok", "block", 2)
    assert fake.count() == 1  # one listing, the block read from it


def test_resume_named_by_the_cache_lists_nothing(fake: GitHubFake, tmp_path: Path) -> None:
    cache = DirectoryCache(tmp_path)
    saving.save(github(fake), cache, 1, block(), writer=None, now=T)
    fake.reset_requests()
    out = resuming.resume(github(fake), cache, actor="cc-ariel-laptop")
    assert out.source == "cache"
    assert fake.calls == {("GET", "/repos/{owner}/{repo}/issues/{number}"): 1}


def test_resume_of_a_task_without_a_block_offers_a_starting_block(
    fake: GitHubFake, tmp_path: Path
) -> None:
    """Seeds/000's initialize_empty(): this actor, Phase planning, the plan to write; exit 5
    still, and the block saves as it is."""
    cache = DirectoryCache(tmp_path)
    out = resuming.resume(github(fake), cache, 1, actor="cc-ariel-laptop", now=T)
    assert out.status == "incomplete" and len(out.missing) == 6
    assert out.state is not None
    assert (out.state.actor, out.state.phase) == ("cc-ariel-laptop", "planning")
    assert out.state.plan[0].status == "pending"
    saved = saving.save(github(fake), cache, 1, out.state, writer="cc-ariel-laptop", now=T)
    assert saved.status == "ok"
