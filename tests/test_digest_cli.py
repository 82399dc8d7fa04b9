"""`ai-context digest`, `summary` and `status` over the bundled examples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, run_cli

NOW = ["--now", "2026-05-27T09:00:00Z"]


def test_digest_markdown_of_the_examples() -> None:
    code, out, _ = run_cli(["digest", "--issues-dir", str(EXAMPLES), "--format", "md", *NOW])
    assert code == 0
    assert out.startswith("## AI Context digest — Wednesday 27 May 2026")
    assert "**🔴 3 stuck · 🟡 1 in review · 🔵 2 in progress · 🟢 1 shipped**" in out
    assert "Export invoices as CSV \\| monthly" in out
    assert "[//]: # (ai-context-digest:v2:" in out


def test_digest_json_has_the_documented_shape() -> None:
    code, out, _ = run_cli(["digest", "--issues-dir", str(EXAMPLES), "--format", "json", *NOW])
    data = json.loads(out)
    assert code == 0 and data["window_hours"] == 24
    # Stuck by severity (a broken block, then blocked, then stale), then the oldest first.
    assert [e["number"] for e in data["categories"]["stuck"]] == [102, 104, 103]
    assert data["categories"]["shipped"][0]["reasons"] == ["closed as completed 4h ago"]


def test_digest_slack_json_is_a_list_of_webhook_payloads() -> None:
    for fmt in ("slack-json", "slack"):
        code, out, _ = run_cli(["digest", "--issues-dir", str(EXAMPLES), "--format", fmt, *NOW])
        messages = json.loads(out)
        assert code == 0 and len(messages) == 1
        assert messages[0]["blocks"][0]["type"] == "header"


def test_window_and_stale_after_options() -> None:
    _, out, _ = run_cli(
        [
            "digest",
            "--issues-dir",
            str(EXAMPLES),
            "--format",
            "json",
            "--window",
            "1h",
            "--stale-after",
            "7d",
            *NOW,
        ]
    )
    data = json.loads(out)
    assert data["counts"] == {"shipped": 0, "in_review": 1, "in_progress": 3, "stuck": 2}


def test_previous_digest_gives_changes(tmp_path: Path) -> None:
    _, first, _ = run_cli(["digest", "--issues-dir", str(EXAMPLES), "--format", "md", *NOW])
    previous = tmp_path / "yesterday.md"
    previous.write_text(first, encoding="utf-8")
    code, out, _ = run_cli(
        [
            "digest",
            "--issues-dir",
            str(EXAMPLES),
            "--now",
            "2026-05-28T09:00:00Z",
            "--previous",
            str(previous),
            "--format",
            "json",
        ]
    )
    data = json.loads(out)
    assert code == 0 and data["previous"]["status"] == "restored"
    moved = {c["number"]: c["moved_from"] for c in data["changes"]}
    assert moved == {101: "in_progress", 105: "in_review", 107: "in_progress"}


def test_summary_of_one_task() -> None:
    code, out, _ = run_cli(
        ["summary", "#104", "--issues-dir", str(EXAMPLES), "--format", "md", *NOW]
    )
    assert code == 0
    assert out.startswith("## \\#104 SSO login")
    assert "**Stuck**" in out and "Map IdP groups to roles (blocked)" in out
    code, out, _ = run_cli(
        ["summary", "104", "--issues-dir", str(EXAMPLES), "--format", "json", *NOW]
    )
    assert json.loads(out)["category"] == "stuck"


def test_status_of_one_actor_and_of_all() -> None:
    md = ("--format", "md")
    code, out, _ = run_cli(["status", "cc-dana-desktop", "--issues-dir", str(EXAMPLES), *md, *NOW])
    assert code == 0
    assert out.index("#103") < out.index("#106")  # stuck before shipped
    _, everyone, _ = run_cli(["status", "--issues-dir", str(EXAMPLES), *md, *NOW])
    assert everyone.count("\n## ") + everyone.startswith("## ") == 5
    _, same, _ = run_cli(
        ["status", "--actor", "cc-dana-desktop", "--issues-dir", str(EXAMPLES), *md, *NOW]
    )
    assert same == out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["digest", "--issues-dir", "no/such/dir"], "not a directory"),
        (["digest", "--issues-dir", str(EXAMPLES), "--templates", "no/such/dir"], "does not exist"),
        (["summary", "abc", "--issues-dir", str(EXAMPLES)], "not an issue number"),
        (["summary", "999", "--issues-dir", str(EXAMPLES)], "no issue #999"),
        (["status", "a", "--actor", "b", "--issues-dir", str(EXAMPLES)], "give the actor once"),
    ],
)
def test_bad_usage_exits_2_with_a_message(argv: list[str], message: str) -> None:
    code, out, err = run_cli([*argv])
    assert code == 2 and out == ""
    assert message in err


def test_a_broken_user_template_exits_2(tmp_path: Path) -> None:
    (tmp_path / "digest.md.j2").write_text("{{ digest.nope }}", encoding="utf-8")
    code, _, err = run_cli(
        [
            "digest",
            "--issues-dir",
            str(EXAMPLES),
            "--templates",
            str(tmp_path),
            "--format",
            "md",
            *NOW,
        ]
    )
    assert code == 2 and "template error" in err


def test_a_user_template_replaces_the_bundled_one(tmp_path: Path) -> None:
    (tmp_path / "digest.md.j2").write_text(
        "{% for s in sections %}{{ s.title }}={{ s.count }};{% endfor %}\n", encoding="utf-8"
    )
    _, out, _ = run_cli(
        [
            "digest",
            "--issues-dir",
            str(EXAMPLES),
            "--templates",
            str(tmp_path),
            "--format",
            "md",
            *NOW,
        ]
    )
    # `sections` come in reading order: what needs someone first.
    assert out == "Stuck=3;In review=1;In progress=2;Shipped=1;\n"


def test_offline_reports_read_the_config_file_as_the_action_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One configuration: `stale-after` and `digest.window` in .github/ai-context.yml reach the
    offline reports too (they read no file before), and a flag still wins over the file."""
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "ai-context.yml").write_text(
        "stale-after: 9999h\ndigest: {window: 36h}\n", encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    _, out, _ = run_cli(["report", "--issues-dir", str(EXAMPLES), "--format", "json", *NOW])
    codes = {r["number"]: [f["code"] for f in r["findings"]] for r in json.loads(out)}
    assert codes[103] == []  # not stale after 9999h
    _, out, _ = run_cli(["digest", "--issues-dir", str(EXAMPLES), "--format", "json", *NOW])
    assert json.loads(out)["window_hours"] == 36
    _, out, _ = run_cli(
        ["report", "--issues-dir", str(EXAMPLES), "--format", "json", "--stale-after", "1h", *NOW]
    )
    assert "AIC304" in {f["code"] for r in json.loads(out) for f in r["findings"]}
