#!/usr/bin/env bash
# Run the test tiers: lint and type check, then pytest (unit, end-to-end over stdio, real-editor tests
# where the editors are installed, the live tier where the embedded model is installed).
# Extra arguments go to pytest.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
echo "== ruff" >&2
.venv/bin/ruff check cortex_lsp tests evals benchmarks
echo "== mypy" >&2
.venv/bin/mypy
.venv/bin/mypy --explicit-package-bases tests evals benchmarks
if [ -d vscode-extension/node_modules ]; then
  echo "== VS Code extension (lint, types, mocha, package)" >&2
  (cd vscode-extension && npm run ci)
fi
echo "== pytest" >&2
exec .venv/bin/python -m pytest -rs --durations=15 "$@"
