"""Everything a run needs, handed to the kernel by its host (the LSP server or a test)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cortex_lsp.agent.meaning import MeaningClassifier
from cortex_lsp.config import Settings
from cortex_lsp.memory.api import Memory
from cortex_lsp.models.base import ModelClient
from cortex_lsp.ports import AgentEvent, EditSink, Workspace
from cortex_lsp.tools.registry import ToolRegistry

Emit = Callable[[AgentEvent], None]


@dataclass
class AgentDeps:
    settings: Settings
    model: ModelClient
    memory: Memory
    tools: ToolRegistry
    workspace: Workspace
    edits: EditSink | None = None
    #: reads the kind of request by meaning for a small model's router (``None``: word tables only)
    meaning: MeaningClassifier | None = None
