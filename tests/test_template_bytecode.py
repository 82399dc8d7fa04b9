"""The bundled templates compiled at image build: a run loads them without compiling, renders
the same text, never serves a changed template stale code, never writes bytecode, and never
reads bytecode from the working directory or the workspace."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import jinja2
import pytest
from jinja2.bccache import Bucket

from ai_context.adapters.templates import (
    BYTECODE_VARIABLE,
    Templates,
    bundled_templates,
    fill_bytecode,
    image_bytecode,
    template_loader,
)
from ai_context.rules.digest.build import build_digest
from ai_context.rules.digest.render import render_markdown
from ai_context.rules.digest.slack import slack_messages
from ai_context.rules.templating import make_env, render
from tests.actionrun import run_action
from tests.conftest import ROOT
from tests.digest_samples import NOW, block, sample_issues, sample_previous
from tests.fakes import GitHubFake


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the templates compiled from now on, in this process."""
    names: list[str] = []
    real = jinja2.Environment.compile

    def counted(env: jinja2.Environment, source: str, name: str | None = None, *rest: object):  # type: ignore[no-untyped-def]
        names.append(str(name))
        return real(env, source, name, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(jinja2.Environment, "compile", counted)
    return names


@pytest.fixture
def bytecode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The bundled templates compiled as the image's build step does, and the variable the
    image sets pointing at them."""
    directory = tmp_path / "image" / "bytecode"
    fill_bytecode(directory)
    monkeypatch.setenv(BYTECODE_VARIABLE, str(directory))
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    yield directory


def files(directory: Path) -> dict[str, str]:
    """Every file under DIRECTORY, by relative path, with its content's hash."""
    return {
        str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def test_with_the_image_bytecode_a_digest_compiles_nothing_and_renders_the_same_text(
    bytecode: Path, compiled: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    digest = build_digest(sample_issues(), NOW, previous=sample_previous())
    cached = Templates().env
    text = render_markdown(digest, cached), slack_messages(digest, cached, comment_url="https://c")
    assert compiled == []

    monkeypatch.delenv(BYTECODE_VARIABLE)
    plain = Templates().env
    again = render_markdown(digest, plain), slack_messages(digest, plain, comment_url="https://c")
    assert sorted(compiled) == ["digest.md.j2", "digest.slack.j2"]
    assert text == again


def test_a_users_template_is_compiled_from_its_own_source_never_served_stale_bytecode(
    bytecode: Path, compiled: list[str], tmp_path: Path
) -> None:
    """Jinja keys a template's bytecode by its name and path and checks its source's SHA-1:
    bytecode stored under the user's very template, for an older text of it, is not used."""
    user = tmp_path / "tpl"
    user.mkdir()
    template = user / "digest.md.j2"
    template.write_text("old text {{ date }}\n", encoding="utf-8")
    # Bytecode of the old text, stored where the user's template would find it.
    make_env(template_loader(user), jinja2.FileSystemBytecodeCache(str(bytecode))).get_template(
        "digest.md.j2"
    )
    # Each bundled template's bytecode, and the user's beside them.
    assert len(files(bytecode)) == len(list((ROOT / "templates").rglob("*.j2"))) + 1
    served = make_env(template_loader(user), image_bytecode())
    assert render(served, "digest.md.j2", date="today") == "old text today\n"
    assert compiled == ["digest.md.j2"]  # only while storing it: the same text is served

    template.write_text("the user's own {{ date }}\n", encoding="utf-8")
    env = make_env(template_loader(user), image_bytecode())
    assert render(env, "digest.md.j2", date="today") == "the user's own today\n"
    assert compiled == ["digest.md.j2", "digest.md.j2"]
    render(env, "digest.slack.j2", **_slack_vars())  # the bundled one beside it: from bytecode
    assert compiled == ["digest.md.j2", "digest.md.j2"]


def _slack_vars() -> dict[str, object]:
    return {"date": "today", "sections": [], "multi_repo": False, "titles": {}}


def _planted(directory: Path) -> Path:
    """Bytecode that renders 'PLANTED' for the bundled digest.md.j2, under its key and its
    source's checksum: what a pull request could add to a checkout."""
    cache = jinja2.FileSystemBytecodeCache(str(directory))
    env = make_env(template_loader(None), cache)
    name = "digest.md.j2"
    source, filename, _ = env.loader.get_source(env, name)  # type: ignore[union-attr]
    bucket = Bucket(env, cache.get_cache_key(name, filename), cache.get_source_checksum(source))
    bucket.code = env.compile("PLANTED\n", name, filename)
    directory.mkdir(parents=True, exist_ok=True)
    cache.dump_bytecode(bucket)
    return directory


def test_bytecode_in_the_working_directory_or_the_workspace_is_never_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout = tmp_path / "checkout"
    planted = _planted(checkout / ".cache" / "bytecode")
    monkeypatch.setenv(BYTECODE_VARIABLE, str(planted))
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    digest = build_digest(sample_issues()[:2], NOW)
    # Outside both, Jinja trusts it: which is why a run only reads the image's own.
    assert render_markdown(digest, Templates().env) == "PLANTED\n"

    monkeypatch.chdir(checkout)
    assert image_bytecode() is None
    assert "PLANTED" not in render_markdown(digest, Templates().env)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_WORKSPACE", str(checkout))
    assert image_bytecode() is None
    assert "PLANTED" not in render_markdown(digest, Templates().env)


def test_a_run_with_a_users_templates_writes_no_file_in_the_workspace_or_the_bytecode(
    github_fake: GitHubFake, bytecode: Path, tmp_path: Path
) -> None:
    """A scheduled digest run, as the image runs it: its bytecode, a user's digest template in
    the workspace; afterwards the workspace and the bytecode directory are as they were."""
    workspace = tmp_path / "run" / "workspace"
    (workspace / "tpl").mkdir(parents=True)
    bundled = (bundled_templates() / "digest.md.j2").read_text(encoding="utf-8")
    (workspace / "tpl" / "digest.md.j2").write_text("Our digest\n" + bundled, encoding="utf-8")
    github_fake.add_issue("o/r", "Task", block(blockers=("Waiting for keys",)), number=1)
    github_fake.add_issue("o/r", "Digest", "", number=2, labels=["ai-context:digest"])
    before, image = files(workspace), files(bytecode)
    run = run_action(
        tmp_path / "run",
        github_fake.url,
        "schedule",
        {},
        inputs={"jobs": "digest", "templates": "tpl"},
        extra_env={BYTECODE_VARIABLE: str(bytecode), "AI_CONTEXT_NOW": NOW.isoformat()},
    )
    assert run.code == 0, run.stdout + run.stderr
    assert "Our digest" in run.summary
    [comment] = github_fake.comments("o/r", 2)
    assert "Our digest" in comment.body
    assert files(workspace) == before
    assert files(bytecode) == image
