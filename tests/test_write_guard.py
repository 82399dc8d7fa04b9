"""The write guard (rules/reconcile.may_write), as every command and MCP tool that writes a block
meets it: each writer × {its own block, a block it handed off, a block handed to it, a block
this machine never read, a stale cache, another actor's block} -> the exit code, against the
loopback GitHub. Nothing refused reaches the issue; a refusal says how to go on."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from ai_context.core.errors import Exit
from ai_context.mcp import tools
from ai_context.mcp.tools import CheckpointChanges, Session, ToolFailure
from tests.conftest import SEED_BLOCK, run_cli
from tests.fakes import GitHubFake

REPO = "acme/shop"
ARIEL, NOA, DANA = "cc-ariel-laptop", "cc-noa-desktop", "cc-dana-desktop"


def block_of(actor: str, next_step: str) -> str:
    return SEED_BLOCK.replace(ARIEL, actor).replace(
        "Finish unit tests in booking.repository.spec.ts", next_step
    )


@dataclass
class Machine:
    """One machine: its cache directory and its actor."""

    cache: Path
    actor: str
    fake: GitHubFake

    def run(self, *argv: str, stdin: str = "") -> int:
        return self.out(*argv, stdin=stdin)[0]

    def out(self, *argv: str, stdin: str = "") -> tuple[int, str]:
        code, out, _ = run_cli([*argv, "--cache", str(self.cache), "--actor", self.actor], stdin)
        return code, out

    def session(self) -> Session:
        env = {"GITHUB_TOKEN": "t", "GITHUB_API_URL": self.fake.url}
        return Session(repo=REPO, actor=self.actor, cache=str(self.cache), env=env)


def mcp(work: Callable[[], object]) -> int:
    try:
        work()
    except ToolFailure as exc:
        return int(exc.code)
    return 0


# --- the writers ---------------------------------------------------------------------------


def cli_save(m: Machine) -> int:
    return m.run("save", "1", stdin=block_of(m.actor, "a checkpoint"))


def cli_handoff(m: Machine) -> int:
    return m.run("handoff", "1", "--to", DANA)


def cli_done(m: Machine) -> int:
    return m.run("done", "1", "--pr", "https://github.com/acme/shop/pull/9")


def mcp_save(m: Machine) -> int:
    from ai_context.core.block.parse import parse

    parsed = parse(block_of(m.actor, "a checkpoint")).block
    assert parsed is not None
    return mcp(lambda: tools.save(m.session(), 1, parsed, False))


def mcp_checkpoint(m: Machine) -> int:
    changes = CheckpointChanges(done_steps=[3], next_step="a checkpoint")
    return mcp(lambda: tools.checkpoint(m.session(), 1, changes))


def mcp_handoff(m: Machine) -> int:
    return mcp(
        lambda: tools.handoff(m.session(), 1, DANA, description=None, next_step=None, dry_run=False)
    )


def mcp_done(m: Machine) -> int:
    return mcp(
        lambda: tools.done(m.session(), 1, pr=None, followups=[], shipped=None, dry_run=False)
    )


WRITERS: dict[str, Callable[[Machine], int]] = {
    "save": cli_save,
    "handoff": cli_handoff,
    "done": cli_done,
    "mcp save": mcp_save,
    "mcp checkpoint": mcp_checkpoint,
    "mcp handoff": mcp_handoff,
    "mcp done": mcp_done,
}


# --- the cases: the machine that writes, once the issue is in that state ---------------------


def own_block(tmp: Path, fake: GitHubFake) -> Machine:
    laptop = Machine(tmp / "laptop", ARIEL, fake)
    assert laptop.run("resume", "1") == 0
    return laptop


def handed_off(tmp: Path, fake: GitHubFake) -> Machine:
    """Ariel handed the task to Noa; Ariel's old session writes again."""
    laptop = own_block(tmp, fake)
    assert laptop.run("handoff", "1", "--to", NOA) == 0
    return laptop


def handed_to_me(tmp: Path, fake: GitHubFake) -> Machine:
    """Ariel handed the task to Noa; Noa resumes it and writes."""
    handed_off(tmp, fake)
    desktop = Machine(tmp / "desktop", NOA, fake)
    assert desktop.run("resume", "1") == 0
    return desktop


def never_read(tmp: Path, fake: GitHubFake) -> Machine:
    """Ariel's second machine, which never read the issue (no resume, no SessionStart)."""
    return Machine(tmp / "second", ARIEL, fake)


def stale_cache(tmp: Path, fake: GitHubFake) -> Machine:
    """Ariel's laptop read the block; Ariel's desktop saved a newer one since."""
    laptop = own_block(tmp, fake)
    desktop = Machine(tmp / "desktop", ARIEL, fake)
    assert desktop.run("resume", "1") == 0
    assert desktop.run("save", "1", stdin=block_of(ARIEL, "newer work")) == 0
    return laptop


def other_actor(tmp: Path, fake: GitHubFake) -> Machine:
    """Noa read Ariel's block and writes without a handoff."""
    desktop = Machine(tmp / "desktop", NOA, fake)
    assert desktop.run("resume", "1") == 0
    return desktop


CASES: dict[str, tuple[Callable[[Path, GitHubFake], Machine], int]] = {
    "own block": (own_block, Exit.OK),
    "handed off": (handed_off, Exit.CONFLICT),
    "handed to me": (handed_to_me, Exit.OK),
    "never read": (never_read, Exit.CONFLICT),
    "stale cache": (stale_cache, Exit.CONFLICT),
    "other actor": (other_actor, Exit.CONFLICT),
}


@pytest.fixture
def fake(github_fake: GitHubFake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitHubFake:
    github_fake.add_issue(REPO, "Booking history", SEED_BLOCK + "\nHuman text.\n")
    for name in ("GH_TOKEN", "AI_CONTEXT_ACTOR", "AI_CONTEXT_CACHE", "CLICKUP_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_TOKEN", "t")
    monkeypatch.setenv("GITHUB_REPOSITORY", REPO)
    monkeypatch.setenv("GITHUB_API_URL", github_fake.url)
    monkeypatch.chdir(tmp_path)
    return github_fake


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("writer", list(WRITERS))
def test_the_write_guard_table(fake: GitHubFake, tmp_path: Path, writer: str, case: str) -> None:
    arrange, expected = CASES[case]
    machine = arrange(tmp_path, fake)
    before = fake.issue(REPO, 1).body
    code = WRITERS[writer](machine)
    assert code == expected, f"{writer} × {case}"
    if expected == Exit.CONFLICT:
        assert fake.issue(REPO, 1).body == before  # nothing refused reaches the issue


def test_a_refusal_shows_both_copies_and_how_to_go_on(fake: GitHubFake, tmp_path: Path) -> None:
    laptop = handed_off(tmp_path, fake)
    code, text = laptop.out("done", "1")
    assert code == 4 and text.startswith('CONFLICT on acme/shop#1 "Booking history"')
    assert "the task is cc-noa-desktop's" in text
    assert "=== local copy (this machine)" in text and "=== the issue's copy" in text
    assert f"ai-context handoff 1 --to {ARIEL}" in text and "--take local" in text
    with pytest.raises(ToolFailure) as refused:
        tools.checkpoint(laptop.session(), 1, CheckpointChanges(next_step="x"))
    message = str(refused.value)
    assert message.startswith("exit 4 (conflict): CONFLICT on acme/shop#1")
    assert "the task is cc-noa-desktop's" in message and "=== the issue's copy" in message


def test_take_local_writes_over_a_refusal_and_logs_it(fake: GitHubFake, tmp_path: Path) -> None:
    desktop = other_actor(tmp_path, fake)
    assert desktop.run("done", "1") == 4
    assert desktop.run("done", "1", "--take", "local") == 0
    log = (desktop.cache / "conflicts.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(log) == 2 and '"choice": "local"' in log[-1]


# --- issue 21's table, row by row ------------------------------------------------------------


def test_done_by_the_session_that_handed_the_task_off_is_refused(
    fake: GitHubFake, tmp_path: Path
) -> None:
    """A hands #12 to B, then A's old session runs `done`: exit 4, the block stays B's."""
    laptop = handed_off(tmp_path, fake)
    assert laptop.run("done", "1") == 4
    assert f"**Active actor:** {NOA}" in (fake.issue(REPO, 1).body or "")
    assert "**Phase:** handoff" in (fake.issue(REPO, 1).body or "")


@pytest.mark.parametrize("argv", [["done", "1"], ["handoff", "1", "--to", DANA]])
def test_done_or_handoff_from_a_machine_that_never_read_the_issue_is_refused(
    fake: GitHubFake, tmp_path: Path, argv: list[str]
) -> None:
    stranger = Machine(tmp_path / "stranger", NOA, fake)
    before = fake.issue(REPO, 1).body
    assert stranger.run(*argv) == 4
    assert fake.issue(REPO, 1).body == before


def test_a_second_machine_must_resume_before_it_saves(fake: GitHubFake, tmp_path: Path) -> None:
    """Same actor, second machine, no resume first: its older block must not overwrite the
    first machine's newer one (a done step back to in progress); after resume it saves."""
    first = own_block(tmp_path, fake)
    newer = block_of(ARIEL, "newer").replace("repository (in progress)", "repository (done)")
    assert first.run("save", "1", stdin=newer) == 0
    saved = fake.issue(REPO, 1).body
    second = Machine(tmp_path / "second", ARIEL, fake)
    assert second.run("save", "1", stdin=block_of(ARIEL, "older")) == 4
    assert fake.issue(REPO, 1).body == saved
    assert second.run("resume", "1") == 0
    assert second.run("save", "1", stdin=block_of(ARIEL, "after resume")) == 0
    assert "after resume" in (fake.issue(REPO, 1).body or "")


def test_an_mcp_checkpoint_does_not_make_the_handing_actor_active_again(
    fake: GitHubFake, tmp_path: Path
) -> None:
    laptop = handed_off(tmp_path, fake)
    with pytest.raises(ToolFailure, match=r"^exit 4 \(conflict\)"):
        tools.checkpoint(laptop.session(), 1, CheckpointChanges(next_step="still mine?"))
    assert f"**Active actor:** {NOA}" in (fake.issue(REPO, 1).body or "")
    taken = tools.checkpoint(laptop.session(), 1, CheckpointChanges(next_step="x"), take="local")
    assert taken["status"] == "ok" and taken["state"]["actor"] == ARIEL  # taken over, logged
    assert taken["conflict_log"] is not None


def test_a_hand_edit_inside_the_block_is_reported_as_a_person_s_edit(
    fake: GitHubFake, tmp_path: Path
) -> None:
    laptop = own_block(tmp_path, fake)
    assert laptop.run("save", "1", stdin=block_of(ARIEL, "saved")) == 0
    body = fake.issue(REPO, 1).body or ""
    fake.edit_issue(REPO, 1, body=body.replace("- **Next step:** saved", "- **Next step:** mine"))
    code, text = laptop.out("save", "1", stdin=block_of(ARIEL, "next"))
    assert code == 4
    assert "changed by a person, by hand on GitHub" in text
    assert "this same actor" not in text
