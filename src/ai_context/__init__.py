"""ai-context: keeps the AI Context blocks of GitHub issues valid, complete and mirrored.

`version()` is the git tag's version, which the build writes into `_version.py`: read when
asked, so `--version` costs one small import, not importlib.metadata's."""

from __future__ import annotations

UNKNOWN_VERSION = "0.0.0+unknown"  # the same as pyproject.toml's fallback-version


def version() -> str:
    """The installed version; UNKNOWN_VERSION in a tree that was never built or installed."""
    try:
        from ai_context._version import __version__  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415
    except ImportError:
        return UNKNOWN_VERSION
    return str(__version__)
