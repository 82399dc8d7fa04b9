"""Every setting is checked before the first write (issue 15, item 2): the Action as a process
against the loopback GitHub, a bad value in the config file, exit 2 naming the setting and
the file, and not one write."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from ai_context.adapters.config import load_config
from ai_context.core.durations import duration_value, parse_duration
from ai_context.core.errors import ConfigError
from tests.actionrun import ActionRun, run_action, scheduled
from tests.conftest import run_process
from tests.fakes import GitHubFake
from tests.test_action_e2e import INCOMPLETE, T0, TOKEN, issue_event

NOW = {"AI_CONTEXT_NOW": "2026-05-26T15:00:00Z"}


@pytest.fixture
def gh() -> Iterator[GitHubFake]:
    with GitHubFake(token=TOKEN, now=T0) as fake:
        fake.add_repo("o/r")
        fake.add_issue("o/r", "Task", INCOMPLETE, number=3)  # the check job would write here
        yield fake


def error_line(run: ActionRun) -> str:
    """The first line of the run's error annotation (its message, after `::`)."""
    [line] = [line for line in run.stdout.splitlines() if line.startswith("::error")]
    return line.split("::", 2)[2]


def writes(gh: GitHubFake) -> list[Any]:
    return [r for r in gh.requests if r.method in ("POST", "PATCH", "PUT", "DELETE")]


@pytest.mark.parametrize(
    ("config", "says"),
    [
        ("digest:\n  window: -1h\n", ".github/ai-context.yml: digest.window: "),
        ("digest:\n  targets: [carrier-pigeon]\n", ".github/ai-context.yml: digest.targets.0: "),
        (
            "actors:\n  x:\n    owner: [1, 2]\n    emails: 5\n",
            ".github/ai-context.yml: actors: x: owner: ",
        ),
        (
            "required: [actor, bogus_field]\n",
            "/.github/ai-context.yml line 1): unknown required field(s) bogus_field",
        ),
        ("stale-after: 0\n", "/.github/ai-context.yml line 1): 0 is not a duration"),
        ("stale:\n  clock-skew: nope\n", ".github/ai-context.yml: stale: clock-skew: "),
        ("lease:\n  ttl: true\n", ".github/ai-context.yml: lease: ttl: "),
        (
            "repositories: [{owner: acme, name: }]\n",
            ".github/ai-context.yml: repositories: {'owner': 'acme', 'name': None}: "
            "name: None is not a name or glob; write owner/name, owner/<glob>",
        ),
        (
            "templates: no/such/dir\n",
            "/.github/ai-context.yml line 1): templates directory ",
        ),
    ],
)
def test_a_bad_setting_is_exit_2_before_any_write(
    gh: GitHubFake, tmp_path: Path, config: str, says: str
) -> None:
    run = scheduled(gh, tmp_path, config, token=TOKEN)
    assert run.code == 2, run.stdout + run.stderr
    assert says in error_line(run)
    assert "Traceback" not in run.stderr
    assert writes(gh) == []
    assert gh.comments("o/r", 3) == []


def test_a_digest_issue_that_does_not_exist_is_exit_2_before_any_write(
    gh: GitHubFake, tmp_path: Path
) -> None:
    run = scheduled(gh, tmp_path, "digest-issue: 404\n", token=TOKEN)
    assert run.code == 2, run.stdout + run.stderr
    line = error_line(run)
    assert line.startswith("setting digest-issue: #404 does not exist in o/r (")
    assert "/.github/ai-context.yml line 1); name an open issue" in line
    assert writes(gh) == []


def test_a_digest_issue_given_as_input_is_named_as_the_input(
    gh: GitHubFake, tmp_path: Path
) -> None:
    run = scheduled(gh, tmp_path, token=TOKEN, **{"digest-issue": "77"})
    assert run.code == 2
    assert error_line(run).startswith(
        "setting digest-issue: #77 does not exist in o/r (input digest-issue); "
    )
    assert writes(gh) == []


def test_a_good_config_still_runs_and_writes(gh: GitHubFake, tmp_path: Path) -> None:
    gh.add_issue("o/r", "Digest", "", number=9)
    config = "digest-issue: 9\ndigest:\n  window: 2d\nactors:\n  x:\n    owner: ana\n"
    run = scheduled(gh, tmp_path, config, token=TOKEN)
    assert run.code == 0, run.stdout + run.stderr
    assert len(gh.comments("o/r", 3)) == 1 and len(gh.comments("o/r", 9)) == 1


# --- one rule for durations: a bare number is hours, whatever the source ----------------------


@pytest.mark.parametrize("value", [48, "48", 48.0, "48h", "2d", timedelta(hours=48)])
def test_a_bare_number_is_hours_in_every_form(value: Any) -> None:
    assert duration_value(value) == timedelta(hours=48)


@pytest.mark.parametrize("value", [0, -1, "0", "-1h", True, None, [], float("inf"), 10**9])
def test_nonsense_durations_are_refused(value: Any) -> None:
    with pytest.raises(ValueError, match="duration"):
        duration_value(value)


def test_stale_after_48_means_48_hours_in_the_yaml_file_the_input_and_the_env(
    tmp_path: Path,
) -> None:
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "ai-context.yml").write_text("stale-after: 48\n", encoding="utf-8")
    from_file = load_config({}, tmp_path)
    from_input = load_config({"INPUT_STALE-AFTER": "48"}, tmp_path)
    from_env = load_config({"AI_CONTEXT_STALE_AFTER": "48"}, tmp_path)
    assert from_file.stale_after == from_input.stale_after == from_env.stale_after
    assert from_file.stale_after == timedelta(hours=48) == parse_duration("48")


def test_digest_window_and_lease_ttl_read_numbers_as_hours() -> None:
    from ai_context.rules.digest.build import DigestSection
    from ai_context.rules.lease import parse_lease_config

    assert DigestSection.model_validate({"window": 36}).window == timedelta(hours=36)
    assert parse_lease_config({"ttl": 3}, "f").ttl == timedelta(hours=3)


def test_required_must_be_a_list(tmp_path: Path) -> None:
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "ai-context.yml").write_text("required: 5\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="must be a list of block fields"):
        load_config({}, tmp_path)
    settings = load_config({"INPUT_REQUIRED": "actor, Next step"}, tmp_path)
    assert settings.required == ("actor", "next_step")


@pytest.mark.parametrize("text", ["99999999999999", "0h", "500000d", "\u00b2", "\u00b9h"])
def test_a_zero_or_absurd_duration_is_refused_with_a_reason(text: str) -> None:
    with pytest.raises(ValueError, match="cannot read duration"):
        parse_duration(text)


@pytest.mark.parametrize("value", ["0", "99999999999999"])
def test_the_command_line_refuses_them_too_with_exit_2(value: str, tmp_path: Path) -> None:
    block = tmp_path / "block.md"
    block.write_text("## AI Context\n\n- **Phase:** testing\n", encoding="utf-8")
    done = run_process(["validate", str(block), "--stale-after", value])
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "cannot read duration" in done.stderr or "longer than zero" in done.stderr


@pytest.mark.parametrize(
    ("config", "says"),
    [
        ("digest:\n  window: -1h\n", ".github/ai-context.yml: digest.window: "),
        ("digest:\n  targets: [carrier-pigeon]\n", ".github/ai-context.yml: digest.targets.0: "),
        ("repositories: [not-a-repo]\n", ".github/ai-context.yml: repositories: 'not-a-repo'"),
    ],
)
def test_an_issue_event_checks_the_digest_section_too_before_any_write(
    gh: GitHubFake, tmp_path: Path, config: str, says: str
) -> None:
    """The digest does not run on an issue event, but a bad `digest:` section is still bad
    configuration: exit 2 before the check job writes, not a surprise at the next schedule."""
    folder = tmp_path / "workspace" / ".github"
    folder.mkdir(parents=True)
    (folder / "ai-context.yml").write_text(config, encoding="utf-8")
    payload = issue_event(gh, 3, changes={"body": {"from": "old"}})
    run = run_action(tmp_path, gh.url, "issues", payload, token=TOKEN, extra_env=NOW)
    assert run.code == 2, run.stdout + run.stderr
    assert says in error_line(run)
    assert "Value error" not in error_line(run)
    assert writes(gh) == []


def test_a_user_template_that_fails_when_it_runs_stops_the_run_before_any_write(
    gh: GitHubFake, tmp_path: Path
) -> None:
    """Not only its syntax: the digest's templates are rendered once over the run's tasks
    before the check job writes, so an undefined name is exit 2 with nothing written."""
    folder = tmp_path / "workspace" / "tpl"
    folder.mkdir(parents=True)
    (folder / "digest.md.j2").write_text("{{ no_such_variable.attribute }}\n", encoding="utf-8")
    run = scheduled(gh, tmp_path, token=TOKEN, templates="tpl")
    assert run.code == 2, run.stdout + run.stderr
    assert error_line(run).startswith("template error: ")
    assert "Traceback" not in run.stderr
    assert writes(gh) == []
