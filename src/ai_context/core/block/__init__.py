"""The AI Context block: model, tolerant parser and canonical renderer (pure).

Agents write what they write, so the parser accepts the variants of docs/design.md §3 and reports
every problem as a Finding instead of raising. The renderer writes one canonical form; the
model's validators normalise text so that parse(render(m)) == m holds for every valid model.
Parsing walks the body line by line with anchored, non-nested patterns: linear in its size.

The rooms: `syntax` (vocabulary, field lines), `model`, `locate` (where blocks sit), `markers`
(version and hash), `parse`, `render` (and replace_block).
"""

from ai_context.core.block.locate import Line, Region, find
from ai_context.core.block.markers import Marker, content_hash
from ai_context.core.block.model import (
    Block,
    BlockError,
    PlanStep,
    block_data,
    block_from_data,
    expand_braces,
    expand_paths,
    format_timestamp,
    step_data,
)
from ai_context.core.block.parse import Parsed, parse, parse_timestamp
from ai_context.core.block.render import render, replace_block
from ai_context.core.block.syntax import (
    ALIASES,
    BEGIN_MARKER,
    EMPTY_WORDS,
    END_MARKER,
    FORMAT_VERSION,
    HEADING_NOTE,
    HEADING_TITLE,
    LABELS,
    STEP_STATUSES,
    StepStatus,
    field_of,
    normalise_status,
    split_label,
    split_status,
)

__all__ = [
    "ALIASES",
    "BEGIN_MARKER",
    "EMPTY_WORDS",
    "END_MARKER",
    "FORMAT_VERSION",
    "HEADING_NOTE",
    "HEADING_TITLE",
    "LABELS",
    "STEP_STATUSES",
    "Block",
    "BlockError",
    "Line",
    "Marker",
    "Parsed",
    "PlanStep",
    "Region",
    "StepStatus",
    "block_data",
    "block_from_data",
    "content_hash",
    "expand_braces",
    "expand_paths",
    "field_of",
    "find",
    "format_timestamp",
    "normalise_status",
    "parse",
    "parse_timestamp",
    "render",
    "replace_block",
    "split_label",
    "split_status",
    "step_data",
]
