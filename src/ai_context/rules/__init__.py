"""The rules: checks, staleness, leases, mirror text, the sticky comment's plan, git and session
rules. Pure functions over the core's models; they take plain values, never settings or clients."""
