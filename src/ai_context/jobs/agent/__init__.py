"""The agent side's shell: save, resume, handoff and done over the issue and the local cache.

Each command is one function that takes its adapters (the GitHub adapter, or anything with the
same methods; the cache; the clock) and returns an Outcome; cli_agent.py turns arguments into
calls and Outcomes into text or JSON. The decisions are reconcile.py's.

GitHub has no compare-and-swap on issue bodies, so a write re-reads the issue right before its
PATCH (after any write spacing): a body changed since the read gets the block re-applied on the
fresh text (human text outside the block is never lost), and a block changed by another actor
stops the write. What lands between the re-read and the PATCH is found afterwards in the
issue's edit history and put back (jobs/bodywrite.py): re-applied when it left the block
alone, restored with this write turned into a conflict (exit 4, both copies) when it changed
the block. The read is the cache's copy of the body when it has one, else a GET.

The rooms: `model` (Tracker, Outcome), `write` (write_block and settling a write), `saving`,
`resuming`, `finishing` (handoff and done).
"""

from ai_context.jobs.agent.finishing import done, final_block, handoff, lease_release
from ai_context.jobs.agent.model import (
    BODY_LIMIT,
    IN_PROGRESS,
    RECENT,
    AgentError,
    Candidate,
    LeaseHook,
    MirrorHook,
    Outcome,
    Status,
    Take,
    Tracker,
)
from ai_context.jobs.agent.resuming import resume
from ai_context.jobs.agent.saving import save
from ai_context.jobs.agent.write import with_changes, write_block

__all__ = [
    "BODY_LIMIT",
    "IN_PROGRESS",
    "RECENT",
    "AgentError",
    "Candidate",
    "LeaseHook",
    "MirrorHook",
    "Outcome",
    "Status",
    "Take",
    "Tracker",
    "done",
    "final_block",
    "handoff",
    "lease_release",
    "resume",
    "save",
    "with_changes",
    "write_block",
]
