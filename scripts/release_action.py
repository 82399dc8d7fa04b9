"""The release-time action.yml: point `runs.image` at the published image, and check it.

On `main`, action.yml says `image: Dockerfile`, so this repository's own workflow tests the code
at its commit. A release must not make every user's runner build the image on every issue edit:
the release workflow commits, on the tag only, an action.yml whose image is the one it pushed,
`docker://ghcr.io/<owner>/<name>:<version>`. The rewrite is a text edit of that one line, so
comments, order and quoting of the rest of the file stay byte for byte what was reviewed; the
result is parsed again and must differ from the original in `runs.image` alone.

    python scripts/release_action.py --repository OWNER/NAME --version 1.2.3   # rewrite
    python scripts/release_action.py --check [--version 1.2.3] [--repository OWNER/NAME]

`--check` (run by the release job before it moves any tag) exits 2 with a message when the
image's tag is not the package version (by default the installed ai-context's). Needs PyYAML,
a dependency of the package itself.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

REGISTRY = "ghcr.io"
EXIT_OK, EXIT_MISMATCH = 0, 2
# Final releases only: the workflow runs on vX.Y.Z tags, and a Docker tag cannot hold PEP 440's
# `+local` part anyway.
VERSION = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+")
REPOSITORY = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]*)/[A-Za-z0-9._-]+")
IMAGE = re.compile(
    rf"docker://{re.escape(REGISTRY)}/(?P<repository>[a-z0-9._/-]+):(?P<tag>[\w.-]+)"
)
RUNS = re.compile(r"runs:[ \t]*(?:#.*)?")
IMAGE_LINE = re.compile(
    r"(?P<head>[ \t]+image:[ \t]*)(?P<value>[^#\r\n]*?)(?P<tail>[ \t]*(?:#[^\r\n]*)?\r?)"
)


class ReleaseError(Exception):
    """action.yml is not what a release can ship; the message says what and how to fix it."""


def image_reference(repository: str, version: str) -> str:
    """`docker://ghcr.io/<owner>/<name>:<version>`; GHCR names are lower case."""
    if not REPOSITORY.fullmatch(repository):
        raise ReleaseError(f"repository {repository!r} is not OWNER/NAME")
    if not VERSION.fullmatch(version):
        raise ReleaseError(f"version {version!r} is not a release version X.Y.Z")
    return f"docker://{REGISTRY}/{repository.lower()}:{version}"


def _load(text: str) -> dict[str, Any]:
    data = yaml.safe_load(text)
    if not isinstance(data, dict) or not isinstance(data.get("runs"), dict):
        raise ReleaseError("action.yml has no `runs:` mapping")
    return data


def rewrite(text: str, image: str) -> str:
    """TEXT with its one `runs.image` value replaced by IMAGE and every other byte kept."""
    original = _load(text)
    if original["runs"].get("using") != "docker":
        raise ReleaseError("action.yml is not a Docker action (`runs.using` is not `docker`)")
    lines = text.split("\n")  # each line keeps its "\r", if any: line endings stay the file's
    starts = [i for i, line in enumerate(lines) if RUNS.fullmatch(line.rstrip("\r"))]
    if len(starts) != 1:
        raise ReleaseError("expected one top-level `runs:` line in action.yml")
    found: list[int] = []
    indent: str | None = None
    for i in range(starts[0] + 1, len(lines)):
        line = lines[i]
        bare = line.strip()
        if not bare or bare.startswith("#"):
            continue
        if line[0] not in " \t":
            break  # the next top-level key: the `runs:` block is over
        own = line[: len(line) - len(line.lstrip(" \t"))]
        indent = own if indent is None else indent
        if own == indent and IMAGE_LINE.fullmatch(line):
            found.append(i)
    if len(found) != 1:
        raise ReleaseError(f"expected one `image:` line under `runs:`, found {len(found)}")
    match = IMAGE_LINE.fullmatch(lines[found[0]])
    assert match is not None
    lines[found[0]] = f"{match['head']}{image}{match['tail']}"
    result = "\n".join(lines)
    expected = dict(original, runs=dict(original["runs"], image=image))
    if _load(result) != expected:
        raise ReleaseError("the rewrite changed more than runs.image; edit action.yml by hand")
    return result


def check(text: str, version: str, repository: str | None = None) -> str:
    """The released image reference, if it names VERSION (and REPOSITORY); else ReleaseError."""
    image = _load(text)["runs"].get("image")
    if not isinstance(image, str):
        raise ReleaseError("action.yml has no `runs.image`")
    match = IMAGE.fullmatch(image)
    if match is None:
        raise ReleaseError(
            f"runs.image is {image!r}, not a published image docker://{REGISTRY}/OWNER/NAME:VERSION;"
            " run scripts/release_action.py --repository OWNER/NAME --version VERSION first"
        )
    if match["tag"] != version:
        raise ReleaseError(
            f"runs.image is tagged {match['tag']!r} but the package version is {version!r}:"
            " the release would run another version's image"
        )
    if repository is not None and match["repository"] != repository.lower():
        raise ReleaseError(
            f"runs.image names {match['repository']!r}, not this repository"
            f" ({repository.lower()!r})"
        )
    return image


def installed_version() -> str:
    from importlib.metadata import version  # noqa: PLC0415

    return version("ai-context")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="release_action.py", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    parser.add_argument(
        "--file", type=Path, default=Path("action.yml"), help="default: %(default)s"
    )
    parser.add_argument("--repository", help="OWNER/NAME of the image (GITHUB_REPOSITORY)")
    parser.add_argument("--version", help="X.Y.Z; for --check, default: the installed version")
    parser.add_argument(
        "--check", action="store_true", help="verify runs.image names the version; change nothing"
    )
    args = parser.parse_args(argv)
    try:
        text = args.file.read_bytes().decode("utf-8")  # not read_text: keep CRLF as it is
        if args.check:
            version = args.version or installed_version()
            image = check(text, version, args.repository)
            print(f"{args.file}: runs.image {image} matches version {version}")
            return EXIT_OK
        if not args.repository or not args.version:
            parser.error("rewriting needs --repository and --version (or pass --check)")
        image = image_reference(args.repository, args.version)
        # newline="" keeps the file's own line endings.
        with args.file.open("w", encoding="utf-8", newline="") as out:
            out.write(rewrite(text, image))
        print(f"{args.file}: runs.image is now {image}")
        return EXIT_OK
    except (ReleaseError, OSError, yaml.YAMLError) as exc:
        print(f"release_action.py: {args.file}: {exc}", file=sys.stderr)
        return EXIT_MISMATCH


if __name__ == "__main__":
    raise SystemExit(main())
