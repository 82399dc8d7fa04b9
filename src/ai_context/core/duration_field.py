"""`Duration`: the pydantic field type of a duration setting, read by core/durations.py's one
rule. Apart from that module so the commands that only read durations import no pydantic."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from pydantic import BeforeValidator

from ai_context.core.durations import duration_value

Duration = Annotated[timedelta, BeforeValidator(duration_value)]
