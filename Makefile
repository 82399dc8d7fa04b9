# One entry point for newcomers and CI: `make demo`, `make test`, `make bench`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: demo test lint unit bench screenshots clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Two stamps, re-made whenever the project's metadata changes: the demo needs only the project
# and its runtime dependencies (what `pipx install ai-context` gives an agent); the tests,
# linters and benchmarks need the extras on top.
$(VENV)/.installed-demo: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	touch $@

demo: $(VENV)/.installed-demo
	@# The examples hold broken blocks on purpose: report exits 1 on them, as validate does.
	$(BIN)/ai-context report --issues-dir examples --now 2026-05-27T09:00:00Z || [ $$? -eq 1 ]
	@echo
	$(BIN)/ai-context digest --issues-dir examples --now 2026-05-27T09:00:00Z

# zizmor and the workflow schema read every workflow, release.yml included.
lint: $(VENV)/.installed
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/ruff format --check src tests benchmarks scripts
	$(BIN)/mypy --strict src scripts
	$(BIN)/lint-imports
	$(BIN)/hadolint Dockerfile
	$(BIN)/zizmor --offline .github/workflows action.yml
	$(BIN)/check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml
	$(BIN)/check-jsonschema --builtin-schema vendor.github-actions action.yml
	$(BIN)/check-jsonschema --builtin-schema vendor.dependabot .github/dependabot.yml

unit: $(VENV)/.installed
	$(BIN)/python -m pytest

test: lint unit

bench: $(VENV)/.installed
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

# The README's pictures (docs/images/): the real renderers, cmark-gfm, GitHub's stylesheet and
# Mermaid from npm, headless Chromium (Debian: apt-get install chromium fonts-noto-color-emoji).
# Not part of `make test`: it needs npm and a browser.
SHOTS := build/screenshots
screenshots: $(VENV)/.installed
	npm install --silent --no-save --prefix $(SHOTS) mermaid@11 github-markdown-css@5
	$(BIN)/python docs/screenshots.py $(SHOTS)/node_modules docs/images

clean:
	rm -rf $(VENV) build dist .mypy_cache .ruff_cache
