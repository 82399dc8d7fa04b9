"""Properties of the commit-message readers over free text: they never raise, never invent."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ai_context.rules.gitlog.checkpoints import (
    Checkpoint,
    CheckpointProblem,
    read_checkpoint,
)
from ai_context.rules.gitlog.refs import issues_named
from tests.test_gitlog import checkpoint_message

# Text rich in the characters the rules look at.
ALPHABET = st.sampled_from(list("#/`~:-_. \n\tabcGHIikstue0123456789@&[]()AIC,"))
messy = st.text(ALPHABET, max_size=200) | st.text(max_size=200)
repos = st.none() | st.sampled_from(["acme/api", "o/r", "ACME/API"])


@settings(max_examples=300)
@given(messy, repos)
def test_issues_named_never_raises_and_never_invents(text: str, repo: str | None) -> None:
    numbers = issues_named(text, repo)
    assert len(numbers) == len(set(numbers))
    assert all(n > 0 and str(n) in text for n in numbers)


@given(st.text(st.characters(blacklist_characters="`~"), max_size=200), st.integers(1, 10**6))
def test_an_added_reference_is_always_found(text: str, number: int) -> None:
    assert number in issues_named(f"{text}\n\nRefs #{number}")
    assert number in issues_named(f"{text}\n\nAI-Context-Issue: {number}")


@settings(max_examples=300)
@given(messy)
def test_read_checkpoint_never_raises(text: str) -> None:
    result = read_checkpoint(text)
    assert result is None or isinstance(result, Checkpoint | CheckpointProblem)


@given(
    st.text(min_size=1, max_size=120).filter(lambda t: t.split()),
    st.integers(1, 10**6),
    st.none() | st.integers(1, 999),
)
def test_checkpoint_round_trip(text: str, issue: int, step: int | None) -> None:
    result = read_checkpoint(checkpoint_message(text, issue, step))
    assert result == Checkpoint(version=1, issue=issue, step=step, text=" ".join(text.split()))


def test_long_hostile_input_is_read_in_one_pass() -> None:
    # Shapes that make backtracking regexes quadratic; these must simply finish.
    for text in ("a/" * 30000, "#1a" * 20000, "x" * 60000 + "#1", "a-b/c.d#" * 8000):
        issues_named(text, "acme/api")
        read_checkpoint("ai-context: " + text)
