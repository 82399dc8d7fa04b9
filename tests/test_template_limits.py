"""Templates render with bounds. In process, the sandbox refuses what it can see coming (a huge
`range`, `*`, `**`, a format width): a TemplateError ("template error: ...", exit 2), never an
OverflowError or 1.5 GB. What it cannot see (a loop over a long string, `lipsum`, a `join` or
`replace` that multiplies its input) is stopped by the kernel: a user's templates render in a
child process with CPU, memory and wall-clock limits (adapters/templates.py), which these tests
lower so that each probe stops within a second or two. No test times anything: each asserts the
error and the exit code."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from jinja2 import DictLoader

from ai_context.adapters import templates as templates_module
from ai_context.adapters.templates import RenderLimits, Templates
from ai_context.core.errors import Exit, TemplateError
from ai_context.rules import template_limits
from ai_context.rules.digest.build import summarize_task
from ai_context.rules.digest.render import render_task
from ai_context.rules.templating import make_env, render
from tests.actionrun import run_action
from tests.digest_samples import NOW, sample_issues
from tests.fakes import GitHubFake
from tests.test_action_e2e import INCOMPLETE, T0, TOKEN

# Low enough that a runaway stops at once, high enough for a child to start on a busy machine.
TEST_LIMITS = RenderLimits(seconds=3, memory=256 * 1024 * 1024)
SUMMARY = summarize_task(sample_issues()[5], NOW)


def rendered(source: str, **data: object) -> str:
    return render(make_env(DictLoader({"t.j2": source})), "t.j2", **data)


def in_child(tmp_path: Path, source: str) -> str:
    """SOURCE as the user's task.md.j2, rendered the way a run renders it."""
    (tmp_path / "task.md.j2").write_text(source, encoding="utf-8")
    result: str = Templates(tmp_path, TEST_LIMITS).run(render_task, SUMMARY)
    return result


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
        (
            '{% macro m() %}{% for i in range(30000) %}{{ "x" * 100 }}{% endfor %}{% endmacro %}'
            "{{ m() }}",
            "the rendered text",
        ),
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


# The probes of the adversarial run that the sandbox alone did not stop (150 s, 100 s, 2.2 GB,
# 250 MB), and what the sandbox already refused: in the child, every one is a template error.
PROBES = [
    '{% set s = "x" * 100000 %}{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}',
    "{{ lipsum(n=200000) }}",
    '{{ ("x" * 1000000)|list|join("y" * 2000) }}',
    '{{ ("a" * 100000)|replace("a", "b" * 20000) }}',
    '{% set s = "x" * 2000 %}{% for a in s %}{% for b in s %}{{ a ~ b }}{% endfor %}{% endfor %}',
    '{{ "a" * 300000000 }}',
    "{% for i in range(100000000) %}{% endfor %}",
    "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}",
]


@pytest.mark.parametrize("source", PROBES)
def test_every_probe_stops_in_the_child_as_a_template_error(tmp_path: Path, source: str) -> None:
    with pytest.raises(TemplateError) as caught:
        in_child(tmp_path, source)
    assert str(caught.value).startswith("template error: ")
    assert caught.value.exit_code == Exit.USAGE


def test_a_runaway_is_named_by_the_limit_it_hit(tmp_path: Path) -> None:
    with pytest.raises(TemplateError, match=r"ran longer than 3 s and were stopped"):
        in_child(tmp_path, PROBES[0])
    with pytest.raises(TemplateError, match=r"needed more than 256 MB of memory"):
        in_child(tmp_path, PROBES[2])


def test_a_template_mistake_in_the_child_is_said_as_in_process(tmp_path: Path) -> None:
    with pytest.raises(TemplateError, match=r"^template error: task\.md\.j2: UndefinedError: "):
        in_child(tmp_path, "ok\n{{ nothing.here }}")
    with pytest.raises(TemplateError, match=r"^template error: TypeError: "):
        in_child(tmp_path, "{% macro m() %}{{ 1 + 'a' }}{% endmacro %}{{ m() }}")


def test_a_user_template_renders_in_the_child_as_it_would_here(tmp_path: Path) -> None:
    source = "{{ task.title|md_text }}: {{ task.category }}\n"
    expected = render(make_env(DictLoader({"task.md.j2": source})), "task.md.j2", task=SUMMARY)
    assert in_child(tmp_path, source) == expected


def test_the_bundled_templates_render_in_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_child(*args: object) -> str:
        raise AssertionError("the bundled templates started a child")

    monkeypatch.setattr(templates_module, "_in_child", no_child)
    assert "Test it" in Templates().run(render_task, SUMMARY)


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
        (PROBES[0] + "\n", "digest", "template error: the templates in "),
        (PROBES[2] + "\n", "digest", "template error: the templates in "),
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
