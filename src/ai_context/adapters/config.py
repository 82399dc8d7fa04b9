"""Settings: action inputs, then environment variables, then the YAML config file, then defaults.

An input reaches a docker action as `INPUT_<NAME>` (upper case, hyphens kept). action.yml
leaves the overridable inputs empty by default, so a value in `.github/ai-context.yml` is not
shadowed by a default GitHub always passes. A bad value exits 2 with a message naming the
setting, where it came from and, for the file, its line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    field_validator,
)

from ai_context.adapters.yamlfile import load_yaml
from ai_context.core.duration_field import Duration
from ai_context.core.errors import ConfigError
from ai_context.rules.checks import REQUIRED_DEFAULT, CheckConfig, required_fields

JOB_NAMES = ("check", "mirror", "stale", "digest")

# Setting name (as in action.yml and the YAML file) -> plain environment variables to try.
ENV_FALLBACKS: dict[str, tuple[str, ...]] = {
    "github-token": ("GITHUB_TOKEN", "GH_TOKEN"),
    "clickup-token": ("CLICKUP_TOKEN",),
    "clickup-api-url": ("CLICKUP_API_URL",),
    "slack-webhook-url": ("SLACK_WEBHOOK_URL",),
}
SECRETS = ("github-token", "clickup-token", "slack-webhook-url")


class Settings(BaseModel):
    """Every setting of a run; field names are the input names with `_` for `-`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    github_token: SecretStr | None = None
    config: str = ".github/ai-context.yml"
    jobs: tuple[str, ...] = ("auto",)
    dry_run: bool = False
    fail_on: Literal["never", "error", "warning"] = "never"
    stale_after: Duration = timedelta(hours=24)
    clickup_token: SecretStr | None = None
    clickup_api_url: str = "https://api.clickup.com/api/v2"
    clickup_team_id: str | None = None
    slack_webhook_url: SecretStr | None = None
    digest_issue: int | None = Field(default=None, gt=0)
    templates: str | None = None
    bot_login: str = "github-actions[bot]"
    # GitHub's content-creation limits are 80 writes a minute and 500 an hour: 50 a run stays
    # under both, however the runs fall.
    max_writes: int = Field(default=50, ge=1, le=500)
    mention_owners: Literal["new", "all", "none"] = "new"
    write_interval: float = Field(default=1.0, ge=0)
    http_retries: int = Field(default=5, ge=0, le=20)
    http_backoff: float = Field(default=1.0, ge=0, le=60)
    now: datetime | None = None  # fixes the clock: replays, tests and demos
    required: tuple[str, ...] = REQUIRED_DEFAULT
    _sources: dict[str, str] = PrivateAttr(default_factory=dict)

    def source(self, name: str) -> str:
        """Where setting NAME (`digest-issue`) came from, for messages: `input digest-issue`,
        `.github/ai-context.yml line 4`; `default` when nothing set it."""
        return self._sources.get(_field(name), "default")

    @field_validator("jobs", mode="before")
    @classmethod
    def _jobs(cls, value: Any) -> Any:
        items = value.split(",") if isinstance(value, str) else value
        names = tuple(str(v).strip().lower() for v in items if str(v).strip())
        if not names:
            return ("auto",)
        unknown = [n for n in names if n not in (*JOB_NAMES, "auto")]
        if unknown:
            raise ValueError(
                f"unknown job {', '.join(unknown)}; use auto or a list of {', '.join(JOB_NAMES)}"
            )
        return names

    @field_validator("dry_run", mode="before")
    @classmethod
    def _bool(cls, value: Any) -> Any:
        if isinstance(value, str):
            lowered = value.strip().lower()
            if lowered in ("true", "yes", "1", "on"):
                return True
            if lowered in ("false", "no", "0", "off", ""):
                return False
            raise ValueError(f"{value!r} is not true or false")
        return value

    @field_validator("mention_owners", mode="before")
    @classmethod
    def _mention(cls, value: Any) -> Any:
        # `true` and `false` read as the two plain answers: owners of new episodes, nobody.
        lowered = str(value).strip().lower()
        return {"true": "new", "yes": "new", "false": "none", "no": "none"}.get(lowered, lowered)

    @field_validator("required", mode="before")
    @classmethod
    def _required(cls, value: Any) -> Any:
        # Known names are CheckConfig's to judge (check_config); run.check_settings asks it.
        return required_fields(value)

    @field_validator("now")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value

    @field_validator("slack_webhook_url")
    @classmethod
    def _webhook(cls, value: SecretStr | None) -> SecretStr | None:
        # Checked up front, so a bad URL fails the run (exit 2) before anything is posted;
        # the message never repeats the URL, which is a secret.
        if value is None:
            return None
        from ai_context.adapters.slack import webhook_problem  # noqa: PLC0415 - only when set

        problem = webhook_problem(value.get_secret_value())
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("clickup_api_url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"{value!r} is not an http(s) URL")
        return value.rstrip("/")

    @property
    def check_config(self) -> CheckConfig:
        return CheckConfig(required=self.required, stale_after=self.stale_after)

    def __repr__(self) -> str:
        # pydantic already hides SecretStr values; say so explicitly for readers of logs.
        return f"Settings(jobs={self.jobs}, dry_run={self.dry_run}, secrets=***)"


@dataclass(frozen=True)
class Source:
    """Where a setting's value came from, for error messages."""

    kind: Literal["input", "env", "file", "default"]
    name: str
    line: int | None = None

    def describe(self) -> str:
        if self.kind == "file":
            return f"{self.name} line {self.line}"
        return f"{'input' if self.kind == 'input' else 'environment variable'} {self.name}"


def _field(name: str) -> str:
    return name.replace("-", "_")


def setting_names() -> list[str]:
    return [name.replace("_", "-") for name in Settings.model_fields]


def load_settings(
    env: Mapping[str, str], workspace: Path | None = None, *, file_only_keys: tuple[str, ...] = ()
) -> tuple[Settings, dict[str, Any]]:
    """Settings for a run, and the file's extra sections (`actors:`, `digest:`...) untouched."""
    values: dict[str, Any] = {}
    sources: dict[str, Source] = {}
    names = setting_names()
    for name in names:
        raw = env.get(f"INPUT_{name.upper()}", "")
        if raw.strip():
            values[_field(name)] = raw.strip()
            sources[_field(name)] = Source("input", name)
            continue
        for var in (f"AI_CONTEXT_{name.upper().replace('-', '_')}", *ENV_FALLBACKS.get(name, ())):
            if env.get(var, "").strip():
                values[_field(name)] = env[var].strip()
                sources[_field(name)] = Source("env", var)
                break
    config_path = Path(values.get("config", Settings.model_fields["config"].default))
    if workspace is not None and not config_path.is_absolute():
        config_path = workspace / config_path
    data, lines = load_yaml(config_path)
    extras: dict[str, Any] = {}
    for key, value in data.items():
        field_name = _field(str(key))
        if field_name in Settings.model_fields and field_name not in SECRETS_FIELDS:
            values.setdefault(field_name, value)
            sources.setdefault(field_name, Source("file", str(config_path), lines.get(str(key))))
        elif field_name in SECRETS_FIELDS:
            raise ConfigError(
                f"{config_path} line {lines.get(str(key))}: {key} is a secret; pass it as an "
                "input from the repository's secrets, never in a committed file"
            )
        elif str(key) in file_only_keys or key in KNOWN_SECTIONS:
            extras[str(key)] = value
        else:
            raise ConfigError(
                f"{config_path} line {lines.get(str(key))}: unknown setting {key!r}; the file "
                "takes: " + ", ".join(file_settings())
            )
    try:
        settings = Settings.model_validate(values)
    except ValidationError as exc:
        raise ConfigError(_explain(exc, sources)) from exc
    settings._sources.update({name: source.describe() for name, source in sources.items()})
    return settings, extras


SECRETS_FIELDS = frozenset(_field(n) for n in SECRETS)
# Settings for tests, replays and tuning (environment variables): the file takes them, but a
# message offering keys to a reader lists only the documented ones.
TUNING = frozenset({"write-interval", "http-retries", "http-backoff", "now"})


def file_settings() -> list[str]:
    """The keys the config file takes and the README documents: settings and sections."""
    names = {n for n in setting_names() if n not in SECRETS and n not in TUNING}
    return sorted(names | KNOWN_SECTIONS)


# Sections of the config file that other parts of the tool read (actors, digest, mirror...).
KNOWN_SECTIONS = frozenset({"actors", "digest", "mirror", "stale", "repositories", "lease"})


def _explain(exc: ValidationError, sources: Mapping[str, Source]) -> str:
    problems = []
    for error in exc.errors():
        field_name = str(error["loc"][0]) if error["loc"] else "?"
        source = sources.get(field_name)
        where = f" ({source.describe()})" if source else ""
        message = str(error["msg"]).removeprefix("Value error, ")
        problems.append(f"setting {field_name.replace('_', '-')}{where}: {message}")
    return "bad configuration: " + "; ".join(problems)


def secrets_to_mask(settings: Settings) -> list[str]:
    """Every secret's value, for `::add-mask::` (Workflow.add_mask), so the runner scrubs
    them from all logs."""
    out = []
    for name in SECRETS_FIELDS:
        secret = getattr(settings, name)
        if secret is not None and secret.get_secret_value():
            out.append(secret.get_secret_value())
    return out
