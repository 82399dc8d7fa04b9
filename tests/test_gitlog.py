"""gitlog: issue references, checkpoints, push payloads, git log records and the git rules."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from ai_context.core.block.parse import parse
from ai_context.core.errors import EventError
from ai_context.core.events import Commit
from ai_context.core.payloads import commits_from_push
from ai_context.rules.gitlog.checkpoints import (
    Checkpoint,
    CheckpointProblem,
    group_by_issue,
    issues_of,
    read_checkpoint,
)
from ai_context.rules.gitlog.compare import (
    GitRules,
    behind_git,
    checkpoint_drift,
    compare_block,
    files_drift,
    path_covered,
    session_files_changed,
)
from ai_context.rules.gitlog.derive import derive
from ai_context.rules.gitlog.log import GitLogError, parse_log_record, parse_log_stream
from ai_context.rules.gitlog.refs import issues_named
from tests.conftest import SEED_BLOCK

T0 = datetime(2026, 5, 26, 14, 32, tzinfo=UTC)  # the seed block's Last updated
SEED = parse(SEED_BLOCK).block
assert SEED is not None


def checkpoint_message(text: str, issue: int, step: int | None = None) -> str:
    """A checkpoint commit's message as an agent writes it (format v1)."""
    step_part = f" [step:{step}]" if step is not None else ""
    subject = f"ai-context: {' '.join(text.split())} completed [issue:{issue}]{step_part}"
    return f"{subject}\n\nAI-Context-Checkpoint: v1\n"


def commit(
    message: str,
    *,
    at: datetime = T0,
    sha: str = "a" * 40,
    files: tuple[str, ...] = (),
    author: str = "Ariel",
) -> Commit:
    return Commit(
        sha=sha,
        message=message,
        author_name=author,
        author_email=f"{author.lower()}@example.test",
        timestamp=at,
        modified=files,
    )


# --- issues_named: one test per rule ---------------------------------------------------


def test_plain_hash_number() -> None:
    assert issues_named("Add repository #12") == [12]


@pytest.mark.parametrize(
    "message",
    [
        "Refs #12",
        "refs #12",
        "Fixes #12",
        "FIXES #12",
        "fixes: #12",
        "Closes #12",
        "closes #12",
        "Resolves #12",
        "resolved #12",
        "Work on it (#12)",
        "[#12] tidy",
    ],
)
def test_keywords_in_any_case(message: str) -> None:
    assert issues_named(message) == [12]


def test_order_of_first_mention_each_once() -> None:
    assert issues_named("Fixes #3, refs #1 and #3\n\nSee #2") == [3, 1, 2]


def test_owner_repo_reference_counts_only_for_the_given_repo() -> None:
    message = "Refs acme/api#7 and other/thing#8"
    assert issues_named(message, repo="acme/api") == [7]
    assert issues_named(message, repo="ACME/Api") == [7]
    assert issues_named(message, repo="nobody/else") == []
    assert issues_named(message) == [7, 8]


def test_trailer() -> None:
    assert issues_named("Tidy up\n\nAI-Context-Issue: 42\n") == [42]
    assert issues_named("Tidy\n\nai-context-issue: #42, 43") == [42, 43]


def test_gh_prefix() -> None:
    assert issues_named("Fix GH-5") == [5]
    assert issues_named("NOGH-5") == []


def test_issue_url() -> None:
    url = "https://github.com/acme/api/issues/9"
    assert issues_named(f"see {url}") == [9]
    assert issues_named(f"see {url}", repo="acme/api") == [9]
    assert issues_named(f"see {url}", repo="acme/other") == []
    # GitHub Enterprise Server: any host, when the repository is ours.
    assert issues_named("see https://git.corp.test/acme/api/issues/9", repo="acme/api") == [9]
    assert issues_named("see https://gitlab.test/acme/api/issues/9") == []


@pytest.mark.parametrize(
    "message",
    [
        "see https://github.com/acme/api/pull/12#issuecomment-34",
        "see https://github.com/acme/api/pull/12#discussion_r5",
        "https://example.test/page#12",
        "abc#12",
        "C# and F#",
        "&#123; is an entity",
        "#12abc is not a ref",
        "#0",
        "use `#12` literally",
        "text\n\n```\nFixes #12\n```\n",
        "~~~\n#12\n~~~",
        "path/to/file#12",
        "issue 12 without a hash",
    ],
)
def test_near_misses_name_nothing(message: str) -> None:
    assert issues_named(message) == []


@pytest.mark.parametrize(
    ("message", "named"),
    [
        ("```py`x\nFixes #3\n```\nRefs #4", [3]),  # a backtick in the info string: no fence
        ("~~~ a`b\n#5\n~~~\n#6", [6]),  # a tilde fence's info string may hold one
        ("```\n#1\n``` x\n#2\n```\n#3", [3]),  # a closing fence carries no info string
        ("    ```\n#7\n```\n#8", [7]),  # indented four: code, not a fence
    ],
)
def test_fences_open_and_close_as_github_reads_them(message: str, named: list[int]) -> None:
    assert issues_named(message) == named


def test_code_span_does_not_hide_what_follows() -> None:
    assert issues_named("run `make` then fix #4") == [4]
    assert issues_named("```\n#1\n```\nFixes #2") == [2]


# --- checkpoints ------------------------------------------------------------------------


def test_checkpoint_round_trip() -> None:
    message = checkpoint_message("Add unit tests for repository", 42, 3)
    assert message.splitlines()[0] == (
        "ai-context: Add unit tests for repository completed [issue:42] [step:3]"
    )
    assert "AI-Context-Checkpoint: v1" in message
    assert read_checkpoint(message) == Checkpoint(
        version=1, issue=42, step=3, text="Add unit tests for repository"
    )


def test_checkpoint_without_step() -> None:
    result = read_checkpoint(checkpoint_message("Research", 7))
    assert result == Checkpoint(version=1, issue=7, step=None, text="Research")


def test_unknown_version_is_reported_not_guessed() -> None:
    message = "ai-context: Add tests completed [issue:42] [step:3]\n\nAI-Context-Checkpoint: v2"
    result = read_checkpoint(message)
    assert isinstance(result, CheckpointProblem)
    assert result.kind == "unknown-version" and result.version == "v2"
    assert "unknown checkpoint format v2" in result.message


def test_checkpoint_subject_without_trailer_is_reported() -> None:
    result = read_checkpoint("ai-context: Add tests completed [issue:42] [step:3]")
    assert isinstance(result, CheckpointProblem) and result.kind == "unversioned"


def test_ordinary_commits_are_not_checkpoints() -> None:
    assert read_checkpoint("ai-context: fix the parser") is None
    assert read_checkpoint("Fixes #42") is None


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("ai-context: done [issue:42]\n\nAI-Context-Checkpoint: v1", "malformed"),
        ("Add tests completed [issue:42]\n\nAI-Context-Checkpoint: v1", "malformed"),
        ("ai-context: x completed [issue:0]\n\nAI-Context-Checkpoint: v1", "malformed"),
        ("ai-context: x completed [issue:4] [step:0]\n\nAI-Context-Checkpoint: v1", "malformed"),
        ("ai-context: x completed [issue:4]\n\nAI-Context-Checkpoint: banana", "malformed"),
        (
            "ai-context: x completed [issue:4]\n\nAI-Context-Checkpoint: v1\n"
            "AI-Context-Checkpoint: v2",
            "malformed",
        ),
    ],
)
def test_unreadable_checkpoints(message: str, kind: str) -> None:
    result = read_checkpoint(message)
    assert isinstance(result, CheckpointProblem) and result.kind == kind


def test_checkpoint_names_its_issue() -> None:
    assert issues_of(commit(checkpoint_message("Add tests", 42, 3))) == [42]
    assert issues_of(commit(checkpoint_message("Add tests", 42, 3) + "\nRefs #7")) == [7, 42]


# --- push payloads ----------------------------------------------------------------------


def push_commit(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": "6113728f27ae82c7b1a177c8d03f9e96e0adf246",
        "tree_id": "31b122c26a97cf9af023e9ddab94a82c6e77b0ea",
        "distinct": True,
        "message": "Add booking repository\n\nRefs #101",
        "timestamp": "2026-05-26T09:19:25-07:00",
        "url": "https://github.com/acme/api/commit/6113728f",
        "author": {"name": "Ariel", "email": "ariel@example.test", "username": "ariel"},
        "committer": {"name": "Ariel", "email": "ariel@example.test", "username": "ariel"},
        "added": ["apps/api/src/booking/repository.ts"],
        "removed": ["old.ts"],
        "modified": ["README.md"],
    }
    data.update(overrides)
    return data


def test_commits_from_push_payload() -> None:
    (c,) = commits_from_push({"ref": "refs/heads/main", "commits": [push_commit()]})
    assert c.sha == "6113728f27ae82c7b1a177c8d03f9e96e0adf246"
    assert c.timestamp == datetime(2026, 5, 26, 16, 19, 25, tzinfo=UTC)
    assert c.timestamp.tzinfo is UTC
    assert (c.author_name, c.author_email) == ("Ariel", "ariel@example.test")
    assert c.added == ("apps/api/src/booking/repository.ts",)
    assert c.removed == ("old.ts",) and c.modified == ("README.md",)
    assert c.files == ("apps/api/src/booking/repository.ts", "README.md", "old.ts")
    assert c.subject == "Add booking repository"
    assert issues_of(c) == [101]


def test_tag_push_has_no_commits() -> None:
    assert commits_from_push({"ref": "refs/tags/v1", "commits": []}) == ()


@pytest.mark.parametrize(
    ("payload", "where"),
    [
        ({}, "commits: Field required"),
        ({"commits": [push_commit(id=None)]}, "commits.0.id"),
        ({"commits": [push_commit(timestamp="yesterday")]}, "commits.0.timestamp"),
        ({"commits": [push_commit(timestamp="2026-05-26T09:19:25")]}, "timezone"),
        ({"commits": ["not an object"]}, "commits.0: Input should be a valid dictionary"),
    ],
)
def test_bad_payloads_say_where(payload: dict[str, Any], where: str) -> None:
    with pytest.raises(EventError, match=where.replace("[", r"\[").replace("]", r"\]")):
        commits_from_push(payload)


# --- git log records --------------------------------------------------------------------

RECORD = (
    "0123456789abcdef0123456789abcdef01234567\x1fAriel Ö\x1fariel@example.test\x1f1780000000"
    "\x1fAdd repo\n\nRefs #42\n\x1f\x00\nA\x00new file.ts\x00M\x00src/a.ts\x00D\x00gone.ts"
    "\x00T\x00link\x00"
)


def test_parse_log_record() -> None:
    c = parse_log_record(RECORD)
    assert c.sha == "0123456789abcdef0123456789abcdef01234567"
    assert c.author_name == "Ariel Ö"
    assert c.message == "Add repo\n\nRefs #42"
    assert c.timestamp == datetime.fromtimestamp(1780000000, UTC)
    assert c.added == ("new file.ts",)
    assert c.modified == ("src/a.ts", "link")
    assert c.removed == ("gone.ts",)


def test_record_without_files() -> None:
    c = parse_log_record("ab12\x1fA\x1fa@b.test\x1f1\x1fMerge\n\x1f")
    assert c.files == () and c.message == "Merge"


def test_parse_log_stream_any_chunking() -> None:
    other = RECORD.replace("0123456789abcdef", "fedcba9876543210").replace("#42", "#7")
    text = "\x1e" + RECORD + "\x1e" + other
    whole = list(parse_log_stream([text]))
    assert [c.sha[:4] for c in whole] == ["0123", "fedc"]
    for size in range(1, 40):
        chunks = [text[i : i + size] for i in range(0, len(text), size)]
        assert list(parse_log_stream(chunks)) == whole


@pytest.mark.parametrize("record", ["nonsense", "ab\x1fA\x1fa\x1fnot-a-time\x1fmsg\x1f"])
def test_bad_records_raise(record: str) -> None:
    with pytest.raises(GitLogError):
        parse_log_record(record)


# --- paths ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "entries", "covered"),
    [
        ("apps/api/src/booking/service.ts", SEED.paths, True),
        ("apps/api/src/booking/booking.module.ts", SEED.paths, True),
        ("apps/api/src/booking/other.ts", SEED.paths, False),
        ("src/a.ts", ["./src/a.ts"], True),
        ("src/deep/a.ts", ["src/"], True),
        ("src/deep/a.ts", ["src"], True),
        ("srcx/a.ts", ["src"], False),
        ("src/deep/er/a.ts", ["src/**"], True),
        ("src/a.ts", ["src/**/a.ts"], True),
        ("src/x/y/a.ts", ["src/**/a.ts"], True),
        ("src/x/a.ts", ["src/*.ts"], False),
        ("src/a.ts", ["src/*.ts"], True),
        ("test/booking.repository.spec.ts", ["*.spec.ts"], True),
        ("a/b/booking.repository.spec.ts", ["booking.repository.spec.ts"], True),
        ("a/b/c.ts", ["a/?/c.ts"], True),
        ("a/b/c.ts", ["a/[bc]/c.ts"], True),
        ("a/d/c.ts", ["a/[bc]/c.ts"], False),
        ("a/b/c.ts", [], False),
    ],
)
def test_path_covered(path: str, entries: list[str], covered: bool) -> None:
    assert path_covered(path, entries) is covered


# --- rules ------------------------------------------------------------------------------


def test_block_behind_git() -> None:
    late = commit("Refs #101", at=T0 + timedelta(hours=5), sha="b" * 40)
    (finding,) = behind_git(101, SEED, [commit("Refs #101"), late])
    assert finding.code == "AIC501" and finding.severity == "warning"
    assert "1 commit naming #101" in finding.message and "bbbbbbb" in finding.message
    assert "5h later" in finding.message


def test_behind_git_threshold() -> None:
    soon = commit("Refs #101", at=T0 + timedelta(minutes=50))
    assert behind_git(101, SEED, [soon]) == []
    rules = GitRules(behind_after=timedelta(minutes=30))
    assert [f.code for f in behind_git(101, SEED, [soon], rules=rules)] == ["AIC501"]


def test_behind_git_needs_last_updated() -> None:
    block = replace(SEED, last_updated=None)
    assert behind_git(101, block, [commit("#101", at=T0 + timedelta(days=9))]) == []


def test_files_drift() -> None:
    commits = [
        commit("#101", files=("apps/api/src/booking/service.ts", "apps/api/src/app.ts")),
        commit("#101", files=("docs/booking.md", "apps/api/src/app.ts")),
    ]
    (finding,) = files_drift(101, SEED, commits, field_lines={"files_touched": 9})
    assert finding.code == "AIC502" and finding.severity == "info" and finding.line == 9
    assert "2 files changed by commits naming #101 are not in Files touched" in finding.message
    assert finding.message.endswith("apps/api/src/app.ts, docs/booking.md")


def test_files_drift_lists_a_few() -> None:
    files = tuple(f"f{i}.txt" for i in range(13))
    (finding,) = files_drift(101, SEED, [commit("#101", files=files)])
    assert "(+3 more)" in finding.message


def test_no_drift_when_covered() -> None:
    assert files_drift(101, SEED, [commit("#1", files=("apps/api/src/booking/service.ts",))]) == []


def checkpoint_commit(step: int, *, issue: int = 101, at: datetime = T0) -> Commit:
    return commit(checkpoint_message(f"step {step}", issue, step), at=at, sha=f"{step:x}" * 8)


def test_checkpoint_step_not_done_in_block() -> None:
    findings = checkpoint_drift(101, SEED, [checkpoint_commit(3)], field_lines={"plan": 7})
    assert [(f.code, f.line) for f in findings] == [("AIC503", 7)]
    assert "completed step 3" in findings[0].message
    assert "plan says in progress" in findings[0].message


def test_checkpoint_step_done_in_block_is_fine() -> None:
    assert checkpoint_drift(101, SEED, [checkpoint_commit(1), checkpoint_commit(2)]) == []


def test_checkpoint_step_missing_from_plan() -> None:
    assert [f.code for f in checkpoint_drift(101, SEED, [checkpoint_commit(9)])] == ["AIC504"]


def test_checkpoint_of_another_issue_is_ignored() -> None:
    assert checkpoint_drift(101, SEED, [checkpoint_commit(3, issue=7)]) == []


def test_unreadable_checkpoints_are_findings() -> None:
    v2 = commit("ai-context: x completed [issue:101]\n\nAI-Context-Checkpoint: v2")
    bare = commit("ai-context: x completed [issue:101] [step:1]")
    codes = [f.code for f in checkpoint_drift(101, SEED, [v2, bare])]
    assert codes == ["AIC505", "AIC506"]


def test_push_naming_two_issues_flags_only_the_one_behind() -> None:
    other = replace(SEED, last_updated=T0 + timedelta(hours=10))
    commits = [
        commit("Refs #101 and #102", at=T0 + timedelta(hours=3), files=("apps/api/src/x.ts",)),
    ]
    groups = group_by_issue(commits)
    assert sorted(groups) == [101, 102]
    behind = compare_block(101, SEED, groups[101])
    fine = compare_block(102, other, groups[102])
    assert [f.code for f in behind] == ["AIC501", "AIC502"]
    assert [f.code for f in fine] == ["AIC502"]


def test_compare_block_ignores_commits_not_naming_the_issue() -> None:
    assert compare_block(101, SEED, [commit("#7", at=T0 + timedelta(days=2))]) == []


# --- derive (pure) ----------------------------------------------------------------------


def test_derive_rebuilds_the_task_from_commits() -> None:
    commits = [
        commit("Start #101", at=T0 - timedelta(days=1), sha="1" * 40, files=("a.ts",)),
        commit("Unrelated", at=T0, sha="2" * 40, files=("b.ts",)),
        checkpoint_commit(3, at=T0 + timedelta(hours=2)),
        commit(
            "More #101",
            at=T0 + timedelta(hours=3),
            sha="4" * 40,
            author="Bo",
            files=("apps/api/src/booking/service.ts", "a.ts"),
        ),
    ]
    d = derive(101, commits, SEED_BLOCK)
    assert [c.sha[0] for c in d.commits] == ["4", "3", "1"]
    assert d.first_activity == T0 - timedelta(days=1)
    assert d.last_activity == T0 + timedelta(hours=3)
    assert [(a.name, a.commits) for a in d.authors] == [("Ariel", 2), ("Bo", 1)]
    assert {f.path: (f.commits, f.covered) for f in d.files} == {
        "a.ts": (2, False),
        "apps/api/src/booking/service.ts": (1, True),
    }
    assert [e.checkpoint.step for e in d.checkpoints if e.checkpoint] == [3]
    assert [f.code for f in d.findings] == ["AIC501", "AIC502", "AIC503"]
    assert d.block == SEED


def test_derive_without_a_body() -> None:
    d = derive(101, [commit("#101", files=("x",))], None)
    assert d.block is None and d.findings == () and d.files[0].covered is None


# --- push -------------------------------------------------------------------------------


def body_with(last_updated: str) -> str:
    return SEED_BLOCK.replace("2026-05-26T14:32:00Z", last_updated)


def test_push_naming_two_issues_one_behind() -> None:
    payload = {
        "ref": "refs/heads/main",
        "commits": [
            push_commit(
                id="1" * 40,
                message="Wire booking\n\nRefs #101",
                timestamp="2026-05-26T20:00:00Z",
                added=[],
                removed=[],
                modified=["apps/api/src/booking/service.ts"],
            ),
            push_commit(
                id="2" * 40,
                message="Fixes acme/api#102 and other/repo#101",
                timestamp="2026-05-26T20:05:00Z",
                added=[],
                removed=[],
                modified=["apps/api/src/booking/repository.ts"],
            ),
        ],
    }
    grouped = group_by_issue(commits_from_push(payload), repo="acme/api")
    assert {n: [c.sha[0] for c in cs] for n, cs in grouped.items()} == {101: ["1"], 102: ["2"]}
    bodies = {101: body_with("2026-05-26T14:32:00Z"), 102: body_with("2026-05-26T20:10:00Z")}
    findings = {}
    for number, body in bodies.items():  # as the check job compares a push with each block
        parsed = parse(body)
        assert parsed.block is not None
        findings[number] = compare_block(
            number,
            parsed.block,
            commits_from_push(payload),
            repo="acme/api",
            field_lines=parsed.field_lines,
        )
    assert [(f.code, f.line) for f in findings[101]] == [("AIC501", 5)]
    assert findings[102] == []


def test_session_files_changed() -> None:
    commits = [
        Commit(sha="1" * 40, message="a", timestamp=T0, added=("sp.json", "x/sp.json")),
        Commit(sha="2" * 40, message="b", timestamp=T0, removed=("x/sp.json",)),
        Commit(sha="3" * 40, message="c", timestamp=T0, modified=("y/sp.json", "notsp.json")),
    ]
    assert session_files_changed(commits) == ["sp.json", "y/sp.json"]


# --- checkpoints that cannot be read still reach their issue (issue 15) --------------------


def test_an_unknown_version_reaches_the_issue_its_subject_names_without_a_hash() -> None:
    v9 = commit("ai-context: Add tests completed [issue:101] [step:1]\n\nAI-Context-Checkpoint: v9")
    assert "#101" not in v9.message
    assert issues_of(v9) == [101] and group_by_issue([v9]) == {101: [v9]}
    findings = compare_block(101, SEED, [v9])
    assert [f.code for f in findings] == ["AIC505"]
    assert "unknown checkpoint format v9" in findings[0].message
    assert [f.code for f in derive(101, [v9], None).findings] == ["AIC505"]


@pytest.mark.parametrize(
    "message",
    [
        "ai-context: Add tests completd [issue:101] [step:x]\n\nAI-Context-Checkpoint: v1",
        "ai-context: completed [issue:101]\n\nAI-Context-Checkpoint: v1",
        "ai-context: Add tests completed [ issue: 101 ]",  # no trailer, loose spacing
        "AI-CONTEXT: Add tests completed [issue:#101] [step:2]",
    ],
)
def test_a_garbled_checkpoint_subject_gets_aic506_on_its_issue(message: str) -> None:
    garbled = commit(message)
    assert issues_of(garbled) == [101]
    findings = compare_block(101, SEED, [garbled])
    assert [f.code for f in findings] == ["AIC506"], message
    hint = findings[0].hint
    assert "save" not in hint and "does not write checkpoint commits" in hint
    assert "AI-Context-Checkpoint: v1" in hint and "git commit" in hint


def test_the_aic506_hint_describes_a_message_this_tool_reads() -> None:
    # The subject and trailer the hint spells out are read back as a checkpoint.
    finding = compare_block(101, SEED, [commit("ai-context: x completed [issue:101]")])[0]
    subject = "ai-context: Add tests completed [issue:101] [step:3]"
    trailer = finding.hint.split("with the trailer '", 1)[1].split("'", 1)[0]
    assert read_checkpoint(f"{subject}\n\n{trailer}") == read_checkpoint(
        checkpoint_message("Add tests", 101, 3)
    )
