"""One ACP session's state, and the pump that sends its updates in order.

An :class:`AcpSession` is a folder (its roots, after the same refusals as LSP roots), its settings, the
episodic-memory session its turns go to, and the prompt running in it (one at a time; ``session/cancel``
cancels its task). :class:`UpdatePump` sends a run's ``session/update`` notifications one after another
from a queue (answer chunks that queued up meanwhile go out as one), and is drained before the prompt
answers, so every update precedes the ``stopReason``. :class:`RunEmitter` is the run's ``emit``.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from acp import update_agent_message_text
from acp.schema import AgentMessageChunk, FileEditToolCallContent, TextContentBlock

from cortex_lsp.acp.render import AcpUpdate, render
from cortex_lsp.ports import AgentEvent
from cortex_lsp.runtime.updates import AnswerText, ClientUpdate, UpdateTracker

if TYPE_CHECKING:
    from cortex_lsp.acp.workspace import AcpWorkspace
    from cortex_lsp.config import LoadedSettings

log = logging.getLogger("cortex.acp")


@dataclass
class AcpSession:
    acp_id: str
    memory_id: str
    roots: list[Path]
    loaded: LoadedSettings
    workspace: AcpWorkspace
    running: bool = False
    cancelled: bool = False
    task: asyncio.Task[object] | None = None

    def cancel(self) -> None:
        self.cancelled = True
        if self.task is not None and not self.task.done():
            self.task.cancel()


class UpdatePump:
    def __init__(self, send: Callable[[AcpUpdate], Awaitable[None]]) -> None:
        self._send = send
        self._items: deque[AcpUpdate | None] = deque()
        self._ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.sent = 0

    def start(self) -> UpdatePump:
        self._task = asyncio.create_task(self._run(), name="cortex-acp-updates")
        return self

    def put(self, update: AcpUpdate | None) -> None:
        if update is not None:
            self._items.append(update)
            self._ready.set()

    async def close(self) -> None:
        """Send everything queued, then stop (never raises: a client that went away loses the rest)."""
        self._items.append(None)
        self._ready.set()
        if self._task is not None:
            try:
                await asyncio.shield(self._task)
            except Exception:
                pass

    async def _run(self) -> None:
        while True:
            while not self._items:
                self._ready.clear()
                await self._ready.wait()
            update = self._items.popleft()
            if update is None:
                return
            if (text := _text_of(update)) is not None:  # answer chunks queued meanwhile go out as one
                parts = [text]
                while self._items and (more := _text_of(self._items[0])) is not None:
                    parts.append(more)
                    self._items.popleft()
                update = update_agent_message_text("".join(parts))
            try:
                await self._send(update)
                self.sent += 1
            except Exception as exc:  # the client went away: the run goes on, its result stays true
                log.info("session/update not sent: %s", exc)


def _text_of(update: AcpUpdate | None) -> str | None:
    if isinstance(update, AgentMessageChunk) and isinstance(update.content, TextContentBlock):
        return update.content.text
    return None


@dataclass
class RunEmitter:
    """A run's ``emit`` (and token sink): kernel events through the tracker, rendered, into the pump."""

    tracker: UpdateTracker
    pump: UpdatePump
    diffs: dict[str, FileEditToolCallContent]
    streamed: list[str] = field(default_factory=list)

    def __call__(self, event: AgentEvent) -> None:
        for update in self.tracker.feed(event):
            self.show(update)

    def show(self, update: ClientUpdate) -> None:
        if isinstance(update, AnswerText):
            self.streamed.append(update.text)
        self.pump.put(render(update, self.diffs))

    def write_token(self, text: str) -> None:
        if text:
            self.streamed.append(text)
            self.pump.put(update_agent_message_text(text))

    def flush_tokens(self) -> None:
        return None

    def say(self, text: str) -> None:
        """Words of Cortex's own (a note, a command's output) as answer text."""
        if text:
            self.write_token(text)

    @property
    def streamed_text(self) -> str:
        return "".join(self.streamed)
