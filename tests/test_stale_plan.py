"""Stale findings in the check job's one comment and label plan: one mention, no flapping."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from ai_context.adapters.github import GitHub
from ai_context.core.hidden import find_hidden, hide
from ai_context.core.models import Comment, Issue
from ai_context.core.secret import Secret
from ai_context.jobs.comments import plan_check
from ai_context.jobs.mention import mention_note
from ai_context.jobs.stale import read_leases
from ai_context.rules.actors import parse_actors
from ai_context.rules.checks import CheckConfig
from ai_context.rules.lease import LeaseConfig, LeaseRecord
from ai_context.rules.stale import CommitSeen, Evidence, StaleRules
from ai_context.rules.stale_config import StaleConfig
from ai_context.rules.sticky import (
    LABEL_CONFLICT,
    LABEL_INVALID,
    LABEL_STALE,
    MARKER,
    Op,
    render_findings,
    wanted_labels,
)
from tests.conftest import SEED_BLOCK
from tests.fakes import GitHubFake

BOT = "github-actions[bot]"
UPDATED = datetime(2026, 5, 26, 14, 32, tzinfo=UTC)
NOW = UPDATED + timedelta(days=2)
ACTORS = parse_actors(
    {
        "cc-ariel-laptop": {"owner": "ariel", "emails": ["ariel@example.com"]},
        "cc-ben": {"owner": "ben", "emails": ["ben@example.com"]},
    },
    "c.yml",
)


class Thread:
    """One issue's comments and labels, changed by applying plans (as the shell would)."""

    def __init__(self, body: str, labels: tuple[str, ...] = ()) -> None:
        self.body = body
        self.labels = set(labels)
        self.comments: list[Comment] = []
        self.reads = 0

    def issue(self, *, updated_at: datetime | None = None) -> Issue:
        return Issue(
            number=6,
            title="Task",
            body=self.body,
            labels=tuple(sorted(self.labels)),
            comments=len(self.comments),
            updated_at=updated_at,
        )

    def list_comments(self, number: int) -> list[Comment]:
        self.reads += 1
        return list(self.comments)

    def plan(self, rules: StaleRules | None, now: datetime = NOW) -> list[Op]:
        checked = plan_check(
            self.issue(updated_at=now),  # the bot's own writes keep updated_at current
            now=now,
            config=CheckConfig(),
            bot_login=BOT,
            comments=self.list_comments,
            tasks=rules,
        )
        for op in checked.ops:
            self.apply(op)
        return checked.ops

    def apply(self, op: Op) -> None:
        if op.kind == "create_comment":
            assert op.body is not None
            self.comments.append(Comment(id=len(self.comments) + 1, body=op.body, author=BOT))
        elif op.kind == "edit_comment":
            assert op.body is not None
            self.comments = [
                replace(c, body=op.body) if c.id == op.comment_id else c for c in self.comments
            ]
        elif op.kind == "add_labels":
            self.labels.update(op.labels)
        elif op.kind == "remove_label":
            self.labels.discard(op.labels[0])

    @property
    def sticky(self) -> str:
        (comment,) = [c for c in self.comments if c.author == BOT and c.body.startswith(MARKER)]
        return comment.body

    @property
    def mentions(self) -> list[str]:
        """Our comments other than the sticky one: the owner told of a staleness episode."""
        return [c.body for c in self.comments if c.author == BOT and not c.body.startswith(MARKER)]


# The scheduled runs saw these tasks long before they went stale: their owners are told.
SEEN = datetime(2026, 5, 1, tzinfo=UTC)


def rules(now: datetime = NOW, fresh: dict[int, Evidence] | None = None) -> StaleRules:
    return StaleRules(config=StaleConfig(), actors=ACTORS, now=now, fresh=fresh or {}, seen=SEEN)


def kinds(ops: list[Op]) -> list[str]:
    return [op.kind for op in ops]


def test_a_stale_task_gets_a_finding_a_label_and_one_mention() -> None:
    thread = Thread(SEED_BLOCK)
    ops = thread.plan(rules())
    assert kinds(ops) == ["create_comment", "add_labels"]
    assert thread.labels == {LABEL_STALE}
    body = thread.sticky
    assert "`AIC601`" in body and "`AIC304`" not in body  # said once, by the stale rule
    assert body.count("@ariel") == 1 and mention_note("ariel") in body
    # Reruns (every schedule, and the bot's own edits in between) change nothing: no edit,
    # so no second notification.
    for later in (NOW + timedelta(hours=1), NOW + timedelta(days=3)):
        assert thread.plan(rules(later), now=later) == []
    assert thread.sticky == body


def test_a_fresh_block_clears_the_label_and_the_mention() -> None:
    thread = Thread(SEED_BLOCK)
    thread.plan(rules())
    thread.body = SEED_BLOCK.replace("2026-05-26T14:32:00Z", "2026-05-28T14:00:00Z")
    ops = thread.plan(rules())
    assert kinds(ops) == ["edit_comment", "remove_label"]
    assert thread.labels == set() and "@ariel" not in thread.sticky
    assert "no findings now" in thread.sticky
    # Stale again later: the mention comes back, once. It is added to the sticky comment by
    # an edit, which GitHub may not notify, so a short new comment tells the owner (issue 15).
    later = NOW + timedelta(days=3)
    ops = thread.plan(rules(later), now=later)
    # The mention first: a run stopped between the two must not leave the edit (whose memory
    # says the owner was told) without it.
    assert kinds(ops) == ["create_comment", "edit_comment", "add_labels"]
    assert thread.sticky.count("@ariel") == 1
    [told] = thread.mentions
    assert told.startswith("<!-- ai-context:mention ariel 2026-05-28T14:00:00Z -->\n@ariel: ")
    # Later runs of the same episode tell nobody again.
    for again in (later + timedelta(hours=1), later + timedelta(days=2)):
        assert thread.plan(rules(again), now=again) == []
    assert len(thread.mentions) == 1


def test_without_the_stale_rules_the_block_check_reports_as_before() -> None:
    thread = Thread(SEED_BLOCK)
    thread.plan(None)
    assert "`AIC304`" in thread.sticky and thread.labels == set()
    assert "@ariel" not in thread.sticky and find_hidden(thread.sticky) is None


def test_other_findings_changing_keep_the_mention_as_it_was() -> None:
    thread = Thread(SEED_BLOCK)
    thread.plan(rules())
    thread.body = SEED_BLOCK.replace(
        "- **Next step:** Finish unit tests in booking.repository.spec.ts", ""
    )
    ops = thread.plan(rules())
    assert kinds(ops) == ["edit_comment", "add_labels"]  # AIC201 and AIC306 joined in
    assert thread.sticky.count(mention_note("ariel")) == 1  # the same line, not new text


def test_a_claim_race_is_remembered_between_runs_that_cannot_see_the_commits() -> None:
    fresh_block = SEED_BLOCK.replace("2026-05-26T14:32:00Z", "2026-05-28T14:00:00Z")
    thread = Thread(fresh_block)
    push = CommitSeen(
        sha="b1",
        author_email="ben@example.com",
        timestamp=datetime(2026, 5, 28, 14, 30, tzinfo=UTC),
        issues=(6,),
    )
    ops = thread.plan(rules(fresh={6: Evidence(commits=(push,))}))  # the push run
    assert kinds(ops) == ["create_comment", "add_labels"]
    assert thread.labels == {LABEL_CONFLICT}  # not invalid: the block itself is fine
    state = find_hidden(thread.sticky)
    assert state is not None and Evidence.from_state(state).commits == (push,)
    # An issues event later knows no commits: it judges from the comment's memory.
    assert thread.plan(rules()) == [] and thread.reads == 1
    # The active actor checkpoints after the commit: the race is over.
    thread.body = fresh_block.replace("2026-05-28T14:00:00Z", "2026-05-28T14:45:00Z")
    assert kinds(thread.plan(rules())) == ["edit_comment", "remove_label"]
    assert thread.labels == set() and find_hidden(thread.sticky) is None


def test_comments_are_not_read_for_a_clean_unlabelled_task() -> None:
    thread = Thread(SEED_BLOCK.replace("2026-05-26T14:32:00Z", "2026-05-28T14:00:00Z"))
    thread.comments.append(Comment(id=9, body="a human comment", author="ana"))
    assert thread.plan(rules()) == [] and thread.reads == 0


def test_labels_we_own_follow_the_findings() -> None:
    from ai_context.core.findings import Finding

    conflict = Finding(code="AIC603", severity="error", message="race")
    stale = Finding(code="AIC602", severity="warning", message="lease")
    broken = Finding(code="AIC101", severity="error", message="bad")
    assert wanted_labels([conflict, stale]) == {LABEL_CONFLICT, LABEL_STALE}
    assert wanted_labels([broken]) == {LABEL_INVALID}


def test_state_is_hidden_and_cannot_break_out_of_its_comment() -> None:
    state = {"stale": {"commits": [{"author_name": "--> <b>@here</b>"}]}}
    body = render_findings([], notes=(), state=None)
    assert find_hidden(body) is None
    hidden = hide(state)
    assert hidden.count("-->") == 1 and "@here" not in hidden
    assert find_hidden(MARKER + "\n" + hidden) == state
    assert find_hidden(MARKER + "\n<!-- ai-context:state !!! -->") is None


# --- leases read for a stale run -------------------------------------------------------------


@pytest.fixture
def gh() -> Iterator[GitHubFake]:
    with GitHubFake(now=NOW) as fake:
        fake.add_repo("o/r")
        yield fake


def test_read_leases_finds_each_lease_and_the_one_it_replaced(gh: GitHubFake) -> None:
    first = LeaseRecord(issue=6, actor="cc-x", acquired=UPDATED, expires=NOW)
    taken = LeaseRecord(issue=6, actor="cc-ben", acquired=UPDATED, expires=NOW)
    parent = gh.create_commit("o/r", first.message())
    gh.set_ref(
        "o/r",
        "refs/ai-context/leases/6",
        gh.create_commit("o/r", taken.message(), parents=[parent]),
    )
    gh.set_ref("o/r", "refs/ai-context/leases/8", gh.create_commit("o/r", "junk"))
    gh.set_ref("o/r", "refs/ai-context/leases/99", parent)  # not an issue of this run
    api = GitHub(Secret("t"), "o/r", api_url=gh.url, write_interval=0)
    logged: list[str] = []
    found = read_leases(api, [6, 7, 8], LeaseConfig(), logged.append)
    assert found[6] == Evidence(lease=taken, previous=first, leases_read=True)
    assert found[7] == found[8] == Evidence(leases_read=True)
    assert "refs/ai-context/leases/8 holds no lease record" in logged[0]
    assert api.counter.total == 4  # one listing, #6, the lease #6 replaced, #8
