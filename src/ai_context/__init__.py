"""ai-context: keeps the AI Context blocks of GitHub issues valid, complete and mirrored.

`__version__` is the installed distribution's version (one source: the git tag, through
hatch-vcs). It is read on first access, not at import: `importlib.metadata` costs an agent's
every command a few milliseconds it does not need.
"""

from __future__ import annotations

DISTRIBUTION = "ai-context"
UNKNOWN_VERSION = "0.0.0+unknown"  # the same as pyproject.toml's fallback-version


def version() -> str:
    """The installed version; UNKNOWN_VERSION when run from a tree that was never installed."""
    from importlib.metadata import PackageNotFoundError  # noqa: PLC0415 - lazy on purpose
    from importlib.metadata import version as distribution_version  # noqa: PLC0415

    try:
        return distribution_version(DISTRIBUTION)
    except PackageNotFoundError:
        return UNKNOWN_VERSION


def __getattr__(name: str) -> str:
    if name == "__version__":
        return version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
