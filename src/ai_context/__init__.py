"""ai-context: keeps the AI Context blocks of GitHub issues valid, complete and mirrored."""

__version__ = "0.1.0"
