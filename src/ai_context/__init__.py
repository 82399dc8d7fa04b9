"""ai-context: keeps the AI Context blocks of GitHub issues valid, complete and mirrored.

`__version__` is the installed distribution's version (one source: the git tag, through
hatch-vcs). It is read on first access, not at import, and from the `.dist-info` directory
itself when there is one: importing `importlib.metadata` (email, zipfile, csv, ...) cost
`ai-context --version` more than reading the file does.
"""

from __future__ import annotations

DISTRIBUTION = "ai-context"
UNKNOWN_VERSION = "0.0.0+unknown"  # the same as pyproject.toml's fallback-version


def version() -> str:
    """The installed version; UNKNOWN_VERSION when run from a tree that was never installed."""
    found = _dist_info_version()
    if found is not None:
        return found
    from importlib.metadata import PackageNotFoundError  # noqa: PLC0415 - lazy on purpose
    from importlib.metadata import version as distribution_version  # noqa: PLC0415

    try:
        return distribution_version(DISTRIBUTION)
    except PackageNotFoundError:
        return UNKNOWN_VERSION


def _dist_info_version() -> str | None:
    """The `Version:` of the first `ai_context-*.dist-info` on sys.path, the entry
    importlib.metadata would find; None when there is none (an egg, a zip: it decides)."""
    import os  # noqa: PLC0415
    import sys  # noqa: PLC0415

    wanted = DISTRIBUTION.replace("-", "_")
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if not name.endswith(".dist-info"):
                continue
            dist = name.removesuffix(".dist-info").rpartition("-")[0]
            if dist.lower().replace("-", "_").replace(".", "_") == wanted:
                return _metadata_version(os.path.join(entry or ".", name, "METADATA"))
    return None


def _metadata_version(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as metadata:
            for line in metadata:
                if not line.strip():
                    break  # the headers end at the first blank line
                if line.startswith("Version:"):
                    return line.removeprefix("Version:").strip()
    except OSError:
        return None
    return None


def __getattr__(name: str) -> str:
    if name == "__version__":
        return version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
