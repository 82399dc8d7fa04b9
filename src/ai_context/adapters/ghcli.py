"""The GitHub CLI as a source of the token: `gh auth token`, for a machine where the user is
logged in with `gh` and no GITHUB_TOKEN is set (Claude Code started from a desktop icon)."""

from __future__ import annotations

import subprocess

from ai_context.core.errors import UsageError

TIMEOUT = 10  # seconds: `gh auth token` reads its config (or the keyring) and answers


def gh_token() -> str:
    """The token `gh auth token` prints (GH_HOST chooses the host, as for gh itself). Its
    output is never shown: a failure says what to do, not what gh printed on stdout."""
    hint = "log in with `gh auth login`, or set GITHUB_TOKEN"
    try:
        done = subprocess.run(
            ["gh", "auth", "token"],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    except FileNotFoundError:
        raise UsageError(f"AI_CONTEXT_TOKEN_FROM=gh but `gh` is not on PATH: {hint}") from None
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"`gh auth token` did not answer ({type(exc).__name__}): {hint}") from None
    token = done.stdout.strip()
    if done.returncode != 0 or not token or any(ch.isspace() for ch in token):
        why = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "no token"
        raise UsageError(f"`gh auth token` gave no token ({why[:200]}): {hint}")
    return token
