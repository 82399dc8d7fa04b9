"""Print one version's section of CHANGELOG.md (Keep a Changelog), the GitHub release's notes.

    python scripts/changelog_section.py 1.2.3 [--file CHANGELOG.md]

Exits 2 with a message when the section is missing or empty: the release workflow runs this
before it builds anything, so a tag whose changes were never written down stops there.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

EXIT_OK, EXIT_MISSING = 0, 2
HEADING = re.compile(r"## \[(?P<version>[^\]]+)\](?P<rest>.*)")
LINK_DEFINITION = re.compile(r"\[[^\]]+\]: \S+")


class ChangelogError(Exception):
    """The changelog has no usable section for the version; the message says what to write."""


def section(text: str, version: str) -> str:
    """The body under `## [VERSION] - date`, up to the next `## ` heading, link lines dropped."""
    lines = text.splitlines()
    starts = [
        i
        for i, line in enumerate(lines)
        if (m := HEADING.fullmatch(line)) and m["version"] == version
    ]
    if not starts:
        raise ChangelogError(
            f"no `## [{version}] - YYYY-MM-DD` section: move the Unreleased entries under it"
        )
    body: list[str] = []
    for line in lines[starts[0] + 1 :]:
        if line.startswith("## "):
            break
        if not LINK_DEFINITION.fullmatch(line.strip()):
            body.append(line)
    notes = "\n".join(body).strip()
    if not notes:
        raise ChangelogError(f"the [{version}] section is empty: say what changed")
    return notes + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="changelog_section.py")
    parser.add_argument("version", help="X.Y.Z, without the tag's v")
    parser.add_argument("--file", type=Path, default=Path("CHANGELOG.md"))
    args = parser.parse_args(argv)
    try:
        sys.stdout.write(section(args.file.read_text(encoding="utf-8"), args.version))
    except (ChangelogError, OSError) as exc:
        print(f"changelog_section.py: {args.file}: {exc}", file=sys.stderr)
        return EXIT_MISSING
    return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
