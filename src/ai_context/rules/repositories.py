"""Which repositories a run reads (pure): the `repositories:` entries, each an exact
`owner/name`, an `owner/<glob>` pattern or `{owner, topic, name}`, matched against the listings
of the owners the patterns name. Exact names need no listing, so they cost no call."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from ai_context.core.models import Listed

GLOB = frozenset("*?[")
SHOWN = 10  # repositories left out that a log line names; the rest are counted
KEYS = {"owner": "a GitHub login", "topic": "a topic", "name": "a name or glob"}
_OWNER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")  # `_`: managed users' logins
WRITE = "write owner/name, owner/<glob> (acme/* for all of acme's) or {owner: acme, topic: x}"


class Selector(BaseModel):
    """One `repositories:` entry: OWNER's repositories whose name fits the glob NAME
    (case-insensitive) and, when given, that carry TOPIC."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    owner: str
    name: str = "*"
    topic: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _entry(cls, value: Any) -> Any:
        return _entry_fields(value)

    @property
    def exact(self) -> bool:
        """One repository named in full: read as written, never listed."""
        return self.topic is None and not GLOB & set(self.name)

    def fits(self, repo: Listed) -> bool:
        owner, _, name = repo.full_name.partition("/")
        if owner.lower() != self.owner.lower():
            return False
        if not fnmatchcase(name.lower(), self.name.lower()):
            return False
        return self.topic is None or self.topic.lower() in {t.lower() for t in repo.topics}

    def __str__(self) -> str:
        if self.topic is None:
            return f"{self.owner}/{self.name}"
        name = "" if self.name == "*" else f", name: {self.name}"
        return f"{{owner: {self.owner}, topic: {self.topic}{name}}}"


def _entry_fields(value: Any) -> Any:
    """A `repositories:` entry as Selector's fields: `owner/name` text, or a mapping of KEYS;
    ValueError naming the entry and what to write instead for anything else."""
    if isinstance(value, str):
        owner, slash, name = value.strip().partition("/")
        if not slash or not name or "/" in name or not _OWNER.match(owner):
            raise ValueError(f"{value!r} is not owner/name; {WRITE}")
        return {"owner": owner, "name": name}
    if not isinstance(value, Mapping):
        raise ValueError(f"{value!r} is not a repository; {WRITE}")
    unknown = [str(k) for k in value if k not in KEYS]
    if unknown:
        raise ValueError(
            f"{dict(value)!r}: unknown key {unknown[0]!r}; a mapping takes owner, topic and name"
        )
    for key, kind in KEYS.items():
        text = value.get(key)
        if (key == "owner" or key in value) and not _fits(key, text):
            raise ValueError(f"{dict(value)!r}: {key}: {text!r} is not {kind}; {WRITE}")
    return value


def _fits(key: str, text: Any) -> bool:
    if not isinstance(text, str):
        return False
    return bool(_OWNER.match(text)) if key == "owner" else bool(text) and "/" not in text


@dataclass
class Selection:
    """The repositories chosen, in the entries' order, once each; NOTES say what a pattern
    chose and left out; EMPTY names the patterns that chose nothing."""

    names: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)


def owners_to_list(selectors: Sequence[Selector]) -> list[str]:
    """The owners a pattern names, once each (case-insensitive), in order."""
    found: dict[str, str] = {}
    for sel in selectors:
        if not sel.exact:
            found.setdefault(sel.owner.lower(), sel.owner)
    return list(found.values())


def select(selectors: Sequence[Selector], listed: Mapping[str, Sequence[Listed]]) -> Selection:
    """The names SELECTORS stand for, given LISTED (owner, lower case -> its repositories):
    exact names as written; pattern matches without archived or disabled repositories, nor
    forks (a fork is read only when named exactly)."""
    out = Selection()
    seen: set[str] = set()

    def take(name: str) -> None:
        if name.lower() not in seen:
            seen.add(name.lower())
            out.names.append(name)

    for sel in selectors:
        if sel.exact:
            take(str(sel))
            continue
        matched = [r for r in listed.get(sel.owner.lower(), ()) if sel.fits(r)]
        left = {r.full_name: _why_not(r) for r in matched}
        chosen = [name for name, why in left.items() if not why]
        for name in chosen:
            take(name)
        if not chosen:
            out.empty.append(f"{sel} matches no repository {_scope(sel)}")
        dropped = [f"{name} ({why})" for name, why in left.items() if why]
        more = f" and {len(dropped) - SHOWN} more" if len(dropped) > SHOWN else ""
        told = f"; left out: {', '.join(dropped[:SHOWN])}{more}" if dropped else ""
        out.notes.append(f"{sel}: {len(chosen)} matched{told}")
    return out


def _why_not(repo: Listed) -> str:
    if repo.archived:
        return "archived"
    if repo.disabled:
        return "disabled"
    return "a fork: name it exactly to read it" if repo.fork else ""


def _scope(sel: Selector) -> str:
    return f"of {sel.owner} that this token can see, archived, disabled and forks left out"
