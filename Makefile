# The two commands a new user runs:
#   make run    — set up, then ask the agent a question through the real language server
#   make test   — set up, then run every test tier this machine can run (pytest)
Q ?= What is the capital of Japan?

.PHONY: setup run test lint typecheck editors bench

setup:
	scripts/setup.sh

run: setup
	.venv/bin/cortex-lsp ask "$(Q)"

test: setup
	scripts/test.sh

lint:
	.venv/bin/ruff check cortex_lsp tests evals benchmarks

typecheck:
	.venv/bin/mypy

editors:
	scripts/editors/install-neovim.sh
	scripts/editors/install-code-server.sh
	cd vscode-extension && npm ci --no-audit --no-fund && npm run ci

bench: setup
	.venv/bin/python -m benchmarks
