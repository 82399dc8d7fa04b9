"""`ai-context mcp` driven by the `mcp` SDK's own stdio client, against the loopback GitHub:
initialize, list the tools, resume, save, claim; the issue body the MCP save writes is, byte
for byte, the body the command line's save writes."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from ai_context.core.block.parse import parse
from tests.conftest import ROOT, SEED_BLOCK, run_process
from tests.fakes import GitHubFake

REPO = "acme/shop"
HUMAN = "Users need their booking history.\r\n\r\nAcceptance: every booking is listed.\r\n"
TOOLS = {
    "resume", "save", "checkpoint", "handoff", "done", "claim", "renew", "release", "who",
    "status", "summary", "validate",
}  # fmt: skip


def structured(result: Any) -> dict[str, Any]:
    """The structured content of a tool result (the SDK's 2.x and 1.x spell it differently)."""
    error = getattr(result, "is_error", getattr(result, "isError", None))
    assert not error, result.content
    data: dict[str, Any] = getattr(result, "structured_content", None) or result.structuredContent
    return data


def seed_fields() -> dict[str, Any]:
    """The seed block as the save tool's structured input."""
    block = parse(SEED_BLOCK).block
    assert block is not None
    return {
        "actor_description": block.actor_description,
        "phase": block.phase,
        "chunk": list(block.chunk or ()),
        "plan": [{"text": s.text, "status": s.status} for s in block.plan],
        "files_touched": block.files_touched,
        "decisions": list(block.decisions),
        "blockers": list(block.blockers),
        "next_step": block.next_step,
    }


def environment(fake: GitHubFake, cache: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "GITHUB_TOKEN": "t",
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_API_URL": fake.url,
        "AI_CONTEXT_CACHE": str(cache),
        "AI_CONTEXT_ACTOR": "cc-ariel-laptop",
        "PYTHONPATH": str(ROOT / "src"),
    }
    for name in ("GH_TOKEN", "CLICKUP_TOKEN"):
        env.pop(name, None)
    return env


async def drive(env: dict[str, str], cwd: Path, fake: GitHubFake) -> dict[str, Any]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "ai_context", "mcp"], env=env, cwd=str(cwd)
    )
    seen: dict[str, Any] = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        seen["server"] = getattr(init, "server_info", None) or init.serverInfo
        listed = await session.list_tools()
        seen["tools"] = {t.name: t for t in listed.tools}

        seen["resume_empty"] = structured(await session.call_tool("resume", {"issue": 1}))
        seen["save"] = structured(await session.call_tool("save", {"issue": "#1", **seed_fields()}))
        seen["body"] = fake.issue(REPO, 1).body  # before the checkpoint below changes it
        before = fake.count()
        seen["resume"] = structured(await session.call_tool("resume", {}))
        seen["resume_calls"] = fake.count() - before
        seen["claim"] = structured(await session.call_tool("claim", {"issue": 1}))
        seen["who"] = structured(await session.call_tool("who", {"issue": 1}))
        url = "https://github.com/other/repo/issues/1"
        seen["error"] = await session.call_tool("save", {"issue": url, **seed_fields()})
        seen["validate"] = structured(await session.call_tool("validate", {"body": SEED_BLOCK}))
        seen["summary"] = structured(await session.call_tool("summary", {"issue": 1}))
        seen["status"] = structured(await session.call_tool("status", {}))
        seen["checkpoint"] = structured(
            await session.call_tool(
                "checkpoint", {"issue": 1, "done_steps": [3], "next_step": "Add the test"}
            )
        )
    return seen


def test_mcp_server_over_stdio_matches_the_command_line(tmp_path: Path) -> None:
    with GitHubFake() as fake:
        fake.add_issue(REPO, "Booking history", HUMAN, assignees=["ariel"])
        fake.add_issue(REPO, "Booking history", HUMAN, assignees=["ariel"])
        work = tmp_path / "work"
        work.mkdir()
        seen = anyio.run(drive, environment(fake, tmp_path / "mcp-cache"), work, fake)

        assert seen["server"].name == "ai-context"
        assert set(seen["tools"]) == TOOLS
        save_schema = getattr(seen["tools"]["save"], "input_schema", None) or (
            seen["tools"]["save"].inputSchema
        )
        assert {"issue", "phase", "plan", "files_touched", "next_step"} <= set(
            save_schema["required"]
        )

        # Resume on an issue without a block: content, with the command line's exit code.
        assert (seen["resume_empty"]["status"], seen["resume_empty"]["exit_code"]) == (
            "incomplete",
            5,
        )
        saved = seen["save"]
        assert (saved["status"], saved["wrote_remote"], saved["exit_code"]) == ("ok", True, 0)
        mcp_body = seen["body"]

        # The command line saves the same block into issue 2 at the same clock.
        stamp = saved["state"]["last_updated"]
        env = environment(fake, tmp_path / "cli-cache")
        done = run_process(["save", "2", "--now", stamp], env, work, stdin=SEED_BLOCK)
        assert done.returncode == 0, done.stderr
        assert mcp_body == fake.issue(REPO, 2).body
        assert mcp_body is not None and mcp_body.endswith(HUMAN)

        # Resume with no argument finds the task in the server's cache: one GitHub call.
        resumed = seen["resume"]
        assert (resumed["issue"], resumed["source"], resumed["decision"]["kind"]) == (
            1,
            "cache",
            "equal",
        )
        assert seen["resume_calls"] == resumed["github_calls"] == 1

        claim = seen["claim"]
        assert (claim["result"], claim["actor"], claim["exit_code"]) == (
            "won",
            "cc-ariel-laptop",
            0,
        )
        assert seen["who"]["lease"] == claim["lease"]

        error = seen["error"]
        assert getattr(error, "is_error", getattr(error, "isError", None)) is True
        assert "exit 2 (bad input): the issue URL is in other/repo" in error.content[0].text

        assert seen["validate"]["complete"] is True and seen["validate"]["exit_code"] == 0
        assert seen["summary"]["number"] == 1
        assert seen["summary"]["next_step"] == "Finish unit tests in booking.repository.spec.ts"
        plates = seen["status"]["plates"]
        assert [p["actor"] for p in plates] == ["cc-ariel-laptop"]
        assert {e["number"] for e in plates[0]["entries"]} == {1}

        block = parse(fake.issue(REPO, 1).body or "").block
        assert block is not None and block.next_step == "Add the test"
        assert [s.status for s in block.plan][:3] == ["done", "done", "done"]
        assert seen["checkpoint"]["status"] == "ok"
        assert json.dumps(seen["checkpoint"])  # plain JSON all the way


async def drive_failures(env: dict[str, str], cwd: Path) -> dict[str, Any]:
    """Bad arguments, a refused write and a call on another repository, over stdio."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "ai_context", "mcp"], env=env, cwd=str(cwd)
    )
    seen: dict[str, Any] = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        bad_plan = {**seed_fields(), "plan": [{"status": "done"}], "chunk": "three"}
        seen["bad"] = await session.call_tool("save", {"issue": 1, **bad_plan})
        seen["refused"] = await session.call_tool(
            "checkpoint", {"issue": 1, "next_step": "not mine"}
        )
        seen["other_repo"] = structured(
            await session.call_tool("resume", {"issue": 1, "repo": "acme/other"})
        )
        seen["bad_repo"] = await session.call_tool("who", {"issue": 1, "repo": "not a repo"})
    return seen


def error_text(result: Any) -> str:
    assert getattr(result, "is_error", getattr(result, "isError", None)) is True
    text: str = result.content[0].text
    return text


def test_mcp_failures_read_as_the_command_line_s(tmp_path: Path) -> None:
    """Issue 21: bad input is `exit 2 (bad input): ...`, never the SDK's validation dump; a
    write the guard refuses is the command line's exit-4 text; `repo` picks the repository."""
    with GitHubFake() as fake:
        theirs = SEED_BLOCK.replace("cc-ariel-laptop", "cc-noa-desktop")
        fake.add_issue(REPO, "Booking history", theirs + "\n" + HUMAN)
        fake.add_issue("acme/other", "Elsewhere", SEED_BLOCK)
        work = tmp_path / "work"
        work.mkdir()
        seen = anyio.run(drive_failures, environment(fake, tmp_path / "cache"), work)
    bad = error_text(seen["bad"])
    assert bad.startswith("exit 2 (bad input): "), bad
    assert "plan.0.text: Field required" in bad and "chunk" in bad
    for dump in ("validation error for", "input_value", "errors.pydantic.dev", "Error executing"):
        assert dump not in bad
    refused = error_text(seen["refused"])
    assert refused.startswith("exit 4 (conflict): CONFLICT on acme/shop#1"), refused
    assert "never read" in refused and "=== the issue's copy" in refused
    assert "ai-context resume 1" in refused
    assert (seen["other_repo"]["repository"], seen["other_repo"]["title"]) == (
        "acme/other",
        "Elsewhere",
    )
    assert error_text(seen["bad_repo"]).startswith("exit 2 (bad input): repo: ")
