"""The core: models, findings, errors, the block, the vocabulary. Pure: no I/O, no settings."""
