"""`ai-context setup`: merged into what the user has, idempotent, a diff with --dry-run, and the
repository's Claude Code plugin folder generated from the same sources."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ai_context.cli.setup import plugin_files
from ai_context.rules.agentsetup import (
    COMMANDS,
    SECTION_BEGIN,
    SECTION_END,
    SetupError,
    is_ours,
    merge_section,
    merge_settings,
)
from tests.conftest import ROOT, run_process

USER_SETTINGS: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test:*)", "Read(~/.zshrc)"], "deny": ["Bash(rm:*)"]},
    "hooks": {
        "PostToolUse": [
            {
                "matcher": "Edit|Write",
                "hooks": [{"type": "command", "command": 'prettier --write "$FILE"'}],
            },
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./audit.sh"}]},
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
    },
}


def setup(
    root: Path, *argv: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`ai-context setup ARGV` in ROOT; the hooks run `ai-context` unless ARGV says otherwise."""
    runner = [] if "--runner" in argv else ["--runner", "ai-context"]
    return run_process(["setup", *argv, *runner], {**os.environ, **(env or {})}, root)


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def commands_of(settings: dict[str, Any], event: str) -> list[str]:
    return [h["command"] for g in settings["hooks"][event] for h in g["hooks"]]


def test_setup_claude_twice_keeps_the_users_hooks_and_duplicates_nothing(tmp_path: Path) -> None:
    claude = tmp_path / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text(json.dumps(USER_SETTINGS, indent=4), encoding="utf-8")
    first = setup(tmp_path, "claude")
    assert first.returncode == 0, first.stderr
    after_first = snapshot(tmp_path)
    settings = json.loads(after_first[".claude/settings.json"])

    # The user's own hooks, groups, permissions and keys are all still there, in their order.
    assert settings["model"] == "opus"
    assert settings["permissions"]["deny"] == ["Bash(rm:*)"]
    assert settings["permissions"]["allow"] == [
        "Bash(npm test:*)",
        "Read(~/.zshrc)",
        "Bash(ai-context save:*)",
        "Bash(ai-context resume:*)",
        "Bash(ai-context session save:*)",
        "Bash(ai-context session load:*)",
    ]
    assert settings["hooks"]["Notification"] == USER_SETTINGS["hooks"]["Notification"]
    assert commands_of(settings, "PostToolUse") == [
        'prettier --write "$FILE"',
        "./audit.sh",
        "ai-context hook post-tool-use",
    ]
    assert commands_of(settings, "Stop") == ["say done", "ai-context hook stop"]
    assert settings["hooks"]["SessionStart"] == [
        {
            "matcher": "startup|resume|clear|compact",
            "hooks": [
                {"type": "command", "command": "ai-context hook session-start", "timeout": 30}
            ],
        }
    ]
    assert commands_of(settings, "PreCompact") == ["ai-context hook pre-compact"]
    for name in COMMANDS:
        text = after_first[f".claude/commands/{name}.md"].decode()
        assert text.startswith("---\ndescription: ")
    assert b"name: state-sync" in after_first[".claude/skills/state-sync/SKILL.md"]

    # Twice: nothing changes, byte for byte, and it says so.
    second = setup(tmp_path, "claude")
    assert second.returncode == 0
    assert snapshot(tmp_path) == after_first
    assert all(line.startswith("unchanged") for line in second.stdout.splitlines())


def test_setup_claude_dry_run_prints_the_diff_and_writes_nothing(tmp_path: Path) -> None:
    claude = tmp_path / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text(json.dumps(USER_SETTINGS), encoding="utf-8")
    before = snapshot(tmp_path)
    done = setup(tmp_path, "claude", "--dry-run", "--every-commits", "5", "--every", "1h")
    assert done.returncode == 0, done.stderr
    assert snapshot(tmp_path) == before
    assert "+++ .claude/settings.json" in done.stdout
    assert '"command": "ai-context hook stop --every-commits 5 --every 60m"' in done.stdout
    assert "--- /dev/null\n+++ .claude/commands/task-resume.md" in done.stdout
    assert done.stdout.endswith("dry run: nothing was written\n")


def test_setup_claude_replaces_its_own_hooks_in_place(tmp_path: Path) -> None:
    first = setup(tmp_path, "claude")
    assert first.returncode == 0
    settings_path = tmp_path / ".claude" / "settings.json"
    settings = json.loads(settings_path.read_text(encoding="utf-8"))
    settings["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "say bye"}]})
    settings_path.write_text(json.dumps(settings), encoding="utf-8")
    assert setup(tmp_path, "claude", "--every-commits", "4").returncode == 0
    merged = json.loads(settings_path.read_text(encoding="utf-8"))
    assert commands_of(merged, "Stop") == ["ai-context hook stop --every-commits 4", "say bye"]


def test_setup_claude_keeps_a_command_file_the_user_wrote(tmp_path: Path) -> None:
    mine = tmp_path / ".claude" / "commands" / "task-status.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("my own /task-status\n", encoding="utf-8")
    done = setup(tmp_path, "claude")
    assert mine.read_text(encoding="utf-8") == "my own /task-status\n"
    assert "kept      .claude/commands/task-status.md (yours" in done.stdout
    setup(tmp_path, "claude", "--force")
    assert mine.read_text(encoding="utf-8").startswith("---\ndescription: What is on my plate")


def test_setup_claude_removes_its_commands_under_the_retired_names(tmp_path: Path) -> None:
    """Issue 21: /status is Claude Code's, /continue and /checkpoint its aliases of /resume and
    /rewind. Our earlier files under those names go; a user's own file stays."""
    commands = tmp_path / ".claude" / "commands"
    commands.mkdir(parents=True)
    marker = "<!-- ai-context setup: `ai-context setup claude` keeps this file current -->"
    for name in ("continue", "checkpoint", "status"):
        (commands / f"{name}.md").write_text(f"---\n---\n{marker}\nold\n", encoding="utf-8")
    (commands / "done.md").write_text("my own /done\n", encoding="utf-8")
    done = setup(tmp_path, "claude")
    assert done.returncode == 0, done.stderr
    assert "removed   .claude/commands/continue.md" in done.stdout
    left = sorted(p.name for p in commands.iterdir())
    assert left == sorted(["done.md", *(f"{name}.md" for name in COMMANDS)])


def builtin_commands() -> set[str]:
    """The vendored list of Claude Code's built-in commands and aliases (its source inside)."""
    text = (ROOT / "tests" / "samples" / "claude" / "builtin-commands.txt").read_text("utf-8")
    names = {line.split("#")[0].strip() for line in text.splitlines()}
    return names - {""}


def test_no_command_setup_writes_shadows_a_claude_code_command_or_alias(tmp_path: Path) -> None:
    builtins = builtin_commands()
    assert {"status", "continue", "checkpoint", "resume", "rewind", "compact"} <= builtins
    done = setup(tmp_path, "claude")
    assert done.returncode == 0, done.stderr
    written = {p.stem for p in (tmp_path / ".claude" / "commands").glob("*.md")}
    assert written == set(COMMANDS)
    assert written & builtins == set()
    plugin = {Path(rel).stem for rel in plugin_files() if rel.startswith("commands/")}
    assert plugin == written


def test_the_session_protocol_commands_carry_seed_004s_when_to_use(tmp_path: Path) -> None:
    assert setup(tmp_path, "claude").returncode == 0
    commands = tmp_path / ".claude" / "commands"
    save = (commands / "save-session-protocol.md").read_text(encoding="utf-8")
    load = (commands / "load-session-protocol.md").read_text(encoding="utf-8")
    assert "When to use: the session ends with unfinished work" in save
    assert "ai-context session save --from -" in save and "--overwrite" in save
    assert "When to use: a new session where sp.json exists" in load
    assert "ai-context session load" in load
    skill = (tmp_path / ".claude" / "skills" / "state-sync" / "SKILL.md").read_text("utf-8")
    assert "sp.json" in skill and "/save-session-protocol" in skill


def test_setup_claude_grants_only_the_commands_it_needs(tmp_path: Path) -> None:
    """Issue 22: no `gh:*`, no `git:*`, no `ai-context:*`; what each command may run is named."""
    claude = tmp_path / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["Bash(ai-context:*)", "Bash(npm test:*)"]}}),
        encoding="utf-8",
    )
    assert setup(tmp_path, "claude").returncode == 0
    allow = json.loads((claude / "settings.json").read_text("utf-8"))["permissions"]["allow"]
    assert "Bash(ai-context:*)" not in allow and "Bash(npm test:*)" in allow
    granted: list[str] = list(allow)
    for path in (claude / "commands").glob("*.md"):
        head = path.read_text("utf-8").split("---")[1]
        (line,) = [ln for ln in head.splitlines() if ln.startswith("allowed-tools:")]
        granted += [rule.strip() for rule in line.removeprefix("allowed-tools:").split(", ")]
    assert {"Bash(gh issue view:*)", "Bash(gh pr create:*)", "Bash(git log:*)"} <= set(granted)
    broad = [r for r in granted if r.endswith((" *)", ":*)")) and len(r.split()) < 2]
    assert broad == [], broad  # every Bash rule names its subcommand
    assert all(rule.startswith("Bash(") for rule in granted if rule not in ("Read(~/.zshrc)",))


def test_setup_claude_actor_writes_the_local_env_and_never_a_token(tmp_path: Path) -> None:
    done = setup(
        tmp_path,
        "claude",
        "--actor",
        "cc-ariel-laptop",
        "--token-from",
        "gh",
        env={"GITHUB_TOKEN": "ghp_secret_value_never_written"},
    )
    assert done.returncode == 0, done.stderr
    local = json.loads((tmp_path / ".claude" / "settings.local.json").read_text("utf-8"))
    assert local == {"env": {"AI_CONTEXT_ACTOR": "cc-ariel-laptop", "AI_CONTEXT_TOKEN_FROM": "gh"}}
    everything = b"".join(snapshot(tmp_path).values())
    assert b"ghp_secret_value_never_written" not in everything
    shared = json.loads((tmp_path / ".claude" / "settings.json").read_text("utf-8"))
    assert "env" not in shared and "AI_CONTEXT_ACTOR" not in json.dumps(shared)
    bad = setup(tmp_path, "claude", "--actor", "two words")
    assert bad.returncode == 2 and "one word" in bad.stderr


def test_setup_claude_scope_local_moves_hooks_and_permissions(tmp_path: Path) -> None:
    assert setup(tmp_path, "claude").returncode == 0
    assert setup(tmp_path, "claude", "--scope", "local").returncode == 0
    claude = tmp_path / ".claude"
    shared = json.loads((claude / "settings.json").read_text("utf-8"))
    local = json.loads((claude / "settings.local.json").read_text("utf-8"))
    assert "hooks" not in shared  # no hook runs twice
    assert commands_of(local, "SessionStart") == ["ai-context hook session-start"]
    assert "Bash(ai-context save:*)" in local["permissions"]["allow"]


def test_hooks_work_with_no_ai_context_on_path(tmp_path: Path) -> None:
    """`uvx ai-context setup claude`: no ai-context on PATH. The hooks then name the Python
    that ran setup, and run as Claude Code runs them (a shell, the payload on stdin)."""
    bare = {"PATH": "/usr/bin:/bin"}
    done = setup(tmp_path, "claude", "--runner", "auto", env=bare)
    assert done.returncode == 0, done.stderr
    assert "note: the hooks and commands run" in done.stdout
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text("utf-8"))
    (command,) = commands_of(settings, "Stop")
    assert command.endswith(" -m ai_context hook stop") and sys.executable in command
    resume = (tmp_path / ".claude" / "commands" / "task-resume.md").read_text("utf-8")
    assert f"{sys.executable} -m ai_context resume" in resume
    payload = json.dumps({"hook_event_name": "Stop", "cwd": str(tmp_path)})
    ran = subprocess.run(
        ["/bin/sh", "-c", command],
        input=payload,
        capture_output=True,
        text=True,
        env={**bare, "PYTHONPATH": str(ROOT / "src"), "GITHUB_REPOSITORY": "acme/shop"},
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, "", "")  # no task yet: nothing to say
    uvx = setup(tmp_path, "claude", "--runner", "uvx", "--dry-run")
    assert '"command": "uvx ai-context hook stop"' in uvx.stdout


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not JSON (line 1"),
        ('{"hooks": []}', '"hooks" is not a JSON object'),
        ('{"permissions": {"allow": "all"}}', '"permissions.allow" is not a JSON array'),
    ],
)
def test_setup_claude_refuses_settings_it_cannot_merge(
    tmp_path: Path, content: str, message: str
) -> None:
    claude = tmp_path / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text(content, encoding="utf-8")
    before = snapshot(tmp_path)
    done = setup(tmp_path, "claude", "--format", "json")
    assert done.returncode == 2
    assert message in done.stderr
    assert "nothing was written" in done.stderr
    error = json.loads(done.stdout)
    assert error["exit"] == 2 and message in error["error"]
    assert snapshot(tmp_path) == before


def test_setup_agents_md_adds_then_updates_its_section_only(tmp_path: Path) -> None:
    agents = tmp_path / "AGENTS.md"
    agents.write_text("# Agents\r\n\r\nRun `make test` before pushing.\r\n", encoding="utf-8")
    assert setup(tmp_path, "agents-md").returncode == 0
    text = agents.read_bytes().decode("utf-8")
    assert text.startswith("# Agents\r\n\r\nRun `make test` before pushing.\r\n\r\n<!-- ai")
    assert text.count(SECTION_BEGIN) == 1 and text.count(SECTION_END) == 1
    assert "ai-context resume" in text

    # The user edits around it (and inside it); a rerun restores only the section.
    edited = (
        text.replace("Run `make test`", "Run `make lint test`")
        + "\r\n## Style\r\n\r\nShort functions.\r\n"
    )
    edited = edited.replace("ai-context resume [ISSUE]", "something else")
    agents.write_bytes(edited.encode("utf-8"))
    assert setup(tmp_path, "agents-md").returncode == 0
    final = agents.read_bytes().decode("utf-8")
    assert final.startswith("# Agents\r\n\r\nRun `make lint test` before pushing.")
    assert final.endswith("<!-- ai-context:end -->\r\n\r\n## Style\r\n\r\nShort functions.\r\n")
    assert "\n" not in final.replace("\r\n", "")  # one newline style throughout
    assert "ai-context resume [ISSUE]" in final and "something else" not in final
    assert setup(tmp_path, "agents-md").stdout == "unchanged AGENTS.md\n"


def test_merge_section_refuses_broken_markers() -> None:
    with pytest.raises(SetupError, match="1 begin and 0 end markers"):
        merge_section(f"x\n{SECTION_BEGIN}\ny\n", "ours")
    with pytest.raises(SetupError, match="begin before end"):
        merge_section(f"{SECTION_END}\n{SECTION_BEGIN}\n", "ours")
    assert merge_section("", "ours") == f"{SECTION_BEGIN}\nours\n{SECTION_END}\n"


def test_merge_settings_leaves_foreign_shapes_and_shares_groups() -> None:
    shared = {
        "hooks": {
            "Stop": [
                "odd entry",
                {"hooks": [{"command": "ai-context hook stop --every 5m"}, {"command": "x"}]},
            ]
        }
    }
    ours = {"Stop": [{"hooks": [{"type": "command", "command": "ai-context hook stop"}]}]}
    merged = merge_settings(shared, ours, [])
    assert merged["hooks"]["Stop"] == ["odd entry", {"hooks": [{"command": "x"}]}, *ours["Stop"]]
    assert shared["hooks"]["Stop"][1]["hooks"][0]["command"].endswith("5m")  # input untouched
    assert not is_ours({"command": "ai-contexts hook"}) and not is_ours("ai-context hook")


def test_the_repositorys_plugin_folder_is_up_to_date() -> None:
    folder = ROOT / "integrations" / "claude-code"
    wanted = plugin_files()
    found = {
        str(p.relative_to(folder)): p.read_text(encoding="utf-8")
        for p in folder.rglob("*")
        if p.is_file()
    }
    assert found == wanted, "run `ai-context setup claude-plugin` and commit the result"
    manifest = json.loads(wanted[".claude-plugin/plugin.json"])
    assert manifest["name"] == "ai-context"
    hooks = json.loads(wanted["hooks/hooks.json"])["hooks"]
    assert set(hooks) == {"SessionStart", "Stop", "PostToolUse", "PreCompact"}
    assert hooks["PostToolUse"][0]["matcher"] == "Bash"
    skill = wanted["skills/state-sync/SKILL.md"]
    assert skill.startswith("---\nname: state-sync\ndescription: ")
