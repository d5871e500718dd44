# The two commands a new user runs:
#   make run    — set up, then ask the agent a question through the real language server
#   make test   — set up, then run every test tier this machine can run (pytest)
# Set-up is skipped when it is current (scripts/setup.sh keeps a stamp); `make run Q='…'` asks another
# question, passed verbatim: it reaches the CLI through the environment, never through the shell line.
Q ?= What is the capital of Japan?
export MAKE_RUN_QUESTION := $(value Q)

.PHONY: setup run test lint typecheck editors bench mutate

setup:
	@scripts/setup.sh

run: setup
	@.venv/bin/cortex-lsp ask -- "$$MAKE_RUN_QUESTION"

test: setup
	scripts/test.sh

lint:
	.venv/bin/ruff check cortex_lsp tests evals benchmarks scripts/mutate.py

typecheck:
	.venv/bin/mypy

editors:
	scripts/editors/install-neovim.sh
	scripts/editors/install-code-server.sh
	cd vscode-extension && npm ci --no-audit --no-fund && npm run ci
	cd tests/acp/node && npm ci --no-audit --no-fund

bench: setup
	.venv/bin/python -m benchmarks

# switch each guard off in a scratch copy and show that its tests then fail (docs/security.md)
mutate: setup
	.venv/bin/python scripts/mutate.py
