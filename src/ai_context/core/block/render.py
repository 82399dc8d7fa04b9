"""The canonical renderer, and replacing a body's block without touching the text around it."""

from __future__ import annotations

from ai_context.core.block.locate import BOM, find
from ai_context.core.block.markers import content_hash
from ai_context.core.block.model import Block, format_timestamp
from ai_context.core.block.parse import parse
from ai_context.core.block.syntax import (
    BEGIN_MARKER,
    END_MARKER,
    FORMAT_VERSION,
    HEADING_NOTE,
    HEADING_TITLE,
    LABELS,
)


def render(block: Block, *, markers: bool = False, newline: str = "\n") -> str:
    """The canonical text of a block, without a trailing newline."""
    lines = [f"## {HEADING_TITLE} {HEADING_NOTE}", ""]

    def add(key: str, value: str) -> None:
        lines.append(f"- **{LABELS[key]}:** {value}".rstrip())

    if block.actor is not None:
        desc = f" ({block.actor_description})" if block.actor_description else ""
        add("actor", block.actor + desc)
    if block.phase is not None:
        chunk = f" (chunk {block.chunk[0]} of {block.chunk[1]})" if block.chunk else ""
        add("phase", block.phase + chunk)
    if block.last_updated is not None:
        add("last_updated", format_timestamp(block.last_updated))
    if block.plan:
        add("plan", "")
        for step in block.plan:
            status = f" ({step.status})" if step.status else ""
            lines.append(f"  {step.number}. {step.text}{status}")
    if block.files_touched is not None:
        add("files_touched", block.files_touched)
    for key, items in (("decisions", block.decisions), ("blockers", block.blockers)):
        add(key, "" if items else "none")
        lines.extend(f"  - {item}" for item in items)
    if block.next_step is not None:
        add("next_step", block.next_step)
    for label, value in block.extra.items():
        lines.append(f"- **{label}:** {value}".rstrip())
    text = "\n".join(lines)
    if markers:
        head = f"{BEGIN_MARKER} v={FORMAT_VERSION} sha256={content_hash(text)} -->"
        text = f"{head}\n{text}\n{END_MARKER}"
    return text.replace("\n", newline) if newline != "\n" else text


def replace_block(body: str, block: Block, *, markers: bool = True) -> str:
    """The body with only its block replaced (or the block inserted at the top)."""
    if not find(body):
        first = body.find("\n")
        newline = "\r\n" if first > 0 and body[first - 1] == "\r" else "\n"
        text = render(block, markers=markers, newline=newline)
        mark = BOM if body.startswith(BOM) else ""  # a byte order mark stays first
        rest = body[len(mark) :]
        return mark + text + newline + newline + rest if rest else mark + text
    parsed = parse(body)
    region = parsed.region
    assert region is not None  # find() found one, so parse() has it
    after_heading = region.heading.start + len(region.heading.text)
    newline = "\r\n" if body.startswith("\r\n", after_heading) else "\n"
    text = render(block, markers=markers, newline=newline)
    if parsed.dropped:  # lines the old block held but could not read: kept, below the block
        text += newline + newline + newline.join(line.text for line in parsed.dropped)
    return body[: region.start] + text + body[region.end :]
