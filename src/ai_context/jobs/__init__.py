"""The jobs: rules plus adapters, one module each. A job takes its adapters as arguments, so tests
and the offline demo can pass a directory store instead of GitHub."""
