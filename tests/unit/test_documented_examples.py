"""Every documented example works as written: the CLI commands of the README's "Once set up" block and
docs/models.md's OpenAI-compatible example run as a user would type them (read from the pages
themselves, so a page and its test can't drift apart), against a scripted model server on 127.0.0.1.
Only what can't be the same here changes: the server's address, and the data folder."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from tests.lsp_harness import server_env
from tests.scripted_model import Reply, ScriptedModelServer

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "cortex_lsp"]


def _blocks(page: Path) -> list[str]:
    return re.findall(r"```(?:sh|bash)\n(.*?)```", page.read_text(encoding="utf-8"), re.S)


def _commands(block: str) -> list[list[str]]:
    """Each command of a shell block as argv (continuation lines joined, comments dropped)."""
    joined = block.replace("\\\n", " ")
    return [shlex.split(line, comments=True) for line in joined.splitlines() if shlex.split(line, comments=True)]


def _readme_cli_commands() -> list[list[str]]:
    for block in _blocks(REPO / "README.md"):
        commands = [c for c in _commands(block) if c[0] == ".venv/bin/cortex-lsp"]
        if commands:
            return commands
    raise AssertionError("README.md has no block of `.venv/bin/cortex-lsp …` commands")


def _run(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))}  # this checkout
    return subprocess.run([*CLI, *argv], env=env, cwd=cwd, capture_output=True, text=True, timeout=180,
                          stdin=subprocess.DEVNULL)


def test_the_readme_cli_commands_work_as_written(tmp_path: Path) -> None:
    commands = _readme_cli_commands()
    names = [c[1] for c in commands]
    assert {"ask", "doctor", "memory", "reset-memory"} <= set(names), names
    work = tmp_path / "clone"  # the README's paths are relative to the repository: a copy of what they name
    shutil.copytree(REPO / "workspace", work / "workspace")
    answer = "notes.md says the spool folder is full."
    with ScriptedModelServer(default=Reply(content=answer)) as model:
        env = server_env(model, tmp_path / "data")
        ran: dict[str, subprocess.CompletedProcess[str]] = {}
        for argv in commands:
            if argv[1] == "serve":  # the server itself (what editors start): every other test drives it
                continue
            done = _run(argv[1:], env, work)
            key = " ".join(argv[1:3])
            assert done.returncode == 0, f"`{shlex.join(argv)}` exited {done.returncode}:\n{done.stderr}"
            assert "Traceback" not in done.stderr, done.stderr
            ran[key] = done
            if argv[1] == "ask":  # the memory commands below then have something to show
                sessions = _run(["memory", "sessions"], env, work)
                assert sessions.returncode == 0 and "Summarize notes.md" in sessions.stdout, sessions.stdout
    assert any(k.startswith("memory search") for k in ran)
    reset = next(v for k, v in ran.items() if k.startswith("reset-memory"))
    said = (reset.stdout + reset.stderr).lower()
    assert said.count("memory deleted") == 1, said
    assert "Summarize" not in _run(["memory", "sessions"], env, work).stdout, "reset-memory left a session"


def test_the_readme_lists_only_mistakes_the_cli_has() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    mistakes = re.search(r"Mistakes \((.*?)\)", text, re.S)
    assert mistakes is not None
    assert "--limit" not in mistakes.group(1) or "memory search" in mistakes.group(1)


def test_the_openai_compatible_example_passes_doctor(tmp_path: Path) -> None:
    """docs/models.md: start llama.cpp's server with an alias, point Cortex at it, run doctor."""
    page = REPO / "docs" / "models.md"
    block = next(b for b in _blocks(page) if "CORTEX_MODEL_BACKEND=openai" in b)
    server_cmd, doctor_cmd = _commands(block)
    alias = server_cmd[server_cmd.index("--model_alias") + 1]
    assert server_cmd[server_cmd.index("--embedding") + 1] == "true", "the embedding model is served too"
    assigned = dict(word.split("=", 1) for word in doctor_cmd if "=" in word and word.split("=")[0].isupper())
    assert doctor_cmd[len(assigned):] == ["cortex-lsp", "doctor"]
    with ScriptedModelServer(models=(alias,)) as server:
        # the page's address is llama.cpp's 127.0.0.1:8080; the scripted server listens elsewhere
        assigned["CORTEX_OPENAI_BASE_URL"] = re.sub(r"^http://127\.0\.0\.1:8080", server.url,
                                                    assigned["CORTEX_OPENAI_BASE_URL"])
        env = {k: v for k, v in os.environ.items() if not k.startswith("CORTEX_")}
        env.update(CORTEX_DATA_DIR=str(tmp_path / "data"), CORTEX_CONFIG=str(tmp_path / "none.yaml"), **assigned)
        done = _run(["doctor"], env, REPO)
    assert "[FAIL]" not in done.stdout, done.stdout
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"chat model: {alias} is available" in done.stdout
