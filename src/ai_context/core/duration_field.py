"""The pydantic field types of the project's one rules: `Duration` (core/durations.py) and
`Time`/`AwareTime` (core/fields.utc). Apart from those modules so the commands that only read
durations and times import no pydantic."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated

from pydantic import AfterValidator, AwareDatetime, BeforeValidator

from ai_context.core.durations import duration_value
from ai_context.core.fields import utc

Duration = Annotated[timedelta, BeforeValidator(duration_value)]
Time = Annotated[datetime, AfterValidator(utc)]  # without an offset: UTC
AwareTime = Annotated[AwareDatetime, AfterValidator(utc)]
