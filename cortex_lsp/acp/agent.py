"""The Cortex agent behind the Agent Client Protocol: each ACP method mapped onto the shared runtime.

``initialize`` → capabilities; ``session/new`` and ``session/load`` → a folder (the same refusals as
LSP roots) and an episodic-memory session; ``session/list`` → Cortex's sessions; ``session/prompt`` →
one :class:`~cortex_lsp.agent.types.AgentRequest` run by the same kernel and runner as the LSP front,
its events streamed as ``session/update``; ``session/cancel`` → the run's task is cancelled (the prompt
answers ``cancelled``). docs/acp.md lists the whole mapping.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from acp import PROTOCOL_VERSION, RequestError, update_agent_message_text, update_user_message_text
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AvailableCommandsUpdate,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
    RequestPermissionResponse,
    SessionCapabilities,
    SessionInfo,
    SessionListCapabilities,
    ToolCallUpdate,
)

from cortex_lsp import __version__
from cortex_lsp.acp import slash
from cortex_lsp.acp.edits import AcpEditSink, WriteLog
from cortex_lsp.acp.prompt import PromptParts, invalid, read_prompt
from cortex_lsp.acp.render import AcpUpdate, render, result_meta
from cortex_lsp.acp.session import AcpSession, RunEmitter, UpdatePump
from cortex_lsp.acp.workspace import AcpWorkspace
from cortex_lsp.agent.types import AgentRequest, AgentResult, RunRecord
from cortex_lsp.guards.project_roots import root_refusal
from cortex_lsp.runtime import sessions as history
from cortex_lsp.runtime.host import KernelHost
from cortex_lsp.runtime.runner import agent_body, settle
from cortex_lsp.runtime.updates import UpdateTracker

log = logging.getLogger("cortex.acp")

#: sessions listed per ``session/list`` page
PAGE = 50

STOP_REASONS: dict[str, str] = {
    "answered": "end_turn",
    "cancelled": "cancelled",
    "refused": "end_turn",  # the answer says why; ACP's "refusal" would hide it
    "step_budget": "max_turn_requests",
    "time_budget": "max_turn_requests",
    "model_unavailable": "end_turn",
    "error": "end_turn",
}


class CortexAcpAgent:
    def __init__(self) -> None:
        self.conn: Client | None = None
        self.caps = ClientCapabilities()
        self.sessions: dict[str, AcpSession] = {}
        self.host = KernelHost(self._note, self._active)
        self._notes: list[str] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._warming = False

    def on_connect(self, conn: Client) -> None:
        self.conn = conn

    # -- initialize ----------------------------------------------------------------------------------
    async def initialize(self, protocol_version: int, client_capabilities: ClientCapabilities | None = None,
                         client_info: Implementation | None = None, **kwargs: Any) -> InitializeResponse:
        self.caps = client_capabilities or ClientCapabilities()
        if not self._warming:
            self._warming = True
            self._spawn_soon(self.host.warm)  # after the answer: the first session and prompt find it ready
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION) if protocol_version >= 1 else PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=False, audio=False, embedded_context=True),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            agent_info=Implementation(name="cortex-lsp", title="Cortex", version=__version__),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None  # no authentication: everything runs on this machine

    # -- sessions ------------------------------------------------------------------------------------
    async def new_session(self, cwd: str, additional_directories: list[str] | None = None,
                          mcp_servers: list[Any] | None = None, **kwargs: Any) -> NewSessionResponse:
        roots, notes = self._roots(cwd, additional_directories)
        memory = await self.host.memory()
        memory_id = await history.new_session(memory, roots[0] if roots else None)
        session = self._open(memory_id, roots)
        notes.extend(self._mcp_note(mcp_servers))
        self._after(session, notes)
        return NewSessionResponse(session_id=session.acp_id)

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None,
                           additional_directories: list[str] | None = None, **kwargs: Any) -> LoadSessionResponse:
        roots, notes = self._roots(cwd, additional_directories)
        memory = await self.host.memory()
        transcript = await history.transcript(memory, session_id)
        if transcript is None:
            raise invalid("sessionId", f"no Cortex session {session_id[:80]!r} (session/list shows them)")
        existing = self.sessions.get(session_id)
        if existing is not None and existing.running:
            raise RequestError.invalid_request({"message": "that session is running a prompt"})
        session = self._open(session_id, roots)
        assert self.conn is not None
        for turn in transcript.turns:  # the history first, then the answer (the ACP order)
            chunk = (update_user_message_text(turn.text) if turn.role == "user"
                     else update_agent_message_text(turn.text))
            await self.conn.session_update(session.acp_id, chunk)
        notes.extend(self._mcp_note(mcp_servers))
        self._after(session, notes)
        return LoadSessionResponse()

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None,
                            **kwargs: Any) -> ListSessionsResponse:
        root = Path(cwd) if cwd else None
        memory = await self.host.memory()
        found = await history.list_sessions(memory, root)
        start = int(cursor) if cursor and cursor.isdigit() else 0
        page = found[start:start + PAGE]
        return ListSessionsResponse(
            sessions=[SessionInfo(session_id=s.id, cwd=s.root or "", title=s.title or None,
                                  updated_at=datetime.fromtimestamp(s.last_activity, UTC).isoformat())
                      for s in page],
            next_cursor=str(start + PAGE) if start + PAGE < len(found) else None,
        )

    def _roots(self, cwd: str, additional: list[str] | None) -> tuple[list[Path], list[str]]:
        """The session's folders: ``cwd`` (and any additional ones) less those that are not projects."""
        roots: list[Path] = []
        notes: list[str] = []
        for index, raw in enumerate([cwd, *(additional or [])]):
            where = "cwd" if index == 0 else f"additionalDirectories[{index - 1}]"
            path = Path(raw)
            if not path.is_absolute():
                raise invalid(where, f"must be an absolute path, got {raw[:120]!r}")
            if not path.is_dir():
                raise invalid(where, f"{raw[:120]} is not a folder")
            if (why := root_refusal(path)) is not None:
                notes.append(f"Cortex will not use {path} as the session's folder: {why}. Its files stay out of "
                             "the agent's reach; open a project folder instead.")
                continue
            roots.append(path.resolve())
        return list(dict.fromkeys(roots)), notes

    def _open(self, memory_id: str, roots: list[Path]) -> AcpSession:
        read = self._client_read(memory_id) if self._can("read_text_file") else None
        session = AcpSession(acp_id=memory_id, memory_id=memory_id, roots=roots,
                             loaded=self.host.settings_for(roots), workspace=AcpWorkspace(roots, read))
        self.sessions[memory_id] = session
        return session

    @staticmethod
    def _mcp_note(servers: list[Any] | None) -> list[str]:
        if not servers:
            return []
        names = ", ".join(str(getattr(s, "name", "?")) for s in servers[:8])
        return [f"Cortex does not connect to MCP servers ({len(servers)} offered: {names}); its tools are its "
                "own (files in this folder, the Python sandbox, web pages you name, memory)."]

    def _after(self, session: AcpSession, notes: list[str]) -> None:
        """After the response: the slash commands, and any notes, as this session's first updates."""
        updates: list[AcpUpdate | AvailableCommandsUpdate] = []
        text = "\n\n".join([*notes, *self._take_notes()])
        if text:
            updates.append(update_agent_message_text(f"{text}\n\n"))
        updates.append(AvailableCommandsUpdate(session_update="available_commands_update",
                                               available_commands=slash.available_commands()))

        async def send() -> None:
            assert self.conn is not None
            for update in updates:
                try:
                    await self.conn.session_update(session.acp_id, update)
                except Exception as exc:
                    log.info("session/update not sent: %s", exc)

        self._spawn_soon(send)

    # -- prompt --------------------------------------------------------------------------------------
    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        if session.running:
            raise RequestError.invalid_request({"message": "a prompt is already running in this session"})
        session.running, session.cancelled, session.task = True, False, None
        assert self.conn is not None
        conn = self.conn
        pump = UpdatePump(lambda update: conn.session_update(session.acp_id, update)).start()
        try:
            parts = await read_prompt(prompt, session.roots, self.host.protected_dirs(session.loaded.settings),
                                      session.workspace.read_text_async)
            command = slash.parse(parts.words)
            if command is not None and command.name != "explain":
                from cortex_lsp.acp.commands import run_command

                return await run_command(self, session, command, parts, pump)
            request = self._request(session, parts, command)
            result = await self.run(session, request, parts.notes, pump)
            return PromptResponse(stop_reason=STOP_REASONS.get(result.stop_reason, "end_turn"),  # type: ignore[arg-type]
                                  field_meta={"cortex": result_meta(result)})
        finally:
            await pump.close()
            session.running, session.task = False, None

    @staticmethod
    def _request(session: AcpSession, parts: PromptParts, command: slash.Slash | None) -> AgentRequest:
        if command is None:
            return AgentRequest(message=parts.words or "Explain this.", session_id=session.memory_id,
                                selection=parts.selection, mode="ask")
        selection = parts.selection
        if selection is None and command.argument:
            from cortex_lsp.agent.types import Selection

            code = slash.code_of(command.argument)  # pasted code is data, as an LSP selection is
            selection = Selection(uri="untitled:explain", text=code, start_line=0, end_line=code.count("\n"))
        if selection is None:
            raise invalid("prompt", "/explain needs code: paste it after the command or attach a file")
        return AgentRequest(message="Explain this code.", session_id=session.memory_id, selection=selection,
                            mode="explain")

    async def run(self, session: AcpSession, request: AgentRequest, notes: list[str],
                  pump: UpdatePump) -> AgentResult:
        """``request`` through the shared runner: updates stream as it goes; a cancel stops it."""
        tracker = UpdateTracker(prefix=f"call-{uuid.uuid4().hex[:8]}")
        writes = WriteLog()
        record = RunRecord(session_id=session.memory_id)
        emit = RunEmitter(tracker, pump, writes.diffs)
        for note in self._take_notes():
            emit.say(f"({note})\n\n")
        sink = AcpEditSink(
            settings=lambda: session.loaded.settings, workspace=session.workspace,
            protected=self.host.protected_dirs(session.loaded.settings), ask=self._asker(session),
            write=self._writer(session) if self._can("write_text_file") else None,
            current_call=lambda: tracker.current_call, cancelled=lambda: session.cancelled, log_=writes,
            settled=record.edits.append)
        body = agent_body(lambda: self.host.deps(session.loaded.settings, session.workspace, sink), request,
                          lambda: self.host.models.backend_info, notes)
        if session.cancelled:
            return record.result("cancelled")
        task = asyncio.create_task(body(emit, record))
        session.task = cast(asyncio.Task[object], task)
        result = await settle(task, record, emit)
        if tracker.steps and result.stop_reason == "answered":
            pump.put(render(tracker.plan(finished=True)))
        streamed = emit.streamed_text
        if result.answer and result.answer != streamed:  # the final answer is what the user must read
            if result.answer.startswith(streamed):
                pump.put(update_agent_message_text(result.answer[len(streamed):]))
            else:
                pump.put(update_agent_message_text(("\n\n---\n" if streamed.strip() else "") + result.answer))
        return result

    # -- cancel --------------------------------------------------------------------------------------
    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self.cancel_session(session_id)

    def cancel_session(self, session_id: str) -> None:
        """``session/cancel``, or ``$/cancel_request`` of the session's prompt: its run stops."""
        session = self.sessions.get(session_id)
        if session is not None and session.running:
            log.info("cancel received for session %s", session_id)
            session.cancel()

    # -- the client's side ---------------------------------------------------------------------------
    def _can(self, name: str) -> bool:
        fs = self.caps.fs
        return bool(fs is not None and getattr(fs, name, False))

    def _client_read(self, session_id: str) -> Callable[[Path], Awaitable[str]]:
        async def read(path: Path) -> str:
            assert self.conn is not None
            response = await self.conn.read_text_file(session_id=session_id, path=str(path))
            return response.content

        return read

    def _writer(self, session: AcpSession) -> Callable[[Path, str], Awaitable[None]]:
        async def write(path: Path, text: str) -> None:
            assert self.conn is not None
            await self.conn.write_text_file(session_id=session.acp_id, path=str(path), content=text)

        return write

    def _asker(self, session: AcpSession) -> Callable[[ToolCallUpdate, list[PermissionOption]],
                                                      Awaitable[RequestPermissionResponse]]:
        async def ask(tool_call: ToolCallUpdate, options: list[PermissionOption]) -> RequestPermissionResponse:
            assert self.conn is not None
            return await self.conn.request_permission(session_id=session.acp_id, tool_call=tool_call,
                                                      options=options)

        return ask

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise invalid("sessionId", f"no session {session_id[:80]!r} on this connection (session/new or "
                                       "session/load first)")
        return session

    # -- notes, tasks, shutdown ----------------------------------------------------------------------
    def _note(self, text: str) -> None:
        """A message for the user (settings, memory): shown at the start of the next update they see."""
        if text not in self._notes:
            self._notes.append(text)

    def _take_notes(self) -> list[str]:
        taken, self._notes = self._notes, []
        return taken

    def _active(self) -> int:
        return sum(1 for s in self.sessions.values() if s.running)

    def _spawn_soon(self, make: Callable[[], Coroutine[Any, Any, None]]) -> None:
        def start() -> None:
            task = asyncio.get_running_loop().create_task(make())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

        asyncio.get_running_loop().call_soon(start)

    async def aclose(self) -> None:
        for session in self.sessions.values():
            session.cancel()
        for task in list(self._tasks):
            task.cancel()
        await self.host.aclose()

