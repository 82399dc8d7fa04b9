"""The agent commands as a user meets them: settings, exit codes, text and JSON output."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ai_context.core.block.locate import find
from ai_context.core.block.parse import parse
from ai_context.core.errors import UsageError
from tests.conftest import SEED_BLOCK, run_cli
from tests.fakes import GitHubFake

REPO = "acme/shop"


class TtyStdin(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_save_then_resume_in_text_and_json(agent_fake: GitHubFake) -> None:
    code, out, err = run_cli(["save", "1", "--now", "2026-05-26T14:32:00Z"], SEED_BLOCK)
    assert (code, err) == (0, "")
    assert out.startswith('saved the block to acme/shop#1 "Booking history"\n')
    assert "Next step: Finish unit tests in booking.repository.spec.ts" in out
    assert out.endswith("github calls: 4\n")
    code, out, _ = run_cli(["resume", "--format", "json"])
    data = json.loads(out)
    assert code == 0 and data["exit_code"] == 0 and "error" not in data
    assert (data["status"], data["source"], data["issue"]) == ("ok", "cache", 1)
    assert data["decision"]["kind"] == "equal" and data["github_calls"] == 1
    assert data["state"]["actor"] == "cc-ariel-laptop"
    assert data["next_step"] == "Finish unit tests in booking.repository.spec.ts"


def test_conflict_exits_4_with_both_copies_and_the_diff(
    agent_fake: GitHubFake, tmp_path: Path
) -> None:
    run_cli(["save", "1"], SEED_BLOCK)
    assert run_cli(["resume", "1", "--cache", str(tmp_path / "noa")])[0] == 0
    run_cli(["save", "1"], SEED_BLOCK.replace("Finish unit tests", "Ariel moved on"))
    other = SEED_BLOCK.replace("cc-ariel-laptop", "cc-noa-desktop")
    assert run_cli(["save", "1", "--cache", str(tmp_path / "noa")], other)[0] == 4
    code, out, _ = run_cli(
        ["save", "1", "--cache", str(tmp_path / "noa"), "--format", "json"], other
    )
    data = json.loads(out)
    assert code == 4 and data["status"] == "conflict"
    assert data["exit"] == 4 and data["error"]  # the command line's error shape, too
    assert "cc-ariel-laptop" in data["conflict"]["remote"]
    assert "cc-noa-desktop" in data["conflict"]["local"]
    assert data["conflict"]["diff"].startswith("--- remote (issue #1)")
    code, out, _ = run_cli(["resume", "1", "--cache", str(tmp_path / "noa")])
    assert code == 4
    assert "=== local copy (this machine)" in out and "=== the issue's copy" in out
    assert "--take local" in out
    code, out, _ = run_cli(["resume", "1", "--cache", str(tmp_path / "noa"), "--take", "remote"])
    assert code == 0 and "took the issue's copy" in out


def test_incomplete_exits_5_naming_the_missing_fields(agent_fake: GitHubFake) -> None:
    code, out, _ = run_cli(["save", "1"], "## AI Context\n- **Active actor:** cc-x\n")
    assert code == 5
    assert "missing Phase, Plan, Files touched, Next step" in out
    code, out, _ = run_cli(["resume", "1", "--format", "json"])
    assert code == 5 and json.loads(out)["missing"][0] == "Active actor"


def test_resume_without_a_task_lists_open_issues_and_exits_2(agent_fake: GitHubFake) -> None:
    code, out, _ = run_cli(["resume"])
    assert code == 2
    assert "#1     Booking history" in out
    assert "no GitHub login known" in out
    code, out, _ = run_cli(["resume", "--format", "json"])
    (candidate,) = json.loads(out)["candidates"]  # the shape pydantic's model_dump gave
    assert code == 2 and set(candidate) == {
        "number",
        "title",
        "actor",
        "phase",
        "assignees",
        "labels",
        "updated_at",
    }
    assert (candidate["number"], candidate["assignees"], candidate["labels"]) == (1, ["ariel"], [])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", candidate["updated_at"])


def test_resume_finds_the_task_through_the_actors_config(
    agent_fake: GitHubFake, tmp_path: Path
) -> None:
    desktop = SEED_BLOCK.replace("cc-ariel-laptop", "cc-ariel-desktop")  # no block names laptop
    run_cli(["save", "1", "--cache", str(tmp_path / "elsewhere")], desktop)
    agent_fake.edit_issue(REPO, 1, labels=["in-progress"])
    config = tmp_path / ".github" / "ai-context.yml"
    config.parent.mkdir()
    config.write_text("actors:\n  cc-ariel-laptop:\n    owner: ariel\n", encoding="utf-8")
    code, out, _ = run_cli(["resume", "--actor", "cc-ariel-laptop", "--format", "json"])
    data = json.loads(out)
    assert code == 0 and (data["source"], data["issue"]) == ("assigned", 1)
    assert data["github_calls"] == 1


def test_dry_run_prints_the_diff_and_writes_nothing(agent_fake: GitHubFake, tmp_path: Path) -> None:
    code, out, _ = run_cli(["save", "1", "--dry-run"], SEED_BLOCK)
    assert code == 0 and out.startswith("dry run: save would change acme/shop#1")
    assert "+## AI Context" in out and " Human text." in out
    assert agent_fake.count("PATCH") == 0 and not (tmp_path / "cache").exists()


def test_handoff_and_done(agent_fake: GitHubFake, tmp_path: Path) -> None:
    run_cli(["save", "1"], SEED_BLOCK)
    code, out, _ = run_cli(["handoff", "1", "--to", "cc-noa-desktop"])
    assert code == 0 and "handed off acme/shop#1" in out and "to cc-noa-desktop" in out
    noa = ["--cache", str(tmp_path / "noa"), "--actor", "cc-noa-desktop"]
    assert run_cli(["resume", "1", *noa])[0] == 0  # the task is Noa's now: Noa finishes it
    argv = ["done", "1", "--pr", "https://x/pull/2", "--followup", "a", "b", "--followup", "c"]
    code, out, _ = run_cli([*argv, *noa, "--format", "json"])
    data = json.loads(out)
    assert code == 0 and data["state"]["phase"] == "done"
    assert data["state"]["extra"]["Pull request"] == "https://x/pull/2"
    assert data["state"]["extra"]["Follow-ups"] == "\n    - a\n    - b\n    - c"


@pytest.mark.parametrize(
    ("argv", "stdin", "message"),
    [
        (["save", "1", "--from", "nope.md"], "", "nope.md: no such file"),
        (["save", "1"], "just text", "AIC101"),
        (["save", "1"], SEED_BLOCK + "\n\n" + SEED_BLOCK, "AIC102"),
        (["save", "1"], TtyStdin(), "pipe the block on stdin"),
        (["save", "1", "--actor", "two words"], SEED_BLOCK, "one word"),
        (["done", "1", "--pr", "nope"], "", "not a URL"),
        (["resume", "9"], "", "check the issue number"),
        (
            ["resume", "https://github.com/acme/shop/issues/1", "--repo", "o/r"],
            "",
            "the issue URL is in acme/shop but --repo says o/r",
        ),
    ],
)
def test_bad_input_exits_2_saying_what_to_do(
    agent_fake: GitHubFake, argv: list[str], stdin: str | io.StringIO, message: str
) -> None:
    code, _, err = run_cli(argv, stdin)
    assert code == 2 and message in err


def test_no_token_exits_2(agent_fake: GitHubFake, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_TOKEN")
    code, _, err = run_cli(["resume", "1"])
    assert code == 2 and "no GitHub token in $GITHUB_TOKEN or $GH_TOKEN" in err
    monkeypatch.setenv("MY_TOKEN", "t")
    assert run_cli(["resume", "1", "--token-env", "MY_TOKEN"])[0] == 5  # reached GitHub: no block


def test_an_issue_url_names_the_repository(
    agent_fake: GitHubFake, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_REPOSITORY")
    code, out, _ = run_cli(["save", "https://github.com/acme/shop/issues/1"], SEED_BLOCK)
    assert code == 0 and "acme/shop#1" in out


def test_repository_from_the_origin_remote(
    agent_fake: GitHubFake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_REPOSITORY")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(
        ["git", "-C", str(tmp_path), "remote", "add", "origin", "git@github.com:acme/shop.git"],
        check=True,
    )
    code, out, _ = run_cli(["save", "1"], SEED_BLOCK)
    assert code == 0 and "acme/shop#1" in out


def test_owner_of_reads_actors_from_the_config(tmp_path: Path) -> None:
    from ai_context.adapters.config import owner_of

    config = tmp_path / "c.yml"
    assert owner_of("cc-a", config) is None  # no file
    config.write_text("actors:\n  cc-a: {owner: ariel}\n  cc-b: {owner: 'not a login!'}\n")
    assert owner_of(None, config) is None
    with pytest.raises(UsageError, match="cc-b"):
        owner_of("cc-a", config)  # the whole actors section is checked, and cc-b is bad
    config.write_text("actors:\n  cc-a: {owner: ariel}\n")
    assert owner_of("cc-a", config) == "ariel"


def test_the_agent_side_imports_neither_jinja2_nor_the_github_client_to_start() -> None:
    """The GitHub client loads only when a command runs; the agent modules need no templates."""
    probes = {
        "from ai_context.jobs.agent import finishing, resuming, saving": (
            "jinja2",
            "github",
            "requests",
            "yaml",
        ),
        "from ai_context.cli.main import build_parser; build_parser()": ("github", "requests"),
    }
    for code, heavy in probes.items():
        probe = f"import sys; {code}; print(sorted(m for m in {heavy!r} if m in sys.modules))"
        done = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=True
        )
        assert done.stdout.strip() == "[]", code


# --- issue 15 -------------------------------------------------------------------------------


def test_a_stale_save_by_the_same_actor_exits_4_and_writes_nothing(
    agent_fake: GitHubFake, tmp_path: Path
) -> None:
    laptop = ["--cache", str(tmp_path / "laptop")]
    desktop = ["--cache", str(tmp_path / "desktop")]
    assert run_cli(["save", "1", *laptop, "--now", "2026-05-26T14:32:00Z"], SEED_BLOCK)[0] == 0
    assert run_cli(["resume", "1", *desktop])[0] == 0
    newer = SEED_BLOCK.replace("Finish unit tests", "Desktop work")
    assert run_cli(["save", "1", *desktop, "--now", "2026-05-26T14:40:00Z"], newer)[0] == 0
    body = agent_fake.issue(REPO, 1).body
    stale = SEED_BLOCK.replace("Finish unit tests", "Laptop work")
    code, out, _ = run_cli(["save", "1", *laptop, "--now", "2026-05-26T14:52:00Z"], stale)
    assert code == 4
    assert (
        out.splitlines()[0] == 'CONFLICT on acme/shop#1 "Booking history": nothing was overwritten'
    )
    assert "--take local" in out
    assert agent_fake.issue(REPO, 1).body == body
    code, out, _ = run_cli(["save", "1", *laptop, "--take", "local"], stale)
    assert code == 0 and "Laptop work" in (agent_fake.issue(REPO, 1).body or "")


@pytest.mark.parametrize("case", ["missing issue", "body too long"])
def test_a_failed_save_leaves_no_cache_entry_behind(
    agent_fake: GitHubFake, tmp_path: Path, case: str
) -> None:
    cache = tmp_path / "cache"
    if case == "missing issue":
        argv, block, first = ["save", "999"], SEED_BLOCK, "GitHub found nothing to"
    else:
        argv = ["save", "1"]
        block = SEED_BLOCK.replace("Finish unit tests", "x" * 70_000)
        first = "issue #1's body would be"
    before = agent_fake.issue(REPO, 1).body
    code, out, err = run_cli(argv, block)
    assert code == 2 and out == ""
    assert err.startswith("ai-context: " + first), err
    assert not cache.exists() or not list(cache.glob("*.json"))
    assert agent_fake.issue(REPO, 1).body == before
    code, out, _ = run_cli(["resume"])  # no entry to trip over: it lists the open tasks
    assert code == 2 and "Booking history" in out


@pytest.mark.parametrize(
    ("name", "existing"),
    [
        ("byte order mark", "\ufeff" + SEED_BLOCK),
        ("zero-width title", SEED_BLOCK.replace("AI Context", "AI\u200b Context", 1)),
        ("setext", "AI Context\n---\n" + SEED_BLOCK.split("\n", 1)[1]),
    ],
)
def test_save_replaces_a_block_github_shows_instead_of_adding_one(
    agent_fake: GitHubFake, name: str, existing: str
) -> None:
    agent_fake.edit_issue(REPO, 1, body=existing + "\n\nHuman text.\n")
    assert run_cli(["resume", "1"])[0] == 0  # the write guard: this machine reads it first
    newer = SEED_BLOCK.replace("Finish unit tests", "Second step")
    code, out, _ = run_cli(["save", "1", "--actor", "cc-ariel-laptop"], newer)
    assert code == 0, out
    assert out.splitlines()[0] == 'saved the block to acme/shop#1 "Booking history"'
    body = agent_fake.issue(REPO, 1).body or ""
    assert len(find(body)) == 1 and body.count("AI Context") == 1, name
    assert body.endswith("\n\nHuman text.\n")
    assert body.startswith("\ufeff") == existing.startswith("\ufeff")


def test_save_does_not_take_a_commented_out_block_for_the_block(agent_fake: GitHubFake) -> None:
    hidden = "<!--\n" + SEED_BLOCK.replace("cc-ariel-laptop", "cc-old-bot") + "\n-->\n"
    agent_fake.edit_issue(REPO, 1, body=hidden)
    code, out, _ = run_cli(["save", "1"], SEED_BLOCK)
    assert code == 0, out
    body = agent_fake.issue(REPO, 1).body or ""
    assert body.endswith("\n\n" + hidden)  # the hidden text is kept byte for byte
    assert len(find(body)) == 1 and parse(body).block is not None


# --- issue 21 -------------------------------------------------------------------------------


def test_resume_of_a_task_without_a_block_prints_a_starting_block_ready_for_save(
    agent_fake: GitHubFake, tmp_path: Path
) -> None:
    code, out, _ = run_cli(["resume", "1", "--actor", "cc-ariel-laptop"])
    assert code == 5
    assert "=== the block to complete, then save" in out
    assert "- **Active actor:** cc-ariel-laptop" in out and "- **Phase:** planning" in out
    starting = out.split("=== the block to complete, then save\n", 1)[1].split("\ngithub calls")[0]
    code, out, _ = run_cli(["save", "1", "--actor", "cc-ariel-laptop"], starting)
    assert code == 0, out
    code, out, _ = run_cli(["resume", "1", "--actor", "cc-ariel-laptop", "--format", "json"])
    assert code == 0 and json.loads(out)["state"]["phase"] == "planning"


def test_the_configs_required_fields_reach_every_agent_command(
    agent_fake: GitHubFake, tmp_path: Path
) -> None:
    """One notion of complete: a block the config calls incomplete (no Decisions) is refused
    by save and resume as the Action would call it incomplete; done cannot complete it."""
    config = tmp_path / ".github" / "ai-context.yml"
    config.parent.mkdir()
    config.write_text(
        "required: [actor, phase, last_updated, plan, files_touched, next_step, decisions]\n",
        encoding="utf-8",
    )
    bare = SEED_BLOCK.split("- **Decisions:**")[0] + "- **Next step:** Finish\n"
    code, out, _ = run_cli(["save", "1"], bare)
    assert code == 5 and "missing Decisions" in out
    code, out, _ = run_cli(["save", "1", "--config", str(tmp_path / "none.yml")], bare)
    assert code == 0  # without the file, the default fields: complete
    code, out, _ = run_cli(["resume", "1"])
    assert code == 5 and "missing Decisions" in out
    code, out, _ = run_cli(["done", "1"])
    assert code == 5 and "missing Decisions" in out
    config.write_text("required: [actor, mood]\n", encoding="utf-8")
    code, _, err = run_cli(["save", "1"], SEED_BLOCK)
    assert code == 2 and "unknown required field(s) mood" in err


def test_done_with_a_pr_marks_the_open_pr_step_done_only_when_told(agent_fake: GitHubFake) -> None:
    plan = "- **Plan:**\n  1. Repository (done)\n  2. Tests (in progress)\n  3. Open PR (pending)\n"
    text = SEED_BLOCK.split("- **Plan:**")[0] + plan + "- **Files touched:** a.py\n"
    text += "- **Next step:** Open the PR\n"
    assert run_cli(["save", "1"], text)[0] == 0
    pr = "https://github.com/acme/shop/pull/9"
    code, out, _ = run_cli(["done", "1", "--pr", pr, "--dry-run"])
    assert code == 0 and "+  3. Open PR (skipped)" in out
    code, out, _ = run_cli(["done", "1", "--pr", pr, "--done-step", "3"])
    assert code == 0 and "3. Open PR (done)" in (agent_fake.issue(REPO, 1).body or "")
    assert "Plan: 3/3 done" in out


def test_done_counts_say_done_apart_from_skipped(agent_fake: GitHubFake) -> None:
    plan = "- **Plan:**\n  1. Repository (done)\n  2. Tests (in progress)\n  3. Open PR (pending)\n"
    text = SEED_BLOCK.split("- **Plan:**")[0] + plan + "- **Files touched:** a.py\n"
    text += "- **Next step:** Open the PR\n"
    assert run_cli(["save", "1"], text)[0] == 0
    code, out, _ = run_cli(["done", "1", "--pr", "https://github.com/acme/shop/pull/9"])
    assert code == 0 and "Plan: 2/3 done, 1 skipped" in out
    code, out, _ = run_cli(["done", "1", "--done-step", "7", "--format", "json"])
    assert code == 2 and "--done-step 7: the plan has no such step" in json.loads(out)["error"]


def test_the_token_can_come_from_gh_and_is_never_shown(
    agent_fake: GitHubFake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`setup claude --token-from gh`: with no GITHUB_TOKEN, `gh auth token` gives it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    gh = bin_dir / "gh"
    gh.write_text("#!/bin/sh\n[ \"$1 $2\" = 'auth token' ] && echo gho_from_gh_cli\n")
    gh.chmod(0o755)
    monkeypatch.delenv("GITHUB_TOKEN")
    monkeypatch.setenv("AI_CONTEXT_TOKEN_FROM", "gh")
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    code, out, err = run_cli(["resume", "1"])
    assert code == 2 and "GitHub refused the token" in err  # the fake knows only "t"
    assert "gho_from_gh_cli" not in out + err
    gh.write_text("#!/bin/sh\necho t\n")
    assert run_cli(["resume", "1"])[0] == 5  # reached GitHub: the issue has no block yet
    gh.write_text("#!/bin/sh\necho 'not logged in' >&2\nexit 1\n")
    code, _, err = run_cli(["resume", "1"])
    assert code == 2 and "`gh auth token` gave no token (not logged in)" in err
    monkeypatch.setenv("PATH", "/nonexistent")
    code, _, err = run_cli(["resume", "1"])
    assert code == 2 and "`gh` is not on PATH" in err
