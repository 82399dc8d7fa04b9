"""Session files (`sp.json`, docs/seeds/004 WF1 save and WF2 load), pure.

A session file lets the next agent session pick up unfinished work: every open task, the last
few completed ones, older completed work folded into consolidated tasks, and context blocks
(decisions, pitfalls, plan references). Format v2.0, minified single-line JSON, UTC `Z` times.

Saving (WF1): when the agent loaded the file this session its list is complete and the file
is overwritten; otherwise the file is read and merged (a task matched by id, or by title when
the agent has no id, takes the agent's version; nothing in the file is dropped). Then the
consolidation matrix runs and everything written is scrubbed (scrub.py).

Consolidation, per feature/area (a task's optional `area`; tasks without one form one group):
  never consolidated ("keep individual"): a critical bug (category BUGFIX with priority P1), a
  task with a unique pitfall or lesson (a `Pitfall:`, `Lesson:` or `Gotcha:` note that no
  other task repeats), one completed less than 3 days ago, one referenced by open work (its id
  in an open task's title or context, or beside an open task in a context block's
  related_tasks);
  the four criteria, judged over all completed tasks of the area: same feature/area (the area
  is named), more than 5 completed tasks, no critical finding to preserve (no task of the area
  kept for being a critical bug or for a unique pitfall), more than 3 days since the area's
  last completion. Three or more met: the area's other completed tasks fold into one
  consolidated task (into the area's existing one if there is one);
  then at most 5 individual completed tasks stay: beyond that the oldest that may be
  consolidated are folded into their area's task whatever the matrix says; tasks that must
  stay individual are kept even past 5, and the report says so.

Deviation from the seed, on purpose: the load summary's age counts from `updated` (when the
state was saved) and also shows `created` when it differs; with merging, `created` is the
first save ever and says little about how stale the state is.

The rooms: `model` (the file, reading, writing, checking), `merge` (the agent's input),
`consolidation` (the matrix), `saving` (WF1), `summary` (the reports, WF2).
"""
