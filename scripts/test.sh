#!/usr/bin/env bash
# Run the test tiers: lint and type check, then pytest (unit, end-to-end over stdio, real-editor tests
# where the editors are installed, the live tier where the embedded model is installed).
# Extra arguments go to pytest. The summary lists failures, errors and skips with their reasons, and the
# ids of the failed tests come last, ready to paste into `scripts/test.sh ID…`.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
echo "== ruff" >&2
.venv/bin/ruff check cortex_lsp tests evals benchmarks scripts/mutate.py
echo "== mypy" >&2
.venv/bin/mypy
.venv/bin/mypy --explicit-package-bases tests evals benchmarks scripts/mutate.py
if [ -d vscode-extension/node_modules ]; then
  echo "== VS Code extension (lint, types, mocha, package)" >&2
  (cd vscode-extension && npm run ci)
fi
echo "== pytest" >&2
failed_ids="$(mktemp "${TMPDIR:-/tmp}/cortex-failed.XXXXXX")"
trap 'rm -f "$failed_ids"' EXIT
status=0
# one pytest-xdist worker per core (CORTEX_TEST_WORKERS=0 runs in this process: pdb, one test)
workers="${CORTEX_TEST_WORKERS:-auto}"
CORTEX_FAILED_IDS="$failed_ids" .venv/bin/python -m pytest -p tests.failed_ids -n "$workers" --dist loadgroup \
  -rfEs --durations=15 "$@" \
  || status=$?
if [ -s "$failed_ids" ]; then
  echo
  echo "== failed ($(wc -l <"$failed_ids")):"
  cat "$failed_ids"
fi
case "$status" in
  0) ;;
  5) echo "scripts/test.sh: pytest collected no tests (exit 5): that is a failure." >&2 ;;
  *) echo "scripts/test.sh: pytest exited with $status." >&2 ;;
esac
exit "$status"
