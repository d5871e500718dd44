"""Start-up: ``initialize`` is answered before anything heavy is imported (settings, agent, memory, models);
the settings are still read — with their one message for bad values — once the editor says ``initialized``.

The real server runs in a child process through its real entry point (``cortex_lsp.cli.main``); the only
thing added is a recording stdout that writes ``sys.modules`` to a file at the moment the ``initialize``
result is written.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.lsp_harness import execute, lsp_session, server_env
from tests.raw_server import RawServer
from tests.scripted_model import ScriptedModelServer

DRIVER = r"""
import sys

from cortex_lsp.cli import main


class SnapshotAtInitialize:
    # stdout's binary side: the first message carrying the initialize result saves the loaded modules
    def __init__(self, out, path):
        self.out, self.path, self.saved = out, path, False

    def write(self, data):
        if not self.saved and b'"capabilities"' in data:
            with open(self.path, "w", encoding="utf-8") as snapshot:
                snapshot.write("\n".join(sorted(sys.modules)))
            self.saved = True
        return self.out.write(data)

    def flush(self):
        self.out.flush()


class Stdout:
    def __init__(self, buffer):
        self.buffer = buffer

    def write(self, text):
        return len(text)

    def flush(self):
        pass


sys.stdout = Stdout(SnapshotAtInitialize(sys.stdout.buffer, sys.argv[1]))
raise SystemExit(main(["serve"]))
"""

#: what answering ``initialize`` must not import: settings parsing (pydantic, YAML), the agent, the tools,
#: the memory store and the vector database, the model clients and their HTTP stack
HEAVY = (
    "pydantic", "pydantic_core", "yaml", "platformdirs",
    "cortex_lsp.server.arguments",
    "cortex_lsp.agent.kernel", "cortex_lsp.agent.endings", "cortex_lsp.agent.executor", "cortex_lsp.agent.planner",
    "cortex_lsp.agent.deps",
    "cortex_lsp.tools.registry", "cortex_lsp.tools.builtin", "jsonschema",
    "cortex_lsp.memory.store", "cortex_lsp.memory.docindex", "cortex_lsp.memory.docscan",
    "cortex_lsp.memory.docranking", "cortex_lsp.memory.api", "sqlite3",
    "chromadb", "onnxruntime", "numpy",
    "cortex_lsp.models.factory", "ollama", "openai", "httpx",
)


def _modules_at_initialize(tmp_path: Path) -> set[str]:
    snapshot = tmp_path / "modules.txt"
    server = RawServer(server_env(None, tmp_path / "data"), tmp_path, argv=("-c", DRIVER, str(snapshot)))
    try:
        reply = server.answer(server.request("initialize", {  # the snapshot was written just before it
            "processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {},
            "initializationOptions": {"cortex": {"max_agent_steps": 4}}}))
    finally:
        server.proc.kill()
        server.proc.wait()
    assert "capabilities" in reply["result"], reply
    assert snapshot.exists(), "the initialize result was not written through stdout"
    return set(snapshot.read_text(encoding="utf-8").split())


def test_initialize_imports_nothing_heavy(tmp_path: Path) -> None:
    modules = _modules_at_initialize(tmp_path)
    # the snapshot is the server's own: the protocol and our server modules are there
    assert {"lsprotocol.types", "pygls.lsp.server", "cortex_lsp.server.features"} <= modules
    loaded = sorted(name for name in HEAVY if name in modules)
    assert not loaded, f"imported before initialize was answered: {loaded}"
    assert not any(name.startswith(("chromadb.", "pydantic.", "cortex_lsp.agent.kernel")) for name in modules)


async def test_initialization_options_are_in_force_at_the_first_command(model: ScriptedModelServer,
                                                                         tmp_path: Path) -> None:
    # the environment points at a dead port; the editor's initializationOptions (read after initialize was
    # answered) point at the model: an ask sent at once reaches the model
    options = {"cortex": {"ollamaBaseUrl": model.url}}
    async with lsp_session(model, tmp_path, init_options=options,
                           env={"CORTEX_OLLAMA_BASE_URL": "http://127.0.0.1:9"}) as client:
        result = await execute(client, "cortex.ask", {"message": "hi"})
    assert result["stop_reason"] == "answered", result
    assert model.chat_requests


async def test_commands_sent_at_once_after_initialize_all_answer(model: ScriptedModelServer, tmp_path: Path) -> None:
    # the settings import, the warm-up and the commands' first imports and store opening all wait on the same two
    # locks: taken in one order everywhere, nothing waits forever
    async with lsp_session(model, tmp_path) as client:
        results = await asyncio.wait_for(asyncio.gather(
            execute(client, "cortex.memory.sessions"),
            execute(client, "cortex.ask", {"message": "hi"}),
            execute(client, "cortex.memory.search", {"query": "hi"}),
            execute(client, "cortex.session.new"),
        ), timeout=120)
    sessions, answer, search, new = results
    assert "sessions" in sessions and "results" in search and new["session_id"]
    assert answer["stop_reason"] == "answered", answer
