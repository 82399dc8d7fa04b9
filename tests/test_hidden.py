"""One codec for the hidden state in the bot's comments: round trips, and garbage is None."""

from __future__ import annotations

import base64
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ai_context.core.hidden import MAX_ENCODED, decode, encode, find_hidden, hide
from ai_context.rules.digest.model import DigestState
from ai_context.rules.digest.state import find_state, state_line
from ai_context.rules.sticky import MARKER

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=20,
)


@given(st.dictionaries(st.text(max_size=10), json_values, max_size=5))
def test_round_trip(state: dict[str, Any]) -> None:
    assert decode(encode(state)) == state
    assert find_hidden(f"{MARKER}\nsome text\n{hide(state)}") == state


@given(st.text(max_size=300))
def test_any_text_decodes_to_none_or_an_object_never_raises(text: str) -> None:
    got = decode(text)
    assert got is None or isinstance(got, dict)
    got = find_hidden("<!-- ai-context:state " + text)
    assert got is None or isinstance(got, dict)


def test_garbage_is_none() -> None:
    not_an_object = base64.urlsafe_b64encode(b"[1, 2]").decode()
    deep = base64.urlsafe_b64encode(b"[" * 100_000 + b"]" * 100_000).decode()
    for junk in (None, "", "!!!", "eyJ", not_an_object, "A" * (MAX_ENCODED + 1), deep):
        assert decode(junk) is None
    assert find_hidden(None) is None and find_hidden("no state here") is None


def test_both_alphabets_are_read() -> None:
    # States that encode to + and / in standard base64 (what sticky comments carried before).
    state = {"k": "\u00ff\u00fe>>>???"}
    raw = json.dumps(state).encode()
    assert decode(base64.b64encode(raw).decode()) == state
    assert decode(base64.urlsafe_b64encode(raw).decode()) == state


def test_the_sticky_comment_and_the_digest_use_the_one_codec() -> None:
    state = {"stale": {"leases_read": True}}
    assert find_hidden(hide(state)) == state
    digest = DigestState()
    line = state_line(digest)
    encoded = line.split("ai-context-digest:v2:", 1)[1].rstrip(")")
    assert decode(encoded) == {"v": 2, "at": None, "r": {}}
    assert find_state(line).state == digest
