"""Two machines, one issue, `python -m ai_context` as a process against the loopback GitHub:
save / resume / handoff / resume, ending with the expected block and no lost update."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ai_context.core.block.parse import parse
from tests.conftest import ROOT, SEED_BLOCK, run_process
from tests.fakes import ClickUpFake, GitHubFake

REPO = "acme/shop"
HUMAN = "Users need their booking history.\r\n\r\nAcceptance: every booking is listed.\r\n"


class Machine:
    """One agent's machine: its own cache directory and actor id."""

    def __init__(self, fake: GitHubFake, cache: Path, actor: str) -> None:
        self.fake, self.actor = fake, actor
        self.env = {
            **os.environ,
            "GITHUB_TOKEN": "t",
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_API_URL": fake.url,
            "AI_CONTEXT_CACHE": str(cache),
            "AI_CONTEXT_ACTOR": actor,
            "PYTHONPATH": str(ROOT / "src"),
        }
        self.env.pop("GH_TOKEN", None)
        self.cwd = cache.parent

    def run(
        self, *argv: str, stdin: str = "", log: list[str] | None = None
    ) -> tuple[int, dict[str, Any]]:
        before = self.fake.count()
        done = run_process([*argv, "--format", "json"], self.env, self.cwd, stdin=stdin)
        if log is None:
            assert done.stderr == "", done.stderr
        else:
            log.append(done.stderr)
        data: dict[str, Any] = json.loads(done.stdout)
        assert data["github_calls"] == self.fake.count() - before
        return done.returncode, data


def block(actor: str, *, step3: str, next_step: str) -> str:
    return (
        SEED_BLOCK.replace("cc-ariel-laptop (Claude Code on Ariel's laptop)", actor)
        .replace("3. Add unit tests for repository (in progress)", f"3. Add unit tests ({step3})")
        .replace("Finish unit tests in booking.repository.spec.ts", next_step)
    )


def test_two_machines_save_resume_handoff_resume(tmp_path: Path) -> None:
    with GitHubFake() as fake:
        fake.add_issue(REPO, "Booking history", HUMAN, assignees=["ariel"], labels=["in-progress"])
        laptop = Machine(fake, tmp_path / "laptop" / "cache", "cc-ariel-laptop")
        phone = Machine(fake, tmp_path / "phone" / "cache", "cc-ariel-phone")
        for m in (laptop, phone):
            m.cwd.mkdir()

        # 1. The laptop saves the first state; nothing cached yet: read, re-read, PATCH, and
        #    the edit history that says the PATCH overwrote nothing.
        v1 = block("cc-ariel-laptop", step3="in progress", next_step="Finish unit tests")
        code, out = laptop.run("save", "1", "--now", "2026-05-26T09:00:00Z", stdin=v1)
        assert (code, out["github_calls"]) == (0, 4)

        # 2. A person edits the issue's own text on GitHub.
        edited = (fake.issue(REPO, 1).body or "") + "\r\nPM: also export to CSV.\r\n"
        fake.edit_issue(REPO, 1, body=edited)

        # 3. The phone has no cache: resume finds ariel's in-progress issue in one call.
        code, out = phone.run("resume", "--assignee", "ariel")
        assert (code, out["source"], out["decision"]["kind"]) == (0, "assigned", "take_remote")
        assert out["github_calls"] == 1

        # 4. The phone works and saves. The block is the laptop's (another actor id), so the
        #    write guard refuses until the phone takes the task over; its cache holds the
        #    body, so the save is a re-read + PATCH + edit history.
        v2 = block("cc-ariel-phone", step3="done", next_step="Add the integration test")
        code, out = phone.run("save", "1", "--now", "2026-05-26T09:30:00Z", stdin=v2)
        assert (code, out["status"]) == (4, "conflict")
        assert "the task is cc-ariel-laptop's" in out["decision"]["reasons"][0]
        argv = ["save", "1", "--now", "2026-05-26T09:30:00Z", "--take", "local"]
        code, out = phone.run(*argv, stdin=v2)
        assert (code, out["github_calls"], out["reapplied"]) == (0, 3, False)

        # 5. Back on the laptop: its cache names the task; the issue is newer. One call.
        code, out = laptop.run("resume")
        assert (code, out["source"], out["decision"]["kind"]) == (0, "cache", "take_remote")
        assert out["github_calls"] == 1
        assert out["next_step"] == "Add the integration test"

        # 6. The phone, which holds the task now, hands it to Noa; the laptop cannot.
        code, out = laptop.run(
            "handoff", "1", "--to", "cc-noa-desktop", "--now", "2026-05-26T10:00:00Z"
        )
        assert (code, out["status"]) == (4, "conflict")
        code, out = phone.run(
            "handoff", "1", "--to", "cc-noa-desktop", "--now", "2026-05-26T10:00:00Z"
        )
        assert code == 0 and out["state"]["phase"] == "handoff"

        # 7. The laptop, not knowing, saves over it: a conflict, and nothing is written.
        patches = fake.count("PATCH")
        v3 = block("cc-ariel-laptop", step3="done", next_step="laptop's late idea")
        code, out = laptop.run("save", "1", "--now", "2026-05-26T10:05:00Z", stdin=v3)
        assert (code, out["status"]) == (4, "conflict")
        assert "cc-noa-desktop" in out["conflict"]["remote"]
        assert "laptop's late idea" in out["conflict"]["local"]
        assert fake.count("PATCH") == patches

        # 8. The laptop resumes: still a conflict until someone picks; it takes the issue's.
        code, out = laptop.run("resume")
        assert (code, out["status"]) == (4, "conflict")
        code, out = laptop.run("resume", "1", "--take", "remote")
        assert (code, out["decision"]["kind"], out["state"]["actor"]) == (
            0,
            "take_remote",
            "cc-noa-desktop",
        )
        assert fake.count("PATCH") == patches

    final_body = fake.issue(REPO, 1).body or ""
    final = parse(final_body).block
    assert final is not None
    assert (final.actor, final.phase) == ("cc-noa-desktop", "handoff")
    assert str(final.last_updated) == "2026-05-26 10:00:00+00:00"
    assert final.next_step == "Add the integration test"  # the phone's save reached Noa
    assert [s.status for s in final.plan][:3] == ["done", "done", "done"]
    assert final_body.endswith(HUMAN + "\r\nPM: also export to CSV.\r\n")  # the person's edit

    def logged(machine: str) -> list[dict[str, Any]]:
        text = (tmp_path / machine / "cache" / "conflicts.jsonl").read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines()]

    assert [r["choice"] for r in logged("phone")] == [None, "local"]  # refused, then taken over
    records = logged("laptop")
    assert [r["choice"] for r in records] == [None, None, None, "remote"]
    assert "laptop's late idea" in records[-1]["local"]  # the dropped copy is kept in the log


def test_save_mirrors_to_clickup_when_a_token_is_set(tmp_path: Path) -> None:
    from tests.fakes import ClickUpFake

    with GitHubFake() as fake, ClickUpFake() as clickup:
        clickup.add_field("901")
        task = clickup.add_task("Booking history", list_id="901")
        body = (
            f"Users need their booking history.\n\nClickUp: https://app.clickup.com/t/{task.id}\n"
        )
        fake.add_issue(REPO, "Booking history", body)
        laptop = Machine(fake, tmp_path / "laptop" / "cache", "cc-ariel-laptop")
        laptop.cwd.mkdir()
        laptop.env.update(CLICKUP_TOKEN="pk_test_token", AI_CONTEXT_CLICKUP_API_URL=clickup.url)
        v1 = block("cc-ariel-laptop", step3="in progress", next_step="Finish unit tests")
        log: list[str] = []
        code, _ = laptop.run("save", "1", "--now", "2026-05-26T09:00:00Z", stdin=v1, log=log)
        assert code == 0
        assert f"set ClickUp task {task.id} field ai_context from #1" in log[0]
        mirrored = str(clickup.value(task.id))
        assert "cc-ariel-laptop" in mirrored and "Finish unit tests" in mirrored
        assert "/issues/1" in mirrored  # the link is readable from the ClickUp side too


def test_handoff_releases_the_lease_of_the_actor_handing_off(tmp_path: Path) -> None:
    with GitHubFake() as fake:
        fake.add_issue(REPO, "Booking history", HUMAN)
        laptop = Machine(fake, tmp_path / "laptop" / "cache", "cc-ariel-laptop")
        laptop.cwd.mkdir()
        v1 = block("cc-ariel-laptop", step3="in progress", next_step="Finish unit tests")
        assert laptop.run("save", "1", "--now", "2026-05-26T09:00:00Z", stdin=v1)[0] == 0
        claimed = run_process(["claim", "1", "--actor", "cc-ariel-laptop"], laptop.env, laptop.cwd)
        assert claimed.returncode == 0, claimed.stdout + claimed.stderr
        assert fake.ref(REPO, "refs/ai-context/leases/1") is not None

        log: list[str] = []
        code, out = laptop.run(
            "handoff", "1", "--to", "cc-dana-desktop", "--now", "2026-05-26T10:00:00Z", log=log
        )
        assert code == 0, out
        assert fake.ref(REPO, "refs/ai-context/leases/1") is None
        assert "released cc-ariel-laptop's lease on #1" in log[0]
        final = parse(fake.issue(REPO, 1).body or "").block
        assert final is not None and final.actor == "cc-dana-desktop" and final.phase == "handoff"


def test_done_releases_the_lease_and_leaves_no_step_open(tmp_path: Path) -> None:
    with GitHubFake() as fake:
        fake.add_issue(REPO, "Booking history", HUMAN)
        laptop = Machine(fake, tmp_path / "laptop" / "cache", "cc-ariel-laptop")
        laptop.cwd.mkdir()
        v1 = block("cc-ariel-laptop", step3="in progress", next_step="Finish unit tests")
        assert laptop.run("save", "1", "--now", "2026-05-26T09:00:00Z", stdin=v1)[0] == 0
        claimed = run_process(["claim", "1", "--actor", "cc-ariel-laptop"], laptop.env, laptop.cwd)
        assert claimed.returncode == 0, claimed.stdout + claimed.stderr
        log: list[str] = []
        code, out = laptop.run(
            "done", "1", "--pr", "https://x/pull/2", "--now", "2026-05-26T10:00:00Z", log=log
        )
        assert code == 0, out
        assert fake.ref(REPO, "refs/ai-context/leases/1") is None
        assert "released cc-ariel-laptop's lease on #1" in log[0]
        final = parse(fake.issue(REPO, 1).body or "").block
        assert final is not None and final.phase == "done"
        assert "(in progress)" not in (fake.issue(REPO, 1).body or "")
        assert {s.status for s in final.plan} <= {"done", "skipped"}


def test_a_failing_mirror_template_leaves_save_and_handoff_reported(
    github_fake: GitHubFake, clickup_fake: ClickUpFake, tmp_path: Path
) -> None:
    task = clickup_fake.add_task("Booking history", list_id="901")
    body = f"Users need their booking history.\n\nClickUp: https://app.clickup.com/t/{task.id}\n"
    github_fake.add_issue(REPO, "Booking history", body)
    laptop = Machine(github_fake, tmp_path / "laptop" / "cache", "cc-ariel-laptop")
    laptop.cwd.mkdir()
    (laptop.cwd / ".github").mkdir()
    (laptop.cwd / ".github" / "ai-context.yml").write_text("templates: tpl\n", encoding="utf-8")
    (laptop.cwd / "tpl").mkdir()
    failing = "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}"  # a RecursionError as it renders
    (laptop.cwd / "tpl" / "mirror.txt.j2").write_text(failing, encoding="utf-8")
    laptop.env.update(CLICKUP_TOKEN="pk_test_token", AI_CONTEXT_CLICKUP_API_URL=clickup_fake.url)
    v1 = block("cc-ariel-laptop", step3="in progress", next_step="Finish unit tests")

    log: list[str] = []
    code, out = laptop.run("save", "1", "--now", "2026-05-26T09:00:00Z", stdin=v1, log=log)
    assert code == 0 and "error" not in out, out
    assert "mirror: skipped (template error" in log[0]
    claimed = run_process(["claim", "1", "--actor", "cc-ariel-laptop"], laptop.env, laptop.cwd)
    assert claimed.returncode == 0, claimed.stdout + claimed.stderr

    handoff = ["handoff", "1", "--to", "cc-dana-desktop", "--now", "2026-05-26T10:00:00Z"]
    code, out = laptop.run(*handoff, log=log)
    assert code == 0 and "error" not in out, out
    assert "mirror: skipped (template error" in log[1]
    assert "released cc-ariel-laptop's lease on #1" in log[1]
    assert github_fake.ref(REPO, "refs/ai-context/leases/1") is None
    assert clickup_fake.value(task.id) is None


def test_done_with_config_releases_the_lease_under_that_file_s_prefix(
    github_fake: GitHubFake, tmp_path: Path
) -> None:
    github_fake.add_issue(REPO, "Booking history", HUMAN)
    laptop = Machine(github_fake, tmp_path / "laptop" / "cache", "cc-ariel-laptop")
    laptop.cwd.mkdir()
    team = laptop.cwd / "team.yml"
    team.write_text("lease:\n  prefix: refs/team/leases/\n", encoding="utf-8")
    v1 = block("cc-ariel-laptop", step3="in progress", next_step="Finish unit tests")
    assert laptop.run("save", "1", "--config", "team.yml", stdin=v1)[0] == 0
    claim_env = {**laptop.env, "AI_CONTEXT_CONFIG": str(team)}
    claimed = run_process(["claim", "1", "--actor", "cc-ariel-laptop"], claim_env, laptop.cwd)
    assert claimed.returncode == 0, claimed.stdout + claimed.stderr
    assert github_fake.ref(REPO, "refs/team/leases/1") is not None

    log: list[str] = []
    code, out = laptop.run("done", "1", "--config", "team.yml", log=log)
    assert code == 0, out
    assert "released cc-ariel-laptop's lease on #1" in log[0]
    assert github_fake.ref(REPO, "refs/team/leases/1") is None
