"""`python -m ai_context`: the Action's entrypoint and the CLI share one main."""

from ai_context.cli.main import main

raise SystemExit(main())
