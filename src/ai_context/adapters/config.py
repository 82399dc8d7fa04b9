"""`Config`: everything a run is configured with, loaded once (`load_config`): action inputs
(`INPUT_<NAME>`), then environment variables, then the config file, then defaults; the file's
sections are typed by their own models, parsed on first use. A bad value exits 2 naming the
setting and where it came from.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    PrivateAttr,
    ValidationError,
    field_validator,
)

from ai_context.adapters.clients import CLICKUP_API_URL, Http
from ai_context.adapters.config_file import DEFAULT_CONFIG, ConfigFile
from ai_context.core.duration_field import Duration, Time
from ai_context.core.errors import ConfigError
from ai_context.core.fields import explain
from ai_context.core.secret import Secret
from ai_context.rules.checks import REQUIRED_DEFAULT, STALE_AFTER, CheckConfig, required_fields

if TYPE_CHECKING:
    from ai_context.rules.actors import ActorMap
    from ai_context.rules.digest.build import DigestSection
    from ai_context.rules.lease import LeaseConfig
    from ai_context.rules.mirror.targets import MirrorConfig
    from ai_context.rules.stale_config import StaleConfig

JOB_NAMES = ("check", "mirror", "stale", "digest")
# Setting name (as in action.yml and the YAML file) -> plain environment variables to try.
ENV_FALLBACKS: dict[str, tuple[str, ...]] = {
    "github-token": ("GITHUB_TOKEN", "GH_TOKEN"),
    "clickup-token": ("CLICKUP_TOKEN",),
    "clickup-api-url": ("CLICKUP_API_URL",),
    "slack-webhook-url": ("SLACK_WEBHOOK_URL",),
}
# Settings for tests, demos and tuning: environment variables only (AI_CONTEXT_NOW...), never
# an input nor a key of the file.
INTERNAL = ("write-interval", "http-retries", "http-backoff", "now")


def _secret(value: Any) -> Secret:
    if isinstance(value, Secret):
        return value
    if not isinstance(value, str):
        raise ValueError("must be text")  # never repeats the value: it is a secret
    return Secret(value)


SecretField = Annotated[Secret, PlainValidator(_secret)]


class Config(BaseModel):
    """Every setting of a run (field names are the setting names with `_` for `-`) and the
    config file's sections (`actors`, `stale`, `lease`, `mirror`, `digest`: properties)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # Inputs (action.yml), also keys of the file.
    config: str = DEFAULT_CONFIG
    jobs: tuple[str, ...] = ("auto",)
    dry_run: bool = False
    full: bool = False  # list every open issue, not only what changed (workflow_dispatch)
    fail_on: Literal["never", "error", "warning"] = "never"
    stale_after: Duration = STALE_AFTER
    required: tuple[str, ...] = REQUIRED_DEFAULT
    clickup_api_url: str = CLICKUP_API_URL
    clickup_team_id: str | None = None
    digest_issue: int | None = Field(default=None, gt=0)
    templates: str | None = None
    bot_login: str = "github-actions[bot]"
    # GitHub's content-creation limits are 80 writes a minute and 500 an hour: 50 a run stays
    # under both, however the runs fall.
    max_writes: int = Field(default=50, ge=1, le=500)
    mention_owners: Literal["new", "all", "none"] = "new"
    # Secrets: inputs and environment variables only.
    github_token: SecretField | None = None
    clickup_token: SecretField | None = None
    slack_webhook_url: SecretField | None = None
    # INTERNAL: the environment only.
    write_interval: float = Field(default=1.0, ge=0)
    http_retries: int = Field(default=5, ge=0, le=20)
    http_backoff: float = Field(default=1.0, ge=0, le=60)
    # Fixes the clock: replays, tests and demos.
    now: Time | None = None  # 0001-01-01T00:00:00+01:00 is out of range in UTC: exit 2
    _sources: dict[str, str] = PrivateAttr(default_factory=dict)
    _sections: dict[str, Any] = PrivateAttr(default_factory=dict)

    def source(self, name: str) -> str:
        """Where setting NAME (`digest-issue`) came from, for messages: `input digest-issue`,
        `.github/ai-context.yml line 4`; `default` when nothing set it."""
        return self._sources.get(name.replace("-", "_"), "default")

    @field_validator("jobs", mode="before")
    @classmethod
    def _jobs(cls, value: Any) -> Any:
        if not isinstance(value, (str, list, tuple)):  # `jobs: 5`: pydantic passes on TypeError
            raise ValueError(f"jobs is a list of job names ({', '.join(JOB_NAMES)}), not {value!r}")
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

    @field_validator("mention_owners", mode="before")
    @classmethod
    def _mention(cls, value: Any) -> Any:
        # `true` and `false` read as the two plain answers: owners of new episodes, nobody.
        lowered = str(value).strip().lower()
        return {"true": "new", "yes": "new", "false": "none", "no": "none"}.get(lowered, lowered)

    @field_validator("required", mode="before")
    @classmethod
    def _required(cls, value: Any) -> Any:
        # Known names are CheckConfig's to judge (the `check` property).
        return required_fields(value)

    @field_validator("slack_webhook_url")
    @classmethod
    def _webhook(cls, value: Secret | None) -> Secret | None:
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

    def __repr__(self) -> str:
        return f"Config(jobs={self.jobs}, dry_run={self.dry_run}, secrets=***)"

    # --- the sections of the file, each parsed once, when first asked for ------------------

    @cached_property
    def check(self) -> CheckConfig:
        """The checks' settings (`required`, `stale-after`)."""
        try:
            return CheckConfig(required=self.required, stale_after=self.stale_after)
        except ValueError as exc:  # CheckConfig's: `required:` names an unknown field
            raise ConfigError(f"setting required ({self.source('required')}): {exc}") from None

    @cached_property
    def actors(self) -> ActorMap:
        from ai_context.rules.actors import parse_actors  # noqa: PLC0415

        return parse_actors(self._sections.get("actors"), self.config)

    @cached_property
    def stale(self) -> StaleConfig:
        from ai_context.rules.stale_config import parse_stale_config  # noqa: PLC0415

        return parse_stale_config(self._sections.get("stale"), self.config, self.stale_after)

    @cached_property
    def lease(self) -> LeaseConfig:
        from ai_context.rules.lease import parse_lease_config  # noqa: PLC0415

        return parse_lease_config(self._sections.get("lease"), self.config)

    @cached_property
    def mirror(self) -> MirrorConfig:
        from ai_context.rules.mirror.targets import load_mirror_config  # noqa: PLC0415

        return load_mirror_config(self._sections.get("mirror"), self.config)

    @cached_property
    def digest(self) -> DigestSection:
        """The `digest:` section, with the top-level `repositories:` when it has none."""
        from ai_context.rules.digest.build import parse_digest_section  # noqa: PLC0415

        sections = self._sections
        return parse_digest_section(
            sections.get("digest"), sections.get("repositories"), self.config
        )

    @property
    def digest_on(self) -> bool:
        """`digest: false` in the config file turns the digest off (so does `jobs` without it)."""
        return self._sections.get("digest") is not False

    def check_sections(self) -> None:
        """Every section parsed now: a bad one is exit 2 before a run writes anything."""
        for name in ("check", "actors", "stale", "lease", "mirror", "digest"):
            getattr(self, name)

    @property
    def http(self) -> Http:
        """The clients' retries, backoff and pause between writes."""
        return Http(
            retries=self.http_retries, backoff=self.http_backoff, write_interval=self.write_interval
        )

    def secrets(self) -> list[str]:
        """The value of every secret set, for the runner to mask in all logs."""
        found = (self.github_token, self.clickup_token, self.slack_webhook_url)
        return [s.get_secret_value() for s in found if s is not None and s.get_secret_value()]


def _from_env(env: Mapping[str, str], name: str) -> tuple[str, str] | None:
    """(value, where it came from) of setting NAME in ENV: its input, else its variables."""
    if name not in INTERNAL:
        raw = env.get(f"INPUT_{name.upper()}", "")
        if raw.strip():
            return raw.strip(), f"input {name}"
    for var in (f"AI_CONTEXT_{name.upper().replace('-', '_')}", *ENV_FALLBACKS.get(name, ())):
        if env.get(var, "").strip():
            return env[var].strip(), f"environment variable {var}"
    return None


def load_config(env: Mapping[str, str], workspace: Path | None = None) -> Config:
    """The configuration of a run or a command: ENV (inputs, variables) over the config file
    (`config`, relative to WORKSPACE) over the defaults."""
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for field in Config.model_fields:
        found = _from_env(env, field.replace("_", "-"))
        if found is not None:
            values[field], sources[field] = found
    config_path = Path(values.get("config", DEFAULT_CONFIG))
    if workspace is not None and not config_path.is_absolute():
        config_path = workspace / config_path
    file = ConfigFile(config_path)
    for name, value in file.settings.items():
        field = name.replace("-", "_")
        if field not in values:
            values[field], sources[field] = value, file.where(name)
    try:
        config = Config.model_validate(values)
    except ValidationError as exc:

        def setting(field: str) -> str:
            where = f" ({sources[field]})" if field in sources else ""
            return f"setting {field.replace('_', '-')}{where}"

        raise ConfigError(f"bad configuration: {explain(exc, name=setting)}") from exc
    config._sources.update(sources)
    config._sections.update(file.sections)
    return config


def owner_of(actor: str | None, path: Path) -> str | None:
    """The actor's human owner (`actors.<actor>.owner` in the config file at PATH), when both
    exist: what `resume` asks GitHub for when the cache names no task."""
    if actor is None:
        return None
    return load_config({"AI_CONTEXT_CONFIG": str(path)}).actors.owner(actor)
