"""The event layer: each payload read once into a typed event; an unreadable one is exit 2,
naming the field, never a traceback, never "bad configuration", and nothing is written."""

from __future__ import annotations

import copy
import io
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ai_context.action.run import run_action as run_in_process
from ai_context.core.errors import EventError
from ai_context.core.events import (
    IssuesEvent,
    OtherEvent,
    PushEvent,
    ScanEvent,
    parse_event,
    read_payload,
)
from tests.actionrun import run_action
from tests.fakes import GitHubFake

SAMPLES = Path(__file__).resolve().parent / "samples" / "github"
T0 = datetime(2026, 5, 26, 15, 0, tzinfo=UTC)
TOKEN = "ghs_eventsSecretToken0123456789abcdefABCDEF"


def sample(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SAMPLES / name).read_text(encoding="utf-8"))
    return data


def edited(**changes: Any) -> dict[str, Any]:
    payload = copy.deepcopy(sample("issues/edited.payload.json"))
    for key, value in changes.items():
        if key.startswith("issue_"):
            payload["issue"][key[len("issue_") :]] = value
        else:
            payload[key] = value
    return payload


def test_every_sample_payload_reads() -> None:
    for name in ("edited", "labeled", "opened", "opened.with-empty-body"):
        event = parse_event("issues", sample(f"issues/{name}.payload.json"), "o/r")
        assert isinstance(event, IssuesEvent) and event.issue is not None
        assert event.issue.number > 0 and event.sender
    for name in ("payload", "with-new-branch.payload"):
        push = parse_event("push", sample(f"push/{name}.json"))
        assert isinstance(push, PushEvent)
    push = parse_event("push", sample("push/with-new-branch.payload.json"))
    assert isinstance(push, PushEvent)
    (commit,) = push.commits
    assert commit.author_login and commit.author_email and commit.timestamp.tzinfo is UTC
    assert parse_event("schedule", {}) == ScanEvent("schedule")
    assert parse_event("issue_comment", {"x": 1}) == OtherEvent("issue_comment")


def test_a_push_commit_id_is_normalised_as_it_is_read() -> None:
    at = "2026-05-27T08:00:00Z"
    long = {"id": f" {'AB' * 40} ", "timestamp": at}
    event = parse_event("push", {"commits": [long, {"id": "", "timestamp": at}]})
    assert isinstance(event, PushEvent)
    assert [c.sha for c in event.commits] == ["ab" * 32, ""]
    with pytest.raises(EventError, match=r"commits\.0\.id: Input should be a valid string"):
        parse_event("push", {"commits": [{"id": "\ud800", "timestamp": at}]})


def test_an_edit_says_what_changed() -> None:
    event = parse_event("issues", edited(changes={"body": {"from": "old"}, "title": {"from": "t"}}))
    assert isinstance(event, IssuesEvent)
    assert event.body_changed and event.body_before == "old" and event.title_changed
    quiet = parse_event("issues", edited(changes={}))
    assert isinstance(quiet, IssuesEvent) and not quiet.body_changed


BAD: list[tuple[dict[str, Any], str]] = [
    ({k: v for k, v in edited().items() if k != "issue"}, "issue: Field required"),
    (edited(issue={"title": "no number"}), "issue.number: Field required"),
    (edited(issue_number=-4), "issue.number: Input should be greater than 0"),
    (edited(issue_number="7"), "issue.number: Input should be a valid integer"),
    (edited(issue_number=True), "issue.number"),
    (edited(issue_title=["x"]), "issue.title: Input should be a valid string"),
    (edited(issue_body=5), "issue.body"),
    (edited(issue_state="gone"), "issue.state"),
    (edited(issue_updated_at="yesterday"), "issue.updated_at: Input should be a valid datetime"),
    (edited(issue_closed_at="0001-01-01T00:00:00+01:00"), "issue.closed_at: out of range"),
    (edited(issue_labels=[None, 5, {}]), "issue.labels.0: Input should be a valid dictionary"),
    (edited(issue_labels="bug"), "issue.labels: Input should be a valid list"),
    (edited(issue_assignees=[3]), "issue.assignees.0"),
    (edited(issue_user="octocat"), "issue.user: Input should be a valid dictionary"),
    (edited(issue_comments="3"), "issue.comments"),
    (edited(sender="octocat"), "sender: Input should be a valid dictionary"),
    (edited(changes="body"), "changes: Input should be a valid dictionary"),
    (edited(changes={"body": "x"}), "changes.body: Input should be a valid dictionary"),
    (edited(changes={"body": {"from": 5}}), "changes.body.from"),
    (edited(action=5), "action: Input should be a valid string"),
    (edited(action="labeled", label=[1]), "label: Input should be a valid dictionary"),
]


@pytest.mark.parametrize(("payload", "says"), BAD, ids=[s for _, s in BAD])
def test_an_unreadable_issues_payload_names_the_field(payload: dict[str, Any], says: str) -> None:
    with pytest.raises(EventError) as caught:
        parse_event("issues", payload, "o/r")
    assert str(caught.value).startswith("cannot read the event payload: ")
    assert says in str(caught.value)
    assert caught.value.exit_code == 2 and caught.value.title == "bad event payload"


def test_a_negative_comment_count_is_an_unknown_count() -> None:
    # Schema-valid (an integer); only a hint, so the comments are listed instead.
    event = parse_event("issues", edited(issue_comments=-1), "o/r")
    assert isinstance(event, IssuesEvent) and event.issue is not None
    assert event.issue.comments is None


def test_actions_we_do_not_act_on_are_not_read() -> None:
    event = parse_event("issues", {"action": "deleted", "issue": "gone"})
    assert isinstance(event, IssuesEvent) and event.issue is None


@pytest.mark.parametrize(
    "raw", [b"", b"not json", b"[1, 2]", b"\xff\xfe", b"[" * 100_000 + b"]" * 100_000]
)
def test_a_payload_file_that_is_not_a_json_object(raw: bytes) -> None:
    with pytest.raises(EventError, match=r"cannot read the event payload: event\.json"):
        read_payload(raw, "event.json")


@pytest.fixture
def gh() -> Iterator[GitHubFake]:
    with GitHubFake(token=TOKEN, now=T0) as fake:
        fake.add_repo("o/r")
        fake.add_issue("o/r", "A task", "## AI Context\n\n- **Phase:** planning\n", number=7)
        yield fake


@pytest.mark.parametrize(
    ("event", "payload", "says"),
    [
        ("issues", edited(issue_number=-4), "issue.number"),
        ("issues", edited(sender="octocat"), "sender"),
        ("push", {"commits": [{"id": "abc", "timestamp": "yesterday"}]}, "commits.0.timestamp"),
        ("push", {"ref": "refs/heads/main"}, "commits: Field required"),
        (
            "push",
            {"commits": [{"id": "\ud800", "timestamp": "2026-05-27T08:00:00Z"}]},
            "commits.0.id",
        ),
    ],
)
def test_the_action_exits_2_on_an_unreadable_payload_and_writes_nothing(
    gh: GitHubFake, tmp_path: Path, event: str, payload: dict[str, Any], says: str
) -> None:
    result = run_action(tmp_path, gh.url, event, payload, token=TOKEN)
    assert result.code == 2, result.text
    assert "Traceback" not in result.text and "bad configuration" not in result.text
    assert f"cannot read the event payload: {says}" in result.text
    assert "title=ai-context%3A bad event payload" in result.stdout
    assert all(r.method == "GET" for r in gh.requests)


def test_the_action_exits_2_when_the_event_file_is_not_json(gh: GitHubFake, tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    result = run_action(
        tmp_path / "run",
        gh.url,
        "issues",
        {},
        token=TOKEN,
        extra_env={"GITHUB_EVENT_PATH": str(broken)},
    )
    assert result.code == 2, result.text
    assert f"cannot read the event payload: {broken}: not JSON" in result.text
    assert "Traceback" not in result.text and gh.requests == []


@pytest.mark.parametrize(("payload", "says"), BAD, ids=[s for _, s in BAD])
def test_the_action_in_process_exits_2_with_the_field_first_and_writes_nothing(
    gh: GitHubFake, tmp_path: Path, payload: dict[str, Any], says: str
) -> None:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    env = {
        "GITHUB_EVENT_NAME": "issues",
        "GITHUB_EVENT_PATH": str(path),
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_API_URL": gh.url,
        "GITHUB_WORKSPACE": str(tmp_path),
        "INPUT_GITHUB-TOKEN": TOKEN,
        "INPUT_WRITE-INTERVAL": "0",
    }
    log = io.StringIO()
    assert run_in_process(env, log) == 2, log.getvalue()
    first = next(line for line in log.getvalue().splitlines() if line.startswith("::error"))
    assert first.startswith("::error title=ai-context%3A bad event payload::")
    assert first.split("::", 2)[2].startswith(f"cannot read the event payload: {says}")
    assert all(r.method == "GET" for r in gh.requests)
