"""Session files (`sp.json`, docs/seeds/004: WF1 save, WF2 load), pure: `model` (the v2.0 file),
`merge` (the agent's input), `consolidation` (the matrix), `saving` (WF1), `summary` (WF2)."""
