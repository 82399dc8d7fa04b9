"""The config file (`.github/ai-context.yml`): read within bounds, its vocabulary, and a lean
reader of the two keys `validate` checks with.

Typed and checked as a whole by adapters/config.py (pydantic); this module imports PyYAML only
when it reads a file, so `validate` pays for YAML in a repository that has the file and for
neither YAML nor pydantic elsewhere. Both read the file through `ConfigFile`, so they accept and
refuse the same keys.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from ai_context.core.durations import duration_value
from ai_context.core.errors import ConfigError
from ai_context.rules.checks import CheckConfig, required_fields

if TYPE_CHECKING:
    from pathlib import Path

    import yaml

DEFAULT_CONFIG = ".github/ai-context.yml"
# Top-level settings the file may hold: the action's inputs that are no secret, and `required`.
FILE_SETTINGS = (
    "jobs",
    "dry-run",
    "fail-on",
    "stale-after",
    "required",
    "clickup-api-url",
    "clickup-team-id",
    "digest-issue",
    "templates",
    "bot-login",
)
# Inputs and environment variables only: a committed file never holds them.
SECRETS = ("github-token", "clickup-token", "slack-webhook-url")
# The file's sections, each typed by its own model (Config's properties).
SECTIONS = ("actors", "digest", "mirror", "stale", "repositories", "lease")

# Bounds of the config file: a settings file is a few KB of shallow mappings. Past these, it
# is refused (exit 2) before anything is built from it, so an alias bomb ("billion laughs")
# or a file nested thousands deep costs a fraction of a second, not the runner's memory.
MAX_YAML_BYTES = 1_000_000
MAX_YAML_DEPTH = 64
MAX_YAML_ALIASES = 100  # uses of `*anchor`
MAX_YAML_NODES = 100_000  # values once every alias is expanded


@cache
def _loader() -> type[yaml.SafeLoader]:
    """SafeLoader that composes with a depth limit and counts alias uses (PyYAML imported on
    the first file read)."""
    import yaml  # noqa: PLC0415

    class BoundedLoader(yaml.SafeLoader):
        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self._depth = 0
            self._aliases = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                self._aliases += 1
                if self._aliases > MAX_YAML_ALIASES:
                    raise _TooBig(f"more than {MAX_YAML_ALIASES} aliases (*name)")
            self._depth += 1
            if self._depth > MAX_YAML_DEPTH:
                raise _TooBig(f"nested more than {MAX_YAML_DEPTH} levels deep")
            try:
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

    return BoundedLoader


class _TooBig(Exception):
    pass


def _expanded_size(node: yaml.Node) -> int:
    """How many values NODE stands for once aliases are expanded (shared nodes counted at
    each use, computed once each); refuses a node that contains itself."""
    import yaml  # noqa: PLC0415

    sizes: dict[int, int] = {}
    open_: set[int] = set()

    def size(n: yaml.Node) -> int:
        key = id(n)
        if key in sizes:
            return sizes[key]
        if key in open_:
            raise _TooBig("an alias refers to a value that contains it")
        open_.add(key)
        children: list[yaml.Node] = []
        if isinstance(n, yaml.SequenceNode):
            children = list(n.value)
        elif isinstance(n, yaml.MappingNode):
            children = [part for pair in n.value for part in pair]
        total = 1
        for child in children:
            total += size(child)
            if total > MAX_YAML_NODES:
                raise _TooBig(f"more than {MAX_YAML_NODES} values once aliases are expanded")
        open_.discard(key)
        sizes[key] = total
        return total

    return size(node)


def parse_yaml(text: str, where: str) -> tuple[Any, yaml.Node | None]:
    """YAML TEXT within the bounds above: its data and its node (for line numbers).
    ConfigError naming WHERE when it is not YAML or too big."""
    import yaml  # noqa: PLC0415

    if len(text) > MAX_YAML_BYTES:
        raise ConfigError(f"{where} is larger than {MAX_YAML_BYTES} bytes; is it the right file?")
    loader = _loader()(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, None
        _expanded_size(node)
        return loader.construct_document(node), node
    except _TooBig as exc:
        raise ConfigError(f"{where} is refused: {exc}; write the settings out plainly") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where} is not valid YAML: {exc}") from exc
    finally:
        loader.dispose()


def load_yaml(path: Path) -> tuple[dict[str, Any], dict[str, int]]:
    """The config file's mapping and the line of each top-level key (none: an empty one)."""
    try:
        if path.stat().st_size > MAX_YAML_BYTES:  # not even read into memory
            raise ConfigError(f"config file {path} is larger than {MAX_YAML_BYTES} bytes")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from exc
    data, node = parse_yaml(text, f"config file {path}")
    if data is None:
        return {}, {}
    if not isinstance(data, dict) or node is None:
        raise ConfigError(f"config file {path} must be a mapping of setting: value")
    lines = {str(k.value): k.start_mark.line + 1 for k, _ in node.value}
    return data, lines


class ConfigFile:
    """The file's top-level settings (by key) and sections, each key's line, the path."""

    def __init__(self, path: Path) -> None:
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
                    f"{self.where(name)}: unknown setting {name!r}; known: "
                    + ", ".join(sorted((*FILE_SETTINGS, *SECTIONS)))
                )

    def where(self, key: str) -> str:
        return f"{self.path} line {self.lines.get(key)}"


def check_config(path: Path) -> CheckConfig:
    """The checks' settings in the config file at PATH (`required`, `stale-after`), read
    without the rest of the configuration: what `validate` needs, at YAML's cost only."""
    found = ConfigFile(path)
    values: dict[str, Any] = {}
    for key, field, read in (
        ("required", "required", required_fields),
        ("stale-after", "stale_after", duration_value),
    ):
        if key in found.settings:
            try:
                values[field] = read(found.settings[key])
            except ValueError as exc:
                raise ConfigError(f"setting {key} ({found.where(key)}): {exc}") from None
    try:
        return CheckConfig(**values)
    except ValueError as exc:  # CheckConfig's: `required:` names an unknown field
        raise ConfigError(f"setting required ({found.where('required')}): {exc}") from None
