"""The Action end to end: `python -m ai_context` as a process against the loopback GitHub."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.actionrun import run_action
from tests.conftest import SEED_BLOCK
from tests.fakes import GitHubFake

REFERENCE = Path(__file__).resolve().parent / "samples" / "github"  # see samples/README.md
T0 = datetime(2026, 5, 26, 15, 0, tzinfo=UTC)
BOT = "github-actions[bot]"
COMMENTS = "/repos/{owner}/{repo}/issues/{number}/comments"
INCOMPLETE = "## AI Context\n\n- **Active actor:** cc-x\n- **Phase:** planning\n\nHuman notes."
TOKEN = "ghs_e2eSecretToken0123456789abcdefABCDEF"


@pytest.fixture
def gh() -> Iterator[GitHubFake]:
    with GitHubFake(token=TOKEN, now=T0) as fake:
        fake.add_repo("o/r")
        yield fake


def reference(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((REFERENCE / name).read_text(encoding="utf-8"))
    return data


def issue_event(
    gh: GitHubFake, number: int, action: str = "edited", **extra: Any
) -> dict[str, Any]:
    """A payload shaped like the reference webhook, carrying the fake's current issue."""
    payload = copy.deepcopy(reference("issues/edited.payload.json"))
    issue = gh.issue("o/r", number)
    payload["action"] = action
    payload["issue"].update(
        number=number,
        body=issue.body,
        title=issue.title,
        labels=[{"name": n} for n in issue.labels],
        comments=len(gh.comments("o/r", number)),
        html_url=f"https://github.com/o/r/issues/{number}",
    )
    payload["repository"]["full_name"] = "o/r"
    payload.update(extra)
    return payload


def run(gh: GitHubFake, tmp: Path, event: str, payload: dict[str, Any], **kw: Any) -> Any:
    env = {"AI_CONTEXT_NOW": "2026-05-26T15:00:00Z", **kw.pop("extra_env", {})}
    kw.setdefault("token", TOKEN)
    return run_action(tmp, gh.url, event, payload, extra_env=env, **kw)


def ours(gh: GitHubFake, number: int) -> list[Any]:
    return [c for c in gh.comments("o/r", number) if c.user == BOT]


def test_edited_issue_gets_one_comment_and_labels_and_rerun_adds_none(
    gh: GitHubFake, tmp_path: Path
) -> None:
    gh.add_issue("o/r", "Task", INCOMPLETE, number=3)
    payload = issue_event(gh, 3, changes={"body": {"from": "old"}})
    first = run(gh, tmp_path / "1", "issues", payload)
    assert first.code == 0, first.stderr
    comments = ours(gh, 3)
    assert len(comments) == 1 and "required field" in comments[0].body
    assert set(gh.issue("o/r", 3).labels) == {"ai-context:invalid", "ai-context:incomplete"}
    assert first.outputs["errors"] == "4" and first.outputs["findings"] >= "4"
    assert "::error title=AIC201 in #3::" in first.stdout
    assert "| [\\#3 Task](https://github.com/o/r/issues/3) |" in first.summary

    gh.reset_requests()
    second = run(gh, tmp_path / "2", "issues", issue_event(gh, 3, changes={"body": {"from": "x"}}))
    assert second.code == 0
    assert len(ours(gh, 3)) == 1
    writes = [r for r in gh.requests if r.method in ("POST", "PATCH", "DELETE")]
    assert writes == []  # unchanged findings: nothing rewritten


def test_fixed_block_turns_comment_all_clear_and_removes_labels(
    gh: GitHubFake, tmp_path: Path
) -> None:
    gh.add_issue("o/r", "Task", INCOMPLETE, number=3)
    run(gh, tmp_path / "1", "issues", issue_event(gh, 3, changes={"body": {"from": "old"}}))
    gh.edit_issue("o/r", 3, body=SEED_BLOCK + "\n\nHuman notes.")
    result = run(
        gh, tmp_path / "2", "issues", issue_event(gh, 3, changes={"body": {"from": INCOMPLETE}})
    )
    assert result.code == 0, result.stderr
    [comment] = ours(gh, 3)
    assert "no findings now" in comment.body
    assert gh.issue("o/r", 3).labels == []


def test_bot_sender_and_unchanged_block_are_skipped_quietly(gh: GitHubFake, tmp_path: Path) -> None:
    gh.add_issue("o/r", "Task", INCOMPLETE, number=3)
    by_bot = issue_event(
        gh, 3, sender={"login": BOT, "type": "Bot"}, changes={"body": {"from": ""}}
    )
    result = run(gh, tmp_path / "1", "issues", by_bot)
    assert result.code == 0 and "the bot's own change" in result.stdout
    same_block = issue_event(
        gh, 3, changes={"body": {"from": INCOMPLETE.replace("Human", "Other")}}
    )
    result = run(gh, tmp_path / "2", "issues", same_block)
    assert "the edit left the block as it was" in result.stdout
    title_only = issue_event(gh, 3, changes={"title": {"from": "Old"}})
    assert "did not touch the body" in run(gh, tmp_path / "3", "issues", title_only).stdout
    assert gh.count() == 0  # not one API call for any of them


def test_push_checks_issues_named_by_commits(gh: GitHubFake, tmp_path: Path) -> None:
    gh.add_issue("o/r", "Named", INCOMPLETE, number=5)
    gh.add_issue("o/r", "Not named", INCOMPLETE, number=6)
    payload = copy.deepcopy(reference("push/with-new-branch.payload.json"))
    payload["commits"][0]["message"] = "Add repository\n\nAI-Context-Issue: 5"
    result = run(gh, tmp_path, "push", payload)
    assert result.code == 0, result.stderr
    assert len(ours(gh, 5)) == 1 and ours(gh, 6) == []


def test_schedule_checks_every_open_task(gh: GitHubFake, tmp_path: Path) -> None:
    gh.add_issue("o/r", "Fine", SEED_BLOCK, number=1)
    gh.add_issue("o/r", "Broken", INCOMPLETE, number=2)
    gh.add_issue("o/r", "Not a task", "Just a bug report.", number=3)
    gh.add_pull_request("o/r", "PR", INCOMPLETE)
    result = run(
        gh, tmp_path, "schedule", {"schedule": "17 6 * * *"}, inputs={"stale-after": "30d"}
    )
    assert result.code == 0, result.stderr
    assert [len(ours(gh, n)) for n in (1, 2, 3, 4)] == [0, 1, 0, 0]
    assert "Checked 2 task(s) (1 other open issue(s) have no AI Context block" in result.summary


def test_dry_run_prints_writes_and_makes_none(gh: GitHubFake, tmp_path: Path) -> None:
    gh.add_issue("o/r", "Broken", INCOMPLETE, number=2)
    result = run(gh, tmp_path, "workflow_dispatch", {}, inputs={"dry-run": "true"})
    assert result.code == 0
    assert "[dry-run] would create comment on #2" in result.stdout
    assert (
        "[dry-run] would add labels ai-context:incomplete, ai-context:invalid to #2"
        in result.stdout
    )
    assert [r for r in gh.requests if r.method != "GET"] == []


def test_fail_on_error_exits_1(gh: GitHubFake, tmp_path: Path) -> None:
    gh.add_issue("o/r", "Broken", INCOMPLETE, number=2)
    assert run(gh, tmp_path, "schedule", {}, inputs={"fail-on": "error"}).code == 1


def test_502_then_200_on_the_list_is_retried(gh: GitHubFake, tmp_path: Path) -> None:
    gh.add_issue("o/r", "Broken", INCOMPLETE, number=2)
    gh.fail_next("GET", "/repos/o/r/issues", status=502)
    result = run(gh, tmp_path, "schedule", {})
    assert result.code == 0, result.stderr
    assert len(ours(gh, 2)) == 1
    assert "(1 GitHub retries)" in result.stdout


def test_persistent_500_exits_3_with_a_clear_message(gh: GitHubFake, tmp_path: Path) -> None:
    gh.fail_next("GET", "/repos/o/r/issues", status=500, times=None)
    result = run(gh, tmp_path, "schedule", {}, extra_env={"AI_CONTEXT_HTTP_BACKOFF": "0"})
    assert result.code == 3
    assert "GitHub kept failing to list issues after retries" in result.stdout


def test_secondary_rate_limit_waits_and_succeeds(gh: GitHubFake, tmp_path: Path) -> None:
    gh.add_issue("o/r", "Broken", INCOMPLETE, number=2)
    seen: list[float] = []
    gh.before("GET", "/repos/o/r/issues", lambda _req: seen.append(time.monotonic()), times=2)
    gh.secondary_rate_limit_next("GET", "/repos/o/r/issues", retry_after=1)
    result = run(gh, tmp_path, "schedule", {})
    assert result.code == 0, result.stderr
    assert len(ours(gh, 2)) == 1
    assert len(seen) == 2 and seen[1] - seen[0] >= 0.9  # it obeyed retry-after


def test_bad_config_exits_2_naming_the_setting(gh: GitHubFake, tmp_path: Path) -> None:
    result = run(gh, tmp_path, "schedule", {}, inputs={"stale-after": "whenever"})
    assert result.code == 2
    assert "setting stale-after (input stale-after)" in result.stdout


def test_token_never_appears_in_any_output(gh: GitHubFake, tmp_path: Path) -> None:
    gh.add_issue("o/r", "Broken", INCOMPLETE, number=2)
    result = run(gh, tmp_path, "schedule", {})
    assert result.code == 0
    masked = result.stdout.replace(f"::add-mask::{TOKEN}\n", "")
    assert TOKEN not in masked + result.stderr + result.summary + json.dumps(result.outputs)
    bad = run(gh, tmp_path / "bad", "schedule", {}, token=TOKEN[:-1] + "X")
    assert bad.code == 2 and "check the github-token input" in bad.stdout
    assert TOKEN[:-1] not in bad.stdout.replace(f"::add-mask::{TOKEN[:-1]}X\n", "") + bad.stderr


def test_outputs_use_random_delimiters(gh: GitHubFake, tmp_path: Path) -> None:
    result = run(gh, tmp_path, "schedule", {})
    raw = (tmp_path / "output.txt").read_text(encoding="utf-8")
    assert "ghadelimiter_" in raw and "EOF" not in raw
    assert set(result.outputs) >= {
        "findings",
        "errors",
        "stale",
        "mirrored",
        "digest-url",
        "api-calls",
    }
    assert "API calls: GitHub" in result.stdout


def test_failed_comment_post_is_not_blindly_retried(gh: GitHubFake, tmp_path: Path) -> None:
    """A POST that failed may have landed: list again, and post only if the marker is absent."""
    gh.add_issue("o/r", "Landed", INCOMPLETE, number=2)
    gh.add_issue("o/r", "Lost", INCOMPLETE, number=3)

    def lands_anyway(_req: Any) -> None:
        gh.add_comment("o/r", 2, "<!-- ai-context:findings -->\nposted before the 502", user=BOT)

    gh.before("POST", "/repos/o/r/issues/2/comments", lands_anyway)
    gh.fail_next("POST", "/repos/o/r/issues/2/comments", status=502)
    gh.fail_next("POST", "/repos/o/r/issues/3/comments", status=502)
    result = run(gh, tmp_path, "schedule", {})
    assert result.code == 0, result.stdout + result.stderr
    assert len(ours(gh, 2)) == 1  # found the one that landed; did not post a second
    assert len(ours(gh, 3)) == 1  # the lost one was posted again, once
    assert gh.count("POST", "/repos/o/r/issues/2/comments") == 1
    assert gh.count("POST", "/repos/o/r/issues/3/comments") == 2


def test_race_duplicates_are_cleaned_oldest_kept(gh: GitHubFake, tmp_path: Path) -> None:
    gh.add_issue("o/r", "Raced", INCOMPLETE, number=2)
    first = gh.add_comment("o/r", 2, "<!-- ai-context:findings -->\nrun A", user=BOT)
    gh.clock.advance(seconds=5)
    gh.add_comment("o/r", 2, "<!-- ai-context:findings -->\nrun B", user=BOT)
    result = run(gh, tmp_path, "schedule", {})
    assert result.code == 0, result.stderr
    [kept] = ours(gh, 2)
    assert kept.id == first.id and "required field" in kept.body


def test_opened_with_empty_body_is_quiet(gh: GitHubFake, tmp_path: Path) -> None:
    payload = reference("issues/opened.with-empty-body.payload.json")
    gh.add_issue("o/r", "Empty", None, number=payload["issue"]["number"])
    payload["repository"]["full_name"] = "o/r"
    result = run(gh, tmp_path, "issues", payload)
    assert result.code == 0, result.stderr
    assert gh.requests == [] or all(r.method == "GET" for r in gh.requests)
    assert gh.comments("o/r", payload["issue"]["number"]) == []


def test_ghes_prefix_is_honoured(tmp_path: Path) -> None:
    with GitHubFake(token=TOKEN, now=T0, prefix="/api/v3") as ghes:
        ghes.add_issue("o/r", "Broken", INCOMPLETE, number=2)
        result = run(ghes, tmp_path, "schedule", {})
        assert result.code == 0, result.stderr
        assert len(ours(ghes, 2)) == 1
        # REST under /api/v3; GraphQL (the run state's edit history) at /api/graphql.
        assert all(r.path.startswith("/api/v3/") or r.path == "/api/graphql" for r in ghes.requests)


def push_payload(*commits: tuple[str, str, list[str]]) -> dict[str, Any]:
    """A push payload shaped like the reference one, with the given (message, time, added)."""
    payload = copy.deepcopy(reference("push/with-new-branch.payload.json"))
    template = payload["commits"][0]
    payload["commits"] = []
    for i, (message, timestamp, added) in enumerate(commits):
        commit = copy.deepcopy(template)
        commit.update(id=f"{i + 1:040x}", message=message, timestamp=timestamp, added=added)
        commit["modified"], commit["removed"] = [], []
        payload["commits"].append(commit)
    payload["head_commit"] = payload["commits"][-1]
    return payload


def test_push_naming_two_issues_flags_only_the_one_behind_git(
    gh: GitHubFake, tmp_path: Path
) -> None:
    current = SEED_BLOCK.replace("2026-05-26T14:32:00Z", "2026-05-26T18:00:00Z")
    gh.add_issue("o/r", "Behind", SEED_BLOCK, number=7)  # Last updated 14:32
    gh.add_issue("o/r", "Current", current, number=8)  # Last updated 18:00
    payload = push_payload(
        (
            "Wire booking service\n\nRefs #7",
            "2026-05-26T17:45:00Z",
            ["apps/api/src/booking/service.ts"],
        ),
        (
            "Tests for the repository (#8)",
            "2026-05-26T17:50:00Z",
            ["apps/api/src/booking/repository.ts"],
        ),
    )
    result = run(
        gh, tmp_path, "push", payload, extra_env={"AI_CONTEXT_NOW": "2026-05-26T18:05:00Z"}
    )
    assert result.code == 0, result.stdout + result.stderr
    [comment] = ours(gh, 7)
    assert "AIC501" in comment.body and "block is behind git" in comment.body
    assert ours(gh, 8) == []


def test_push_of_a_session_file_with_a_secret_is_an_error(gh: GitHubFake, tmp_path: Path) -> None:
    secret = "ghp_" + "R4nd0mLooking" + "T0kenValue1234567890abc"
    workspace = tmp_path / "workspace"
    workspace.mkdir(parents=True)
    session = (
        '{"metadata":{"version":"2.0","created":"2026-05-26T10:00:00Z",'
        '"updated":"2026-05-26T14:00:00Z","git_branch":null,"git_commit":null},'
        '"tasks":[{"id":"TASK_001","title":"Fix auth","status":"pending",'
        '"created":"2026-05-26T10:00:00Z","completed":null,"consolidated":false,'
        f'"consolidated_count":0,"context":"token {secret}"}}]}}'
    )
    (workspace / "sp.json").write_text(session, encoding="utf-8")
    payload = push_payload(("Save session", "2026-05-26T14:00:00Z", ["sp.json"]))
    result = run(gh, tmp_path, "push", payload, inputs={"fail-on": "error"})
    assert result.code == 1, result.stdout + result.stderr
    assert "::error title=AIC530 in sp.json,file=sp.json,line=1::" in result.stdout
    assert secret not in result.stdout + result.stderr + result.summary


def test_a_warnings_only_comment_turns_all_clear_on_the_fixing_edit(
    gh: GitHubFake, tmp_path: Path
) -> None:
    unmarked = SEED_BLOCK.replace("Open PR (pending)", "Open PR")  # AIC105, a warning
    gh.add_issue("o/r", "Task", unmarked, number=3)
    run(gh, tmp_path / "1", "issues", issue_event(gh, 3, changes={"body": {"from": "old"}}))
    [comment] = ours(gh, 3)
    assert "AIC105" in comment.body and gh.issue("o/r", 3).labels == []  # no label for warnings
    gh.edit_issue("o/r", 3, body=SEED_BLOCK)
    run(gh, tmp_path / "2", "issues", issue_event(gh, 3, changes={"body": {"from": unmarked}}))
    [comment] = ours(gh, 3)
    assert "no findings now" in comment.body


def test_a_pull_request_named_by_a_merge_commit_is_not_a_task(
    gh: GitHubFake, tmp_path: Path
) -> None:
    gh.add_pull_request("o/r", "Feature", INCOMPLETE)  # number 1
    payload = push_payload(("Merge pull request #1 from o/feature", "2026-05-26T14:00:00Z", []))
    result = run(gh, tmp_path, "push", payload)
    assert result.code == 0, result.stdout + result.stderr
    assert "#1 named by a commit is a pull request; skipped" in result.stdout
    assert gh.comments("o/r", 1) == [] and gh.issue("o/r", 1).labels == []


def test_a_scan_goes_on_past_a_block_with_an_odd_actor_line(gh: GitHubFake, tmp_path: Path) -> None:
    """A no-break space after the actor id (pasted from an editor) once raised inside the
    parser and stopped the whole scheduled run with exit 3; now it is read like a space, and a
    value the model refuses is a finding (AIC103) on that issue alone."""
    odd = SEED_BLOCK.replace("cc-ariel-laptop (", "cc-ariel-laptop\u00a0(", 1)
    assert odd != SEED_BLOCK
    gh.add_issue("o/r", "good", SEED_BLOCK)
    gh.add_issue("o/r", "odd", odd)
    gh.add_issue("o/r", "no id", SEED_BLOCK.replace("cc-ariel-laptop (", "`` (", 1))
    result = run_action(
        tmp_path,
        gh.url,
        "schedule",
        {"schedule": "0 6 * * *"},
        token=TOKEN,
        inputs={"jobs": "check"},
        extra_env={"AI_CONTEXT_NOW": "2026-05-26T15:00:00Z"},
    )
    assert result.code in (0, 1), result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    comments = [c.body for c in gh.comments("o/r", 3)]
    assert any("AIC103" in body for body in comments)  # the issue without an id is told
    assert not any("AIC103" in c.body for c in gh.comments("o/r", 2))  # the no-break space is fine
