"""Templates render with bounds (issue 15, item 4): every hostile user template is a
TemplateError ("template error: ...", exit 2), quickly, never an OverflowError or 1.5 GB."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from jinja2 import DictLoader

from ai_context.core.errors import Exit, TemplateError
from ai_context.rules import template_limits
from ai_context.rules.templating import make_env, render
from tests.actionrun import run_action
from tests.fakes import GitHubFake
from tests.test_action_e2e import INCOMPLETE, T0, TOKEN


def rendered(source: str, **data: object) -> str:
    env = make_env(None)
    env.loader = DictLoader({"t.j2": source})
    return render(env, "t.j2", **data)


@pytest.mark.parametrize(
    ("source", "says"),
    [
        ("{% for i in range(100000000) %}{% endfor %}", "Range too big"),
        ('{{ "a" * 300000000 }}', "repeating 1 items 300000000 times"),
        ("{{ 300000000 * [1] }}", "repeating 1 items 300000000 times"),
        ("{{ 2 ** 999999999 }}", "2 ** 999999999"),
        ('{{ "%999999999s" % "a" }}', "a %-format width"),
        ('{{ "%.999999999f" % 1 }}', "a %-format width"),
        ('{{ "{:>999999999}".format("a") }}', "a format width"),
        ('{{ "%999999999s"|format("a") }}', "a %-format width"),
        ('{{ "a"|center(999999999) }}', "centering"),
        ('{% for i in range(30000) %}{{ "x" * 100 }}{% endfor %}', "the rendered text"),
        ("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", "RecursionError"),
        ("{{ 1 / 0 }}", "ZeroDivisionError"),
        ("{{ nothing.here }}", "UndefinedError"),
        ("{% for %}", "TemplateSyntaxError"),
        ("{{ ''.__class__.__mro__ }}", "SecurityError"),
    ],
)
def test_a_hostile_template_is_a_template_error(source: str, says: str) -> None:
    with pytest.raises(TemplateError) as caught:
        rendered(source)
    message = str(caught.value)
    assert message.startswith("template error: t.j2")
    assert says in message
    assert caught.value.exit_code == Exit.USAGE


def test_loops_that_print_nothing_stop_at_the_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(template_limits, "MAX_SECONDS", 0.05)
    source = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
    with pytest.raises(TemplateError, match=r"ran longer than 0\.05 s"):
        rendered(source)


def test_ordinary_templates_are_untouched() -> None:
    text = rendered(
        '{{ "%-5s|" % "ab" }}{{ "{:>4}".format(7) }} {{ "-" * 3 }} {{ 2 ** 10 }} '
        '{{ range(3)|length }} {% for i in range(3) %}{{ i }}{% endfor %} {{ "Task 123456789" }}'
        ' {{ "x"|center(5) }}|'
    )
    assert text == "ab   |   7 --- 1024 3 012 Task 123456789   x  |"


@pytest.fixture
def gh() -> Iterator[GitHubFake]:
    with GitHubFake(token=TOKEN, now=T0) as fake:
        fake.add_repo("o/r")
        fake.add_issue("o/r", "Task", INCOMPLETE, number=3)
        fake.add_issue("o/r", "Digest", "", number=9)
        yield fake


@pytest.mark.parametrize(
    ("source", "jobs", "first"),
    [
        (
            '{{ "a" * 300000000 }}\n',
            "digest",
            "template error: digest.md.j2: SecurityError: repeating",
        ),
        ("{% for i in range(100000000) %}{% endfor %}\n", "digest", "template error: "),
        ("{% for %}\n", "auto", "template error: digest.md.j2 line 1: TemplateSyntaxError"),
    ],
)
def test_the_action_stops_on_a_bad_user_template_with_exit_2_and_no_write(
    gh: GitHubFake, tmp_path: Path, source: str, jobs: str, first: str
) -> None:
    folder = tmp_path / "workspace" / "my-templates"
    folder.mkdir(parents=True)
    (folder / "digest.md.j2").write_text(source, encoding="utf-8")
    run = run_action(
        tmp_path,
        gh.url,
        "schedule",
        {},
        token=TOKEN,
        inputs={"templates": "my-templates", "digest-issue": "9", "jobs": jobs},
        extra_env={"AI_CONTEXT_NOW": T0.isoformat()},
    )
    assert run.code == 2, run.stdout + run.stderr
    [line] = [x for x in run.stdout.splitlines() if x.startswith("::error")]
    assert line.startswith("::error title=ai-context%3A template error::" + first)
    assert "Traceback" not in run.stderr
    assert [r for r in gh.requests if r.method in ("POST", "PATCH", "DELETE")] == []
