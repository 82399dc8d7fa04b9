"""The digest job: gather tasks, deliver the digest, store its facts (imperative shell)."""
