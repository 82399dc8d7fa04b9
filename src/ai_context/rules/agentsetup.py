"""What `ai-context setup` merges into files people also edit (pure), and its command names:
ours replaced in place, every other key and line kept.
"""

from __future__ import annotations

import copy
import re
from typing import Any

# The slash commands setup writes, and the seeds' command each one is (README's table). None
# is a built-in command or alias of Claude Code (tests/test_setup.py holds them to the list in
# tests/samples/claude/builtin-commands.txt).
COMMANDS: dict[str, str] = {
    "task-resume": "/continue",
    "task-checkpoint": "state-sync (a checkpoint)",
    "task-handoff": "/handoff",
    "task-done": "/done",
    "task-status": "/status",
    "daily-summary": "/daily-summary",
    "save-session-protocol": "/save-session-protocol",
    "load-session-protocol": "/load-session-protocol",
}
# Names an earlier setup wrote: Claude Code's own /status, and aliases of /resume and /rewind.
# Our files under them (they carry our marker line) are removed; a user's own are left.
RETIRED_COMMANDS = ("continue", "checkpoint", "status", "handoff", "done")
HOOK_EVENTS = ("session-start", "stop", "post-tool-use", "pre-compact")
# The rule an earlier setup granted: every ai-context command, `setup` and `mirror` included.
RETIRED_ALLOW = ("Bash(ai-context:*)",)
_OUR_HOOK = re.compile(
    r"(?:^|\s)(?:ai-context|-m ai_context)\s+hook\s+(?:" + "|".join(HOOK_EVENTS) + r")(?:\s|$)"
)
SECTION_BEGIN = "<!-- ai-context:begin (written by `ai-context setup agents-md`; edits between "
SECTION_BEGIN += "these markers are replaced) -->"
SECTION_END = "<!-- ai-context:end -->"
_BEGIN_PREFIX = "<!-- ai-context:begin"


class SetupError(ValueError):
    """A file setup must merge into is not in a shape it can merge safely; nothing is written."""


def is_ours(hook: Any) -> bool:
    """A hook entry that `setup` wrote: its command runs `ai-context hook EVENT`, started as
    `ai-context`, `uvx ai-context` or `PYTHON -m ai_context`."""
    command = hook.get("command") if isinstance(hook, dict) else None
    return isinstance(command, str) and _OUR_HOOK.search(command) is not None


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
    settings: dict[str, Any],
    hooks: dict[str, list[dict[str, Any]]],
    allow: list[str],
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """SETTINGS with our HOOKS per event (an event mapped to [] loses ours), our ALLOW
    permissions (the retired broad rule taken back) and ENV's values; a new dict."""
    if not isinstance(settings, dict):
        raise SetupError("is not a JSON object")
    merged = copy.deepcopy(settings)
    if hooks or "hooks" in merged:
        current = merged.setdefault("hooks", {})
        if not isinstance(current, dict):
            raise SetupError('"hooks" is not a JSON object')
        for event, ours in hooks.items():
            groups = current.get(event, [])
            if not isinstance(groups, list):
                raise SetupError(f'"hooks.{event}" is not a JSON array')
            kept = _merge_event(groups, copy.deepcopy(ours))
            if kept:
                current[event] = kept
            else:
                current.pop(event, None)
        if not current:
            del merged["hooks"]
    _merge_allow(merged, allow)
    if env:
        values = merged.setdefault("env", {})
        if not isinstance(values, dict):
            raise SetupError('"env" is not a JSON object')
        values.update(env)
    return merged


def _merge_allow(merged: dict[str, Any], allow: list[str]) -> None:
    permissions = merged.get("permissions")
    if permissions is None and not allow:
        return
    permissions = merged.setdefault("permissions", {})
    if not isinstance(permissions, dict):
        raise SetupError('"permissions" is not a JSON object')
    allowed = permissions.get("allow")
    if allowed is None and not allow:
        return
    allowed = permissions.setdefault("allow", [])
    if not isinstance(allowed, list):
        raise SetupError('"permissions.allow" is not a JSON array')
    allowed[:] = [rule for rule in allowed if rule not in RETIRED_ALLOW]
    allowed.extend(rule for rule in allow if rule not in allowed)


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
