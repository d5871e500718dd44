"""Hostile params through the real server: every command (DESIGN.md's table) and every request the server
serves, huge and non-file documents, hostile files in the folder, bogus ranges and didChange storms.

Each probe must end in a result or a JSON-RPC error that is not an internal error, within a hang
timeout, and the server must answer a code action afterwards. Seeded: the same probes every run.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import random
import uuid
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.fuzz.hostile import hostile_documents
from tests.lsp_harness import CortexClient, ask, execute, lsp_session
from tests.scripted_model import ScriptedModelServer

SEED = 13
HANG = 30.0  # seconds: only a hang detector, never a timing assertion
INTERNAL_ERROR = -32603

COMMAND_FIELDS: dict[str, dict[str, Any]] = {  # a valid base argument per command (DESIGN.md)
    "cortex.ask": {"message": "hi"},
    "cortex.explain": {"uri": "<doc>"},
    "cortex.run": {"uri": "<doc>"},
    "cortex.session.new": {},
    "cortex.memory.search": {"query": "x"},
    "cortex.memory.sessions": {},
    "cortex.memory.forget": {"id": "nope"},
    "cortex.memory.reset": {"confirm": True},
    "cortex.doctor": {},
}
EXTRA_FIELDS = ["session_id", "uri", "range", "orchestration", "wait", "diagnostic", "types", "limit", "confirm"]


def _deep(n: int) -> Any:
    value: Any = 1
    for _ in range(n):
        value = {"a": value}
    return value


HOSTILE_VALUES: list[Any] = [
    None, 0, -1, 2**63, 1.5, True, "", " ", "x" * 100_000, "\x00", "..", "../../etc/passwd", "file:///etc/passwd",
    "file:///dev/zero", "untitled:Untitled-1", "http://127.0.0.1:9/x", "file://", [], [1, "2"], {}, {"line": -1},
    {"start": {"line": -1, "character": 0}, "end": {"line": 0, "character": 0}},
    {"start": {"line": 10**9, "character": 10**9}, "end": {"line": 10**9 + 1, "character": 0}},
    {"start": {"line": 5, "character": 0}, "end": {"line": 1, "character": 0}},
    _deep(200), "😀" * 1000, "A" * 9000,
]
WHOLE_ARGUMENTS: list[list[Any]] = [[], [None], [5], ["cortex"], [[]], [{}], [{}, {}], [_deep(300)]]


class Prober:
    def __init__(self, client: CortexClient, doc_uri: str) -> None:
        self.client = client
        self.doc_uri = doc_uri
        self.count = 0
        self.outcomes: dict[str, int] = {}

    async def command(self, name: str, arguments: list[Any]) -> None:
        arguments = json.loads(json.dumps(arguments).replace('"<doc>"', json.dumps(self.doc_uri)))
        await self._run(f"{name}", execute(self.client, name, raw_arguments=arguments))

    async def request(self, method: str, params: Any) -> None:
        await self._run(method, raw_request(self.client, method, params))

    async def _run(self, label: str, awaitable: Any) -> None:
        self.count += 1
        try:
            await asyncio.wait_for(awaitable, timeout=HANG)
            kind = "result"
        except JsonRpcException as exc:
            assert exc.code != INTERNAL_ERROR, f"{label}: internal error {exc}"
            kind = f"error {exc.code}"
        self.outcomes[kind] = self.outcomes.get(kind, 0) + 1

    async def alive(self) -> None:
        actions = await asyncio.wait_for(self.client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=self.doc_uri),
            # a selection: Explain is offered on any selection, whatever the document now holds
            range=types.Range(start=types.Position(0, 0), end=types.Position(0, 1)),
            context=types.CodeActionContext(diagnostics=[]))), timeout=HANG)
        assert actions, "the server still answers code actions"


def raw_request(client: CortexClient, method: str, params: Any) -> Any:
    """A request with untyped (possibly invalid) params, bypassing the client's own converter."""
    msg_id = f"raw-{uuid.uuid4().hex[:8]}"
    future: concurrent.futures.Future[Any] = concurrent.futures.Future()
    client.protocol._request_futures[msg_id] = future
    client.protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
    return asyncio.wrap_future(future)


def raw_notify(client: CortexClient, method: str, params: Any) -> None:
    client.protocol._send_data({"jsonrpc": "2.0", "method": method, "params": params})


def _open(client: CortexClient, uri: str, text: str, language: str = "python") -> None:
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)))


async def test_hostile_params_for_every_command_and_request(model: ScriptedModelServer, tmp_path: Path) -> None:
    rng = random.Random(SEED)
    async with lsp_session(model, tmp_path) as client:
        doc = tmp_path / "ws" / "code.py"
        doc.write_text("def f(x):\n    return x * 2\n", encoding="utf-8")
        _open(client, doc.as_uri(), doc.read_text())
        prober = Prober(client, doc.as_uri())
        for name, base in COMMAND_FIELDS.items():
            for arguments in WHOLE_ARGUMENTS:
                await prober.command(name, arguments)
            for field in [*base, *rng.sample(EXTRA_FIELDS, 4)]:
                for value in rng.sample(HOSTILE_VALUES, 8):
                    await prober.command(name, [{**base, field: value}])
            await prober.alive()
        await prober.command("cortex.nonexistent", [{}])
        for params in ({}, {"textDocument": 5}, {"textDocument": {"uri": doc.as_uri()}, "range": {}, "context": {}},
                       {"textDocument": {"uri": "untitled:x"}, "context": {"diagnostics": []},
                        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}}):
            await prober.request(types.TEXT_DOCUMENT_CODE_ACTION, params)
        for _ in range(40):  # bogus ranges and hostile diagnostics on a real document
            line = rng.choice([0, 1, 2, 10**6, 2**31 - 1])
            char = rng.choice([0, 3, 10**6, 2**31 - 1])
            diags = [{"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": char}},
                      "message": rng.choice(["", "x" * 50_000, "E1"])} for _ in range(rng.choice([0, 1, 500]))]
            await prober.request(types.TEXT_DOCUMENT_CODE_ACTION, {
                "textDocument": {"uri": doc.as_uri()}, "context": {"diagnostics": diags},
                "range": {"start": {"line": line, "character": char}, "end": {"line": 0, "character": 0}}})
        notifications: list[tuple[str, Any]] = [
            (types.WINDOW_WORK_DONE_PROGRESS_CANCEL, {"token": "never-created"}),
            (types.CANCEL_REQUEST, {"id": "no-such-request"}),
            (types.WORKSPACE_DID_CHANGE_CONFIGURATION, {"settings": {"cortex": {"ollama_num_ctx": 2_000_000_000}}}),
            (types.WORKSPACE_DID_CHANGE_CONFIGURATION, {"settings": "nonsense"}),
            (types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS,
             {"event": {"added": [{"uri": "untitled:nowhere", "name": "x"}], "removed": []}}),
            (types.TEXT_DOCUMENT_DID_OPEN, {"textDocument": {"uri": "untitled:a", "languageId": "python",
                                                             "version": 1, "text": "x"}}),
            (types.TEXT_DOCUMENT_DID_CLOSE, {"textDocument": {"uri": "file:///never/opened.py"}}),
            ("$/madeUp", {"x": 1}),
        ]
        for method, params in notifications:
            raw_notify(client, method, params)
            prober.count += 1
        await prober.alive()
    print(f"params fuzz: {prober.count} probes, outcomes {prober.outcomes}")


async def test_did_change_storm_with_bogus_ranges(model: ScriptedModelServer, tmp_path: Path) -> None:
    rng = random.Random(SEED + 1)
    async with lsp_session(model, tmp_path) as client:
        uri = (tmp_path / "ws" / "storm.py").as_uri()
        _open(client, uri, "a = 1\n" * 50)
        prober = Prober(client, uri)
        for version in range(2, 602):
            start = {"line": rng.choice([0, 3, 49, 50, 51, 10**6]), "character": rng.choice([0, 2, 10**6])}
            end = rng.choice([start, {"line": start["line"] + rng.choice([0, 1, 5]), "character": 0},
                              {"line": 0, "character": 0}])
            change: dict[str, Any] = {"range": {"start": start, "end": end}, "text": rng.choice(["", "x", "\n", "é\n"])}
            if rng.random() < 0.05:
                change = {"text": rng.choice(["", "b = 2\n" * 1000])}
            raw_notify(client, types.TEXT_DOCUMENT_DID_CHANGE, {
                "textDocument": {"uri": uri, "version": version}, "contentChanges": [change]})
            if version % 100 == 0:
                await prober.alive()
        await prober.alive()
        result = await asyncio.wait_for(execute(client, "cortex.run", {"uri": uri}), timeout=HANG)
        assert isinstance(result, dict)
    print("didChange storm: 600 changes, server alive")


async def test_huge_and_hostile_documents(model: ScriptedModelServer, tmp_path: Path) -> None:
    async with lsp_session(model, tmp_path) as client:
        root = tmp_path / "ws"
        hostile = hostile_documents(root)
        prober = Prober(client, root.as_uri() + "/none.py")
        for path in hostile:
            for command in ("cortex.explain", "cortex.run", "cortex.ask"):
                argument: dict[str, Any] = {"uri": path.as_uri()}
                if command == "cortex.ask":
                    argument["message"] = "what is this?"
                await prober.command(command, [argument])
        huge_uri = (root / "huge.py").as_uri()
        big = "x = 1  # padding padding padding\n" * 600_000  # ~20 MB, never saved to disk
        _open(client, huge_uri, big)
        prober.doc_uri = huge_uri
        await prober.alive()
        before = len(model.chat_requests)
        whole = {"start": {"line": 0, "character": 0}, "end": {"line": 600_000, "character": 0}}
        result = await asyncio.wait_for(ask(client, "what does this do?", uri=huge_uri, range=whole), timeout=120)
        sent = model.chat_requests[before:]
        await prober.command("cortex.explain", [{"uri": huge_uri, "range": whole}])
        await prober.command("cortex.ask", [{"message": "x", "uri": "untitled:Untitled-1"}])
        await prober.alive()
    assert sent and max(len(json.dumps(r)) for r in sent) < 256 * 1024, "the selection was capped before the model"
    assert "truncated" in result["answer"] and any("truncated" in n for n in result["notes"])
    print(f"documents: {len(hostile)} hostile files x 3 commands, a 20 MB buffer; {prober.count} probes")
