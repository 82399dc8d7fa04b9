"""The jobs an agent's write triggers (the ClickUp mirror, the lease release) read the settings
the face gives them and say what happened through the face's `note`, never os.environ, the
current directory or stderr of their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from ai_context.adapters import clients
from ai_context.core.models import Issue
from ai_context.core.secret import Secret
from ai_context.jobs.agent.mirror import agent_mirror_hook
from ai_context.jobs.lease import release_after_handoff
from tests.conftest import SEED_BLOCK, run_cli
from tests.fakes import ClickUpFake, GitHubFake

# A user's mirror template that loads but fails as it renders (a RecursionError).
FAILING_MIRROR = "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}"


def test_the_mirror_hook_reads_the_face_s_settings_not_the_process_s(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CLICKUP_TOKEN", "pk_process")
    assert agent_mirror_hook({}, tmp_path, print) is None
    notes: list[str] = []
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "ai-context.yml").write_text("jobs: 5\n", encoding="utf-8")
    hook = agent_mirror_hook({"CLICKUP_TOKEN": "pk_face"}, tmp_path, notes.append)
    assert hook is not None
    hook(Issue(number=1, title="t"), None)  # type: ignore[arg-type]
    assert len(notes) == 1 and notes[0].startswith("mirror: skipped (")


def test_a_mirror_template_failing_as_it_renders_is_a_note_not_an_error(
    clickup_fake: ClickUpFake, tmp_path: Path
) -> None:
    task = clickup_fake.add_task("t", list_id="901")
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "ai-context.yml").write_text("templates: tpl\n", encoding="utf-8")
    (tmp_path / "tpl").mkdir()
    (tmp_path / "tpl" / "mirror.txt.j2").write_text(FAILING_MIRROR, encoding="utf-8")
    env = {"CLICKUP_TOKEN": "pk_face", "AI_CONTEXT_CLICKUP_API_URL": clickup_fake.url}
    notes: list[str] = []
    hook = agent_mirror_hook(env, tmp_path, notes.append)
    assert hook is not None
    body = f"{SEED_BLOCK}\n\nClickUp: https://app.clickup.com/t/{task.id}\n"
    issue = Issue(number=1, title="t", body=body, author="ann", author_association="MEMBER")
    hook(issue, None)  # type: ignore[arg-type]
    assert len(notes) == 1 and notes[0].startswith("mirror: skipped (template error"), notes
    assert clickup_fake.value(task.id) is None


def test_the_lease_release_notes_through_the_face(
    github_fake: GitHubFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    github_fake.add_repo("o/r")
    store = clients.github(Secret("t"), "o/r", api_url=github_fake.url)
    issue = Issue(number=1, title="t")
    notes: list[str] = []
    release_after_handoff(store, issue, "cc-a", env={}, workspace=tmp_path, note=notes.append)
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "ai-context.yml").write_text("jobs: 5\n", encoding="utf-8")
    release_after_handoff(store, issue, "cc-a", env={}, workspace=tmp_path, note=notes.append)
    assert len(notes) == 1 and notes[0].startswith("lease: not released (")
    assert capsys.readouterr().err == ""


def test_handoff_with_config_releases_the_lease_that_file_names(
    agent_fake: GitHubFake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--config FILE` is the one config file of the command: the lease release after the
    handoff reads its `lease:` section too, not .github/ai-context.yml."""
    (tmp_path / "team.yml").write_text("lease:\n  prefix: refs/team/leases/\n", encoding="utf-8")
    assert run_cli(["save", "1"], SEED_BLOCK)[0] == 0
    monkeypatch.setenv("AI_CONTEXT_CONFIG", "team.yml")
    assert run_cli(["claim", "1", "--actor", "cc-ariel-laptop"])[0] == 0
    monkeypatch.delenv("AI_CONTEXT_CONFIG")
    assert agent_fake.ref("acme/shop", "refs/team/leases/1") is not None
    code, out, err = run_cli(["handoff", "1", "--to", "cc-noa-desktop", "--config", "team.yml"])
    assert code == 0, out + err
    assert "lease: released cc-ariel-laptop's lease on #1" in err
    assert agent_fake.ref("acme/shop", "refs/team/leases/1") is None
