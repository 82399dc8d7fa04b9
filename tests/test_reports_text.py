"""The terminal format: plain text, colour only on a TTY without NO_COLOR."""

from __future__ import annotations

import io

import pytest

from ai_context.cli.report_source import colour_for
from ai_context.rules.digest.build import build_digest, summarize_task
from ai_context.rules.digest.plate import actors, plate
from ai_context.rules.digest.text import digest_text, status_text, task_text
from tests.digest_samples import NOW, block, issue, sample_issues, sample_previous


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_and_never_with_no_color(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert colour_for(Tty()) and not colour_for(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not colour_for(Tty())


def test_the_text_digest_escapes_nothing_and_colours_on_request() -> None:
    items = [*sample_issues(), issue(30, "Fix | pipes `code` # not a heading", block())]
    digest = build_digest(items, NOW, previous=sample_previous())
    plain = digest_text(digest)
    assert "acme/shop#30 Fix | pipes `code` # not a heading" in plain
    assert "\\" not in plain and "\x1b[" not in plain
    assert plain.index("Stuck (") < plain.index("Shipped (")
    assert "3 stuck (+1)" in plain
    coloured = digest_text(digest, colour=True)
    assert "\x1b[31m" in coloured and "\x1b[0m" in coloured


def test_control_characters_cannot_reach_the_terminal() -> None:
    digest = build_digest([issue(1, "evil \x1b[2J title\nsecond line", block())], NOW)
    text = digest_text(digest)
    assert "\x1b" not in text and "evil [2J title second line" in text


def test_task_and_status_text() -> None:
    task = task_text(summarize_task(sample_issues()[4], NOW))
    assert task.startswith("acme/shop#5 SSO login\n") and "Stuck" in task
    digest = build_digest(sample_issues(), NOW)
    status = status_text([plate(digest, a) for a in actors(digest)])
    assert "cc-dana-desktop: 3 tasks" in status
