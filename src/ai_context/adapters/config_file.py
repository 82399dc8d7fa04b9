"""The config file (`.github/ai-context.yml`): where it is, its vocabulary, and a lean reader of
the two keys the checks use, so `validate` and the agent commands load no pydantic (and no YAML
without a file). adapters/config.py types the whole file; both read it through `ConfigFile`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ai_context.core.durations import duration_value
from ai_context.core.errors import ConfigError
from ai_context.rules.checks import CheckConfig, required_fields

if TYPE_CHECKING:
    from pathlib import Path

DEFAULT_CONFIG = ".github/ai-context.yml"
# Top-level settings the file may hold: the action's inputs that are no secret, and `required`.
FILE_SETTINGS = (
    *("jobs", "dry-run", "fail-on", "stale-after", "max-writes", "mention-owners", "required"),
    *("clickup-api-url", "clickup-team-id", "digest-issue", "templates", "bot-login"),
)
# Inputs and environment variables only: a committed file never holds them.
SECRETS = ("github-token", "clickup-token", "slack-webhook-url")
# The file's sections, each typed by its own model (Config's properties).
SECTIONS = ("actors", "digest", "mirror", "stale", "repositories", "lease")


def config_path(env: Mapping[str, str], given: str | Path | None = None) -> Path:
    """The config file of a command: GIVEN (`--config`), else $AI_CONTEXT_CONFIG, else
    .github/ai-context.yml."""
    from pathlib import Path  # noqa: PLC0415 - start-up: validate builds no Path unless asked

    return Path(given or env.get("AI_CONTEXT_CONFIG", "").strip() or DEFAULT_CONFIG)


class ConfigFile:
    """The file's top-level settings (by key) and sections, each key's line, the path."""

    def __init__(self, path: Path) -> None:
        data: dict[str, Any] = {}
        self.lines: dict[str, int] = {}
        if path.exists():  # no file, no YAML: the common case costs a stat
            from ai_context.adapters.yamlfile import load_yaml  # noqa: PLC0415

            data, self.lines = load_yaml(path)
        self.path = path
        self.settings: dict[str, Any] = {}
        self.sections: dict[str, Any] = {}
        for key, value in data.items():
            name = str(key)
            if name.replace("_", "-") in FILE_SETTINGS:  # `fail_on:` reads as `fail-on:`
                name = name.replace("_", "-")
                self.lines[name] = self.lines[str(key)]
                self.settings[name] = value
            elif name in SECTIONS:
                self.sections[name] = value
            elif name in SECRETS:
                raise ConfigError(
                    f"{self.where(name)}: {name} is a secret; pass it as an input from the "
                    "repository's secrets, never in a committed file"
                )
            else:
                raise ConfigError(
                    f"{self.where(name)}: unknown setting {name!r}; the file takes: "
                    + ", ".join(sorted((*FILE_SETTINGS, *SECTIONS)))
                )

    def where(self, key: str) -> str:
        return f"{self.path} line {self.lines.get(key)}"


def check_config(path: Path, env: Mapping[str, str]) -> CheckConfig:
    """The checks' settings (`required`, `stale-after`) as the Action reads them, $AI_CONTEXT_*
    over the config file at PATH over the defaults, without the rest of the configuration:
    what `validate` and the agent commands need, at YAML's cost at most (none without a file)."""
    found = ConfigFile(path)
    values: dict[str, Any] = {}
    wheres: dict[str, str] = {}
    for key, read in (("required", required_fields), ("stale-after", duration_value)):
        var = "AI_CONTEXT_" + key.upper().replace("-", "_")
        raw, where = env.get(var, "").strip(), f"environment variable {var}"
        if not raw and key in found.settings:
            raw, where = found.settings[key], found.where(key)
        if raw is not None and raw != "":
            wheres[key] = where if where.startswith("environment") else str(found.path)
            try:
                values[key.replace("-", "_")] = read(raw)
            except ValueError as exc:
                raise ConfigError(f"bad configuration: setting {key} ({where}): {exc}") from None
    try:
        return CheckConfig(**values)
    except ValueError as exc:  # CheckConfig's: `required:` names an unknown field
        raise ConfigError(f"{wheres['required']}: {exc}") from None
