"""The one way a pydantic problem reads (`core.fields.explain`), whichever model found it, and
the one reader of digits in text (`core.fields.whole`)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ai_context.adapters.config import load_config
from ai_context.core.errors import ConfigError
from ai_context.core.fields import explain, whole


class Step(BaseModel):
    text: str


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_length: int = Field(default=1, ge=1)
    steps: list[Step] = []

    @field_validator("max_length")
    @classmethod
    def _even(cls, value: int) -> int:
        if value % 2:
            raise ValueError("must be even")
        return value


def problems(data: object, **options: Any) -> str:
    with pytest.raises(ValidationError) as caught:
        Section.model_validate(data)
    return explain(caught.value, **options)


def test_a_problem_reads_where_then_pydantic_s_own_message() -> None:
    assert problems({"steps": [{"text": "a"}, {}]}) == "steps.1.text: Field required"
    assert problems({"max_length": 3}) == "max_length: must be even"  # "Value error, " dropped
    assert problems([1]) == "Input should be a valid dictionary or instance of Section"


def test_a_section_a_name_and_what_to_do_with_an_unknown_key() -> None:
    said = problems(
        {"max_length": 0, "colour": "red"},
        section="mirror",
        unknown="known: max-length, steps",
        name=lambda key: key.replace("_", "-"),
    )
    assert said == (
        "mirror.max-length: Input should be greater than or equal to 1; "
        "mirror.colour: unknown key; known: max-length, steps"
    )


def test_past_five_problems_the_rest_are_counted() -> None:
    said = problems({"steps": [{}] * 8})
    assert said.count("Field required") == 5 and said.endswith(" (and 3 more)")


def test_a_setting_names_itself_and_where_it_came_from() -> None:
    with pytest.raises(ConfigError) as caught:
        load_config({"INPUT_MAX-WRITES": "0", "INPUT_FAIL-ON": "sometimes"})
    assert str(caught.value) == (
        "bad configuration: setting fail-on (input fail-on): Input should be 'never', 'error' "
        "or 'warning'; setting max-writes (input max-writes): Input should be greater than or "
        "equal to 1"
    )


@pytest.mark.parametrize(
    ("text", "number"),
    [("12", 12), ("007", 7), ("9" * 18, int("9" * 18)), ("9" * 19, None), ("9" * 5000, None)]
    + [(text, None) for text in ("", " 1", "-1", "+1", "1.0", "\u00b9", "\u0663", "1_000")],
)
def test_digits_are_a_whole_number_up_to_18_of_them(text: str, number: int | None) -> None:
    assert whole(text) == number
    assert whole("9" * 19, max_digits=19) == int("9" * 19)
