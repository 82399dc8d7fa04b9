"""The `actors:` section: lookups by id, alias, email and login; clear errors on bad values."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from ai_context.core.errors import ConfigError
from ai_context.rules.actors import ActorMap, identity, parse_actors

SOURCE = ".github/ai-context.yml"
CONFIG = yaml.safe_load(
    """
actors:
  cc-ariel-laptop:
    owner: ariel
    emails: [Ariel@Example.com]
    clickup: "4455667"
    slack: U024BE7LH
    aliases: cc-ariel
  cc-ariel-phone:
    owner: "@ariel"
    emails: [ariel@example.com]
  copilot:
    owner: acme/agents
    aliases: [app/github-copilot, app/copilot-swe-agent]
  cc-ben:
    owner: ben
    emails: ben@example.com
  bare:
"""
)["actors"]


@pytest.fixture
def actors() -> ActorMap:
    return parse_actors(CONFIG, SOURCE)


def test_entries_are_parsed(actors: ActorMap) -> None:
    laptop = actors.get("cc-ariel-laptop")
    assert laptop is not None
    assert (laptop.owner, laptop.clickup, laptop.slack) == ("ariel", 4455667, "U024BE7LH")
    assert laptop.aliases == ("cc-ariel",) and laptop.emails == ("Ariel@Example.com",)
    assert actors.get("cc-ariel-phone").owner == "ariel"  # type: ignore[union-attr]
    bare = actors.get("bare")
    assert bare is not None and bare.owner is None and len(actors.actors) == 5


def test_lookup_by_id_alias_email_and_login(actors: ActorMap) -> None:
    assert actors.name("CC-Ariel") == "cc-ariel-laptop"  # alias, any case
    # A renamed bot: both of GitHub's spellings of either login find the one actor.
    for login in ("app/github-copilot", "copilot-swe-agent[bot]", "APP/copilot-swe-agent"):
        assert actors.name(login) == "copilot"
    assert [a.id for a in actors.matches("ARIEL@example.com")] == [
        "cc-ariel-laptop",
        "cc-ariel-phone",
    ]
    assert actors.get("ariel@example.com") is None  # two actors: not one
    assert actors.owner("ariel@example.com") == "ariel"  # but one owner
    assert actors.name("ben") == "cc-ben"  # the owner's login
    assert actors.name("1234+ben@users.noreply.github.com") == "cc-ben"
    assert actors.owner("copilot") == "acme/agents"


def test_unknown_actors_still_work(actors: ActorMap) -> None:
    assert actors.get("cc-stranger") is None
    assert actors.name("cc-stranger") == "cc-stranger"
    assert actors.owner("cc-stranger") is None
    assert actors.matches("") == () and actors.matches(None) == ()
    empty = parse_actors(None, SOURCE)
    assert empty.actors == () and empty.same("a", "b") is None and empty.same("a", "A") is True


def test_same_party(actors: ActorMap) -> None:
    assert actors.same("cc-ariel-laptop", "ariel@example.com") is True  # own email
    assert actors.same("cc-ariel-phone", "cc-ariel-laptop") is True  # one owner
    assert actors.same("cc-ariel-laptop", "ben@example.com") is False
    assert actors.same("copilot", "copilot-swe-agent[bot]") is True
    # Known vs unknown: the unknown one is not among the known actor's identities.
    assert actors.same("cc-ben", "someone@else.org") is False
    # Neither known: cannot tell, so no conflict is raised on it.
    assert actors.same("cc-x", "someone@else.org") is None
    assert actors.same("cc-x", None) is None


@pytest.mark.parametrize(
    ("section", "needle"),
    [
        ({"cc-a": {"owner": "not a login"}}, "actors: cc-a: owner: 'not a login' is not a GitHub"),
        ({"cc-a": {"slack": "ariel"}}, "cc-a: slack: 'ariel' is not a Slack member id"),
        ({"cc-a": {"emails": ["nope"]}}, "cc-a: emails: 'nope' is not a git author email"),
        ({"cc-a": {"clickup": "abc"}}, "cc-a: clickup: 'abc' is not a ClickUp user id"),
        ({"cc-a": {"owner": "a", "mail": "x"}}, "cc-a: mail: unknown key; use owner, emails"),
        ({"cc a": {}}, "'cc a' is not an actor id"),
        ({"cc-a": ["ariel"]}, "cc-a: must be a mapping"),
        (["cc-a"], "actors: must map each actor id"),
        ({"a": {"aliases": ["x"]}, "b": {"aliases": ["X"]}}, "'X' names both a and b"),
        ({"a": {}, "b": {"aliases": ["a"]}}, "'a' names both a and b"),
    ],
)
def test_bad_entries_name_the_file_and_entry(section: Any, needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_actors(section, SOURCE)
    assert str(info.value).startswith(f"{SOURCE}: actors:")
    assert needle in str(info.value)


@given(st.text(max_size=60))
def test_any_text_is_a_safe_key(text: str) -> None:
    actors = parse_actors(CONFIG, SOURCE)
    identity(text)
    actors.matches(text)
    assert actors.same(text, text) in (True, None)


yaml_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=8,
)


@given(yaml_values)
def test_any_section_parses_or_says_why(section: Any) -> None:
    try:
        parse_actors(section, SOURCE)
    except ConfigError as exc:
        assert str(exc).startswith(f"{SOURCE}: actors")
