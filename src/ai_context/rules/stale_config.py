"""The stale rules' settings: the `stale:` section and the top-level stale-after (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ai_context.core.duration_field import Duration
from ai_context.core.errors import ConfigError
from ai_context.core.fields import explain
from ai_context.rules.checks import STALE_AFTER


class StaleConfig(BaseModel):
    """The `stale:` config section, plus the top-level stale-after setting."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    stale_after: timedelta = Field(default=STALE_AFTER, alias="stale-after")
    max_active_per_actor: int | None = Field(default=None, ge=1, alias="max-active-per-actor")
    clock_skew: Duration = Field(default=timedelta(minutes=5), alias="clock-skew")


def parse_stale_config(section: Any, source: str, stale_after: timedelta) -> StaleConfig:
    """The `stale:` section (`max-active-per-actor: 3`); stale-after is a top-level setting."""
    if section is None:
        section = {}
    if not isinstance(section, Mapping):
        raise ConfigError(
            f"{source}: stale: must be a mapping, e.g. `stale: {{max-active-per-actor: 3}}`"
        )
    if "stale-after" in section or "stale_after" in section:
        raise ConfigError(
            f"{source}: stale: stale-after is a top-level setting; move it out of stale:"
        )
    try:
        return StaleConfig.model_validate({**section, "stale-after": stale_after})
    except ValidationError as exc:
        problems = explain(exc, unknown="use max-active-per-actor")
        raise ConfigError(f"{source}: stale: {problems}") from exc
