"""The one error shape for a value that cannot fill a model's field, whoever checks it: the
block's model, an issue's front matter, the agent's cache file. `loc` names the field as a path
(`actor`, `plan.0.text`, `block.last_updated`), `msg` the problem; the message is `loc: msg`."""

from __future__ import annotations


class FieldError(ValueError):
    def __init__(self, loc: str, msg: str) -> None:
        super().__init__(f"{loc}: {msg}")
        self.loc, self.msg = loc, msg


def want_text(loc: str, value: object, error: type[FieldError] = FieldError) -> str:
    """VALUE when it is a string; ERROR at LOC otherwise."""
    if not isinstance(value, str):
        raise error(loc, "Input should be a valid string")
    return value
