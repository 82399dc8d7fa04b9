"""The mirror job: rebuild each linked ClickUp task's field from its issue's block, reading first
and writing only what changed (`run`), as an Action job with its step summary (`job`)."""
