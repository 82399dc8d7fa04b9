"""The config file's YAML, read within bounds: past them it is refused (exit 2) before anything
is built from it, so an alias bomb or a file nested thousands deep costs a fraction of a second.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ai_context.core.errors import ConfigError

MAX_YAML_BYTES = 1_000_000
MAX_YAML_DEPTH = 64
MAX_YAML_ALIASES = 100  # uses of `*anchor`
MAX_YAML_NODES = 100_000  # values once every alias is expanded


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader that composes with a depth limit and counts alias uses."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._aliases = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_YAML_ALIASES:
                raise _Refused(f"more than {MAX_YAML_ALIASES} aliases (*name)")
        self._depth += 1
        if self._depth > MAX_YAML_DEPTH:
            raise _Refused(f"nested more than {MAX_YAML_DEPTH} levels deep")
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


class _Refused(Exception):
    pass


def _expanded_size(node: yaml.Node) -> int:
    """How many values NODE stands for once aliases are expanded; refuses a node that
    contains itself."""
    sizes: dict[int, int] = {}
    open_: set[int] = set()

    def size(n: yaml.Node) -> int:
        key = id(n)
        if key in sizes:
            return sizes[key]
        if key in open_:
            raise _Refused("an alias refers to a value that contains it")
        open_.add(key)
        if isinstance(n, yaml.ScalarNode) and not n.value.isascii():
            _whole_characters(n)
        children: list[yaml.Node] = []
        if isinstance(n, yaml.SequenceNode):
            children = list(n.value)
        elif isinstance(n, yaml.MappingNode):
            children = [part for pair in n.value for part in pair]
        total = 1
        for child in children:
            total += size(child)
            if total > MAX_YAML_NODES:
                raise _Refused(f"more than {MAX_YAML_NODES} values once aliases are expanded")
        open_.discard(key)
        sizes[key] = total
        return total

    return size(node)


def _whole_characters(node: yaml.ScalarNode) -> None:
    """YAML's `\\ud800` escape makes half of a UTF-16 pair, which no UTF-8 text (nor pydantic)
    can hold: refused here, with its line, rather than failing later in whatever reads it."""
    try:
        node.value.encode()
    except UnicodeEncodeError:
        line = node.start_mark.line + 1
        raise _Refused(
            f"line {line} escapes a lone surrogate (like \\ud800), not a character"
        ) from None


def parse_yaml(text: str, where: str) -> tuple[Any, yaml.Node | None]:
    """YAML TEXT within the bounds above: its data and its node (for line numbers).
    ConfigError naming WHERE when it is not YAML or too big."""
    if len(text) > MAX_YAML_BYTES:
        raise ConfigError(f"{where} is larger than {MAX_YAML_BYTES} bytes; is it the right file?")
    try:
        loader = _BoundedLoader(text)  # its reader refuses control characters such as \x7f
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where} is not valid YAML: {exc}") from exc
    try:
        node = loader.get_single_node()
        if node is None:
            return None, None
        _expanded_size(node)
        return loader.construct_document(node), node
    except _Refused as exc:
        raise ConfigError(f"{where} is refused: {exc}; write the settings out plainly") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where} is not valid YAML: {exc}") from exc
    finally:
        loader.dispose()


def load_yaml(path: Path) -> tuple[dict[str, Any], dict[str, int]]:
    """The config file's mapping and the line of each top-level key."""
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
    if not isinstance(data, dict) or not isinstance(node, yaml.MappingNode):
        raise ConfigError(f"config file {path} must be a mapping of setting: value")
    lines = {str(k.value): k.start_mark.line + 1 for k, _ in node.value}
    return data, lines
