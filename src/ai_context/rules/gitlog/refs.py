"""Which issues a commit message names (the forms: `issues_named`)."""

from __future__ import annotations

import re

from ai_context.core.block.syntax import outside_fences

_NUMBER = r"(\d{1,9})"
# `owner/repo#N` or `#N`, not glued to a word, a path or an entity; bounded repeats only, and
# the look-behind lets a match start only after a separator, so the scan stays linear.
_REF_RE = re.compile(
    r"(?<![\w./&#@-])(?:([A-Za-z0-9][A-Za-z0-9-]{0,38})/([A-Za-z0-9._-]{1,100}))?#"
    + _NUMBER
    + r"(?![\w])"
)
_GH_RE = re.compile(r"(?<![\w./-])GH-" + _NUMBER + r"(?![\w])", re.IGNORECASE)
_URL_RE = re.compile(
    r"https?://([A-Za-z0-9.-]{1,253}(?::\d{1,5})?)/([A-Za-z0-9-]{1,39})/([A-Za-z0-9._-]{1,100})"
    r"/issues/" + _NUMBER + r"(?![\w/])"
)
_GITHUB = ("github.com", "www.github.com")
_TRAILER_RE = re.compile(r"^[ \t]*AI-Context-Issue[ \t]*:[ \t]*(.*)$", re.IGNORECASE | re.MULTILINE)
_TRAILER_NUMBER_RE = re.compile(r"(?<![\w/])#?" + _NUMBER + r"(?![\w])")
_INLINE_CODE_RE = re.compile(r"`[^`\n]*`")


def _without_code(text: str) -> str:
    """The text with fenced blocks (as GitHub reads them) and inline code spans blanked out."""
    lines = text.split("\n")
    kept = [""] * len(lines)
    for index, line in outside_fences(lines):
        kept[index] = _INLINE_CODE_RE.sub(" ", line)
    return "\n".join(kept)


def _same_repo(owner: str, name: str, repo: str | None) -> bool:
    return repo is None or f"{owner}/{name}".lower() == repo.strip().lower()


def issues_named(message: str, repo: str | None = None) -> list[int]:
    """Issue numbers a commit message names, in order of first mention, each once: `#N` (so
    `Fixes #N`), `GH-N`, `owner/repo#N`, `https://<host>/owner/repo/issues/N` (REPO's only
    when given, else any repository's, but URLs only on github.com) and the trailer
    `AI-Context-Issue: N[, M]`; never `#N` glued to a word or a path, nor anything in code."""
    found: dict[int, int] = {}  # number -> position of first mention

    def add(number: str, position: int) -> None:
        value = int(number)
        if value > 0 and value not in found:
            found[value] = position

    text = _without_code(message)
    for match in _REF_RE.finditer(text):
        owner, name, number = match.groups()
        if owner is None or _same_repo(owner, name, repo):
            add(number, match.start())
    for match in _GH_RE.finditer(text):
        add(match.group(1), match.start())
    for match in _URL_RE.finditer(text):
        host, owner, name, number = match.groups()
        ours = _same_repo(owner, name, repo) if repo is not None else host.lower() in _GITHUB
        if ours:
            add(number, match.start())
    for match in _TRAILER_RE.finditer(text):
        for number in _TRAILER_NUMBER_RE.finditer(match.group(1)):
            add(number.group(1), match.start(1) + number.start())
    return sorted(found, key=found.__getitem__)
