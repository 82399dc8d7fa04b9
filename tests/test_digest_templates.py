"""Golden files for every template, hostile text in every field, and the size limits.

Regenerate the golden files after an intended change, then review the diff:

    UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_digest_templates.py
"""

from __future__ import annotations

import json
import os
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from ai_context.adapters.templates import Templates
from ai_context.core.models import Issue
from ai_context.rules.digest.build import build_digest, summarize_task
from ai_context.rules.digest.json import digest_json
from ai_context.rules.digest.model import (
    CATEGORY_TITLES,
    Digest,
    DigestState,
    StateRead,
    TaskState,
)
from ai_context.rules.digest.plate import actors, plate
from ai_context.rules.digest.render import (
    GITHUB_COMMENT_LIMIT,
    render_markdown,
    render_status,
    render_task,
)
from ai_context.rules.digest.slack import SLACK_BLOCKS_LIMIT, SLACK_SECTION_LIMIT, slack_messages
from ai_context.rules.digest.state import find_state
from ai_context.rules.templating import render
from tests.conftest import BUNDLED
from tests.digest_samples import NOW, SHOP, block, issue, sample_issues, sample_previous, stamp

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} is missing: run UPDATE_GOLDEN=1 pytest {__file__}"
    assert text == path.read_text(encoding="utf-8"), (
        f"{name} differs from its golden file; if the change is intended, regenerate with "
        "UPDATE_GOLDEN=1 and review the diff"
    )


@pytest.fixture(scope="module")
def digest() -> Digest:
    return build_digest(sample_issues(), NOW, previous=sample_previous())


def test_golden_digest_markdown(digest: Digest) -> None:
    check_golden("digest.md", render_markdown(digest, BUNDLED))


def test_golden_first_digest_markdown() -> None:
    check_golden(
        "digest-first.md", render_markdown(build_digest(sample_issues()[:4], NOW), BUNDLED)
    )


def test_golden_digest_slack(digest: Digest) -> None:
    check_golden(
        "digest.slack.json",
        json.dumps(slack_messages(digest, BUNDLED), indent=2, ensure_ascii=False) + "\n",
    )


def test_golden_digest_json(digest: Digest) -> None:
    check_golden(
        "digest.json", json.dumps(digest_json(digest), indent=2, ensure_ascii=False) + "\n"
    )


def test_golden_task_summaries() -> None:
    issues = {i.number: i for i in sample_issues()}
    check_golden("task-5.md", render_task(summarize_task(issues[5], NOW), BUNDLED))
    check_golden("task-20.md", render_task(summarize_task(issues[20], NOW), BUNDLED))


def test_golden_status(digest: Digest) -> None:
    check_golden("status.md", render_status([plate(digest, a) for a in actors(digest)], BUNDLED))
    check_golden(
        "status-nobody.md",
        render_status([plate(digest, "nobody")], BUNDLED, known_actors=actors(digest)),
    )


def test_the_markdown_digest_carries_its_state_on_a_line_of_its_own(digest: Digest) -> None:
    text = render_markdown(digest, BUNDLED)
    lines = text.rstrip("\n").split("\n")
    assert lines[-1].startswith("[//]: # (ai-context-digest:v2:")
    assert lines[-2] == ""  # a definition cannot interrupt a paragraph or a table
    assert find_state(text).state == digest.state


# --- hostile text ------------------------------------------------------------------------------

HOSTILE = (
    "x|y <!channel> <!here> <@U123> @here @channel @everyone @octocat "
    "{{ 7*7 }} {% raw %} {# c #} <script>alert(1)</script> <img src=x onerror=alert(1)> "
    "[click](javascript:alert(1)) ![i](http://e.test/i.png) &amp; &#64; `code` **b** \\ "
    '"quoted" ```fence\n# heading\n---\n| a | b |\n'
)
HOSTILE_ACTOR = "<!channel>|@here{{7*7}}<script>"  # one word: an actor id has no spaces
# What must never reach a reader as written. In Slack a plain @name pings nobody (only <@U123>
# does, and link_names is never set), so Slack keeps it; GitHub would notify @octocat.
SLACK_DANGERS = (
    "<!channel>",
    "<!here>",
    "<@U123>",
    "<script",
    "<img",
    "@here",
    "@channel",
    "@everyone",
    "49",
)
MD_DANGERS = (*SLACK_DANGERS, "@octocat")
LIVE_JS_LINK = re.compile(r"(?<!\\)\]\(javascript")


def hostile_issue(number: int, **fields: Any) -> Issue:
    body = block(
        actor=HOSTILE_ACTOR,
        phase=HOSTILE.replace("\n", " ") + " review",
        plan=(
            HOSTILE.replace("\n", " ") + " (done)",
            HOSTILE.replace("\n", " ") + " (in progress)",
        ),
        blockers=(HOSTILE.replace("\n", " "),),
        next_step=HOSTILE.replace("\n", " "),
        files=HOSTILE.replace("\n", " "),
    )
    return issue(
        number,
        HOSTILE,
        body,
        repo="acme/<!channel>|@here",
        html_url="javascript:alert(1)//<!channel>|",
        **fields,
    )


def hostile_digest() -> Digest:
    issues = [
        hostile_issue(1),
        hostile_issue(2, state="closed", closed_at=stamp(1)),
        issue(
            3,
            HOSTILE,
            block(phase=HOSTILE.replace("\n", " ") + " review"),
            html_url="https://x.test/3?a=<!here>|",
        ),
        hostile_digest_issue_long(),
        issue(5, HOSTILE, block(actor=HOSTILE_ACTOR, next_step=HOSTILE), html_url=HOSTILE),
    ]
    previous = StateRead(
        status="restored",
        state=DigestState(
            tasks={("acme/<!channel>|@here", 1): TaskState(category="shipped", done=0)}
        ),
        detail="compared",
    )
    return build_digest(issues, NOW, previous=previous)


def _assert_no_raw_danger(text: str, dangers: tuple[str, ...] = MD_DANGERS) -> None:
    for danger in dangers:
        assert danger not in text, danger


def test_hostile_text_is_harmless_in_markdown() -> None:
    digest = hostile_digest()
    assert digest.changes and all(digest.entries.values())  # every section and change is shown
    text = render_markdown(digest, BUNDLED)
    _assert_no_raw_danger(text)
    assert not LIVE_JS_LINK.search(text)
    assert len(text) < GITHUB_COMMENT_LIMIT
    for line in text.split("\n"):
        if line.startswith("| "):
            cells = re.split(r"(?<!\\)\|", line.replace("\\\\", ""))
            assert len(cells) in (6, 7), line  # 4 or 5 columns, nothing split by a title
        assert not line.lstrip().startswith(("# heading", "---", "```fence", "| a |")), line


def test_hostile_text_is_harmless_in_slack() -> None:
    messages = slack_messages(hostile_digest(), BUNDLED)
    for message in messages:
        for block_ in message["blocks"]:
            text = block_.get("text", {}).get("text", "") or block_["elements"][0]["text"]
            _assert_no_raw_danger(text, SLACK_DANGERS)
            assert "javascript:" not in text
            # the only angle brackets left are our own <url|label> links
            for link in re.findall(r"<([^>]*)>", text):
                assert link.startswith("https://"), link
            assert len(text) <= SLACK_SECTION_LIMIT


def test_hostile_text_is_harmless_in_task_and_status() -> None:
    digest = hostile_digest()
    task = render_task(summarize_task(hostile_issue(1), NOW), BUNDLED)
    status = render_status([plate(digest, HOSTILE_ACTOR)], BUNDLED, known_actors=actors(digest))
    for text in (task, status):
        _assert_no_raw_danger(text)
        assert not LIVE_JS_LINK.search(text)
        for line in text.split("\n"):  # the hostile newlines opened no block of their own
            assert not line.lstrip().startswith(("# heading", "---", "```fence", "| a |")), line
    assert len(render_task(summarize_task(hostile_digest_issue_long(), NOW), BUNDLED)) < 10_000


def hostile_digest_issue_long() -> Issue:
    return issue(4, "x" * 65_536, block(next_step="y" * 65_536, blockers=("z" * 65_536,)))


def test_every_template_escapes_every_string_field() -> None:
    """Render each template with the hostile text in every string field the models have."""
    digest = hostile_digest()
    outputs = {
        "digest.md.j2": render_markdown(digest, BUNDLED),
        "digest.slack.j2": json.dumps(slack_messages(digest, BUNDLED), ensure_ascii=False),
        "task.md.j2": render_task(summarize_task(hostile_issue(1), NOW), BUNDLED),
        "status.md.j2": render_status([plate(digest, HOSTILE_ACTOR)], BUNDLED),
    }
    # Plain-text templates (mirror.txt.j2, the ClickUp field) escape nothing by design; their
    # hostile-text test is in test_mirror.py.
    # (templates/ also ships setup's plain files, e.g. claude/: not Jinja templates.)
    markup = {t for t in BUNDLED.list_templates() if t.endswith(".j2")}
    markup -= {t for t in markup if t.endswith(".txt.j2")}
    assert set(outputs) == markup  # a new template needs a case
    for name, text in outputs.items():
        assert HOSTILE_ACTOR not in text, name
        _assert_no_raw_danger(text, SLACK_DANGERS if "slack" in name else MD_DANGERS)
        assert not LIVE_JS_LINK.search(text)


# --- size limits --------------------------------------------------------------------------------


def many_tasks(
    count: int, title: str = "A task with a reasonably long title for the digest"
) -> list[Issue]:
    phases = ["implementing", "in review", "blocked", "testing"]
    return [
        issue(
            n,
            f"{title} {n}",
            block(
                actor=f"agent-{n % 7}",
                phase=phases[n % 4],
                hours_ago=n % 30,
                blockers=("wait",) if n % 9 == 0 else (),
            ),
        )
        for n in range(1, count + 1)
    ]


def test_the_slack_payload_obeys_the_block_kit_limits_for_500_tasks() -> None:
    digest = build_digest(many_tasks(500, title="<!channel> " + "t" * 300), NOW)
    messages = slack_messages(digest, BUNDLED)
    assert len(messages) > 1
    seen = 0
    for message in messages:
        assert len(message["blocks"]) <= SLACK_BLOCKS_LIMIT
        assert message["text"]
        for block_ in message["blocks"]:
            if block_["type"] == "section":
                assert len(block_["text"]["text"]) <= SLACK_SECTION_LIMIT
                seen += block_["text"]["text"].count("\n• ") + block_["text"]["text"].startswith(
                    "• "
                )
        json.dumps(message)
    assert seen == 500  # every task is in some message
    assert "part 2 of" in messages[1]["blocks"][0]["elements"][0]["text"]


def test_a_digest_too_big_for_one_comment_shows_fewer_rows_and_keeps_the_whole_state() -> None:
    digest = build_digest(many_tasks(1000), NOW)
    text = render_markdown(digest, BUNDLED)
    assert len(text) <= GITHUB_COMMENT_LIMIT
    assert "more not shown" in text
    assert len(find_state(text).state.tasks) == 1000


def test_an_empty_digest_renders() -> None:
    digest = build_digest([], NOW)
    assert "mermaid" not in render_markdown(digest, BUNDLED)
    assert len(slack_messages(digest, BUNDLED)) == 1


def test_a_user_template_without_a_macro_is_a_clear_error(tmp_path: Path) -> None:
    from jinja2 import TemplateRuntimeError

    (tmp_path / "digest.slack.j2").write_text(
        "{% macro title(d) %}x{% endmacro %}", encoding="utf-8"
    )
    with pytest.raises(TemplateRuntimeError, match="no macro 'fallback'"):
        slack_messages(build_digest([], NOW), Templates(tmp_path).env)


def test_window_shows_in_the_header() -> None:
    digest = build_digest([], NOW, config=None)
    assert "shipped within 1d" in render_markdown(digest, BUNDLED)
    assert digest.window == timedelta(hours=24) and SHOP


@pytest.mark.parametrize("max_chars", [10_000, 20_000, 40_000])
def test_the_row_limit_is_close_to_the_most_that_fits(max_chars: int) -> None:
    from ai_context.rules.digest.render import digest_vars

    digest = build_digest(many_tasks(300), NOW)
    text = render_markdown(digest, BUNDLED, max_chars=max_chars)
    assert len(text) <= max_chars
    rows = re.compile(r"^\| (?!Why \||Task \||---)", re.M)
    limit = max(len(rows.findall(part)) for part in text.split("\n### ")[1:])
    assert 0 < limit < 300 and "more not shown" in text
    # within a factor of two of the best: twice the rows per category would not have fitted
    doubled = render(BUNDLED, "digest.md.j2", **digest_vars(digest, limit * 2))
    assert len(doubled) > max_chars


def test_a_limit_below_the_skeleton_keeps_the_skeleton_and_the_state() -> None:
    digest = build_digest(many_tasks(50), NOW)
    text = render_markdown(digest, BUNDLED, max_chars=100)
    assert "| [" not in text and len(find_state(text).state.tasks) == 50


ROW = re.compile(r"^\| .*?\[\\#(\d+)\]", re.M)  # a row's task link, `[\#12](...)`


@pytest.mark.parametrize("changed", [False, True])
def test_a_digest_of_10000_tasks_posts_and_shows_rows_up_to_its_cuts(changed: bool) -> None:
    """A comment of 10,000 tasks stays under GitHub's limit with a day's marker and Slack line,
    remembers every task, and shows each category's first rows, then how many it left out;
    CHANGED: every task is new since the previous digest, a change list of 10,000."""
    from ai_context.jobs.digest.delivery import Delivery
    from ai_context.jobs.digest.job import COMMENT_LIMIT

    issues = many_tasks(10_000)
    day_before = NOW - timedelta(days=1)
    before = DigestState(generated_at=day_before)
    if not changed:
        before = build_digest(issues, NOW).state.model_copy(update={"generated_at": day_before})
    digest = build_digest(issues, NOW, previous=StateRead(status="restored", state=before))
    assert len(digest.changes) == (10_000 if changed else 0)
    comment = render_markdown(digest, BUNDLED, max_chars=COMMENT_LIMIT, full_url="https://x/1")
    slack = "[//]: # (ai-context-digest-slack:0123456789ab)"
    body = Delivery(digest, comment, comment, slack_mark=slack).body("2026-05-27")
    assert len(body) <= GITHUB_COMMENT_LIMIT
    assert len(find_state(body).state.tasks) == 10_000
    visible = body.split("\n[//]: #", 1)[0]
    assert len(visible) > COMMENT_LIMIT / 2  # the room the state leaves is used, not lost
    shown_changes = visible.split("### Since the last digest", 1)[1].split("\n### ", 1)[0]
    if changed:
        listed = shown_changes.count("\n- ")
        assert 0 < listed < 10_000
        assert f"…and {10_000 - listed} more changes not shown here: [the full list]" in visible
    for part in visible.split("\n### ")[2:]:  # each category: its first rows, then the rest
        title = part.split(" (", 1)[0].split(" ", 1)[1]
        entries = digest.entries[{t: k for k, t in CATEGORY_TITLES.items()}[title]]
        rows = [int(n) for n in ROW.findall(part)]
        assert rows == [e.number for e in entries[: len(rows)]]
        if len(rows) < len(entries):
            assert f"…and {len(entries) - len(rows)} more not shown here" in part
    assert len(ROW.findall(visible)) > 100
