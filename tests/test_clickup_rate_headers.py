"""ClickUp's rate-limit headers of any text (`inf`, `nan`, `1e999`) are read as a number or as
absent, never an OverflowError or ValueError escaping a call."""

from __future__ import annotations

import pytest
import responses
from hypothesis import given, settings
from hypothesis import strategies as st

from ai_context.adapters.clickup import ClickUp
from ai_context.core.secret import Secret

API = "https://api.clickup.com/api/v2"


def _get_task(remaining: str, reset: str) -> str:
    headers = {"X-RateLimit-Remaining": remaining, "X-RateLimit-Reset": reset}
    with responses.RequestsMock() as mock:
        mock.get(f"{API}/task/t1", json={"id": "t1", "name": "Task"}, headers=headers)
        return ClickUp(Secret("pk_x"), sleep=lambda _s: None).get_task("t1").id


@pytest.mark.parametrize("value", ["inf", "nan", "1e999", "-inf"])
def test_a_rate_limit_header_that_is_not_a_finite_number_is_absent(value: str) -> None:
    assert _get_task(value, value) == "t1"


header_text = st.one_of(
    st.sampled_from(["inf", "nan", "1e999", "12", "1.5e9"]),
    st.text(st.characters(codec="ascii", exclude_categories=["Cc"]), max_size=12),
)


@settings(max_examples=100, deadline=None)
@given(remaining=header_text, reset=header_text)
def test_rate_limit_headers_of_any_text_never_break_a_call(remaining: str, reset: str) -> None:
    assert _get_task(remaining, reset) == "t1"
