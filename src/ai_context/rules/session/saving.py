"""WF1 save: merge or overwrite, consolidate, scrub every free-text field."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ai_context.core.fields import explain
from ai_context.rules.scrub import scrub_counted
from ai_context.rules.session.consolidation import Consolidation, consolidate, ordered
from ai_context.rules.session.merge import SessionInput, merge_blocks, merge_tasks, overwrite_tasks
from ai_context.rules.session.model import (
    SESSION_VERSION,
    Metadata,
    SessionError,
    SessionFile,
    as_utc,
)


class SaveResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    session: SessionFile
    mode: Literal["new", "merge", "overwrite"]
    consolidation: Consolidation
    scrubbed: dict[str, int]


def scrub_session(
    session: SessionFile, *, home: str | None = None
) -> tuple[SessionFile, dict[str, int]]:
    """Every free-text field scrubbed (titles, contexts, files, blocks, branch); HOME is the
    real home directory, redacted wherever it lies (scrub.find)."""
    counts: Counter[str] = Counter()

    def clean(value: str) -> str:
        text, found = scrub_counted(value, home=home)
        counts.update(found)
        return text

    tasks = tuple(
        t.model_copy(
            update={
                "title": clean(t.title),
                "context": clean(t.context),
                "files": tuple(clean(f) for f in t.files),
                "area": clean(t.area) if t.area else t.area,
            }
        )
        for t in session.tasks
    )
    blocks = tuple(
        b.model_copy(update={"title": clean(b.title), "content": clean(b.content)})
        for b in session.context_blocks
    )
    meta = session.metadata
    if meta.git_branch:
        meta = meta.model_copy(update={"git_branch": clean(meta.git_branch)})
    return SessionFile(metadata=meta, tasks=tasks, context_blocks=blocks), counts


def save(
    existing: SessionFile | None,
    incoming: SessionInput,
    *,
    now: datetime,
    overwrite: bool,
    git_branch: str | None = None,
    git_commit: str | None = None,
    home: str | None = None,
) -> SaveResult:
    """WF1: merge (or overwrite), consolidate, scrub; the caller writes `dumps(result.session)`."""
    now = as_utc(now)
    if not incoming.tasks and (overwrite or existing is None):
        raise SessionError("Cannot save: no tasks given; a session file holds at least one task")
    if overwrite or existing is None:
        tasks = overwrite_tasks(incoming.tasks, now)
        blocks = merge_blocks([], incoming.context_blocks, now)
        created = now
        mode: Literal["new", "merge", "overwrite"] = "overwrite" if overwrite else "new"
    else:
        tasks = merge_tasks(existing.tasks, incoming.tasks, now)
        blocks = merge_blocks(existing.context_blocks, incoming.context_blocks, now)
        created = existing.metadata.created
        mode = "merge"
    result = consolidate(tasks, blocks, now=now)
    metadata = Metadata(
        version=SESSION_VERSION,
        created=created,
        updated=now,
        git_branch=git_branch,
        git_commit=git_commit,
    )
    try:
        session = SessionFile(
            metadata=metadata,
            tasks=tuple(ordered(result.tasks)),
            context_blocks=result.context_blocks,
        )
    except ValidationError as exc:
        raise SessionError(f"Cannot save: {explain(exc)}") from None
    clean, counts = scrub_session(session, home=home)
    return SaveResult(session=clean, mode=mode, consolidation=result, scrubbed=counts)
