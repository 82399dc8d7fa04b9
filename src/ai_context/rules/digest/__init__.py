"""The daily digest: classify tasks, remember them, render them (pure); one module per purpose."""
