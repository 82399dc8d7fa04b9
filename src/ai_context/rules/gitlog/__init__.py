"""What commits say about issues (pure): git is the witness of activity, never of the plan.

`log` reads `git log` output (a push payload's commits come from the event layer), `refs` the
issues a message names, `checkpoints` the checkpoint it records (format v1, README "The agent's
commands"), `compare` holds the rules AIC501-506, `derive` one task's history. Nothing here
writes a block: only the agent does.
"""
