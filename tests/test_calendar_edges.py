"""Times at the calendar's edges in issue text (`Last updated: 9999-12-31T23:59:59Z`, or
`0001-01-01T00:00:00+01:00`): a finding or a time that never comes, never an OverflowError that
ends a whole scheduled run."""

from __future__ import annotations

import json
import tempfile
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai_context.adapters.cache import CacheError, DirectoryCache
from ai_context.adapters.cache_entry import CacheEntry
from ai_context.adapters.config import load_config
from ai_context.adapters.store import StoreError, issue_from_file
from ai_context.core import hidden
from ai_context.core.block.parse import parse, parse_timestamp
from ai_context.core.errors import ConfigError
from ai_context.core.events import Commit
from ai_context.core.fields import FieldError, as_time
from ai_context.core.hidden import hide
from ai_context.core.models import Issue
from ai_context.rules import checks
from ai_context.rules.actors import parse_actors
from ai_context.rules.checks import check_body
from ai_context.rules.digest import facts
from ai_context.rules.digest.build import DigestConfig, build_digest
from ai_context.rules.digest.state import VERSION, decode_state
from ai_context.rules.gitlog.compare import behind_git
from ai_context.rules.lease import LeaseError, LeaseRecord, parse_record
from ai_context.rules.session.merge import parse_input
from ai_context.rules.session.model import SessionError, loads
from ai_context.rules.stale import (
    CONFLICT_CODES,
    STALE_CODES,
    STATE_KEY,
    CommitSeen,
    Evidence,
    StaleRules,
    judge,
)
from ai_context.rules.stale_config import StaleConfig
from ai_context.rules.sticky import MARKER
from tests.actionrun import scheduled
from tests.conftest import SEED_BLOCK, run_process
from tests.fakes import GitHubFake

NOW = datetime(2026, 5, 27, 9, 0, tzinfo=UTC)
GOOD = "2026-05-26T14:32:00Z"
ACTORS = parse_actors({"cc-ariel-laptop": {"owner": "ariel", "emails": []}}, "c.yml")

offsets = st.integers(min_value=-23 * 60 - 59, max_value=23 * 60 + 59).map(
    lambda minutes: timezone(timedelta(minutes=minutes))
)
stamps = st.one_of(
    st.datetimes(min_value=datetime.min, max_value=datetime.max, timezones=offsets),
    st.sampled_from(
        [
            datetime.max.replace(tzinfo=UTC),
            datetime.min.replace(tzinfo=UTC),
            datetime.min.replace(tzinfo=timezone(timedelta(hours=1))),
            datetime.max.replace(tzinfo=timezone(timedelta(hours=-1))),
        ]
    ),
)


def _body(stamp: str) -> str:
    return SEED_BLOCK.replace(GOOD, stamp)


@settings(max_examples=200, deadline=None)
@given(stamp=stamps, closed=st.booleans())
def test_a_stamp_anywhere_in_the_calendar_is_checked_judged_and_scheduled(
    stamp: datetime, closed: bool
) -> None:
    issue = Issue(number=6, title="Task", body=_body(stamp.isoformat()), state="open")
    result = check_body(issue.body, now=NOW)
    checks.next_change(result.block, NOW, DigestConfig().checks())
    rules = StaleRules(config=StaleConfig(), actors=ACTORS, now=NOW, seen=NOW)
    rules(issue, result, None)
    rules.next_change(issue, result, None)
    digest_config = DigestConfig()
    facts.next_change([(issue, result)], NOW, digest_config)
    build_digest([issue], NOW, digest_config)
    if result.block is not None and result.block.last_updated is not None:
        commit = Commit(sha="a" * 40, message="Refs #6", timestamp=NOW)
        behind_git(6, result.block, [commit])
    if closed:
        gone = Issue(number=7, title="Done", state="closed", closed_at=stamp.replace(tzinfo=UTC))
        facts.next_change([(gone, check_body(gone.body, now=NOW))], NOW, digest_config)


def test_an_offset_past_the_calendar_s_edge_is_an_unreadable_stamp() -> None:
    assert parse_timestamp("0001-01-01T00:00:00+01:00") == (None, "AIC301")
    assert parse_timestamp("9999-12-31T23:59:59-01:00") == (None, "AIC301")
    result = check_body(_body("0001-01-01T00:00:00+01:00"), now=NOW)
    assert "AIC301" in {f.code for f in result.findings}


def test_a_last_updated_in_year_9999_never_goes_stale_nor_moves_the_digest() -> None:
    issue = Issue(number=6, title="Task", body=_body("9999-12-31T23:59:59Z"))
    result = check_body(issue.body, now=NOW)
    rules = StaleRules(config=StaleConfig(), actors=ACTORS, now=NOW)
    assert rules.next_change(issue, result, None) is None
    assert facts.next_change([(issue, result)], NOW, DigestConfig()) is None
    assert result.block is not None
    late = Commit(sha="a" * 40, message="Refs #6", timestamp=NOW)
    assert behind_git(6, result.block, [late]) == []


# A block the check job comments on (no Decisions, no Blockers): each task gets its comment.
SHORT = (
    "## AI Context\n\n- **Active actor:** cc-a\n- **Phase:** implementing\n"
    "- **Last updated:** {}\n- **Plan:**\n  1. x (done)\n- **Files touched:** a\n"
    "- **Next step:** y\n"
)


def test_a_scheduled_run_goes_on_past_issues_at_the_calendar_s_edges(
    tmp_path: Path, github_fake: GitHubFake
) -> None:
    gh = github_fake
    gh.add_repo("o/r")
    gh.add_issue("o/r", "good task", SHORT.format(GOOD), number=1)
    gh.add_issue("o/r", "far future", SHORT.format("9999-12-31T23:59:59Z"), number=2)
    gh.add_issue("o/r", "far past", SHORT.format("0001-01-01T00:00:00+01:00"), number=3)
    run = scheduled(
        gh, tmp_path, jobs="check,stale,digest", env={"AI_CONTEXT_NOW": NOW.isoformat()}
    )
    assert run.code == 0, run.stdout + run.stderr
    assert "internal error" not in run.stdout + run.stderr
    assert len(gh.comments("o/r", 1)) == 1
    assert any("AIC301" in c.body for c in gh.comments("o/r", 3))


@settings(max_examples=200, deadline=None)
@given(stamp=stamps)
def test_a_digest_state_of_any_time_is_read_or_is_a_first_digest(stamp: datetime) -> None:
    read = decode_state(hidden.encode({"v": VERSION, "at": stamp.isoformat(), "r": {}}))
    assert read.status in {"restored", "unreadable"}


def test_a_forged_digest_state_past_the_calendar_s_edge_is_a_first_digest() -> None:
    encoded = hidden.encode({"v": VERSION, "at": "9999-12-31T23:59:59-05:00", "r": {}})
    read = decode_state(encoded)
    assert read.status == "unreadable" and read.state.tasks == {}


EDGE = "0001-01-01T00:00:00+01:00"  # before the calendar's start, once in UTC


def test_a_now_argument_past_the_calendar_s_edge_is_bad_input(tmp_path: Path) -> None:
    for argv in (
        ["save", "1", "--now", EDGE],
        ["digest", "--now", EDGE, "--issues-dir", str(tmp_path), "--repository", "o/r"],
    ):
        done = run_process(argv, cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert f"'{EDGE}' is not an ISO 8601 time" in done.stderr
        assert "internal error" not in done.stderr


def test_a_now_setting_past_the_calendar_s_edge_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="AI_CONTEXT_NOW"):
        load_config({"AI_CONTEXT_NOW": EDGE}, tmp_path)


@pytest.mark.parametrize("field", ["saved_at", "last_updated"])
def test_a_cache_entry_with_a_time_past_the_calendar_s_edge_is_not_a_valid_entry(
    tmp_path: Path, field: str
) -> None:
    block = parse(SEED_BLOCK).block
    assert block is not None
    cache = DirectoryCache(tmp_path)
    path = cache.store(
        CacheEntry(
            repository="o/r",
            issue=1,
            block=block,
            text="",
            revision="r",
            base_revision="r",
            actor="cc-ariel-laptop",
            body=SEED_BLOCK,
            saved_at=NOW,
        )
    )
    data = json.loads(path.read_text(encoding="utf-8"))
    (data if field == "saved_at" else data["block"])[field] = EDGE
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(CacheError, match="is not an ISO 8601 time"):
        cache.load("o/r", 1)


@settings(max_examples=200, deadline=None)
@given(stamp=stamps)
def test_any_time_as_text_is_read_or_is_a_field_error(stamp: datetime) -> None:
    try:
        assert as_time("at", stamp.isoformat()).tzinfo is UTC
    except FieldError as exc:
        assert "is not an ISO 8601 time" in str(exc)


def _stored(stamp: datetime, zone: bool) -> str:
    """STAMP as a file or a forged record may hold it: with its offset, or with none."""
    return (stamp if zone else stamp.replace(tzinfo=None)).isoformat()


TASK = {"id": "TASK_001", "title": "x", "status": "pending", "created": GOOD}


def _lease(at: str) -> dict[str, object]:
    return {"issue": 6, "actor": "cc-x", "acquired": at, "expires": at}


@settings(max_examples=200, deadline=None)
@given(stamp=stamps, zone=st.booleans())
def test_a_stored_time_anywhere_in_the_calendar_is_read_or_refused(
    stamp: datetime, zone: bool
) -> None:
    at = _stored(stamp, zone)
    try:
        record: LeaseRecord | None = parse_record(json.dumps(_lease(at)))
    except LeaseError as exc:
        assert "out of range in UTC" in str(exc)
        record = None
    issue = Issue(number=6, title="Task", body=SEED_BLOCK)
    result = check_body(issue.body, now=NOW)
    remembered = {STATE_KEY: {"lease": _lease(at), "commits": [{"sha": "b" * 40, "timestamp": at}]}}
    fresh = Evidence(commits=(CommitSeen(sha="a" * 40, timestamp=NOW, issues=(6,)),))
    rules = StaleRules(config=StaleConfig(), actors=ACTORS, now=NOW, fresh={6: fresh})
    assert rules(issue, result, remembered).codes <= STALE_CODES | CONFLICT_CODES | {"AIC605"}
    rules.next_change(issue, result, remembered)
    if record is not None:
        assert record.acquired.tzinfo is UTC
        taken = record.model_copy(update={"acquired": record.expires, "actor": "cc-y"})
        evidence = Evidence(lease=taken, previous=record, leases_read=True)
        judge(6, parse(SEED_BLOCK), evidence, now=NOW, config=StaleConfig(), actors=ACTORS)
    head = {"version": "2.0", "created": at, "updated": at}
    for read in (
        lambda: parse_input(json.dumps([{"title": "x", "status": "pending", "created": at}])),
        lambda: loads(json.dumps({"metadata": head, "tasks": [TASK]})),
    ):
        try:
            read()
        except SessionError as exc:
            assert "out of range in UTC" in str(exc) or "needs a timezone" in str(exc)


@settings(max_examples=50, deadline=None)
@given(stamp=stamps, zone=st.booleans())
def test_an_issue_file_s_time_anywhere_in_the_calendar_is_read_or_refused(
    stamp: datetime, zone: bool
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "1.md"
        path.write_text(f'---\nnumber: 1\nupdated_at: "{_stored(stamp, zone)}"\n---\nbody\n')
        try:
            assert issue_from_file(path).updated_at is not None
        except StoreError as exc:
            assert "updated_at: out of range in UTC" in str(exc)


def test_a_lease_taken_at_the_calendar_s_end_is_judged() -> None:
    end = datetime.max.replace(tzinfo=UTC)
    before = LeaseRecord(issue=6, actor="cc-b", acquired=NOW, expires=end)
    taken = LeaseRecord(issue=6, actor="cc-ariel-laptop", acquired=end, expires=end)
    evidence = Evidence(lease=taken, previous=before, leases_read=True)
    verdict = judge(6, parse(SEED_BLOCK), evidence, now=NOW, config=StaleConfig(), actors=ACTORS)
    assert "AIC604" not in verdict.codes  # taken when cc-b's lease ended: no overlap


FORGED = {
    # A lease ref whose record was taken an hour before the calendar starts, in UTC.
    "lease": "0001-01-01T00:00:00+01:00",
    # Task #2's sticky comment edited by a person: a remembered commit time without an offset.
    "sticky": "2026-05-27T08:00:00",
}


@pytest.mark.parametrize("where", sorted(FORGED))
def test_a_scheduled_run_goes_on_past_a_forged_time_in_a_lease_or_sticky_comment(
    tmp_path: Path, github_fake: GitHubFake, where: str
) -> None:
    gh = github_fake
    gh.add_repo("o/r")
    gh.add_issue("o/r", "good", SEED_BLOCK, number=1)
    gh.add_issue("o/r", "forged", SEED_BLOCK, number=2)
    if where == "lease":
        record = {**_lease(FORGED[where]), "issue": 2, "expires": "2026-05-27T00:00:00Z"}
        gh.set_ref("o/r", "refs/ai-context/leases/2", gh.create_commit("o/r", json.dumps(record)))
    else:
        commit = {"sha": "b" * 40, "author_login": "bob", "timestamp": FORGED[where], "issues": [2]}
        state = hide({STATE_KEY: {"commits": [commit]}})
        gh.add_comment("o/r", 2, f"{MARKER}\nfindings\n{state}", user="github-actions[bot]")
    run = scheduled(
        gh, tmp_path, jobs="check,stale", env={"AI_CONTEXT_NOW": "2026-06-30T09:00:00Z"}
    )
    assert run.code == 0, run.stdout + run.stderr
    assert "internal error" not in run.stdout + run.stderr
    assert len(gh.comments("o/r", 1)) == 1


def test_a_session_or_issue_file_time_past_the_calendar_s_edge_is_bad_input(
    tmp_path: Path,
) -> None:
    (tmp_path / "in.json").write_text(
        json.dumps([{"title": "x", "status": "pending", "created": EDGE}])
    )
    session = {"metadata": {"version": "2.0", "created": EDGE, "updated": GOOD}, "tasks": [TASK]}
    (tmp_path / "sp.json").write_text(json.dumps(session))
    (tmp_path / "issues").mkdir()
    (tmp_path / "issues" / "1.md").write_text(f'---\nnumber: 1\nupdated_at: "{EDGE}"\n---\nbody\n')
    for argv in (
        ["session", "save", "--file", "new.json", "--from", "in.json", "--now", GOOD],
        ["session", "load", "--file", "sp.json", "--now", GOOD],
        ["digest", "--issues-dir", "issues", "--repository", "o/r", "--now", GOOD],
    ):
        done = run_process(argv, cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert f"out of range in UTC ({EDGE})" in done.stderr
        assert "internal error" not in done.stderr
