"""The one place the clients of GitHub, ClickUp and Slack are built (Action, CLI, MCP), each
from a `Secret`, its API's URL and one `Http` policy. Each adapter is imported when its client
is built, so a command that builds none loads no HTTP library.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ai_context.core.errors import UsageError
from ai_context.core.secret import Secret

if TYPE_CHECKING:
    from pathlib import Path  # at run time only where used: `validate` needs no pathlib

    from ai_context.adapters.clickup import ClickUp
    from ai_context.adapters.github import CallCounter, GitHub
    from ai_context.adapters.slack import SlackWebhook

GITHUB_API_URL = "https://api.github.com"
CLICKUP_API_URL = "https://api.clickup.com/api/v2"
TOKEN_ENVS = ("GITHUB_TOKEN", "GH_TOKEN")
# `gh`: with no token in TOKEN_ENVS, ask the GitHub CLI (`gh auth token`), as `setup claude
# --token-from gh` arranges for Claude Code, so no token is ever written to a settings file.
TOKEN_FROM_ENV = "AI_CONTEXT_TOKEN_FROM"  # noqa: S105 - a variable's name, not a secret
OnWait = Callable[[float, str], None]  # (seconds, what for), told before a long wait


@dataclass(frozen=True, slots=True)
class Http:
    """How a client meets the network (retries follow each adapter's `Retry`); a command
    writes at once, the Action paces its writes as GitHub asks of bulk writers."""

    retries: int = 5
    backoff: float = 1.0  # seconds, doubled at each retry
    timeout: int = 15  # seconds
    write_interval: float = 0.0


def github(
    token: Secret,
    repository: str,
    *,
    api_url: str = GITHUB_API_URL,
    http: Http = Http(),
    counter: CallCounter | None = None,
    on_wait: OnWait | None = None,
) -> GitHub:
    """The GitHub client for REPOSITORY; COUNTER shares one count across several clients;
    ON_WAIT is told (seconds, what for) before the client waits for GitHub."""
    from ai_context.adapters.github import GitHub  # noqa: PLC0415

    return GitHub(
        token,
        repository,
        api_url=api_url,
        timeout=http.timeout,
        write_interval=http.write_interval,
        retries=http.retries,
        backoff=http.backoff,
        counter=counter,
        on_wait=on_wait,
    )


def clickup(
    token: Secret, *, api_url: str, http: Http = Http(), on_wait: OnWait | None = None
) -> ClickUp:
    """The ClickUp client; ON_WAIT is told (seconds, what for) before it waits for ClickUp."""
    import time  # noqa: PLC0415

    from ai_context.adapters.clickup import ClickUp  # noqa: PLC0415

    def sleep(seconds: float) -> None:
        if on_wait is not None:
            on_wait(seconds, "ClickUp's rate limit")
        time.sleep(seconds)

    return ClickUp(
        token,
        api_url=api_url,
        timeout=http.timeout,
        retries=http.retries,
        backoff=http.backoff,
        sleep=sleep,
    )


def slack(webhook_url: Secret, *, attempts: int = 3) -> SlackWebhook:
    """The incoming webhook; ValueError when the URL is unusable."""
    from ai_context.adapters.slack import SlackWebhook  # noqa: PLC0415

    return SlackWebhook(webhook_url.get_secret_value(), max_attempts=attempts)


# --- GitHub from the environment: the command line and the MCP server ----------------------


def github_api_url(env: Mapping[str, str]) -> str:
    return env.get("GITHUB_API_URL", "").strip() or GITHUB_API_URL


def github_token(env: Mapping[str, str], names: Sequence[str] = TOKEN_ENVS) -> Secret:
    """The first of NAMES set in ENV, else `gh auth token` when $AI_CONTEXT_TOKEN_FROM is
    `gh`; a UsageError saying how to set one otherwise."""
    token = next((env[n].strip() for n in names if env.get(n, "").strip()), None)
    if token is None and env.get(TOKEN_FROM_ENV, "").strip() == "gh":
        from ai_context.adapters.ghcli import gh_token  # noqa: PLC0415

        token = gh_token()
    if token is None:
        raise UsageError(
            f"no GitHub token in ${' or $'.join(names)}: set {names[0]} to a token with issues "
            f"read/write (contents write for leases), e.g. `export {names[0]}=$(gh auth token)`"
        )
    return Secret(token)


def github_from_env(
    repository: str,
    env: Mapping[str, str],
    *,
    token_names: Sequence[str] = TOKEN_ENVS,
    http: Http = Http(),
    counter: CallCounter | None = None,
) -> GitHub:
    """The GitHub client of a command: the token and the API's URL from ENV."""
    token = github_token(env, token_names)
    return github(token, repository, api_url=github_api_url(env), http=http, counter=counter)


def default_repository(env: Mapping[str, str], checkout: Path | None = None) -> str | None:
    """The repository when none is named: $GITHUB_REPOSITORY, else OWNER/NAME of the `origin`
    remote of CHECKOUT (the current directory by default)."""
    if repository := env.get("GITHUB_REPOSITORY", "").strip():
        return repository
    from pathlib import Path  # noqa: PLC0415

    from ai_context.adapters.gitrepo import GitError, remote_repository  # noqa: PLC0415

    try:
        return remote_repository(checkout or Path.cwd())
    except GitError:
        return None
