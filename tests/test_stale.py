"""Every stale rule, judged from the block, the lease and git; never from the issue's activity."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ai_context.core.block.parse import parse
from ai_context.core.errors import ConfigError, EventError
from ai_context.core.models import Issue
from ai_context.core.payloads import commits_from_push
from ai_context.rules.actors import parse_actors
from ai_context.rules.checks import check_body
from ai_context.rules.lease import LeaseRecord
from ai_context.rules.stale import (
    CommitSeen,
    Evidence,
    StaleRules,
    Verdict,
    active_tasks,
    judge,
    push_commits,
)
from ai_context.rules.stale_config import StaleConfig, parse_stale_config
from tests.conftest import SEED_BLOCK

UPDATED = datetime(2026, 5, 26, 14, 32, tzinfo=UTC)  # the seed block's Last updated
NOW = UPDATED + timedelta(days=2)
FRESH = UPDATED + timedelta(hours=1)
HOUR = timedelta(hours=1)
ACTORS = parse_actors(
    {
        "cc-ariel-laptop": {"owner": "ariel", "emails": ["ariel@example.com"]},
        "cc-ariel-phone": {"owner": "ariel", "emails": ["ariel@example.com"]},
        "cc-ben": {"owner": "ben", "emails": ["ben@example.com"], "aliases": ["cc-ben-2"]},
    },
    "c.yml",
)


def body(
    actor: str = "cc-ariel-laptop",
    phase: str = "implementing (chunk 3 of 5)",
    updated: str | None = "2026-05-26T14:32:00Z",
) -> str:
    text = SEED_BLOCK.replace("cc-ariel-laptop", actor).replace(
        "implementing (chunk 3 of 5)", phase
    )
    if updated is None:
        return text.replace("- **Last updated:** 2026-05-26T14:32:00Z\n", "")
    return text.replace("2026-05-26T14:32:00Z", updated)


def verdict(
    text: str | None = None,
    evidence: Evidence | None = None,
    *,
    now: datetime = NOW,
    config: StaleConfig | None = None,
) -> Verdict:
    return judge(
        6,
        parse(body() if text is None else text),
        evidence or Evidence(),
        now=now,
        config=config or StaleConfig(),
        actors=ACTORS,
    )


def codes(v: Verdict) -> list[str]:
    return [f.code for f in v.findings]


def lease(actor: str, expires: datetime, acquired: datetime = UPDATED) -> LeaseRecord:
    return LeaseRecord(issue=6, actor=actor, acquired=acquired, expires=expires)


def commit(
    author: str, when: datetime, issues: tuple[int, ...] = (6,), sha: str = ""
) -> CommitSeen:
    kind = "author_email" if "@" in author else "author_name"
    return CommitSeen.model_validate(
        {kind: author, "timestamp": when, "issues": issues, "sha": sha}
    )


# --- stale ---------------------------------------------------------------------------------


def test_stale_when_last_updated_is_older_than_the_threshold() -> None:
    v = verdict()
    assert codes(v) == ["AIC601"] and v.stale and not v.conflict
    finding = v.findings[0]
    assert finding.severity == "warning" and finding.line == 5  # the Last updated line
    assert finding.message == (
        "stale: Last updated 2026-05-26T14:32:00Z is older than 1d and Phase is 'implementing'"
    )
    assert v.mention == "ariel"  # the owner, from actors
    assert v.supersedes == {"AIC304"}  # the block check's own stale warning is not repeated


def test_not_stale_when_fresh_terminal_undated_or_in_the_future() -> None:
    assert verdict(now=FRESH) == Verdict()
    assert verdict(body(phase="done")) == Verdict()
    assert verdict(body(phase="Shipped")) == Verdict()
    assert verdict(body(updated=None)) == Verdict()  # AIC201 already says it is missing
    assert verdict(now=UPDATED - HOUR) == Verdict()  # AIC303 says the clock is off


def test_threshold_is_the_stale_after_setting() -> None:
    config = parse_stale_config(None, "c.yml", timedelta(minutes=90))
    assert codes(verdict(now=UPDATED + timedelta(minutes=91), config=config)) == ["AIC601"]
    assert verdict(now=UPDATED + timedelta(minutes=89), config=config) == Verdict()


def test_unknown_actor_is_stale_without_a_mention() -> None:
    v = verdict(body(actor="cc-stranger"))
    assert codes(v) == ["AIC601"] and v.mention is None


def test_bot_comments_and_labels_do_not_make_an_old_task_fresh() -> None:
    """The bot's own comment and label change bumped updated_at to now: still stale."""
    touched = Issue(
        number=6,
        title="Task",
        body=body(),
        labels=("ai-context:stale",),
        comments=3,
        updated_at=NOW,
    )
    rules = StaleRules(config=StaleConfig(), actors=ACTORS, now=NOW)
    assert codes(rules(touched, check_body(touched.body, now=NOW), None)) == ["AIC601"]


def test_closed_issues_and_non_tasks_are_not_judged() -> None:
    rules = StaleRules(config=StaleConfig(), actors=ACTORS, now=NOW)
    closed = Issue(number=6, title="t", body=body(), state="closed")
    assert rules(closed, check_body(closed.body), None) == Verdict()
    plain = Issue(number=6, title="t", body="no block here")
    assert rules(plain, check_body(plain.body), None) == Verdict()


# --- lease expired -------------------------------------------------------------------------


def test_lease_expired_without_renewal() -> None:
    expired = Evidence(lease=lease("cc-ariel-laptop", FRESH), leases_read=True)
    v = verdict(evidence=expired, now=FRESH + HOUR)  # block fresh, lease ran out
    assert codes(v) == ["AIC602"] and v.stale and v.mention == "ariel"
    assert v.findings[0].message == (
        "the lease of cc-ariel-laptop on #6 expired at 2026-05-26T15:32:00Z without renewal"
    )
    assert v.remembered.lease == expired.lease  # remembered for runs that cannot read leases
    live = Evidence(lease=lease("cc-ariel-laptop", FRESH + 2 * HOUR), leases_read=True)
    assert verdict(evidence=live, now=FRESH + HOUR) == Verdict()
    assert verdict(body(phase="done"), expired, now=FRESH + HOUR) == Verdict()


# --- claim race ----------------------------------------------------------------------------


def test_commits_by_someone_else_since_last_updated_are_a_claim_race() -> None:
    race = Evidence(commits=(commit("ben@example.com", UPDATED + HOUR, sha="b1"),))
    v = verdict(evidence=race, now=FRESH + HOUR)
    assert codes(v) == ["AIC603"] and v.conflict and not v.stale
    finding = v.findings[0]
    assert finding.severity == "error" and finding.line == 3  # the Active actor line
    assert finding.message == (
        "claim race: 1 commit naming #6 by cc-ben after Last updated 2026-05-26T14:32:00Z, "
        "but the Active actor is cc-ariel-laptop"
    )
    assert v.remembered.commits == race.commits


def test_no_race_for_the_active_actor_older_commits_or_other_issues() -> None:
    own = commit("ariel@example.com", UPDATED + HOUR)  # the same actor's (or owner's) email
    before = commit("ben@example.com", UPDATED - HOUR)
    elsewhere = commit("ben@example.com", UPDATED + HOUR, issues=(7,))
    evidence = Evidence(commits=(own, before, elsewhere))
    assert verdict(evidence=evidence, now=FRESH + HOUR) == Verdict()


def test_unknown_actors_raise_no_race_but_a_mapped_actor_does() -> None:
    stranger = Evidence(commits=(commit("someone@else.org", UPDATED + HOUR),))
    # Neither side is in actors: the map cannot tell, so no conflict (unknown actors work).
    assert verdict(body(actor="cc-x"), stranger, now=FRESH + HOUR) == Verdict()
    # The Active actor is mapped and the author is not one of its identities.
    assert codes(verdict(evidence=stranger, now=FRESH + HOUR)) == ["AIC603"]


def test_a_fresh_checkpoint_after_the_commits_ends_the_race() -> None:
    race = Evidence(commits=(commit("ben@example.com", UPDATED + HOUR),))
    later = body(updated="2026-05-26T16:00:00Z")
    assert verdict(later, race, now=FRESH + 2 * HOUR) == Verdict()
    handed = body(actor="cc-ben")  # or the block was handed to the committer
    assert verdict(handed, race, now=FRESH + HOUR) == Verdict()


# --- two actors ----------------------------------------------------------------------------


def test_a_live_lease_held_by_another_actor_conflicts() -> None:
    theirs = Evidence(lease=lease("cc-ben", FRESH + 2 * HOUR), leases_read=True)
    v = verdict(evidence=theirs, now=FRESH)
    assert codes(v) == ["AIC604"] and v.conflict
    assert v.findings[0].message == (
        "two actors: cc-ben holds the lease until 2026-05-26T17:32:00Z, "
        "but the Active actor is cc-ariel-laptop"
    )
    same_owner = Evidence(lease=lease("cc-ariel-phone", FRESH + HOUR), leases_read=True)
    assert verdict(evidence=same_owner, now=FRESH) == Verdict()
    unknown_pair = Evidence(lease=lease("cc-y", FRESH + HOUR), leases_read=True)
    assert codes(verdict(body(actor="cc-x"), unknown_pair, now=FRESH)) == ["AIC604"]


def test_a_lease_taken_before_the_previous_one_expired_conflicts() -> None:
    taken = lease("cc-ben", FRESH + 2 * HOUR, acquired=FRESH)
    early = Evidence(lease=taken, previous=lease("cc-x", FRESH + HOUR), leases_read=True)
    v = verdict(body(actor="cc-ben"), early, now=FRESH)
    assert codes(v) == ["AIC604"]
    assert "cc-ben took the lease at 2026-05-26T15:32:00Z while cc-x's ran until" in (
        v.findings[0].message
    )
    fair = Evidence(lease=taken, previous=lease("cc-x", FRESH), leases_read=True)
    assert verdict(body(actor="cc-ben"), fair, now=FRESH) == Verdict()
    renewal = Evidence(lease=taken, previous=lease("cc-ben-2", FRESH + HOUR), leases_read=True)
    assert verdict(body(actor="cc-ben"), renewal, now=FRESH) == Verdict()  # an alias renewed


# --- hoarding ------------------------------------------------------------------------------


def test_hoarding_is_a_warning_only_when_configured() -> None:
    many = Evidence(active=(3, 6, 9), active_actor="cc-ariel-laptop")
    config = parse_stale_config({"max-active-per-actor": 2}, "c.yml", timedelta(days=30))
    v = verdict(evidence=many, config=config)
    assert codes(v) == ["AIC605"] and not v.stale and not v.conflict
    assert v.findings[0].severity == "warning"
    assert v.findings[0].message == (
        "cc-ariel-laptop is the Active actor on 3 open tasks (#3, #6, #9), more than "
        "max-active-per-actor (2)"
    )
    off = StaleConfig(stale_after=timedelta(days=30))
    assert verdict(evidence=many, config=off) == Verdict()
    other = Evidence(active=(3, 6, 9), active_actor="cc-ben")  # counted for someone else
    assert verdict(evidence=other, config=config) == Verdict()


def test_active_tasks_counts_aliases_as_one_actor_and_skips_finished_ones() -> None:
    blocks = [
        (1, parse(body(actor="cc-ben")).block),
        (2, parse(body(actor="cc-ben-2")).block),
        (3, parse(body(actor="cc-ben", phase="done")).block),
        (4, parse(body(actor="cc-x")).block),
        (5, None),
    ]
    assert active_tasks(blocks, ACTORS, StaleConfig()) == {"cc-ben": (1, 2), "cc-x": (4,)}


# --- evidence and memory -------------------------------------------------------------------


def test_memory_round_trips_and_merges_with_what_a_run_gathers() -> None:
    old = commit("ben@example.com", UPDATED + HOUR, sha="b1")
    new = commit("ben@example.com", UPDATED + 2 * HOUR, sha="b2")
    remembered = Evidence(lease=lease("cc-ben", FRESH), leases_read=True, commits=(old,))
    state = Verdict(remembered=remembered).state()
    assert state is not None and Evidence.from_state(state) == remembered
    merged = Evidence.from_state(state).merged(Evidence(commits=(new, old)))
    assert merged.commits == (old, new) and merged.lease == remembered.lease  # kept
    reread = merged.merged(Evidence(leases_read=True))  # a stale run found no lease now
    assert reread.lease is None and reread.commits == (old, new)
    assert Verdict().state() is None
    for junk in (None, {}, {"stale": "x"}, {"stale": {"lease": 3}}):
        assert Evidence.from_state(junk) == Evidence()


def test_push_payload_commits() -> None:
    payload: dict[str, Any] = {
        "commits": [
            {
                "id": "abc",
                "message": "Fix it\n\nRefs #6",
                "timestamp": "2026-05-26T17:00:00+02:00",
                "author": {"name": "Ben", "email": "ben@example.com", "username": "ben"},
            },
        ]
    }
    seen = push_commits(commits_from_push(payload), lambda m: [6] if "#6" in m else [])
    assert seen == [
        CommitSeen(
            sha="abc",
            author_email="ben@example.com",
            author_name="Ben",
            author_login="ben",
            timestamp=datetime(2026, 5, 26, 15, 0, tzinfo=UTC),
            issues=(6,),
        )
    ]
    assert push_commits((), lambda m: []) == []


@pytest.mark.parametrize(
    "junk",
    [{"id": "bad", "message": "#6", "timestamp": "yesterday"}, "junk"],
)
def test_a_push_payload_the_event_layer_cannot_read_is_exit_2(junk: Any) -> None:
    # Read once, by core.events: an unreadable commit is a bad payload, never skipped silently.
    with pytest.raises(EventError, match=r"cannot read the event payload: commits\.0"):
        commits_from_push({"commits": [junk]})


@pytest.mark.parametrize(
    ("section", "needle"),
    [
        ({"max-active-per-actor": 0}, "max-active-per-actor: Input should be greater than"),
        ({"max-active": 3}, "max-active: unknown key; use max-active-per-actor"),
        ({"stale-after": "3d"}, "stale-after is a top-level setting"),
        (["x"], "stale: must be a mapping"),
    ],
)
def test_bad_stale_config_names_the_file(section: Any, needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_stale_config(section, "c.yml", timedelta(days=1))
    assert str(info.value).startswith("c.yml: stale:") and needle in str(info.value)


@given(st.text(max_size=300))
def test_any_body_is_judged_without_error(text: str) -> None:
    evidence = Evidence(
        lease=lease("cc-ben", FRESH),
        previous=lease("cc-x", NOW),
        leases_read=True,
        commits=(commit("ben@example.com", NOW),),
        active=(1, 2),
        active_actor="cc-ben",
    )
    verdict(text, evidence, config=StaleConfig(max_active_per_actor=1))
