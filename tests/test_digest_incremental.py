"""The digest over what changed (jobs/digest/facts.py, rules/digest/facts.py): unchanged tasks
come from the facts the digest stored, a rerun where nothing changed renders and writes
nothing, and stored facts that do not match the run state are not used.

A property first: a task restored from its facts classifies exactly as the task itself, at
any time; then scheduled runs of `python -m ai_context action` against the loopback GitHub,
over one repository and over several (`repositories:`)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai_context.core.events import Commit
from ai_context.core.models import Issue
from ai_context.rules.checks import check_body
from ai_context.rules.digest.build import DigestConfig, digest_from_checked
from ai_context.rules.digest.facts import chunks, facts_of, read_chunk, restore
from tests.actionrun import ActionRun, scheduled
from tests.conftest import SEED_BLOCK
from tests.fakes import GitHubFake

BOT = "github-actions[bot]"
T0 = datetime(2026, 5, 26, 15, 0, tzinfo=UTC)
PHASES = ("implementing (chunk 2 of 5)", "in review", "blocked", "testing", "done", "cancelled")


def body(n: int) -> str:
    """Blocks of every kind the digest tells apart: phases, blockers, plans, errors."""
    updated = (T0 - timedelta(minutes=97 * n % 5000)).strftime("%Y-%m-%dT%H:%M:%SZ")
    steps = "\n".join(
        f"  {i}. Step {i} of {n} ({('done', 'in progress', 'pending', 'blocked')[(i + n) % 4]})"
        for i in range(1, 2 + n % 5)
    )
    blockers = "\n  - Waiting for `keys` | vendor" if n % 7 == 0 else " none"
    text = (
        "## AI Context\n\n"
        f"- **Active actor:** agent-{n % 5} (Claude Code)\n"
        f"- **Phase:** {PHASES[n % len(PHASES)]}\n"
        f"- **Last updated:** {updated}\n"
        f"- **Plan:**\n{steps}\n"
        "- **Files touched:** a.ts\n"
        f"- **Blockers:**{blockers}\n"
        f"- **Next step:** Step {n % 3} #12\n"
        + (f"- **Pull request:** https://github.com/o/r/pull/{n}\n" if n % 4 == 0 else "")
        + ("- **Follow-ups:**\n  - write the docs\n  - none\n" if n % 8 == 0 else "")
    )
    return text if n % 11 else text.replace("- **Files touched:** a.ts\n", "")


def issue(n: int) -> Issue:
    closed = n % 9 == 0
    return Issue(
        number=n,
        title=f"Task {n} | <b>",
        body=body(n) if n % 13 else "no block",
        state="closed" if closed else "open",
        state_reason=("completed", "not_planned")[n % 2] if closed else None,
        closed_at=T0 - timedelta(hours=n % 40) if closed else None,
        updated_at=T0 - timedelta(hours=n % 30),
        labels=("in-review",) if n % 5 == 0 else (),
        assignees=("ana", "ben")[: n % 3],
        html_url=f"https://github.com/o/r/issues/{n}",
        repository="o/r",
    )


@settings(max_examples=200, deadline=None)
@given(n=st.integers(min_value=1, max_value=400), hours=st.integers(min_value=-2, max_value=200))
def test_a_task_restored_from_its_facts_classifies_as_the_task(n: int, hours: int) -> None:
    config = DigestConfig(owners={"agent-1": "eve"})
    now = T0 + timedelta(hours=hours)
    original = issue(n)
    result = check_body(original.body, now=T0, config=config.checks())
    row = facts_of(original, result, config.review_label)
    again, again_result = restore(row, "o/r", config.review_label)
    restored = digest_from_checked([(again, again_result)], now, config)
    assert restored.entries == digest_from_checked([(original, result)], now, config).entries


def test_chunks_are_stable_and_bounded() -> None:
    config = DigestConfig()
    rows = {}
    for n in range(1, 1200):
        found = issue(n)
        rows[n] = facts_of(found, check_body(found.body, now=T0), config.review_label)
    first = chunks("o/r", rows)
    assert all(len(text) <= 60_000 for text in first.values())
    assert chunks("o/r", dict(reversed(list(rows.items())))) == first  # order does not matter
    rows[700] = [*rows[700][:1], "renamed", *rows[700][2:]]
    second = chunks("o/r", rows)
    assert [k for k in first if first[k] != second.get(k)] == ["512-768"]  # one chunk rewritten
    key, read = read_chunk(second["512-768"], "o/r") or ("", [])
    assert key == "512-768" and len(read) == 256
    assert read_chunk(second["512-768"], "o/other") is None


# --- whole runs ------------------------------------------------------------------------------

DAY_AGO = datetime.now(UTC).replace(microsecond=0) - timedelta(days=1)
REPOS = ("o/r", "acme/api", "acme/web")


@pytest.fixture
def gh() -> Iterator[GitHubFake]:
    with GitHubFake() as fake:
        for k, repo in enumerate(REPOS):
            for n in range(1, 7):
                when = DAY_AGO - timedelta(minutes=10 * n + k)
                text = SEED_BLOCK if n % 3 else SEED_BLOCK.replace("(chunk 3 of 5)", "blocked")
                at = {"created_at": when, "updated_at": when}
                fake.add_issue(repo, f"{repo} {n}", text, number=n, **at)
        yield fake


def run(gh: GitHubFake, tmp: Path, name: str, *, repos: bool = False, **env: str) -> ActionRun:
    config = "repositories: [acme/api, acme/web]\n" if repos else ""
    result = scheduled(gh, tmp / name, config, env=env, jobs="digest")
    assert result.code == 0, result.stdout + result.stderr
    return result


def digest_comments(gh: GitHubFake) -> list[str]:
    issues = gh.repos["o/r"].issues.values()
    (number,) = [i.number for i in issues if "ai-context:digest" in i.labels]
    return [c.body for c in gh.comments("o/r", number) if c.user == BOT]


@pytest.mark.parametrize("repos", [False, True])
def test_a_rerun_with_nothing_changed_renders_and_writes_nothing(
    gh: GitHubFake, tmp_path: Path, repos: bool
) -> None:
    first = run(gh, tmp_path, "1", repos=repos)
    (comment,) = digest_comments(gh)
    assert "acme/web#6" in comment if repos else "o/r 6" in comment
    run(gh, tmp_path, "2", repos=repos)  # lists the carriers the first run wrote, once
    gh.reset_requests()
    third = run(gh, tmp_path, "3", repos=repos)
    assert [r for r in gh.requests if r.method not in ("GET",)] == []
    assert gh.count() <= 2 * (3 if repos else 1)
    assert "nothing changed since the last run" in third.stdout
    assert digest_comments(gh) == [comment]
    assert "o/r 1" in third.summary and first.outputs["digest-url"] == third.outputs["digest-url"]


# What a scheduled rerun where nothing changed does not import: it renders nothing (Jinja, the
# renderers, the fork server of a user's templates), judges no task (the sticky comments),
# scrubs no session (the secret patterns), reads no payload or commit (the payload models, the
# git rules), calls no ClickUp and writes no body (the lost-update guard, difflib).
NOT_FOR_A_QUIET_RERUN = (
    "jinja2",
    "multiprocessing",
    "ai_context.adapters.templates",
    "ai_context.rules.templating",
    "ai_context.rules.digest.render",
    "ai_context.rules.digest.slack",
    "ai_context.jobs.comments",
    "ai_context.rules.scrub",
    "ai_context.rules.gitlog",
    "ai_context.core.payloads",
    "ai_context.rules.mirror.clickup",
    "ai_context.jobs.bodywrite",
    "ai_context.rules.overwrite",
    "difflib",
)


def imported(result: ActionRun) -> set[str]:
    """The modules a run with PYTHONPROFILEIMPORTTIME (`-X importtime`) imported."""
    rows = [ln.split("|")[-1] for ln in result.stderr.splitlines() if ln.startswith("import time:")]
    return {row.strip() for row in rows} - {"package"}  # "package" is the header's last column


def quiet_rerun_imports(modules: set[str]) -> list[str]:
    return sorted(
        m for m in modules if any(m == n or m.startswith(n + ".") for n in NOT_FOR_A_QUIET_RERUN)
    )


def test_a_rerun_with_nothing_changed_imports_no_renderer(gh: GitHubFake, tmp_path: Path) -> None:
    first = run(gh, tmp_path, "1", repos=True, PYTHONPROFILEIMPORTTIME="1")
    assert "jinja2" in quiet_rerun_imports(imported(first))  # the probe sees a run that renders
    run(gh, tmp_path, "2", repos=True)
    third = run(gh, tmp_path, "3", repos=True, PYTHONPROFILEIMPORTTIME="1")
    assert "nothing changed since the last run" in third.stdout
    modules = imported(third)
    assert {"github", "ai_context.jobs.digest.job"} <= modules
    assert quiet_rerun_imports(modules) == []


# Models a scheduled run where nothing changed imports but never reads: each builds its
# validator on first use (pydantic's defer_build), not when its module is imported.
BUILT_ON_FIRST_USE = (
    "ai_context.core.events:Commit",
    "ai_context.adapters.slack:SlackResult",
    "ai_context.rules.actors:Actor",
    *(
        f"ai_context.rules.digest.model:{name}"
        for name in ("Entry", "Change", "StateRead", "Digest", "StepView", "TaskSummary", "Plate")
    ),
    "ai_context.rules.gitlog.checkpoints:Checkpoint",
    "ai_context.rules.gitlog.compare:GitRules",
    "ai_context.rules.lease:Lease",
    "ai_context.rules.lease:LeaseRecord",
    "ai_context.rules.mirror.clickup:Task",
    "ai_context.rules.mirror.link:Link",
    "ai_context.rules.mirror.targets:Target",
    "ai_context.rules.stale:Verdict",
    "ai_context.rules.sticky:Op",
)


def test_models_a_quiet_rerun_never_reads_are_not_built_at_import() -> None:
    probe = (
        "import importlib, json, sys\n"
        "built = []\n"
        "for name in sys.argv[1:]:\n"
        "    module, _, model = name.partition(':')\n"
        "    if getattr(importlib.import_module(module), model).__pydantic_complete__:\n"
        "        built.append(name)\n"
        "print(json.dumps(built))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, *BUILT_ON_FIRST_USE],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout) == []
    assert Commit(sha=" AB ", message="m", timestamp=T0).sha == "ab"  # built when used


def test_a_change_is_shown_and_the_unchanged_tasks_come_from_the_facts(
    gh: GitHubFake, tmp_path: Path
) -> None:
    run(gh, tmp_path, "1", repos=True)
    run(gh, tmp_path, "2", repos=True)
    gh.edit_issue("acme/web", 2, body=SEED_BLOCK.replace("(chunk 3 of 5)", "in review"))
    gh.edit_issue("acme/api", 4, state="closed", state_reason="completed")
    gh.reset_requests()
    third = run(gh, tmp_path, "3", repos=True, AI_CONTEXT_NOW="2026-05-26T16:00:00Z")
    assert "nothing changed" not in third.stdout
    (comment,) = digest_comments(gh)
    assert "acme/web#2" in comment.split("In review", 1)[1]  # moved
    assert "acme/api#4" in comment.split("Shipped", 1)[1]  # closed as completed
    for repo in REPOS:  # every task still there, the unchanged ones from the facts
        for n in (1, 5):
            assert f"{repo}#{n}" in comment if repo != "o/r" else f"o/r#{n}" in comment
    # Another repository is listed since its last run (and by label, for its own digest
    # issue, which its last digest is read from), never in full.
    listings = gh.requests_to("GET", "/repos/{owner}/{repo}/issues")
    others = [r for r in listings if r.path != "/repos/o/r/issues"]
    assert all(r.arg("since") or r.arg("labels") == "ai-context:digest" for r in others)


def test_facts_that_do_not_match_the_run_state_are_not_used(gh: GitHubFake, tmp_path: Path) -> None:
    run(gh, tmp_path, "1", repos=True)
    run(gh, tmp_path, "2", repos=True)
    (carrier,) = [
        i for i in gh.repos["o/r"].issues.values() if i.title == "ai-context run state: acme/api"
    ]
    facts = [c for c in gh.comments("o/r", carrier.number) if c.user == BOT]
    assert facts
    with gh.lock:  # a human (or a racing run) rewrote the stored facts
        facts[0].body = facts[0].body[:-40] + "AAAA" + facts[0].body[-36:]
    gh.edit_issue("acme/web", 2, body=SEED_BLOCK.replace("(chunk 3 of 5)", "in review"))
    third = run(gh, tmp_path, "3", repos=True, AI_CONTEXT_NOW="2026-05-26T16:00:00Z")
    (comment,) = digest_comments(gh)
    for n in range(1, 7):
        assert f"acme/api#{n}" in comment  # read again in full, none lost
    assert "acme/web#2" in comment.split("In review", 1)[1]
    assert third.code == 0


def test_a_rerun_an_hour_or_a_day_later_rewrites_no_comment(gh: GitHubFake, tmp_path: Path) -> None:
    """Only the ages ("28m ago") would differ: an hour later the day's comment stands, nothing
    written; the next day's digest is a comment of its own, and yesterday's is left as it was."""
    run(gh, tmp_path, "1")
    run(gh, tmp_path, "2")
    (comment,) = digest_comments(gh)
    gh.reset_requests()
    later = run(gh, tmp_path, "3", AI_CONTEXT_NOW="2026-05-26T16:00:00Z")
    assert [r for r in gh.requests if r.method != "GET"] == []
    assert "nothing changed since the last run" in later.stdout
    assert digest_comments(gh) == [comment]
    gh.reset_requests()
    run(gh, tmp_path, "4", AI_CONTEXT_NOW="2026-05-27T10:00:00Z")  # before any task goes stale
    assert [r.path for r in gh.requests if r.method == "PATCH" and "/comments/" in r.path] == []
    first, second = digest_comments(gh)
    assert first == comment and "2026-05-27" in second.split("\n", 1)[0]
    assert "No changes." in second


def test_a_change_the_digest_does_not_show_rewrites_no_comment(
    gh: GitHubFake, tmp_path: Path
) -> None:
    """An issue edited where the digest reads nothing: the digest renders again an hour later,
    differs from the day's comment only in its ages, and leaves that comment as it was."""
    run(gh, tmp_path, "1")
    run(gh, tmp_path, "2")
    (comment,) = digest_comments(gh)
    (number,) = [
        i.number for i in gh.repos["o/r"].issues.values() if "ai-context:digest" in i.labels
    ]
    (ours,) = [c.id for c in gh.comments("o/r", number) if c.user == BOT]
    gh.edit_issue("o/r", 1, body=SEED_BLOCK + "\n\nA note below the block.\n")
    gh.reset_requests()
    later = run(gh, tmp_path, "3", AI_CONTEXT_NOW="2026-05-26T16:00:00Z")
    assert "nothing changed" not in later.stdout  # it read the change and rendered
    assert [r for r in gh.requests if r.path.endswith(f"/comments/{ours}")] == []
    assert digest_comments(gh) == [comment]
    assert "unchanged" in later.summary
