"""Who an actor is: the `actors:` config section (pure).

An actor id (`cc-ariel-laptop`, the first word of a block's Active actor) maps to its human
owner's GitHub login and the identities the actor shows up under: git author emails, renamed
bot logins (`app/github-copilot` became `app/copilot-swe-agent`), ClickUp and Slack ids.
Unknown actors still work everywhere: the map only adds mentions and git matching.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from ai_context.core.errors import ConfigError
from ai_context.core.fields import explain, whole

_LOGIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,38}(?:/[A-Za-z0-9][A-Za-z0-9._-]{0,99})?$")
_SLACK = re.compile(r"^[UWB][A-Z0-9]{2,}$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")
_NOREPLY = re.compile(r"^(?:\d+\+)?([A-Za-z0-9][A-Za-z0-9-]*)@users\.noreply\.github\.com$")


def identity(text: str) -> str:
    """The comparable form of an id, alias, login or email: case folded, and the two ways
    GitHub writes a bot (`app/name`, `name[bot]`) made one."""
    key = text.strip().casefold()
    if key.startswith("app/"):
        key = key[4:] + "[bot]"
    return key


class Actor(BaseModel):
    """One actor's entry. `owner` is a GitHub login (or `org/team`) that mentions reach."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    id: str
    owner: str | None = None
    emails: tuple[str, ...] = ()
    clickup: int | None = None
    slack: str | None = None
    aliases: tuple[str, ...] = ()

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not value or any(c.isspace() for c in value):
            raise ValueError(
                f"{value!r} is not an actor id: use one word, as in the block's Active actor"
            )
        return value

    @field_validator("owner")
    @classmethod
    def _owner(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip().removeprefix("@")
        if not _LOGIN.match(value):
            raise ValueError(f"{value!r} is not a GitHub login (or org/team) to mention")
        return value

    @field_validator("emails", "aliases", mode="before")
    @classmethod
    def _many(cls, value: Any) -> Any:
        items = (value,) if isinstance(value, str) else () if value is None else value
        if not isinstance(items, list | tuple):
            raise ValueError(f"{value!r} is not a list: write it like [a, b] (or one text)")
        bad = [v for v in items if not isinstance(v, str)]
        if bad:
            raise ValueError(f"{bad[0]!r} is not text: write each entry as text")
        return tuple(v.strip() for v in items if v.strip())

    @field_validator("emails")
    @classmethod
    def _emails(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        bad = [v for v in value if not _EMAIL.match(v)]
        if bad:
            raise ValueError(f"{', '.join(map(repr, bad))} is not a git author email")
        return value

    @field_validator("clickup", mode="before")
    @classmethod
    def _clickup(cls, value: Any) -> Any:
        if isinstance(value, str) and (number := whole(value.strip())) is not None:
            return number
        if isinstance(value, bool) or (value is not None and not isinstance(value, int)):
            raise ValueError(f"{value!r} is not a ClickUp user id (a number)")
        return value

    @field_validator("slack")
    @classmethod
    def _slack(cls, value: str | None) -> str | None:
        if value is not None and not _SLACK.match(value.strip()):
            raise ValueError(f"{value!r} is not a Slack member id (like U024BE7LH)")
        return value.strip() if value is not None else None


class ActorMap:
    """Lookups by actor id, alias, git email or GitHub login."""

    def __init__(self, actors: Iterable[Actor] = ()) -> None:
        self.actors = tuple(actors)
        self._named: dict[str, Actor] = {}
        self._emails: dict[str, list[Actor]] = {}
        self._owners: dict[str, list[Actor]] = {}
        for actor in self.actors:
            for key in (actor.id, *actor.aliases):
                other = self._named.setdefault(identity(key), actor)
                if other is not actor:
                    raise ValueError(f"{key!r} names both {other.id} and {actor.id}")
            for email in actor.emails:
                self._emails.setdefault(identity(email), []).append(actor)
            if actor.owner:
                self._owners.setdefault(identity(actor.owner), []).append(actor)

    def matches(self, key: str | None) -> tuple[Actor, ...]:
        """Every actor KEY may be: one for an id or alias; one or more for an email or login
        (people commit from several agents under one email)."""
        if not key:
            return ()
        k = identity(key)
        if k in self._named:
            return (self._named[k],)
        if k in self._emails:
            return tuple(self._emails[k])
        noreply = _NOREPLY.match(k)
        login = noreply.group(1) if noreply else k
        return tuple(self._owners.get(login, ()))

    def get(self, key: str | None) -> Actor | None:
        """The actor KEY names, when it names exactly one."""
        found = self.matches(key)
        return found[0] if len(found) == 1 else None

    def owner(self, key: str | None) -> str | None:
        """The GitHub login to mention for KEY, when the map knows one."""
        owners = {a.owner for a in self.matches(key) if a.owner}
        return owners.pop() if len(owners) == 1 else None

    def name(self, key: str) -> str:
        """The actor id KEY resolves to, or KEY itself."""
        actor = self.get(key)
        return actor.id if actor else key

    def same(self, a: str | None, b: str | None) -> bool | None:
        """Whether A and B are the same party (one actor, or actors of one owner); None when
        neither is known and the texts differ, so unknown actors never conflict by themselves."""
        if not a or not b:
            return None
        if identity(a) == identity(b):
            return True
        left, right = self.matches(a), self.matches(b)
        if not left and not right:
            return None
        if not left or not right:
            return False
        if {x.id for x in left} & {y.id for y in right}:
            return True
        owners = {x.owner for x in left if x.owner} & {y.owner for y in right if y.owner}
        return bool(owners)


def parse_actors(section: Any, source: str) -> ActorMap:
    """The `actors:` section; ConfigError naming SOURCE (the file) and the entry when bad."""
    if section is None:
        return ActorMap()
    if not isinstance(section, Mapping):
        raise ConfigError(
            f"{source}: actors: must map each actor id to its owner, emails and aliases, "
            "e.g. `actors: {cc-ariel-laptop: {owner: ariel}}`"
        )
    actors = []
    for key, value in section.items():
        entry = {} if value is None else value
        if not isinstance(entry, Mapping):
            raise ConfigError(
                f"{source}: actors: {key}: must be a mapping of owner, emails, clickup, slack, "
                "aliases"
            )
        try:
            actors.append(Actor.model_validate({**entry, "id": str(key)}))
        except ValidationError as exc:
            known = "use owner, emails, clickup, slack, aliases"
            raise ConfigError(f"{source}: actors: {key}: {explain(exc, unknown=known)}") from exc
    try:
        return ActorMap(actors)
    except ValueError as exc:
        raise ConfigError(f"{source}: actors: {exc}; give each alias to one actor") from exc
