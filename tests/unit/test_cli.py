"""The CLI as a user runs it: ``cortex-lsp`` in a subprocess, the real language server as its child,
the scripted model server over HTTP. Ordinary mistakes and Ctrl-C end with one clear line on stderr and a
non-zero exit (never a traceback); the answer ends its line before the timing line; ``memory search``
prints a table (``--json`` for JSON); the no-model advice names commands that work.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cortex_lsp.cli_output import memory_table, sessions_table
from cortex_lsp.config import Settings
from cortex_lsp.memory.chroma import release_chroma_client
from cortex_lsp.memory.store import PersistentMemory
from cortex_lsp.models.local_server import INSTALL_ADVICE
from cortex_lsp.models.ollama_client import OllamaClient
from tests.lsp_harness import server_env
from tests.scripted_model import Reply, ScriptedModelServer

CLI = [sys.executable, "-m", "cortex_lsp"]
#: the CLI as a terminal starts a foreground job: Ctrl-C at its default. A test worker may run with
#: SIGINT ignored at the C level (set by a library it loaded), and an ignored signal is inherited
#: across exec, so a CLI started from it plainly would never see the Ctrl-C
FOREGROUND_CLI = [sys.executable, "-c",
                  "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                  "os.execv(sys.executable, [sys.executable, '-m', 'cortex_lsp', *sys.argv[1:]])"]


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(default=Reply(content="Tokyo is the capital of Japan.")) as server:
        yield server


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.md").write_text("# Notes\n\nThe spool folder is full.\n", encoding="utf-8")
    return root


def run(args: list[str], env: dict[str, str], *, timeout: float = 120,
        merged: bool = False) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], env=env, capture_output=not merged, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE if merged else None,
                          stderr=subprocess.STDOUT if merged else None)


def one_clear_line(result: subprocess.CompletedProcess[str], *, progress: bool = False) -> str:
    """The one line on stderr (``progress``: besides the ``· Starting…`` line of a command that began)."""
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    lines = [line for line in result.stderr.splitlines()
             if line.strip() and not (progress and line == "· Starting…")]
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.mark.parametrize(("args", "expected"), [
    (["ask", ""], "QUESTION: is empty"),
    (["ask", "   "], "QUESTION: is empty"),
    (["ask", "\t\n"], "QUESTION: is empty"),
    (["memory", "search", ""], "QUERY: is empty"),
    (["memory", "search", "x", "--limit", "0"], "--limit: must be between 1 and 100, not 0"),
    (["memory", "search", "x", "--limit", "-3"], "--limit: must be between 1 and 100"),
    (["memory", "search", "x", "--limit", "lots"], "--limit: 'lots' is not a whole number"),
    (["memory", "forget", ""], "ID: is empty"),
    (["ask", "hi", "--root", "/nonexistent/cortex-folder"], "/nonexistent/cortex-folder: no such folder"),
    (["doctor", "--root", "/nonexistent/cortex-folder"], "no such folder"),
    (["no-such-command"], "invalid choice"),
])
def test_ordinary_mistakes_give_one_line_and_exit_2(args: list[str], expected: str, tmp_path: Path) -> None:
    result = run(args, server_env(None, tmp_path / "data"), timeout=60)
    assert result.returncode == 2
    line = one_clear_line(result)
    assert expected in line and line.startswith("cortex-lsp")
    assert result.stdout == ""


def test_root_that_is_a_file_is_refused(tmp_path: Path) -> None:
    file = tmp_path / "a.txt"
    file.write_text("x")
    result = run(["ask", "hi", "--root", str(file)], server_env(None, tmp_path / "data"), timeout=60)
    assert result.returncode == 2 and "not a folder" in one_clear_line(result)


def test_forgetting_an_unknown_id_says_so(model: ScriptedModelServer, tmp_path: Path) -> None:
    result = run(["memory", "forget", "no-such-id"], server_env(model, tmp_path / "data"))
    assert result.returncode == 1
    assert "No memory with id 'no-such-id'" in one_clear_line(result)
    assert result.stdout == ""


async def _store_a_fact(model: ScriptedModelServer, data_dir: Path, fact: str) -> None:
    settings = Settings.model_validate({"data_dir": data_dir, "ollama_base_url": model.url})
    client = OllamaClient(model.url, timeout=30)
    store = await PersistentMemory(settings, client).open()
    try:
        await store.semantic.add(fact)
    finally:
        await store.aclose()
        await client.aclose()
        release_chroma_client(settings)


def test_a_server_side_error_is_one_line(model: ScriptedModelServer, tmp_path: Path) -> None:
    # a fact is stored while the model server answers; then it is down: memory search can't embed the query
    asyncio.run(_store_a_fact(model, tmp_path / "data", "The user writes Python."))
    result = run(["memory", "search", "python"], server_env(None, tmp_path / "data"))
    assert result.returncode == 1
    line = one_clear_line(result)
    assert line.startswith("cortex-lsp: ") and "not answering" in line
    assert "cortex_lsp." not in line  # no Python class names


def test_a_question_the_server_refuses_is_one_line(model: ScriptedModelServer, tmp_path: Path) -> None:
    result = run(["ask", "x" * 9000], server_env(model, tmp_path / "data"))
    assert result.returncode == 1
    assert "Not started" not in result.stderr  # the progress's end is not a second copy of the error
    line = one_clear_line(result, progress=True)
    assert line.startswith("cortex-lsp: ") and "message" in line and "8192" in line
    assert model.chat_requests == []


def test_the_answer_ends_its_line_before_the_timing_line(
        model: ScriptedModelServer, folder: Path, tmp_path: Path) -> None:
    result = run(["ask", "What is the capital of Japan?", "--root", str(folder)],
                 server_env(model, tmp_path / "data"), merged=True)
    assert result.returncode == 0, result.stdout
    assert "Traceback" not in result.stdout
    assert "Tokyo is the capital of Japan.\n· Answered in " in result.stdout


def test_memory_search_prints_a_table_and_json_on_request(
        model: ScriptedModelServer, folder: Path, tmp_path: Path) -> None:
    env = server_env(model, tmp_path / "data")
    assert run(["ask", "What is the capital of Japan?", "--root", str(folder), "--quiet"], env).returncode == 0
    table = run(["memory", "search", "capital of Japan"], env)
    assert table.returncode == 0 and "Traceback" not in table.stderr
    header, *rows = table.stdout.splitlines()
    assert header.split() == ["ID", "TYPE", "SCORE", "CONTENT"]
    assert rows and any("capital of Japan" in row for row in rows)
    as_json = run(["memory", "search", "capital of Japan", "--json"], env)
    results = json.loads(as_json.stdout)["results"]
    assert results and {"id", "type", "content", "score"} <= set(results[0])
    # the id in the table is the one forget takes
    first_id = rows[0].split()[0]
    assert first_id in {r["id"] for r in results}
    sessions = run(["memory", "sessions"], env)
    assert sessions.stdout.splitlines()[0].split()[:3] == ["ID", "TURNS", "LAST"]


def test_no_model_advice_names_commands_that_work(tmp_path: Path) -> None:
    env = server_env(None, tmp_path / "data", CORTEX_MODEL_BACKEND="auto",
                     CORTEX_LOCAL_MODEL_PATH=str(tmp_path / "no-such-model.gguf"))
    result = run(["ask", "What is the capital of Japan?", "--quiet"], env)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "cortex-lsp[local]" not in result.stdout + result.stderr
    # the cause first, then its one fix, once; memory is not blamed
    said = result.stdout + result.stderr
    assert said.strip().startswith(f"CORTEX_LOCAL_MODEL_PATH: no file at {tmp_path / 'no-such-model.gguf'}")
    assert said.count("no-such-model.gguf") == 1 and "memory" not in said.lower()
    assert "GGUF chat model" in said
    shown = run(["ask", "What is the capital of Japan?"], env)  # with its progress lines: said once too
    assert shown.returncode == 1 and (shown.stdout + shown.stderr).count("no-such-model.gguf") == 1
    assert "scripts/setup.sh" in INSTALL_ADVICE and "[local]" not in INSTALL_ADVICE


def test_ctrl_c_gives_one_line_and_exit_130(folder: Path, tmp_path: Path) -> None:
    with ScriptedModelServer(default=Reply(content="slow", hang=True)) as model:
        proc = subprocess.Popen([*FOREGROUND_CLI, "ask", "What is the capital of Japan?", "--root", str(folder)],
                                env=server_env(model, tmp_path / "data"), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            deadline = time.monotonic() + 60
            while not model.chat_requests and time.monotonic() < deadline:
                time.sleep(0.1)
            assert model.chat_requests, "the run never reached the model"
            os.killpg(proc.pid, signal.SIGINT)  # what the terminal does on Ctrl-C: the foreground group
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 130
    assert "Traceback" not in err and "Traceback" not in out
    assert [line for line in err.splitlines() if not line.startswith("· ")] == ["Cancelled."]


@pytest.mark.parametrize("seconds", [0.5, 1.0, 2.0, 3.0])
def test_ctrl_c_at_any_moment_says_cancelled_and_exits_130(folder: Path, tmp_path: Path, seconds: float) -> None:
    """Ctrl-C while the CLI starts, while the server starts, while the run opens memory or streams: always
    "Cancelled." and exit 130, never an internal error (the store closed under a run still in flight).
    The moment is the test's input (a user presses Ctrl-C whenever), not a wait for an event."""
    with ScriptedModelServer(default=Reply(content="slow words " * 100, token_delay=0.05)) as model:
        proc = subprocess.Popen([*FOREGROUND_CLI, "ask", "What is the capital of Japan?", "--root", str(folder)],
                                env=server_env(model, tmp_path / "data"), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            time.sleep(seconds)
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=90)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert "Internal error" not in err and "Traceback" not in err + out
    if proc.returncode == 0:  # the whole answer came before the interrupt (a very fast machine)
        assert "slow words" in out
        return
    assert proc.returncode == 130, err
    assert [line for line in err.splitlines() if not line.startswith("· ")] == ["Cancelled."]


def test_tables_are_readable_and_cut_to_the_width() -> None:
    results = [{"id": "f1", "type": "semantic", "score": 0.8123, "content": "The user\nprefers tea " * 20},
               {"id": "episode-22", "type": "episodic", "score": 0.5, "content": "short"}]
    lines = memory_table(results, "tea", width=60).splitlines()
    assert lines[0].split() == ["ID", "TYPE", "SCORE", "CONTENT"]
    assert all(len(line) <= 60 for line in lines) and lines[1].endswith("…")
    assert lines[2].startswith("episode-22  episodic  0.50")
    assert memory_table([], "tea") == "No memories match 'tea'."
    assert sessions_table([]) == "No sessions yet."
    row = sessions_table([{"id": "s1", "root": "/w", "title": "Hi", "turns": 2, "last_activity": 0}])
    assert "1970-01-01 00:00 UTC" in row


def test_a_ctrl_c_whose_cleanup_does_not_end_still_ends_the_cli() -> None:
    # a server or a task that does not let go after Ctrl-C: the CLI says so once and exits 130 anyway
    stuck = ("import time\nfrom cortex_lsp import cli\ncli.exit_if_stuck(0.2)\n"
             "time.sleep(60)\n")
    done = subprocess.run([sys.executable, "-c", stuck], capture_output=True, text=True, timeout=30)
    assert done.returncode == 130
    assert done.stderr.splitlines() == ["Cancelled."]
