"""``workspace/executeCommand`` handlers: parse arguments → call plain modules → return JSON results."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import to_fs_path

from cortex_lsp.agent.types import AgentRequest, Selection
from cortex_lsp.guards.paths import MAX_READ_BYTES, PathRefused, resolve_in_roots
from cortex_lsp.guards.workspace_files import UnsafeFile, read_untrusted_text
from cortex_lsp.runtime.limits import cap_selection
from cortex_lsp.runtime.runner import RunBody, agent_body
from cortex_lsp.server.app import CortexServer
from cortex_lsp.server.documents import LspWorkspace, open_document
from cortex_lsp.server.runs import CancelledEarly

if TYPE_CHECKING:
    from cortex_lsp.agent.deps import AgentDeps
    from cortex_lsp.server.arguments import RangeArg

# The agent (kernel, tools, jsonschema, sandbox) is imported on the first command, not at start-up,
# so ``initialize`` does not wait for it; so are the argument models (pydantic: server/arguments.py).

log = logging.getLogger("cortex.commands")
ARGUMENTS_MODULE = "cortex_lsp.server.arguments"

COMMANDS = (
    "cortex.ask",
    "cortex.explain",
    "cortex.run",
    "cortex.session.new",
    "cortex.memory.search",
    "cortex.memory.sessions",
    "cortex.memory.forget",
    "cortex.memory.reset",
    "cortex.doctor",
    "cortex.apply",
    "cortex.fix",
    "cortex.session.turns",
)


def _document_text(ls: CortexServer, uri: str, field: str = "uri") -> tuple[str, Path | None, str]:
    """The text of ``uri`` (the editor's buffer if open, else the file inside a root)."""
    if not uri.startswith("file:"):
        raise JsonRpcInvalidParams(f"{field}: only file: URIs are supported, got {uri[:80]!r}")
    doc = open_document(ls, uri)
    fs = to_fs_path(uri)
    path = Path(fs) if fs else None
    if doc is not None:
        return doc.source, path, doc.language_id or ""
    if path is None:
        raise JsonRpcInvalidParams(f"{field}: cannot map {uri!r} to a file")
    try:
        target = resolve_in_roots(str(path), ls.roots, protected=ls.protected_dirs(), must_exist=True)
        text = read_untrusted_text(target.path, max_bytes=MAX_READ_BYTES, strict=False)
    except PathRefused as exc:
        raise JsonRpcInvalidParams(f"{field}: {exc}") from None
    except (UnsafeFile, OSError) as exc:  # a FIFO, a device, a directory, a huge file: refused, never read
        raise JsonRpcInvalidParams(f"{field}: cannot read {target.relative}: {exc}") from None
    if "\x00" in text[:4096]:
        raise JsonRpcInvalidParams(f"{field}: {target.relative} is a binary file")
    return text, target.path, ""


def _slice(text: str, rng: RangeArg | None) -> tuple[str, int, int]:
    lines = text.split("\n")
    if rng is None:
        return text, 0, max(len(lines) - 1, 0)
    if rng.start.line > rng.end.line or (rng.start.line == rng.end.line and rng.start.character > rng.end.character):
        raise JsonRpcInvalidParams("range: start is after end")
    start, end = rng.start, rng.end
    if start.line >= len(lines):
        raise JsonRpcInvalidParams(f"range: line {start.line} is past the end of the document ({len(lines)} lines)")
    end_line = min(end.line, len(lines) - 1)
    if start.line == end_line:
        chunk = lines[start.line][start.character:end.character]
    else:
        chunk = "\n".join([lines[start.line][start.character:], *lines[start.line + 1:end_line],
                           lines[end_line][: end.character]])
    if not chunk.strip():  # an empty selection means the whole line
        chunk = lines[start.line]
    return chunk, start.line, end_line


def _selection(ls: CortexServer, uri: str | None, rng: RangeArg | None, notes: list[str] | None = None
               ) -> Selection | None:
    """The selected text, capped at MAX_SELECTION_BYTES before it can reach a model (``notes`` says so)."""
    if not uri:
        if rng is not None:
            raise JsonRpcInvalidParams("range: needs uri")
        return None
    text, path, language = _document_text(ls, uri)
    chunk, first, last = _slice(text, rng)
    chunk, note = cap_selection(chunk)
    if note is not None and notes is not None:
        notes.append(note)
    return Selection(uri=uri, text=chunk, path=path, language=language, start_line=first, end_line=last)


async def _session(ls: CortexServer, session_id: str | None) -> str:
    if session_id:
        return session_id
    memory = await ls.memory()
    root = str(ls.roots[0]) if ls.roots else ""
    return await memory.new_session(root)


async def agent_deps(ls: CortexServer) -> AgentDeps:
    from cortex_lsp import telemetry
    from cortex_lsp.agent.deps import AgentDeps
    from cortex_lsp.server import services

    model = await ls.model()
    memory = await ls.memory()
    tools = await services.tool_registry_off_loop(ls, memory)
    return AgentDeps(settings=ls.settings, model=telemetry.traced_model(model), memory=telemetry.traced_memory(memory),
                     tools=tools, workspace=LspWorkspace(ls), edits=ls.edits,
                     meaning=services.meaning_classifier(ls))


def _agent_body(ls: CortexServer, request: AgentRequest, notes: list[str] | None = None) -> RunBody:
    return agent_body(lambda: agent_deps(ls), request, lambda: ls.backend_info, notes)


async def _run_agent(ls: CortexServer, msg_id: Any, title: str, request: AgentRequest, wait: bool,
                     notes: list[str] | None = None) -> dict[str, Any]:
    return await ls.runs.execute(
        title=title,
        session_id=request.session_id,
        body=_agent_body(ls, request, notes),
        wait=wait,
        work_done_token=ls.command_tokens.get(msg_id),
        msg_id=msg_id,
    )


async def _imports_settled(ls: CortexServer) -> None:
    """Before a command's first import of the argument models (pydantic) on the loop thread: wait while the
    background import runs (server/warmup.py), so two threads never import the same packages at once."""
    if ARGUMENTS_MODULE not in sys.modules:
        await ls.modules_ready()


Prepared = tuple[AgentRequest, list[str], bool]


async def _agent_command(ls: CortexServer, title: str,
                         prepare: Callable[[], Coroutine[Any, Any, Prepared]]) -> dict[str, Any]:
    """An agent command: its progress begins at once ("Starting…", from modules imported at start-up),
    then ``prepare`` (argument models, which may wait for the warm-up's imports; the memory store; the
    session) runs; a cancel meanwhile ends the progress and answers at once, and the run streams on it."""
    msg_id = ls.protocol.msg_id
    await ls.runs.begin_early(msg_id, title, ls.command_tokens.get(msg_id))
    try:
        request, notes, wait = await ls.runs.until_started(msg_id, prepare())
    except CancelledEarly as stop:
        return stop.result
    except Exception as exc:
        ls.runs.end_early(msg_id, f"Not started: {exc}"[:120])
        raise
    return await _run_agent(ls, msg_id, title, request, wait, notes)


async def ask(ls: CortexServer, *args: Any) -> dict[str, Any]:
    async def prepare() -> Prepared:
        await _imports_settled(ls)
        from cortex_lsp.server.arguments import AskArgs, parse_args

        a = parse_args("cortex.ask", AskArgs, args)
        notes: list[str] = []
        selection = _selection(ls, a.uri, a.range, notes)
        request = AgentRequest(message=a.message, session_id=await _session(ls, a.session_id),
                               selection=selection, orchestration=a.orchestration, mode="ask",
                               regenerate=a.regenerate and a.session_id is not None)
        return request, notes, a.wait

    return await _agent_command(ls, "Cortex: Ask", prepare)


async def explain(ls: CortexServer, *args: Any) -> dict[str, Any]:
    async def prepare() -> Prepared:
        await _imports_settled(ls)
        from cortex_lsp.server.arguments import ExplainArgs, parse_args

        a = parse_args("cortex.explain", ExplainArgs, args)
        notes: list[str] = []
        selection = _selection(ls, a.uri, a.range, notes)
        diagnostic = a.diagnostic if isinstance(a.diagnostic, str) or a.diagnostic is None else a.diagnostic.message
        message = "Explain this error." if diagnostic else "Explain this code."
        from cortex_lsp.agent.explain import code_to_explain
        from cortex_lsp.agent.turn_texts import code_turn

        # the session keeps the code it explained (the enclosing function of a point), for a follow-up
        code, where = await asyncio.to_thread(code_to_explain, LspWorkspace(ls), selection)
        history = code_turn(message, code, where, selection.language if selection else "", diagnostic)
        request = AgentRequest(message=message, session_id=await _session(ls, a.session_id), selection=selection,
                               diagnostic=diagnostic, mode="explain", history_text=history)
        return request, notes, a.wait

    return await _agent_command(ls, "Cortex: Explain", prepare)


async def run(ls: CortexServer, *args: Any) -> dict[str, Any]:
    await _imports_settled(ls)
    from cortex_lsp.server.arguments import RunArgs, parse_args

    a = parse_args("cortex.run", RunArgs, args)
    # the exact selection (never the 64 KB cut made for a model: a cut program must not run), sliced off
    # the event loop; every size check comes before any parse (services.run_code)
    text, _path, _language = await asyncio.to_thread(_document_text, ls, a.uri)
    chunk, first, last = await asyncio.to_thread(_slice, text, a.range)
    from cortex_lsp.server import services

    report = await services.run_code(ls, chunk, source=text, lines=(first, last))
    if a.session_id:  # a follow-up question in this session sees the code and what it printed
        from cortex_lsp.server.editor_commands import keep_run

        await keep_run(ls, a.session_id, a.uri, (first, last), chunk, report)
    from cortex_lsp.server.wire import run_payload

    return run_payload(report)


async def session_new(ls: CortexServer, *args: Any) -> dict[str, Any]:
    await _imports_settled(ls)
    from cortex_lsp.server.arguments import NoArgs, parse_args

    parse_args("cortex.session.new", NoArgs, args)
    return {"session_id": await _session(ls, None)}


async def memory_search(ls: CortexServer, *args: Any) -> dict[str, Any]:
    await _imports_settled(ls)
    from cortex_lsp.server.arguments import MemorySearchArgs, parse_args

    a = parse_args("cortex.memory.search", MemorySearchArgs, args)
    memory = await ls.memory()
    hits = await memory.search(a.query, list(a.types) if a.types else None, a.limit)
    return {"results": [{"id": h.id, "type": h.type, "content": h.content, "score": round(h.score, 4),
                         "metadata": dict(h.metadata)} for h in hits]}


async def memory_sessions(ls: CortexServer, *args: Any) -> dict[str, Any]:
    await _imports_settled(ls)
    from cortex_lsp.server.arguments import NoArgs, parse_args

    parse_args("cortex.memory.sessions", NoArgs, args)
    return {"sessions": [{"id": s.id, "root": s.root, "title": s.title, "turns": s.turns,
                          "last_activity": s.last_activity} for s in await ls.sessions()]}


async def memory_forget(ls: CortexServer, *args: Any) -> dict[str, Any]:
    await _imports_settled(ls)
    from cortex_lsp.server.arguments import ForgetArgs, parse_args

    a = parse_args("cortex.memory.forget", ForgetArgs, args)
    memory = await ls.memory()
    deleted = await memory.forget(a.id)
    return {"id": a.id, "deleted": deleted}


async def memory_reset(ls: CortexServer, *args: Any) -> dict[str, Any]:
    await _imports_settled(ls)
    from cortex_lsp.server.arguments import ResetArgs, parse_args

    parse_args("cortex.memory.reset", ResetArgs, args)
    memory = await ls.memory()
    await memory.reset()
    ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message="Cortex: all memory deleted."))
    return {"reset": True}


async def doctor(ls: CortexServer, *args: Any) -> dict[str, Any]:
    await _imports_settled(ls)
    from cortex_lsp.server.arguments import NoArgs, parse_args

    parse_args("cortex.doctor", NoArgs, args)
    from cortex_lsp.doctor import run_checks

    checks = await run_checks(ls.settings, ls.roots, settings_messages=ls.loaded.messages)
    return {"ok": all(c.ok for c in checks), "checks": [c.as_dict() for c in checks]}


HANDLERS = {
    "cortex.ask": ask,
    "cortex.explain": explain,
    "cortex.run": run,
    "cortex.session.new": session_new,
    "cortex.memory.search": memory_search,
    "cortex.memory.sessions": memory_sessions,
    "cortex.memory.forget": memory_forget,
    "cortex.memory.reset": memory_reset,
    "cortex.doctor": doctor,
}


def register(server: CortexServer) -> None:
    from cortex_lsp.server import editor_commands  # it builds on this module's helpers

    handlers = {**HANDLERS, "cortex.apply": editor_commands.apply, "cortex.fix": editor_commands.fix,
                "cortex.session.turns": editor_commands.session_turns}
    for name in COMMANDS:
        server.command(name)(handlers[name])
