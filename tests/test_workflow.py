"""Every line the runner reads is safe: whatever text reaches the log, an annotation or a group
title, one call writes one line, starts no command the caller did not ask for, and never
raises (a lone surrogate, a NUL, a stream that is not UTF-8)."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai_context.action.run import run_action
from ai_context.adapters.workflow import Workflow
from ai_context.core.markdown import strip_controls
from tests.conftest import SEED_BLOCK
from tests.fakes import GitHubFake

# Any code point, surrogates and controls included, with the runner's own syntax mixed in.
ANY_CHAR = st.characters(exclude_categories=())
TRICKY = st.sampled_from(["::", "\n", "\r", "\r\n", "%", "%0A", "##[", ",", ":", " ", "\ud800"])
TEXT = st.lists(st.one_of(ANY_CHAR, TRICKY), max_size=40).map("".join)
# The runner reads a line up to CR, LF or CRLF (.NET's ReadLine), trims its leading whitespace
# and takes `::name ...::message` or `##[name ...]message` as a command.
RUNNER_LINES = re.compile(r"\r\n|\r|\n")


def runner_lines(raw: bytes) -> list[str]:
    text = raw.decode("utf-8")  # strict: what was written is UTF-8
    assert text.endswith("\n")
    return RUNNER_LINES.split(text[:-1])


def is_command(line: str) -> bool:
    return line.lstrip().startswith(("::", "##["))


def unescape(value: str) -> str:
    # The runner's order: %0D, %0A, %3A, %2C, then %25 last.
    for code, char in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        value = value.replace(code, char)
    return value


def workflow(encoding: str = "utf-8") -> tuple[Workflow, io.BytesIO]:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding=encoding, errors="strict", newline="")
    return Workflow({}, stream, stream), raw


def written(wf: Workflow, raw: io.BytesIO) -> bytes:
    wf.stream.flush()
    return raw.getvalue()


@settings(max_examples=300, deadline=None)
@given(text=TEXT)
def test_a_log_line_is_one_line_and_never_a_command(text: str) -> None:
    wf, raw = workflow()
    wf.log(f"ai-context: nothing to do (issues.{text} needs no check)")
    wf.log(text)
    lines = runner_lines(written(wf, raw))
    assert len(lines) == 2
    assert not any(is_command(line) for line in lines)


@settings(max_examples=300, deadline=None)
@given(message=TEXT, title=TEXT)
def test_an_annotation_is_one_command_whose_fields_read_back(message: str, title: str) -> None:
    wf, raw = workflow()
    wf.annotate("warning", message, title=title, file="a,b:c")
    [line] = runner_lines(written(wf, raw))
    head, sep, body = line[2:].partition("::")
    assert line.startswith("::warning") and sep
    name, _, props = head.partition(" ")
    assert name == "warning"
    fields = dict(prop.split("=", 1) for prop in props.split(","))
    assert unescape(fields["file"]) == "a,b:c"
    assert unescape(fields.get("title", "")) == strip_controls(title)
    assert unescape(body) == strip_controls(message)


@settings(max_examples=100, deadline=None)
@given(text=TEXT)
def test_a_stream_that_is_not_utf8_gets_replacements_not_an_error(text: str) -> None:
    wf, raw = workflow("ascii")
    wf.log(text)
    wf.group(text)
    wf.trace(f"Traceback (most recent call last):\nValueError: {text}\n")
    lines = raw.getvalue().decode("ascii").splitlines()
    assert not any(is_command(line) for line in lines if not line.startswith("::group::"))


def test_the_runners_syntax_in_a_log_line_is_shown_defused() -> None:
    wf, raw = workflow()
    wf.log("::warning::injected")
    wf.log("  ##[error]injected")
    wf.log("x\n::stop-commands::abc\r\n::error::y")
    assert written(wf, raw).decode() == (
        "%3A:warning::injected\n  %23#[error]injected\nx%0A::stop-commands::abc%0A::error::y\n"
    )


# --- the Action: a payload's action and label reach the log ---------------------------------


@pytest.fixture
def gh() -> Iterator[GitHubFake]:
    with GitHubFake(token="t") as fake:
        fake.add_repo("o/r")
        fake.add_issue("o/r", "A task", SEED_BLOCK, number=7)
        yield fake


def act(gh: GitHubFake, tmp: Path, payload: dict[str, object]) -> tuple[int, str]:
    path = tmp / "event.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    env = {
        "GITHUB_EVENT_NAME": "issues",
        "GITHUB_EVENT_PATH": str(path),
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_API_URL": gh.url,
        "GITHUB_WORKSPACE": str(tmp),
        "INPUT_GITHUB-TOKEN": "t",
        "INPUT_DRY-RUN": "true",
    }
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="utf-8", errors="strict", newline="")
    code = run_action(env, stream)
    stream.flush()
    return code, raw.getvalue().decode("utf-8")


def test_a_forged_action_or_label_injects_no_command_and_raises_nothing(
    gh: GitHubFake, tmp_path: Path
) -> None:
    sender = {"login": "someone"}
    code, log = act(gh, tmp_path, {"action": "x\n::warning::injected\ud800", "sender": sender})
    assert code == 0 and "UnicodeEncodeError" not in log
    assert not [line for line in log.splitlines() if line.startswith("::warning")]
    issue = {"number": 7, "title": "A task", "body": SEED_BLOCK, "state": "open", "labels": []}
    label = {"name": "ai-context:x\n::warning::injected"}
    payload = {"action": "labeled", "sender": sender, "issue": issue, "label": label}
    code, log = act(gh, tmp_path, payload)
    assert code == 0, log
    assert "only our own label ai-context:x%0A::warning::injected changed" in log
    assert not [line for line in log.splitlines() if line.startswith("::warning")]
