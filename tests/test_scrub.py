"""Privacy scrub: every kind with a real-looking value, near-misses that must pass, the CLI.

Tokens are assembled from pieces at run time so that secret scanners do not flag this file.
"""

from __future__ import annotations

import os
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai_context.rules.scrub import (
    entropy,
    find,
    looks_secret,
    privacy_findings,
    scrub,
    scrub_counted,
)
from tests.conftest import ROOT, run_cli

ALNUM36 = "R8xK2mQ7vLp4Wn9Zt3Hc6Yb1Fd5Gs0Ja8Ue2I"[:36]
GITHUB_CLASSIC = "gh" + "p_" + ALNUM36
GITHUB_OAUTH = "gh" + "o_" + ALNUM36[::-1]
GITHUB_FINE = (
    "github" + "_pat_" + "11ABCDEFG0" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7" + "_" + "x" * 20 + "Q9z8Y7"
)
CLICKUP = "pk" + "_" + "81234567" + "_" + "Q7WZ2KX9M4PLR8TNV3BYH6JD1CFGS5A0"
SLACK_TOKEN = "xo" + "xb-" + "2718281828-3141592653589-" + "Zq8Wm3Rt7Yp2Lk9Vn4Bx6Hc1"
SLACK_HOOK = (
    "https://hooks." + "slack.com/services/" + "T0A1B2C3D/B4E5F6G7H/" + "kQ9w8E7r6T5y4U3i2O1pAsDf"
)
AWS_KEY = "AK" + "IA" + "IOSFODNN7" + "EXAMPLE"
PEM = (
    "-----BEGIN " + "RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "-----END RSA " + "PRIVATE KEY-----"
)
GENERIC = "Zx9Qw7LmN2pR5sT8vY1bK4"
DB_PASSWORD = "S3cr3tPassw0rd9"
EMAIL = "ariel.cohen" + "@" + "example.com"
SHA = "0549b6a3c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6"
UUID = "123e4567-e89b-12d3-a456-426614174000"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (f"export GH={GITHUB_CLASSIC}", "github-token"),
        (f"oauth {GITHUB_OAUTH}.", "github-token"),
        (f"token: {GITHUB_FINE}", "github-token"),
        (f"Authorization: {CLICKUP}", "clickup-token"),
        (f"bot {SLACK_TOKEN} here", "slack-token"),
        (f"post to {SLACK_HOOK}", "slack-webhook"),
        (f"aws_access_key_id={AWS_KEY}", "aws-access-key"),
        (f"key:\n{PEM}\nafter", "private-key"),
        (f'"api_key": "{GENERIC}"', "secret"),
        (f"CLIENT_SECRET={GENERIC}", "secret"),
        (f"my_service_token = '{GENERIC}'", "secret"),
        (f"Authorization: Bearer {GENERIC}", "secret"),
        (f"DATABASE_URL=postgres://app:{DB_PASSWORD}@db.internal:5432/app", "url-credentials"),
        (f"mail {EMAIL} now", "email"),
        ("open /Users/ariel/project/src/a.ts", "home-path"),
        ("at /home/bob/work", "home-path"),
        ("cd C:\\Users\\Ariel\\work\\api", "home-path"),
    ],
)
def test_each_kind_is_found_and_redacted(text: str, kind: str) -> None:
    hits = find(text)
    assert [h.kind for h in hits] == [kind]
    clean = scrub(text)
    for secret in (GITHUB_CLASSIC, GITHUB_OAUTH, GITHUB_FINE, CLICKUP, SLACK_TOKEN, AWS_KEY):
        assert secret not in clean
    for piece in ("MIIEow", GENERIC, DB_PASSWORD, EMAIL, "ariel/", "bob/", "Ariel\\", "T0A1B2"):
        assert piece not in clean
    if kind == "home-path":
        assert "~/" in clean
    else:
        assert f"[REDACTED:{kind}]" in clean


def test_home_paths_become_tilde() -> None:
    assert scrub("/Users/john/project/a.py:12") == "~/project/a.py:12"
    assert scrub("cwd=/home/john") == "cwd=~"
    assert scrub("C:\\Users\\John\\proj\\src\\a.ts") == "~/proj/src/a.ts"
    assert scrub("C:/Users/John/proj") == "~/proj"
    # Inside JSON text, where a backslash is written twice.
    assert scrub('{"p":"C:\\\\Users\\\\John\\\\proj\\\\a.ts"}') == '{"p":"~/proj/a.ts"}'


def test_seed_example_path() -> None:
    assert scrub("Pub key: /Users/john/config/jwt-keys/public.pem") == (
        "Pub key: ~/config/jwt-keys/public.pem"
    )


@pytest.mark.parametrize(
    "text",
    [
        f"git_commit: {SHA}",
        f"secret_ref = {SHA}",
        f"token: {UUID}",
        f"commit {SHA} on {UUID}",
        "ghp_tooShort123",
        "github_pat_",
        "pk_live_abc",
        "pk_12_short",
        "xoxb",
        "AK" + "IA" + "IOSFODNN7EXAMPL",
        "AK" + "IA" + "IOSFODNN7EXAMPLEX",
        "-----BEGIN PUBLIC KEY-----",
        "git@github.com:acme/api.git",
        "@decorator and @scope/pkg and pkg@1.2.3",
        "user@localhost",
        "/Users/Shared/file",
        "~/project/src",
        "/home/$USER/x",
        "/var/lib/home/x",
        "password: changeme",
        "token=${{ secrets.GITHUB_TOKEN }}",
        "secret: your-secret-goes-here",
        "token_count=12345678901234567890",
        "api_key = abcdefghijklmnopqrstuvwxyz",
        "https://user@host.test/repo",
        "https://hooks.slack.com/",
        "the token is in the vault",
        "[REDACTED:secret] and [REDACTED:email]",
    ],
)
def test_near_misses_pass(text: str) -> None:
    assert find(text) == []
    assert scrub(text) == text


def test_positions_lines_columns() -> None:
    text = f"a\nb {EMAIL}\n\nkey {GITHUB_CLASSIC}"
    hits = find(text)
    assert [(h.kind, h.line, h.column) for h in hits] == [("email", 2, 3), ("github-token", 4, 5)]
    assert text[hits[1].start : hits[1].end] == GITHUB_CLASSIC


def test_specific_kind_wins_over_generic() -> None:
    assert [h.kind for h in find(f"GITHUB_TOKEN={GITHUB_CLASSIC}")] == ["github-token"]


def test_unterminated_private_key_is_redacted_with_its_material() -> None:
    text = "x\n-----BEGIN " + "OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nmore"
    assert scrub(text) == "x\n[REDACTED:private-key]"
    in_json = '{"k":"-----BEGIN ' + 'RSA PRIVATE KEY-----\\nMIIEow+/=\\n","n":1}'
    assert scrub(in_json) == '{"k":"[REDACTED:private-key]","n":1}'
    assert scrub("-----BEGIN " + "EC PRIVATE KEY-----, then text") == (
        "[REDACTED:private-key], then text"
    )


def test_counts() -> None:
    clean, counts = scrub_counted(f"/home/bob/x {EMAIL} {EMAIL} {AWS_KEY}")
    assert dict(counts) == {"home-path": 1, "email": 2, "aws-access-key": 1}
    assert clean == "~/x [REDACTED:email] [REDACTED:email] [REDACTED:aws-access-key]"


def test_entropy_and_looks_secret() -> None:
    assert entropy("") == 0.0 and entropy("aaaa") == 0.0
    assert entropy("abcd") == 2.0
    assert looks_secret(GENERIC)
    assert not looks_secret(SHA) and not looks_secret(UUID) and not looks_secret("short1A")


def test_privacy_findings_never_show_the_value() -> None:
    text = f'{{"context":"token={GENERIC} mail {EMAIL} at /home/bob/x"}}'
    findings = privacy_findings("sp.json", text)
    assert [(f.code, f.severity) for f in findings] == [
        ("AIC530", "error"),
        ("AIC532", "warning"),
        ("AIC531", "warning"),
    ]
    assert findings[0].message == "sp.json:1:19: a secret (value not shown)"
    for f in findings:
        assert (
            GENERIC not in f.message + f.hint and EMAIL not in f.message and "bob" not in f.message
        )


# --- properties -------------------------------------------------------------------------

FRAGMENTS = [
    GITHUB_CLASSIC,
    CLICKUP,
    SLACK_TOKEN,
    SLACK_HOOK,
    AWS_KEY,
    PEM,
    EMAIL,
    GENERIC,
    SHA,
    UUID,
    "token=",
    "secret: ",
    "Bearer ",
    "://u:",
    "@",
    "/Users/",
    "/home/",
    "C:\\Users\\",
    "\\\\",
    "~",
    "[REDACTED:email]",
    "-----BEGIN ",
    " PRIVATE KEY-----",
    "-----END",
]
texts = st.lists(
    st.sampled_from(FRAGMENTS)
    | st.text(st.sampled_from(list("ab/\\:@.=_- \n\"'~[]xZ9")), max_size=8),
    max_size=12,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(texts | st.text(max_size=200))
def test_scrub_is_idempotent_and_leaves_nothing(text: str) -> None:
    once = scrub(text)
    assert scrub(once) == once
    assert find(once) == []


@settings(max_examples=200, deadline=None)
@given(texts)
def test_hits_are_ordered_and_disjoint(text: str) -> None:
    hits = find(text)
    for before, after in pairwise(hits):
        assert before.end <= after.start
    assert all(0 <= h.start < h.end <= len(text) for h in hits)


def test_long_hostile_input_is_scanned_in_one_pass() -> None:
    # Shapes that make backtracking patterns quadratic; these must simply finish.
    for text in (
        "a" * 60000,
        "a." * 30000 + "@",
        "token_" * 10000,
        "x@" + "a." * 20000,
        "/home/" * 10000,
        "C:\\Users\\" * 6000,
        "-----BEGIN RSA PRIVATE KEY-----" * 2000,
        "s://" + "a:" * 20000,
    ):
        scrub(text)


# --- ai-context scrub -------------------------------------------------------------------


def test_cli_prints_scrubbed_text(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text(f"see /home/bob/x and {EMAIL}\n", encoding="utf-8")
    assert run_cli(["scrub", str(path)]) == (0, "see ~/x and [REDACTED:email]\n", "")
    assert run_cli(["scrub"], stdin="/Users/ann/a") == (0, "~/a", "")


def test_cli_check_lists_places_and_kinds_never_values(tmp_path: Path) -> None:
    dirty = tmp_path / "dirty.json"
    dirty.write_text(f'{{\n"a": "{GITHUB_CLASSIC}",\n"b": "{EMAIL}"\n}}\n', encoding="utf-8")
    clean = tmp_path / "clean.json"
    clean.write_text('{"a": "~/x"}', encoding="utf-8")
    code, out, err = run_cli(["scrub", "--check", str(dirty), str(clean)])
    assert (code, err) == (1, "")
    assert out == f"{dirty}:2:7: github-token\n{dirty}:3:7: email\n"
    assert GITHUB_CLASSIC not in out and EMAIL not in out
    assert run_cli(["scrub", "--check", str(clean)]) == (0, "", "")


def test_cli_errors(tmp_path: Path) -> None:
    code, _, err = run_cli(["scrub", str(tmp_path / "missing")])
    assert code == 2 and "no such file" in err
    code, _, err = run_cli(["scrub", "a", "b"])
    assert code == 2 and "pass one PATH" in err


# --- issue 15: root's home, the real $HOME, bytes that are not UTF-8 -----------------------


def test_roots_home_becomes_tilde() -> None:
    assert scrub("key at /root/.ssh/id_ed25519") == "key at ~/.ssh/id_ed25519"
    assert scrub("cd /root; ls") == "cd ~; ls"
    assert scrub('{"p": "/root/work/a.py"}') == '{"p": "~/work/a.py"}'
    hit = find("x\n  /root/a")[0]
    assert (hit.kind, hit.line, hit.column) == ("home-path", 2, 3)


@pytest.mark.parametrize("text", ["/rootfs/etc", "/srv/root/x", "~/root/x", "/var/root2/x"])
def test_paths_that_merely_contain_root_pass(text: str) -> None:
    assert scrub(text) == text


def test_the_real_home_is_redacted_wherever_it_lies() -> None:
    home = "/var/lib/jenkins"
    assert scrub("log in /var/lib/jenkins/ws/a.log", home=home) == "log in ~/ws/a.log"
    assert scrub("HOME=/var/lib/jenkins", home=home + "/") == "HOME=~"
    assert scrub("/var/lib/jenkins2/x", home=home) == "/var/lib/jenkins2/x"
    assert [h.kind for h in find("/var/lib/jenkins/x", home=home)] == ["home-path"]
    assert privacy_findings("sp.json", "/var/lib/jenkins/x", home=home)[0].code == "AIC531"
    # without the value the rules cannot know it: they never read the environment
    assert scrub("/var/lib/jenkins/ws") == "/var/lib/jenkins/ws"


@pytest.mark.parametrize("home", ["/", "/srv", "", "relative/home", "/home/ann", "/root"])
def test_a_generic_or_already_covered_home_changes_nothing_else(home: str) -> None:
    text = "/srv/data and /etc/hosts and /home/ann/x"
    assert scrub(text, home=home) == "/srv/data and /etc/hosts and ~/x"


def test_cli_refuses_stdin_that_is_not_utf8() -> None:
    """Issue 15: the bytes were passed through unscrubbed; now exit 2, nothing printed."""
    text = b"/root/a \xff\xfe".decode("utf-8", "surrogateescape")
    code, out, err = run_cli(["scrub"], stdin=text)
    assert (code, out) == (2, "")
    assert err.splitlines()[0] == (
        "ai-context: <stdin>: not UTF-8 text (character 8); save it as UTF-8"
    )


def test_cli_refuses_stdin_that_is_not_utf8_as_a_process() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ai_context", "scrub", "-"],
        input=b"see /home/bob/x \xff\n",
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src"), "LC_ALL": "C"},
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr.decode().splitlines()[0].startswith("ai-context: <stdin>: not UTF-8 text")


def test_cli_redacts_the_real_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/opt/builder")
    assert run_cli(["scrub"], stdin="cache at /opt/builder/.cache/x\n") == (
        0,
        "cache at ~/.cache/x\n",
        "",
    )
    code, out, _ = run_cli(["scrub", "--check", "-"], stdin="/opt/builder/x /root/y\n")
    assert (code, out) == (1, "<stdin>:1:1: home-path\n<stdin>:1:16: home-path\n")
