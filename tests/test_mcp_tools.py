"""The MCP face's pieces that need no server: SDK discovery, issue references, block fields."""

from __future__ import annotations

import importlib
import json
from typing import Any

import pytest

from ai_context.core.errors import UsageError
from ai_context.mcp import server, tools
from ai_context.mcp.queries import lease
from ai_context.mcp.tools import (
    BlockFields,
    PlanItem,
    Session,
    ToolFailure,
    block_of,
    issue_number,
)
from tests.conftest import SEED_BLOCK, run_cli
from tests.fakes import GitHubFake

NOW = "2026-05-26T15:00:00Z"


def test_without_the_sdk_the_server_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> Any:
        raise ImportError(name)

    monkeypatch.setattr(importlib, "import_module", missing)
    with pytest.raises(UsageError, match=r"pip install 'ai-context\[mcp\]'"):
        server._sdk()


def test_the_installed_sdk_is_found() -> None:
    server_class, tool_error = server._sdk()
    assert callable(server_class) and issubclass(tool_error, Exception)


def test_issue_references() -> None:
    assert issue_number(12, "acme/shop") == 12
    assert issue_number("#12", "acme/shop") == 12
    assert issue_number("https://github.com/Acme/Shop/issues/12", "acme/shop") == 12
    with pytest.raises(ToolFailure, match=r"^exit 2 \(bad input\): the issue URL is in o/r"):
        issue_number("https://github.com/o/r/issues/3", "acme/shop")
    with pytest.raises(ToolFailure, match="is not an issue"):
        issue_number("twelve", "acme/shop")


def test_block_fields_are_checked_like_a_block() -> None:
    fields = BlockFields(
        actor="two words",
        phase="implementing",
        plan=[PlanItem(text="write it", status="done")],
        files_touched="a.py",
        next_step="ship",
    )
    with pytest.raises(ToolFailure, match=r"^exit 2 \(bad input\): actor: .*one word"):
        block_of(fields, None)
    block = block_of(fields.model_copy(update={"actor": None}), "cc-x")
    assert block.actor == "cc-x" and block.plan[0].number == 1


def test_lease_input_is_checked_before_any_call() -> None:
    session = Session(repo="acme/shop", env={"AI_CONTEXT_ACTOR": "cc-x"})
    with pytest.raises(ToolFailure, match=r"^exit 2 \(bad input\): ttl: cannot read duration"):
        lease(session, "claim", 1, "soon", None)
    with pytest.raises(ToolFailure, match=r"^exit 2 \(bad input\): ttl 99d is out of range"):
        lease(session, "claim", 1, "99d", None)
    with pytest.raises(ToolFailure, match="which actor"):
        lease(Session(repo="acme/shop", env={}), "renew", 1, None, None)


def test_done_releases_the_finishers_lease_as_the_cli_does(tmp_path: Any) -> None:
    """`done` over MCP is the CLI's `done`: the block is final and the lease is gone."""
    with GitHubFake() as fake:
        fake.add_issue("o/r", "Task", SEED_BLOCK, number=6)
        env = {
            "GITHUB_TOKEN": "t",
            "GITHUB_API_URL": fake.url,
            "AI_CONTEXT_ACTOR": "cc-ariel-laptop",
        }
        session = Session(repo="o/r", env=env, cache=str(tmp_path / "cache"))
        assert lease(session, "claim", 6, "2h", None)["result"] == "won"
        assert fake.repos["o/r"].refs
        tools.resume(session, 6, take=None, assignee=None)
        done = tools.done(session, 6, pr=None, followups=[], shipped=None, dry_run=False)
        assert done["status"] == "ok"
        assert not [r for r in fake.repos["o/r"].refs if "leases" in r]


def test_the_lease_json_is_the_command_line_s_with_mine(
    github_fake: GitHubFake, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """The MCP lease tools answer the command line's lease JSON, `mine` included."""
    github_fake.add_issue("o/r", "Task", SEED_BLOCK, number=6)
    env = {"GITHUB_TOKEN": "t", "GITHUB_API_URL": github_fake.url}
    monkeypatch.chdir(tmp_path)
    ariel = Session(repo="o/r", env={**env, "AI_CONTEXT_ACTOR": "cc-ariel-laptop"})
    claimed = lease(ariel, "claim", 6, "2h", None)
    assert (claimed["result"], claimed["mine"]) == ("won", True)
    noa = lease(
        Session(repo="o/r", env={**env, "AI_CONTEXT_ACTOR": "cc-noa-desktop"}), "who", 6, None, None
    )
    assert (noa["actor"], noa["mine"]) == ("cc-ariel-laptop", False)
    for name, value in {**env, "GITHUB_REPOSITORY": "o/r"}.items():
        monkeypatch.setenv(name, value)
    code, out, err = run_cli(["who", "6", "--actor", "cc-noa-desktop", "--format", "json"])
    assert code == 0, err
    assert json.loads(out) == {k: v for k, v in noa.items() if k != "exit_code"}


def test_status_and_summary_are_the_command_lines_json(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 21: one code for both faces, with the command line's settings (the config file's
    digest window included) and its JSON."""
    from ai_context.mcp import queries
    from tests.conftest import run_cli

    with GitHubFake() as fake:
        fake.add_issue("o/r", "Task", SEED_BLOCK, number=6)
        env = {"GITHUB_TOKEN": "t", "GITHUB_API_URL": fake.url, "AI_CONTEXT_NOW": NOW}
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("AI_CONTEXT_ACTOR", raising=False)
        monkeypatch.chdir(tmp_path)
        (tmp_path / ".github").mkdir()
        (tmp_path / ".github" / "ai-context.yml").write_text("digest:\n  window: 48h\n")
        session = Session(repo="o/r", env=env, cache=str(tmp_path / "cache"))
        now = ["--now", NOW]
        status = queries.status(session, None)
        code, out, _ = run_cli(["status", "--all", "--repo", "o/r", "--format", "json", *now])
        assert code == 0 and status == {"repository": "o/r", "plates": json.loads(out)}
        summary = queries.summary(session, 6)
        code, out, _ = run_cli(["summary", "6", "--repo", "o/r", "--format", "json", *now])
        assert code == 0 and summary == json.loads(out)
        with pytest.raises(ToolFailure, match=r"^exit 2 \(bad input\)"):
            queries.summary(session, 99)


def test_the_configs_required_fields_reach_the_mcp_tools(tmp_path: Any) -> None:
    config = tmp_path / "ai-context.yml"
    config.write_text("required: [actor, phase, plan, files_touched, next_step, decisions]\n")
    session = Session(repo="o/r", env={"AI_CONTEXT_CONFIG": str(config)})
    assert session.required[-1] == "decisions"
    bare = SEED_BLOCK.split("- **Decisions:**")[0] + "- **Next step:** x\n"
    from ai_context.mcp.queries import validate

    checked = validate(session, bare)
    assert checked["complete"] is False
    assert any(f["code"] == "AIC201" and "Decisions" in f["message"] for f in checked["findings"])
