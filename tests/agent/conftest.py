"""Agent test harness: the scripted model server over HTTP, the real Ollama client, real tools, a
recording edit sink that (when accepting) writes into the tmp workspace, and in-process memory.

Script the model by role: every role's system prompt opens with a marker from
:mod:`cortex_lsp.agent.prompts` (``ROLE_PLANNER``, ``ROLE_EXECUTOR``, ...), so
``model.on(Reply(...), contains=ROLE_PLANNER)`` answers only the planner.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest
import pytest_asyncio

from cortex_lsp.agent.deps import AgentDeps
from cortex_lsp.agent.kernel import AgentKernel
from cortex_lsp.agent.types import AgentRequest, AgentResult, Mode, Orchestration, RunRecord, Selection
from cortex_lsp.config import Settings
from cortex_lsp.memory.api import InProcessMemory, Memory
from cortex_lsp.models.ollama_client import OllamaClient
from cortex_lsp.ports import AgentEvent, EditKind, EditOutcome, EditRequest, StaticWorkspace
from cortex_lsp.tools.base import BaseTool
from cortex_lsp.tools.builtin import build_registry
from cortex_lsp.tools.registry import ToolRegistry
from cortex_lsp.tools.sandbox import SandboxPool
from tests.scripted_model import Reply, ScriptedModelServer


@dataclass
class RecordingSink:
    """A test editor: records every proposal; when accepting, writes it (naively) under the tmp root.

    It does no checks of its own, so a test that sees no bad write knows the agent's guards stopped it.
    ``reviewed``: whether it stands for an editor where the user reviews every write (review mode) or
    one where nobody does (strict mode: only writes the user's words asked for reach it).
    """

    accept: bool = True
    reviewed: bool = False
    proposals: list[EditRequest] = field(default_factory=list)

    async def propose(self, request: EditRequest) -> EditOutcome:
        self.proposals.append(request)
        uri = request.path.as_uri()
        kind: EditKind = "replace" if request.path.exists() else "create"
        if not self.accept:
            return EditOutcome(uri=uri, kind=kind, applied=False, declined=True,
                               reason=f"Not written: {request.path.name} was declined (the test editor declined it).")
        request.path.parent.mkdir(parents=True, exist_ok=True)
        request.path.write_text(request.text, encoding="utf-8")
        return EditOutcome(uri=uri, kind=kind, applied=True)


def plan_reply(kind: str, steps: list[str], tools: Iterable[str] = ()) -> Reply:
    return Reply(content=json.dumps({"kind": kind, "steps": steps, "tools": list(tools)}))


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools") or []]


E = TypeVar("E", bound=AgentEvent)


@dataclass
class AgentHarness:
    model: ScriptedModelServer
    root: Path
    settings: Settings
    sink: RecordingSink | None
    memory: Memory
    client: OllamaClient
    registry: ToolRegistry
    events: list[AgentEvent] = field(default_factory=list)
    record: RunRecord | None = None

    def configure(self, **updates: Any) -> None:
        self.settings = self.settings.model_copy(update=updates)

    def use_tools(
        self, *, sandbox: Any | None = None, include_web: bool = False, extra: Iterable[BaseTool] = ()
    ) -> None:
        self.registry = build_registry(self.settings, sandbox=sandbox, include_web=include_web, extra=extra)

    def deps(self) -> AgentDeps:
        return AgentDeps(
            settings=self.settings,
            model=self.client,
            memory=self.memory,
            tools=self.registry,
            workspace=StaticWorkspace([self.root]),
            edits=self.sink,
        )

    async def run(
        self,
        message: str,
        *,
        selection: Selection | None = None,
        session_id: str = "s1",
        orchestration: Orchestration = "single",
        mode: Mode = "ask",
        diagnostic: str | None = None,
    ) -> AgentResult:
        self.events = []
        self.record = RunRecord(session_id=session_id)
        request = AgentRequest(
            message=message,
            session_id=session_id,
            selection=selection,
            orchestration=orchestration,
            mode=mode,
            diagnostic=diagnostic,
        )
        return await AgentKernel(self.deps()).run(request, self.events.append, self.record)

    # -- what happened ---------------------------------------------------------------------------
    def requests(self, marker: str | None = None) -> list[dict[str, Any]]:
        bodies = self.model.chat_requests
        if marker is None:
            return bodies
        return [b for b in bodies if marker in json.dumps(b.get("messages", []))[:400]]

    def of_type(self, kind: type[E]) -> list[E]:
        return [e for e in self.events if isinstance(e, kind)]

    def tools_run(self) -> list[str]:
        assert self.record is not None
        return [c.tool for c in self.record.tool_calls]


@pytest_asyncio.fixture
async def agent(model: ScriptedModelServer, tmp_path: Path) -> AsyncIterator[AgentHarness]:
    root = tmp_path / "ws"
    root.mkdir()
    settings = Settings(
        ollama_base_url=model.url,
        data_dir=tmp_path / "data",
        memory_consolidation=False,
        max_run_seconds=60,
        web_fetch_enabled=False,
    )
    client = OllamaClient(model.url, timeout=30)
    harness = AgentHarness(
        model=model,
        root=root,
        settings=settings,
        sink=RecordingSink(),
        memory=InProcessMemory(),
        client=client,
        registry=build_registry(settings, include_web=False),
    )
    try:
        yield harness
    finally:
        await client.aclose()


@pytest.fixture
def workspace_files(agent: AgentHarness) -> Path:
    (agent.root / "notes.txt").write_text("alpha\nbeta\ngamma\n", encoding="utf-8")
    (agent.root / "src").mkdir()
    (agent.root / "src" / "app.py").write_text("def main():\n    return 41 + 1\n", encoding="utf-8")
    return agent.root


@pytest_asyncio.fixture
async def py_agent(agent: AgentHarness) -> AsyncIterator[AgentHarness]:
    pool = SandboxPool(Settings(code_exec_timeout_seconds=10, sandbox_isolation="none"), keep_warm=False)
    agent.use_tools(sandbox=pool)
    try:
        yield agent
    finally:
        await pool.aclose()
