"""The shared Jinja environment: loader order, the sandbox, strictness and escaping filters."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jinja2 import TemplateNotFound, UndefinedError
from jinja2.exceptions import SecurityError

from ai_context.adapters.templates import Templates
from ai_context.core.markdown import ZWJ, strip_controls
from ai_context.rules.templating import (
    FILTERS,
    ZWSP,
    clip,
    html,
    md_cell,
    md_code,
    md_code_cell,
    md_link,
    md_text,
    md_url,
    mermaid_label,
    render,
    slack,
    slack_code,
    slack_link,
)
from tests.conftest import BUNDLED

PACKAGED = {"digest.md.j2", "digest.slack.j2", "task.md.j2", "status.md.j2"}
UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def test_the_packaged_templates_are_found() -> None:
    env = BUNDLED
    assert set(env.list_templates()) >= PACKAGED
    assert env.get_template("task.md.j2") is not None


def test_a_user_directory_comes_first(tmp_path: Path) -> None:
    (tmp_path / "task.md.j2").write_text("mine: {{ task.title|md_text }}\n", encoding="utf-8")
    env = Templates(tmp_path).env
    assert render(env, "task.md.j2", task={"title": "a*b"}) == "mine: a\\*b\n"
    assert "digest.md.j2" in env.list_templates()  # the others still come from the package


def test_a_missing_user_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        Templates(tmp_path / "nope")


def test_names_cannot_escape_the_template_directories(tmp_path: Path) -> None:
    env = Templates(tmp_path).env
    with pytest.raises(TemplateNotFound):
        env.get_template("../pyproject.toml")


def test_templates_run_in_the_sandbox() -> None:
    env = BUNDLED
    with pytest.raises(SecurityError):
        env.from_string("{{ ''.__class__.__mro__ }}").render()
    with pytest.raises(SecurityError):
        env.from_string("{% set x = [] %}{{ x.append(1) }}").render()  # immutable sandbox


def test_the_fast_path_for_model_fields_keeps_the_sandbox_shut() -> None:
    env = BUNDLED
    task = _minimal_task("t")["task"]
    assert env.from_string("{{ t.title }} {{ t.number }}").render(t=task) == "t 1"
    with pytest.raises(SecurityError):
        env.from_string("{{ t.__class__.__mro__ }}").render(t=task)
    with pytest.raises(SecurityError):
        env.from_string("{{ t.model_dump.__func__.__globals__ }}").render(t=task)


def test_undefined_variables_are_errors() -> None:
    with pytest.raises(UndefinedError):
        BUNDLED.from_string("{{ missing }}").render()


def test_autoescape_is_on_for_html_only(tmp_path: Path) -> None:
    (tmp_path / "x.html.j2").write_text("{{ v }}", encoding="utf-8")
    (tmp_path / "x.md.j2").write_text("{{ v }}", encoding="utf-8")
    env = Templates(tmp_path).env
    assert render(env, "x.html.j2", v="<b>") == "&lt;b&gt;"
    assert render(env, "x.md.j2", v="<b>") == "<b>"


def test_text_is_data_not_template_source() -> None:
    out = render(BUNDLED, "task.md.j2", **_minimal_task("{{ 7*7 }} {% raw %}"))
    assert "49" not in out and "{{ 7\\*7 }} {% raw %}" in out


def _minimal_task(title: str) -> dict[str, object]:
    from ai_context.rules.digest.build import summarize_task
    from tests.digest_samples import NOW, issue

    return {"task": summarize_task(issue(1, title, "no block"), NOW), "titles": {}}


# --- filters ---------------------------------------------------------------------------------


def test_md_cell_escapes_what_breaks_a_table_or_renders_markup() -> None:
    assert md_cell("a | b") == "a \\| b"
    assert md_cell("line1\nline2\r\nline3") == "line1 line2 line3"
    assert md_cell("<script>x</script> & co") == "&lt;script&gt;x&lt;/script&gt; &amp; co"
    assert md_cell("[click](javascript:x) *b* _i_ `c` ~s~ \\") == (
        "\\[click\\](javascript:x) \\*b\\* \\_i\\_ \\`c\\` \\~s\\~ \\\\"
    )
    assert md_cell("ping @octocat and @acme/team") == f"ping @{ZWJ}octocat and @{ZWJ}acme/team"
    assert md_cell(None) == ""


def test_md_text_defuses_a_line_start() -> None:
    assert md_text("# heading") == "\\# heading"
    assert md_text("- item") == "\\- item"
    assert md_text("1. item") == "1\\. item"
    assert md_text("a\x00b\u2028c") == "ab c"


def test_urls_and_links() -> None:
    assert md_url("https://github.com/a/b/issues/1") == "https://github.com/a/b/issues/1"
    assert md_url("javascript:alert(1)") == ""
    assert md_url("https://x.test/a b|c(d)<e>") == "https://x.test/a%20b%7Cc%28d%29%3Ce%3E"
    assert md_link("#1", "https://x.test/1") == "[\\#1](https://x.test/1)"
    assert md_link("a]b", "data:text/html,x") == "a\\]b"
    assert slack_link("a>b", "https://x.test/?a=1&b=2") == "<https://x.test/?a=1&amp;b=2|a&gt;b>"
    assert slack_link("t", "") == "t"


def test_slack_cannot_ping() -> None:
    assert (
        slack("<!channel> <!here> <@U123> a&b")
        == "&lt;!channel&gt; &lt;!here&gt; &lt;@U123&gt; a&amp;b"
    )
    assert (
        slack("@here @Channel @everyone @bob") == f"@{ZWSP}here @{ZWSP}Channel @{ZWSP}everyone @bob"
    )


def test_html_and_mermaid_and_clip() -> None:
    assert html('<a href="x">\'') == "&lt;a href=&#34;x&#34;&gt;&#39;"
    assert mermaid_label('Stuck" : 99\n"x') == "Stuck : 99 x"
    assert clip("abcdef", 4) == "abc…" and clip("abc", 4) == "abc"


@given(st.text(max_size=200))
def test_md_cell_never_leaves_a_raw_pipe_tag_or_newline(text: str) -> None:
    out = md_cell(text)
    assert not UNESCAPED_PIPE.search(out.replace("\\\\", ""))
    assert "<" not in out and ">" not in out and "\n" not in out and "\r" not in out
    assert not re.search(r"@[A-Za-z0-9]", out)  # GitHub logins are ASCII letters and digits


@given(st.text(max_size=200))
def test_slack_never_leaves_an_angle_bracket_or_a_special_mention(text: str) -> None:
    out = slack(text)
    assert "<" not in out and ">" not in out and "\n" not in out
    assert not re.search(r"@(here|channel|everyone)\b", out, re.IGNORECASE)


def test_slack_code_keeps_the_spaces_around_a_code_span() -> None:
    """Slack sees a code span only between spaces or punctuation: `in`x`now` stays text."""
    assert slack_code("Finish tests in `booking.spec.ts` now") == (
        "Finish tests in `booking.spec.ts` now"
    )
    assert slack_code("run `a <b>` & @channel") == "run `a &lt;b&gt;` &amp; @" + ZWSP + "channel"


@given(st.text(max_size=600))
def test_a_remembered_filter_says_what_the_filter_says(text: str) -> None:
    """The escapes of code in a cell remember what they made of each string: the same text,
    every time, short or long."""
    for _ in range(2):
        assert FILTERS["md_code_cell"](text) == md_code_cell(text)
        assert FILTERS["md_code"](text) == md_code(text)


# Any code point, lone surrogates included, and the edges of what strip_controls removes.
_EDGES = "\x00\x08\t\n\x0b\x0c\r\x1f\x20\x7e\x7f\x80\x9f\xa0\ud7ff\ud800\udfff\ue000\U0010ffff"
ANY_TEXT = st.text(st.one_of(st.characters(exclude_categories=()), st.sampled_from(_EDGES)))


@given(ANY_TEXT, ANY_TEXT)
def test_a_render_and_a_macro_leave_out_what_strip_controls_does(head: str, tail: str) -> None:
    """Every output, a macro's included, is what strip_controls leaves of it."""
    source = "{% macro m(x) %}{{ x }}{% endmacro %}{{ m(head) }}|{{ tail }}"
    rendered = BUNDLED.from_string(source).render(head=head, tail=tail)
    assert rendered == strip_controls(head) + "|" + strip_controls(tail)


def test_a_remembered_filter_tells_equal_values_of_other_types_apart() -> None:
    """Only strings are remembered: 0.0 and -0.0 are equal, but print apart."""
    source = "{{ a|md_code_cell }} {{ b|md_code_cell }} {{ 1|md_code }} {{ true|md_code }}"
    assert BUNDLED.from_string(source).render(a=0.0, b=-0.0) == r"0\.0 \-0.0 1 True"
