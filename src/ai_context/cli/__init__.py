"""The command line: `main` builds the parser; each command group lives in its own module, imported
only when it runs."""
