"""Webhook payloads from GitHub's own JSON schemas, and type mutations of them, fed to the Action.

The schemas are vendored from npm `@octokit/webhooks-schemas` (tests/samples/README.md). Every
schema-valid `issues` (the actions ai-context handles) and `push` payload is accepted (exit 0
or 1); every mutated one is exit 0, 1 or 2; never a traceback (exit 3), never a write (dry run,
against the loopback GitHub).

Generating whole payloads from the full schemas takes about a second each (the repository
object alone has some ninety fields), so the fields ai-context never reads are pinned to the
values of a recorded, schema-valid sample (`const`) and hypothesis explores the rest; each
generated payload is then validated against the full schema, so the inputs stay schema-valid.
One narrowing: GitHub numbers issues from 1, which the schema does not say (`minimum: 1` is
added; -4 is a bad payload, exit 2, tested below with the mutations).
"""

from __future__ import annotations

import copy
import functools
import io
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from ai_context.action.run import run_action as run_in_process
from tests.actionrun import run_action as run_as_process
from tests.conftest import SEED_BLOCK
from tests.fakes import GitHubFake

SAMPLES = Path(__file__).resolve().parent / "samples"
T0 = datetime(2026, 5, 26, 15, 0, tzinfo=UTC)
TOKEN = "ghs_propsSecretToken0123456789abcdefABCDEF"
ACTIONS = ("opened", "edited", "reopened", "labeled", "unlabeled")
SAMPLE_OF = {
    "opened": "issues/opened.payload.json",
    "edited": "issues/edited.payload.json",
    "reopened": "issues/opened.payload.json",
    "labeled": "issues/labeled.payload.json",
    "unlabeled": "issues/labeled.payload.json",
}
# What ai-context reads of each payload; everything else is pinned to the sample's value.
READ_EVENT = {"action", "issue", "sender", "label", "changes"}
READ_ISSUE = {
    "number", "title", "body", "state", "state_reason", "labels", "assignees", "user",
    "comments", "updated_at", "closed_at", "html_url", "pull_request",
}  # fmt: skip
READ_PUSH = {"commits", "head_commit", "sender", "ref", "before", "after"}
# No shrinking: a failing example is printed whole, and a shrink of these payloads can take
# minutes; the run time stays bounded.
SETTINGS = settings(
    max_examples=20,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
    phases=[Phase.explicit, Phase.generate],
)


def schema(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (SAMPLES / "schemas" / f"{name}.schema.json").read_text(encoding="utf-8")
    )
    return data


def sample(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SAMPLES / "github" / name).read_text(encoding="utf-8"))
    return data


def pinned(definition: dict[str, Any], values: dict[str, Any], read: set[str]) -> dict[str, Any]:
    """DEFINITION with every property not in READ fixed to VALUES (or left out if absent)."""
    out = copy.deepcopy(definition)
    props = out.setdefault("properties", {})
    for key in list(props):
        if key in read:
            continue
        if key in values:
            props[key] = {"const": values[key]}
        elif key not in out.get("required", ()):
            del props[key]
    return out


@functools.cache
def issues_schema(action: str) -> dict[str, Any]:
    full = schema("issues")
    defs = copy.deepcopy(full["definitions"])
    base = sample(SAMPLE_OF[action])
    defs["issue"] = pinned(defs["issue"], base["issue"], READ_ISSUE)
    defs["issue"]["properties"]["number"] = {"type": "integer", "minimum": 1, "maximum": 10**6}
    defs["user"] = pinned(defs["user"], base["sender"], {"login", "type", "email", "name"})
    label = sample("issues/labeled.payload.json")["label"]
    defs["label"] = pinned(defs["label"], label, {"name", "description"})
    event = pinned(defs[f"issues${action}"], base, READ_EVENT)
    if action == "opened":  # a transfer's old issue and repository: not read, and slow
        event["properties"].pop("changes", None)
    return {"definitions": defs, **event}


@functools.cache
def push_schema() -> dict[str, Any]:
    full = schema("push")
    defs = copy.deepcopy(full["definitions"])
    base = sample("push/payload.json")
    defs["user"] = pinned(defs["user"], base["sender"], {"login", "type", "email", "name"})
    event = pinned(defs["push$event"], base, READ_PUSH)
    event["properties"]["commits"]["maxItems"] = 4
    return {"definitions": defs, **event}


@functools.cache
def validator(name: str) -> jsonschema.Draft7Validator:
    return jsonschema.Draft7Validator(schema(name))


@functools.cache
def strategy(action: str) -> st.SearchStrategy[dict[str, Any]]:
    """Built once per action: resolving the schema's references is the slow part."""
    return from_schema(push_schema() if action == "push" else issues_schema(action))


@st.composite
def issues_payloads(draw: st.DrawFn) -> dict[str, Any]:
    action = draw(st.sampled_from(ACTIONS))
    payload: dict[str, Any] = draw(strategy(action))
    if draw(st.booleans()):  # a task, so the check job has a block to read
        payload["issue"]["body"] = SEED_BLOCK
    return payload


@st.composite
def push_payloads(draw: st.DrawFn) -> dict[str, Any]:
    payload: dict[str, Any] = draw(strategy("push"))
    for commit in payload["commits"]:
        if draw(st.booleans()):  # name the task, so the push is routed to it
            commit["message"] += "\n\nRefs #7"
    return payload


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.sampled_from(["", "yesterday", "x", "-4"]),
    st.text(st.characters(codec=None, exclude_categories=()), max_size=4),  # lone surrogates too
    st.just([None, 5, {}]),
    st.just({}),
    st.just([]),
)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to a value inside VALUE (objects and lists)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*prefix, key)
            yield from paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield (*prefix, index)
            yield from paths(item, (*prefix, index))


@st.composite
def mutated(draw: st.DrawFn, payloads: st.SearchStrategy[dict[str, Any]]) -> dict[str, Any]:
    """A payload with one value (favouring the ones ai-context reads) of another type, or any
    text in place of a text."""
    payload = copy.deepcopy(draw(payloads))
    every = list(paths(payload))
    read = [p for p in every if p[0] in READ_EVENT | READ_PUSH]
    path = draw(st.sampled_from(read if read and draw(st.booleans()) else every))
    *parents, last = path
    target = payload
    for key in parents:
        target = target[key]
    target[last] = draw(
        SCALARS.filter(lambda v: isinstance(v, str) or type(v) is not type(target[last]))
    )
    return payload


@pytest.fixture(scope="module")
def gh() -> Iterator[GitHubFake]:
    with GitHubFake(token=TOKEN, now=T0) as fake:
        fake.add_repo("o/r")
        fake.add_issue("o/r", "A task", SEED_BLOCK, number=7)
        yield fake


def act(gh: GitHubFake, tmp: Path, event: str, payload: dict[str, Any]) -> tuple[int, str]:
    """One dry run of the Action, in process: its exit code and log. Asserts it wrote nothing."""
    if event == "issues" and isinstance(payload.get("issue"), dict):
        number = payload["issue"].get("number")
        if type(number) is int and number > 0 and number not in gh.repos["o/r"].issues:
            gh.add_issue("o/r", "Generated", "", number=number)
    path = tmp / "event.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    env = {
        "GITHUB_EVENT_NAME": event,
        "GITHUB_EVENT_PATH": str(path),
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_API_URL": gh.url,
        "GITHUB_WORKSPACE": str(tmp),
        "INPUT_GITHUB-TOKEN": TOKEN,
        "INPUT_DRY-RUN": "true",
        "INPUT_WRITE-INTERVAL": "0",
        "AI_CONTEXT_NOW": "2026-05-26T15:00:00Z",
    }
    gh.reset_requests()
    log = io.StringIO()
    code = run_in_process(env, log)
    assert all(r.method == "GET" for r in gh.requests), [r.method for r in gh.requests]
    return code, log.getvalue()


@SETTINGS
@given(payload=issues_payloads())
def test_schema_valid_issues_payloads_are_accepted(
    gh: GitHubFake, tmp_path: Path, payload: dict[str, Any]
) -> None:
    validator("issues").validate(payload)
    code, log = act(gh, tmp_path, "issues", payload)
    assert code in (0, 1), log


@SETTINGS
@given(payload=push_payloads())
def test_schema_valid_push_payloads_are_accepted(
    gh: GitHubFake, tmp_path: Path, payload: dict[str, Any]
) -> None:
    validator("push").validate(payload)
    code, log = act(gh, tmp_path, "push", payload)
    assert code in (0, 1), log


@SETTINGS
@given(payload=mutated(issues_payloads()))
def test_mutated_issues_payloads_are_nothing_to_do_or_exit_2(
    gh: GitHubFake, tmp_path: Path, payload: dict[str, Any]
) -> None:
    code, log = act(gh, tmp_path, "issues", payload)
    assert code in (0, 1, 2), log


@SETTINGS
@given(payload=mutated(push_payloads()))
def test_mutated_push_payloads_are_nothing_to_do_or_exit_2(
    gh: GitHubFake, tmp_path: Path, payload: dict[str, Any]
) -> None:
    code, log = act(gh, tmp_path, "push", payload)
    assert code in (0, 1, 2), log


def edited(**issue: Any) -> dict[str, Any]:
    payload = sample("issues/edited.payload.json")
    payload["issue"].update(issue)
    return payload


@pytest.mark.parametrize(
    ("event", "payload", "code"),
    [
        ("issues", edited(number=7, body=SEED_BLOCK), 0),
        ("issues", edited(number=-4), 2),
        ("issues", edited(number=7, labels=[None, 5, {}]), 2),
        ("issues", {**edited(number=7), "changes": "body"}, 2),
        ("push", sample("push/payload.json"), 0),
        ("push", {**sample("push/payload.json"), "commits": "all of them"}, 2),
    ],
)
def test_as_a_process_no_traceback_and_no_write(
    gh: GitHubFake, tmp_path: Path, event: str, payload: dict[str, Any], code: int
) -> None:
    gh.reset_requests()
    result = run_as_process(
        tmp_path, gh.url, event, payload, token=TOKEN, inputs={"dry-run": "true"}
    )
    assert result.code == code, result.text
    assert "Traceback" not in result.text
    assert all(r.method == "GET" for r in gh.requests)
