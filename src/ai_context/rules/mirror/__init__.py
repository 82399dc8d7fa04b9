"""The ClickUp mirror's pure core: the link, the mirror text, the field and what to write.

The issue body is the authority; the ClickUp field is a copy rebuilt from it (docs/design.md §1).
The mirror text holds nothing that changes from run to run (no "mirrored at" time), so an
unchanged block renders the same text and costs no write: on ClickUp's free plan every
custom-field write counts against a lifetime cap of 60.

Finding codes (AIC7xx, the mirror):
  AIC701 warning  the linked ClickUp task is not found (deleted, or the token cannot see it)
  AIC702 error    two or more ClickUp fields carry the mirror field's name on the task's list
  AIC703 warning  a custom task id (DEV-123) but no workspace id to resolve it with
  AIC704 warning  one ClickUp task is linked from several issues: none of them is mirrored
  AIC705 warning  a link not followed: neither the issue's author nor its block's actor is
                  trusted (link.trusted)
  AIC706 warning  the task's field already mirrors another issue: not written

The rooms: `link`, `clickup` (tasks and fields), `text` (the mirror text), `targets` (settings,
findings and what one run mirrors).
"""

from ai_context.core.phases import current_step
from ai_context.rules.mirror.clickup import (
    TEXT_FIELD_TYPES,
    CustomField,
    FieldMatch,
    Task,
    resolve_field,
)
from ai_context.rules.mirror.link import (
    Link,
    find_link,
)
from ai_context.rules.mirror.targets import (
    MirrorConfig,
    Target,
    duplicate_field,
    load_mirror_config,
    needs_workspace,
    not_found,
    shared_task,
    targets,
)
from ai_context.rules.mirror.text import (
    DEFAULT_FIELD,
    DEFAULT_MAX_LENGTH,
    MIN_MAX_LENGTH,
    TEMPLATE,
    TRUNCATION_MARK,
    clean,
    fit,
    mirror_data,
    mirror_text,
    same_value,
)

__all__ = [
    "DEFAULT_FIELD",
    "DEFAULT_MAX_LENGTH",
    "MIN_MAX_LENGTH",
    "TEMPLATE",
    "TEXT_FIELD_TYPES",
    "TRUNCATION_MARK",
    "CustomField",
    "FieldMatch",
    "Link",
    "MirrorConfig",
    "Target",
    "Task",
    "clean",
    "current_step",
    "duplicate_field",
    "find_link",
    "fit",
    "load_mirror_config",
    "mirror_data",
    "mirror_text",
    "needs_workspace",
    "not_found",
    "resolve_field",
    "same_value",
    "shared_task",
    "targets",
]
