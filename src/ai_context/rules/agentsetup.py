"""What `ai-context setup` changes in files people also edit: merged, never clobbered.

- `.claude/settings.json`: our hooks (commands starting `ai-context hook`) replace our earlier
  ones in place; every other hook, matcher group, permission and key is kept as it was.
- `AGENTS.md`: our section lives between two markers; the rest of the file is never touched.
Pure: text and JSON in, text and JSON out; cli/setup.py reads and writes the files.
"""

from __future__ import annotations

import copy
from typing import Any

HOOK_PREFIX = ("ai-context", "hook")
SECTION_BEGIN = "<!-- ai-context:begin (written by `ai-context setup agents-md`; edits between "
SECTION_BEGIN += "these markers are replaced) -->"
SECTION_END = "<!-- ai-context:end -->"
_BEGIN_PREFIX = "<!-- ai-context:begin"


class SetupError(ValueError):
    """A file setup must merge into is not in a shape it can merge safely; nothing is written."""


def is_ours(hook: Any) -> bool:
    """A hook entry that `setup` wrote: its command runs `ai-context hook ...`."""
    command = hook.get("command") if isinstance(hook, dict) else None
    return isinstance(command, str) and tuple(command.split()[:2]) == HOOK_PREFIX


def _merge_event(groups: list[Any], ours: list[dict[str, Any]]) -> list[Any]:
    """GROUPS with our earlier groups replaced by OURS, at the place the first of them held."""
    kept: list[Any] = []
    at: int | None = None
    for group in groups:
        hooks = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(hooks, list):
            kept.append(group)  # not ours to judge: kept as it is
            continue
        mine = [h for h in hooks if is_ours(h)]
        if mine and len(mine) == len(hooks):
            at = len(kept) if at is None else at
            continue
        # A group the user shares with our hook: their hooks stay, ours goes.
        kept.append({**group, "hooks": [h for h in hooks if not is_ours(h)]} if mine else group)
    place = len(kept) if at is None else at
    kept[place:place] = ours
    return kept


def merge_settings(
    settings: dict[str, Any], hooks: dict[str, list[dict[str, Any]]], allow: list[str]
) -> dict[str, Any]:
    """SETTINGS with our HOOKS per event and our ALLOW permissions; a new dict."""
    if not isinstance(settings, dict):
        raise SetupError("is not a JSON object")
    merged = copy.deepcopy(settings)
    current = merged.setdefault("hooks", {})
    if not isinstance(current, dict):
        raise SetupError('"hooks" is not a JSON object')
    for event, ours in hooks.items():
        groups = current.get(event, [])
        if not isinstance(groups, list):
            raise SetupError(f'"hooks.{event}" is not a JSON array')
        current[event] = _merge_event(groups, copy.deepcopy(ours))
    if allow:
        permissions = merged.setdefault("permissions", {})
        if not isinstance(permissions, dict):
            raise SetupError('"permissions" is not a JSON object')
        allowed = permissions.setdefault("allow", [])
        if not isinstance(allowed, list):
            raise SetupError('"permissions.allow" is not a JSON array')
        allowed.extend(rule for rule in allow if rule not in allowed)
    return merged


def merge_section(text: str, section: str) -> str:
    """TEXT with our SECTION between the markers: replaced where they are, else appended."""
    block = f"{SECTION_BEGIN}\n{section.strip()}\n{SECTION_END}"
    begins = [i for i, line in enumerate(text.splitlines()) if line.startswith(_BEGIN_PREFIX)]
    ends = [i for i, line in enumerate(text.splitlines()) if line.strip() == SECTION_END]
    if not begins and not ends:
        if not text.strip():
            return block + "\n"
        newline = "\r\n" if "\r\n" in text else "\n"
        return text.rstrip("\r\n") + newline * 2 + block.replace("\n", newline) + newline
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise SetupError(
            f"has {len(begins)} begin and {len(ends)} end markers of the ai-context section; "
            "leave exactly one pair (begin before end), or remove both"
        )
    lines = text.splitlines(keepends=True)
    newline = "\r\n" if lines[begins[0]].endswith("\r\n") else "\n"
    head, tail = "".join(lines[: begins[0]]), "".join(lines[ends[0] + 1 :])
    return head + block.replace("\n", newline) + newline + tail
