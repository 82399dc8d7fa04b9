"""The adapters: the only I/O (GitHub, ClickUp, Slack, git, the local cache, the directory store,
workflow commands, settings). Plain models in and out; service failures become the core's errors."""
