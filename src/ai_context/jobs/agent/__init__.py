"""The agent side's shell: save, resume, handoff and done over the issue and the local cache;
the decisions are rules/reconcile.py's, the checked body write jobs/bodywrite.py's."""
