"""The mirror's pure core: the link, the text, the field, the config and the targets."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai_context.adapters.templates import Templates, user_templates
from ai_context.core.block.parse import parse
from ai_context.core.block.syntax import outside_fences
from ai_context.core.errors import ConfigError
from ai_context.core.models import Issue
from ai_context.core.phases import current_step
from ai_context.rules.actors import parse_actors
from ai_context.rules.mirror.clickup import CustomField, resolve_field
from ai_context.rules.mirror.link import Link, find_link, mirrored_from, trusted
from ai_context.rules.mirror.targets import MirrorConfig, load_mirror_config, targets
from ai_context.rules.mirror.text import clean, fit, mirror_data, mirror_text, same_value
from tests.conftest import BUNDLED, SEED_BLOCK

URL = "https://github.com/acme/shop/issues/42"


def issue(body: str = SEED_BLOCK, number: int = 42, **kw: object) -> Issue:
    return Issue(
        number=number,
        title=str(kw.pop("title", "Booking history")),
        body=body,
        html_url=f"https://github.com/acme/shop/issues/{number}",
        repository="acme/shop",
        author_association=str(kw.pop("author_association", "MEMBER")),
        **kw,  # type: ignore[arg-type]
    )


def block(text: str = SEED_BLOCK):  # type: ignore[no-untyped-def]
    parsed = parse(text).block
    assert parsed is not None
    return parsed


# --- the link ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "task_id", "custom", "team"),
    [
        ("ClickUp: https://app.clickup.com/t/86c0abc", "86c0abc", False, None),
        ("- **ClickUp:** https://app.clickup.com/t/9000/DEV-123", "DEV-123", True, "9000"),
        ("**ClickUp**: [DEV-9](https://app.clickup.com/t/9000/dev-9)", "DEV-9", True, "9000"),
        ("ClickUp task: CU-86c0abc", "86c0abc", False, None),
        ("ClickUp: DEV-5", "DEV-5", True, "77"),
        ("ClickUp: `86c0xyz`", "86c0xyz", False, None),
        ("Tracked in https://app.clickup.com/t/86c0abc?comment=9 today", "86c0abc", False, None),
        ("Branch CU-86c0abc_fix-login", "86c0abc", False, None),
        ("see (cu-abc123).", "abc123", False, None),
        ("https://app.clickup.com/t/9000/86c0abc", "86c0abc", False, "9000"),
    ],
)
def test_links_in_every_written_form(
    body: str, task_id: str, custom: bool, team: str | None
) -> None:
    link = find_link(f"Intro\n\n{body}\n", team_id="77" if team == "77" else None)
    assert link is not None
    assert (link.task_id, link.custom, link.team_id, link.line) == (task_id, custom, team, 3)


def test_a_clickup_line_wins_over_urls_and_tokens_anywhere() -> None:
    body = (
        "CU-aaa111\nhttps://app.clickup.com/t/bbb222\n\nClickUp: https://app.clickup.com/t/ccc333\n"
    )
    assert find_link(body) == Link(
        task_id="ccc333", line=4, text="https://app.clickup.com/t/ccc333"
    )
    assert find_link("CU-aaa111 then https://app.clickup.com/t/bbb222").task_id == "bbb222"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "body",
    [
        "",
        "No link here, only ACU-123 and focus-abc and https://clickup.com/t/abc",
        "```\nClickUp: https://app.clickup.com/t/86c0abc\nCU-abc123\n```\n",
        "~~~~md\nhttps://app.clickup.com/t/86c0abc\n~~~~\n",
        "ClickUp: see the board",
        "https://app.clickup.com/9000/v/li/901",  # a list view, not a task
    ],
)
def test_no_link_means_none(body: str) -> None:
    assert find_link(body) is None


def test_links_after_a_closed_fence_count() -> None:
    body = "```\nCU-abc123\n```\nCU-def456"
    assert find_link(body) == Link(task_id="def456", line=4, text="CU-def456")


def test_custom_ids_take_the_workspace_from_the_url_before_the_setting() -> None:
    link = find_link("https://app.clickup.com/t/111/OPS-4", team_id="222")
    assert link is not None and (link.team_id, link.key, link.resolvable) == (
        "111",
        "111/OPS-4",
        True,
    )
    bare = find_link("ClickUp: OPS-4")
    assert bare is not None and (bare.custom, bare.resolvable) == (True, False)


@settings(max_examples=200)
@given(st.text(max_size=400))
def test_any_text_gives_a_usable_link_or_none(text: str) -> None:
    link = find_link(text)
    if link is not None:
        assert link.task_id and re.fullmatch(r"[A-Za-z0-9-]+", link.task_id)
        assert 1 <= link.line <= max(1, len(text.splitlines()))


# --- the text ---------------------------------------------------------------------------


def test_the_seed_block_renders_every_wanted_line() -> None:
    text = mirror_text(issue(), block(), BUNDLED)
    assert text == (
        "AI Context — acme/shop#42 Booking history\n"
        "Actor: cc-ariel-laptop (Claude Code on Ariel's laptop)\n"
        "Phase: implementing (chunk 3 of 5)\n"
        "Last updated: 2026-05-26T14:32:00Z\n"
        "Plan: 2/5 done\n"
        "Current step: 3. Add unit tests for repository (in progress)\n"
        "Next step: Finish unit tests in booking.repository.spec.ts\n"
        "Blockers: none\n"
        f"Issue: {URL}"
    )


def test_blockers_list_and_an_empty_block() -> None:
    text = SEED_BLOCK.replace(
        "- **Blockers:** none", "- **Blockers:**\n  - waiting on API keys\n  - CI red"
    )
    rendered = mirror_text(issue(text), block(text), BUNDLED)
    assert "Blockers:\n- waiting on API keys\n- CI red\nIssue:" in rendered

    bare = "## AI Context\n\n- **Phase:** planning\n"
    rendered = mirror_text(issue(bare), block(bare), BUNDLED)
    assert (
        "Actor: -\nPhase: planning\nLast updated: -\nPlan: no plan\nCurrent step: -\n" in rendered
    )


def test_progress_and_current_step() -> None:
    text = (
        "## AI Context\n- **Plan:**\n  1. A (done)\n  2. B (skipped)\n  3. C (blocked)\n"
        "  4. D (pending)\n"
    )
    data = mirror_data(issue(text), block(text))
    assert (data["progress"], data["current_step"]) == ("1/4 done (1 skipped)", "3. C (blocked)")
    all_done = "## AI Context\n- **Plan:**\n  1. A (done)\n"
    assert current_step(block(all_done)) is None


def test_only_a_web_address_is_shown_as_the_issue_url() -> None:
    hostile = Issue(number=42, title="T", html_url="javascript:alert(1)", repository="acme/shop")
    assert mirror_data(hostile, block())["issue_url"] == "acme/shop#42"


def test_control_characters_are_stripped_from_data_and_output() -> None:
    hostile = issue(title="Fix\x1b[31m red\u202e txt\x00", body=SEED_BLOCK)
    text = mirror_text(hostile, block(), BUNDLED)
    assert "Fix[31m red txt" in text
    assert not any(ch in text for ch in "\x1b\x00\u202e\r\t")


@given(st.text(max_size=200))
def test_clean_leaves_no_control_character(text: str) -> None:
    out = clean(text)
    assert all(ch == "\n" or not (ord(ch) < 32 or 0x7F <= ord(ch) <= 0x9F) for ch in out)


def test_a_long_text_is_cut_with_a_visible_mark_carrying_the_issue_url() -> None:
    long_step = "x" * 300
    text = SEED_BLOCK.replace("Finish unit tests in booking.repository.spec.ts", long_step)
    out = mirror_text(issue(text), block(text), BUNDLED, limit=300)
    assert len(out) <= 300
    assert out.endswith(f"[… truncated by ai-context; the full AI Context is at {URL}]")
    assert out.startswith("AI Context — acme/shop#42")


@settings(max_examples=200)
@given(st.text(max_size=600), st.integers(min_value=1, max_value=700))
def test_fit_never_exceeds_the_limit(text: str, limit: int) -> None:
    out = fit(text, limit, URL)
    assert len(out) <= limit
    if len(text) <= limit:
        assert out == text
    elif limit > 120:
        assert URL in out


def test_a_user_template_overrides_ours(tmp_path: Path) -> None:
    (tmp_path / "mirror.txt.j2").write_text("{{ actor }} | {{ progress }} | {{ issue_url }}\n")
    out = mirror_text(issue(), block(), Templates(tmp_path).env)
    assert out == f"cc-ariel-laptop | 2/5 done | {URL}"


def test_a_user_template_is_sandboxed_and_strict(tmp_path: Path) -> None:
    (tmp_path / "mirror.txt.j2").write_text("{{ actr }}")
    with pytest.raises(ConfigError, match=r"mirror template mirror\.txt\.j2: UndefinedError"):
        mirror_text(issue(), block(), Templates(tmp_path).env)
    (tmp_path / "mirror.txt.j2").write_text("{{ ''.__class__.__mro__ }}")
    with pytest.raises(ConfigError, match=r"SecurityError|UndefinedError"):
        mirror_text(issue(), block(), Templates(tmp_path).env)


def test_a_missing_templates_directory_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="setting templates"):
        user_templates(tmp_path, "nope")


def test_issue_text_is_data_never_template_source() -> None:
    text = SEED_BLOCK.replace("Finish unit tests", "{{ 7 * 7 }} {% raw %}")
    out = mirror_text(issue(text), block(text), BUNDLED)
    assert "{{ 7 * 7 }} {% raw %}" in out


# --- the field and the value ------------------------------------------------------------


def test_resolve_field_by_exact_name() -> None:
    ai = CustomField(id="f1", name="ai_context", type="text")
    assert resolve_field([ai, CustomField(id="f2", name="AI_Context")], "ai_context").field == ai
    assert resolve_field([], "ai_context").status == "missing"
    dup = resolve_field([ai, CustomField(id="f3", name="ai_context", type="text")], "ai_context")
    assert (dup.status, [f.id for f in dup.candidates]) == ("duplicate", ["f1", "f3"])
    wrong = resolve_field([CustomField(id="f4", name="ai_context", type="drop_down")], "ai_context")
    assert wrong.status == "wrong_type"
    assert (
        resolve_field(
            [CustomField(id="f5", name="ai_context", type="short_text")], "ai_context"
        ).status
        == "found"
    )


def test_same_value() -> None:
    assert same_value("a\r\nb\n", "a\nb")
    assert same_value(None, "")
    assert not same_value(None, "a")
    assert not same_value("a", "b")
    assert not same_value(3, "3")


# --- config -----------------------------------------------------------------------------


def test_mirror_section_defaults_and_values() -> None:
    assert load_mirror_config(None) == MirrorConfig()
    config = load_mirror_config({"field": "AI state", "max-length": 1000, "lists": "901, 902"})
    assert (config.field, config.max_length, config.lists) == ("AI state", 1000, ("901", "902"))
    assert load_mirror_config({"lists": [901]}).lists == ("901",)


@pytest.mark.parametrize(
    ("section", "needle"),
    [
        ({"max-length": 10}, "mirror.max-length: Input should be greater than or equal to 200"),
        ({"field": ""}, "mirror.field"),
        ({"field": " ai_context"}, "spaces around it"),
        ({"colour": "red"}, "mirror.colour: unknown key"),
        ("ai_context", "must be a mapping"),
    ],
)
def test_bad_mirror_section_is_a_config_error(section: object, needle: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(needle)) as info:
        load_mirror_config(section, ".github/ai-context.yml")
    assert str(info.value).startswith(".github/ai-context.yml")


# --- targets ----------------------------------------------------------------------------


def test_targets_skip_quietly_and_report_unusable_links() -> None:
    linked = SEED_BLOCK + "\n\nClickUp: https://app.clickup.com/t/86c0abc\n"
    issues = [
        issue(linked, 1),
        issue(SEED_BLOCK, 2),  # no link
        issue("ClickUp: https://app.clickup.com/t/86c0zzz", 3),  # no block
        issue(SEED_BLOCK + "\n\nClickUp: OPS-4\n", 4),  # custom id, no workspace
        issue(SEED_BLOCK + "\n\nCU-shared1\n", 5),
        issue(SEED_BLOCK + "\n\nhttps://app.clickup.com/t/shared1\n", 6),
    ]
    found, findings = targets(issues, BUNDLED, MirrorConfig())
    assert [t.issue.number for t in found] == [1]
    assert found[0].text.endswith("Issue: https://github.com/acme/shop/issues/1")
    assert {n: [f.code for f in fs] for n, fs in findings.items()} == {
        4: ["AIC703"],
        5: ["AIC704"],
        6: ["AIC704"],
    }
    assert "#6" in findings[5][0].message and findings[4][0].line == 19


# --- may a link be followed ---------------------------------------------------------------


def test_a_link_is_trusted_by_the_authors_association_or_the_config_actors() -> None:
    actors = parse_actors(
        {"cc-ariel-laptop": {"owner": "ariel"}, "copilot": {"aliases": ["app/copilot"]}}, "t"
    )

    def by(author: str, association: str | None) -> Issue:
        return Issue(number=1, title="t", author=author, author_association=association)

    for association in ("OWNER", "MEMBER", "COLLABORATOR", "member"):
        assert trusted(by("x", association), None, actors)
    for association in ("NONE", "CONTRIBUTOR", "FIRST_TIME_CONTRIBUTOR", None):
        assert not trusted(by("mallory", association), "mallory-bot", actors)
    assert trusted(by("ariel", "NONE"), None, actors)  # an owner in actors:
    assert trusted(by("copilot[bot]", "NONE"), None, actors)  # a bot alias
    assert trusted(by("visitor", "NONE"), "cc-ariel-laptop", actors)  # a listed actor
    # A login is never taken for an actor id: anyone may register `cc-ariel-laptop`.
    assert not trusted(by("cc-ariel-laptop", "NONE"), None, actors)


def test_the_field_names_the_issue_it_mirrors() -> None:
    mine = Issue(number=9, title="t", repository="Acme/Shop")
    assert mirrored_from(None, mine) is None and mirrored_from("", mine) is None
    assert mirrored_from("no issue named here", mine) is None
    assert mirrored_from("Issue: https://github.com/acme/shop/issues/9", mine) is None
    assert mirrored_from("AI Context — acme/shop#9 t", mine) is None
    assert mirrored_from("Issue: https://ghe.example.com/acme/shop/issues/7\n", mine) == (
        "acme/shop",
        7,
    )
    assert mirrored_from("AI Context — acme/shop#70 t", mine) == ("acme/shop", 70)
    assert mirrored_from("AI Context — other/repo#9 t", mine) == ("other/repo", 9)


@pytest.mark.parametrize(
    ("body", "line"),
    [
        ("``` a`b\nCU-abc123\n", 2),  # a backtick in the info string: no fence (CommonMark)
        ("~~~ a`b\nCU-abc123\n~~~\nCU-def456", 4),  # a tilde fence's info string may hold one
        ("````\n```\nCU-abc123\n````\nCU-def456", 5),  # a shorter run does not close it
        ("    ```\nCU-abc123\n", 2),  # four spaces: indented code, not a fence
    ],
)
def test_fences_open_and_close_as_github_shows_them(body: str, line: int) -> None:
    found = find_link(body)
    assert found is not None and found.line == line


def held_lines(length: int) -> st.SearchStrategy[list[str]]:
    """Lines a tilde fence of LENGTH holds that must not close it: text without a tilde, a
    shorter tilde run, a backtick run (the other character) and any run after four spaces."""

    def run(
        pad: st.SearchStrategy[int], char: str, size: st.SearchStrategy[int]
    ) -> st.SearchStrategy[str]:
        tail = st.sampled_from(["", " ", " \t"])
        return st.builds(lambda p, n, t: " " * p + char * n + t, pad, size, tail)

    return st.lists(
        st.one_of(
            st.text(alphabet=st.characters(exclude_characters="~\n\r"), max_size=20),
            run(st.integers(0, 3), "~", st.integers(1, length - 1)),
            run(st.integers(0, 3), "`", st.integers(3, 8)),
            run(st.integers(4, 8), "~", st.integers(length, length + 3)),
        ),
        max_size=8,
    )


@given(st.data(), st.integers(min_value=3, max_value=6), st.integers(min_value=0, max_value=3))
def test_a_fence_hides_every_line_it_holds(data: st.DataObject, length: int, indent: int) -> None:
    inside = data.draw(held_lines(length))
    fence = " " * indent + "~" * length
    lines = ["before", fence + " info", *inside, fence + "~", "after"]
    assert list(outside_fences(lines)) == [(0, "before"), (len(lines) - 1, "after")]
