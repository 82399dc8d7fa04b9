"""Lease records, the `lease:` section and the claim/renew/release decisions (pure)."""

from __future__ import annotations

import contextlib
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ai_context.core.errors import ConfigError
from ai_context.rules.lease import (
    DEFAULT_PREFIX,
    Lease,
    LeaseConfig,
    LeaseError,
    LeaseRecord,
    decide_claim,
    decide_renew,
    next_record,
    parse_lease_config,
    parse_record,
)

T0 = datetime(2026, 5, 26, 15, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


def lease(actor: str = "cc-a", expires: datetime = T0 + HOUR) -> Lease:
    record = LeaseRecord(issue=6, actor=actor, acquired=T0 - HOUR, expires=expires)
    return Lease(ref="refs/ai-context/leases/6", sha="a" * 40, record=record)


def test_record_round_trips_through_the_commit_message() -> None:
    record = LeaseRecord(issue=6, actor="cc-a", acquired=T0, expires=T0 + 2 * HOUR)
    message = record.message()
    assert json.loads(message) == {
        "issue": 6,
        "actor": "cc-a",
        "acquired": "2026-05-26T15:00:00Z",
        "expires": "2026-05-26T17:00:00Z",
    }
    assert parse_record(message) == record
    assert not record.expired(T0 + HOUR) and record.expired(T0 + 2 * HOUR)


@pytest.mark.parametrize(
    ("message", "needle"),
    [
        ("lease", "not JSON"),
        ("[1]", "not a JSON object"),
        (
            '{"issue": 6, "actor": "a", "acquired": "2026-05-26T15:00:00Z"}',
            "bad: expires: Field required",
        ),
        (
            '{"issue": 0, "actor": "", "acquired": "x", "expires": "y"}',
            "bad: issue: .*; actor: .*; acquired: ",
        ),
    ],
)
def test_bad_records_say_why(message: str, needle: str) -> None:
    with pytest.raises(LeaseError, match=needle):
        parse_record(message)


@given(st.text(max_size=200))
def test_any_message_is_a_record_or_a_lease_error(message: str) -> None:
    with contextlib.suppress(LeaseError):
        parse_record(message)


def test_claim_decisions() -> None:
    assert decide_claim(None, "cc-a", T0) == "create"
    assert decide_claim(lease("cc-a"), "CC-A", T0) == "extend"  # your own, again
    assert decide_claim(lease("cc-b"), "cc-a", T0) == "refuse"
    assert decide_claim(lease("cc-b", expires=T0), "cc-a", T0) == "take_over"  # at expiry
    assert decide_claim(lease("cc-b"), "cc-a", T0, same=lambda a, b: True) == "extend"


def test_renew_decisions() -> None:
    assert decide_renew(None, "cc-a") == "missing"
    assert decide_renew(lease("cc-a", expires=T0 - HOUR), "cc-a") == "extend"  # CAS decides
    assert decide_renew(lease("cc-b"), "cc-a") == "refuse"


def test_next_record_keeps_acquired_only_when_extending() -> None:
    current = lease("cc-a")
    extended = next_record(current, "extend", 6, "cc-a", ttl=2 * HOUR, now=T0)
    assert extended.acquired == current.record.acquired and extended.expires == T0 + 2 * HOUR
    taken = next_record(current, "take_over", 6, "cc-b", ttl=HOUR, now=T0)
    assert (taken.actor, taken.acquired, taken.expires) == ("cc-b", T0, T0 + HOUR)


def test_lease_config() -> None:
    assert parse_lease_config(None, "c.yml") == LeaseConfig()
    config = parse_lease_config({"prefix": "refs/agents/leases", "ttl": "90m"}, "c.yml")
    assert config.prefix == "refs/agents/leases/" and config.ttl == timedelta(minutes=90)
    assert config.ref(6) == "refs/agents/leases/6"
    assert config.issue_of("refs/agents/leases/6") == 6
    assert config.issue_of("refs/agents/leases/x") is None
    assert config.issue_of(DEFAULT_PREFIX + "6") is None


@pytest.mark.parametrize(
    ("section", "needle"),
    [
        ({"prefix": "refs/heads/leases/"}, "would make branches"),
        ({"prefix": "leases/"}, "is not a ref prefix"),
        ({"prefix": "refs/a b/"}, "is not a ref prefix"),
        ({"prefix": "refs/x/../y/"}, "is not a ref prefix"),
        ({"ttl": "forever"}, "ttl: cannot read duration 'forever'"),
        ({"tll": "2h"}, "tll: unknown key; use prefix or ttl"),
        ("2h", "lease: must be a mapping"),
    ],
)
def test_bad_lease_config_names_the_file(section: Any, needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_lease_config(section, "c.yml")
    assert str(info.value).startswith("c.yml: lease:") and needle in str(info.value)
