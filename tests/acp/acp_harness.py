"""Drive the real ``cortex-lsp acp`` over stdio with the official SDK's client side (``acp``).

:func:`acp_session` starts the agent as a child process (``python -m cortex_lsp acp``) pointed at a
scripted model server and a data folder of the test's own, initializes it, and yields a
:class:`RecordingClient` that records every ``session/update``, answers ``session/request_permission``
as the test says (allow or reject), and serves ``fs/read_text_file`` / ``fs/write_text_file`` from the
disk (a write lands on disk only when the agent sends it).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from acp import PROTOCOL_VERSION, spawn_agent_process
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    InitializeResponse,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    WriteTextFileResponse,
)

from cortex_lsp.agent.prompts import ROLE_PLANNER
from tests.lsp_harness import DIRECT_PLAN, server_env
from tests.scripted_model import Reply, ScriptedModelServer

Permission = Literal["allow", "reject", "hold"]
#: how long a test waits for an event it expects (generous: a shared, busy machine)
WAIT = 60.0


@dataclass
class PermissionAsked:
    session_id: str
    tool_call: ToolCallUpdate
    options: list[PermissionOption]


@dataclass
class RecordingClient:
    """The client side: records what the agent sent, answers its requests."""

    permission: Permission = "allow"
    updates: list[tuple[str, Any]] = field(default_factory=list)
    permissions: list[PermissionAsked] = field(default_factory=list)
    writes: list[tuple[str, str]] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    #: unsaved editor text by path: what fs/read_text_file answers instead of the disk
    buffers: dict[str, str] = field(default_factory=dict)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)

    def on_connect(self, conn: Any) -> None:
        return None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))
        self.changed.set()

    async def request_permission(self, options: list[PermissionOption], session_id: str,
                                 tool_call: ToolCallUpdate, **kwargs: Any) -> RequestPermissionResponse:
        self.permissions.append(PermissionAsked(session_id, tool_call, options))
        self.changed.set()
        if self.permission == "hold":
            await self.release.wait()
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        wanted = "allow_once" if self.permission == "allow" else "reject_once"
        option = next(o for o in options if o.kind == wanted)
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=option.option_id))

    async def write_text_file(self, content: str, path: str, session_id: str, **kwargs: Any) -> WriteTextFileResponse:
        self.writes.append((path, content))
        await asyncio.to_thread(Path(path).write_text, content, encoding="utf-8")
        self.changed.set()
        return WriteTextFileResponse()

    async def read_text_file(self, path: str, session_id: str, limit: int | None = None, line: int | None = None,
                             **kwargs: Any) -> ReadTextFileResponse:
        self.reads.append(path)
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        return ReadTextFileResponse(content=await asyncio.to_thread(Path(path).read_text, encoding="utf-8"))

    # -- what the tests read -------------------------------------------------------------------------
    def of(self, kind: type) -> list[Any]:
        return [u for _, u in self.updates if isinstance(u, kind)]

    def mark(self) -> int:
        """Where the updates stand now: :meth:`answer_text` from here on."""
        return len(self.updates)

    def answer_text(self, since: int = 0) -> str:
        return "".join(u.content.text for _, u in self.updates[since:]
                       if isinstance(u, AgentMessageChunk) and isinstance(u.content, TextContentBlock))

    def tool_calls(self) -> list[ToolCallStart]:
        return self.of(ToolCallStart)

    def tool_updates(self) -> list[ToolCallProgress]:
        return self.of(ToolCallProgress)

    def plans(self) -> list[AgentPlanUpdate]:
        return self.of(AgentPlanUpdate)

    async def wait_for(self, check: Any, within: float = WAIT) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while not check():
            self.changed.clear()
            if check():
                return
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise AssertionError("timed out waiting for the agent")
            try:
                await asyncio.wait_for(self.changed.wait(), remaining)
            except TimeoutError:
                raise AssertionError("timed out waiting for the agent") from None


@dataclass
class AcpRun:
    conn: ClientSideConnection
    client: RecordingClient
    init: InitializeResponse
    root: Path
    process: Any


def direct_plans(model: ScriptedModelServer) -> None:
    model.on(Reply(content=DIRECT_PLAN), contains=ROLE_PLANNER, times=None, first=True)


@asynccontextmanager
async def acp_session(model: ScriptedModelServer | None, tmp_path: Path, *, read: bool = True, write: bool = True,
                      permission: Permission = "allow", env: dict[str, str] | None = None,
                      plans: bool = True) -> AsyncIterator[AcpRun]:
    if model is not None and plans:
        direct_plans(model)
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    data_dir = tmp_path / "data"
    data_dir.mkdir(exist_ok=True)
    client = RecordingClient(permission=permission)
    stderr = (tmp_path / "agent-stderr.log").open("wb")  # closed below, after the process
    try:
        async with spawn_agent_process(cast(Any, client), sys.executable, "-m", "cortex_lsp", "acp",
                                       env=server_env(model, data_dir, **(env or {})), cwd=os.getcwd(),
                                       transport_kwargs={"stderr": stderr.fileno(), "shutdown_timeout": 20.0}
                                       ) as (conn, process):
            init = await asyncio.wait_for(conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(
                    fs=FileSystemCapabilities(read_text_file=read, write_text_file=write), terminal=False)),
                WAIT)
            yield AcpRun(conn, client, init, root, process)
    finally:
        stderr.close()
