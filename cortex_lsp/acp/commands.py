"""The slash commands that are not an agent run: ``/run``, ``/memory``, ``/forget``, ``/doctor``, ``/new``.

Each does what its LSP command does (``cortex.run``, ``cortex.memory.search``, ``cortex.memory.forget``,
``cortex.doctor``, ``cortex.session.new``) and shows the result as the answer; ``/run`` also as an
``execute`` tool call. None calls a model.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from acp import start_tool_call, text_block, tool_content, update_agent_message_text, update_tool_call
from acp.schema import PromptResponse

from cortex_lsp.acp import slash
from cortex_lsp.acp.prompt import PromptParts, invalid
from cortex_lsp.acp.session import AcpSession, UpdatePump
from cortex_lsp.runtime import sessions as history

if TYPE_CHECKING:
    from cortex_lsp.acp.agent import CortexAcpAgent
    from cortex_lsp.config import Settings


async def run_command(agent: CortexAcpAgent, session: AcpSession, command: slash.Slash, parts: PromptParts,
                      pump: UpdatePump) -> PromptResponse:
    def say(text: str) -> None:
        pump.put(update_agent_message_text(text))

    if command.name == "run":
        try:
            await _run(agent, session, command, parts, pump)
        except Cancelled:
            return PromptResponse(stop_reason="cancelled", field_meta={"cortex": {"command": "run"}})
    elif command.name == "memory":
        if not command.argument:
            raise invalid("prompt", "/memory needs words to look for")
        memory = await agent.host.memory()
        hits = await memory.search(command.argument, None, 10)
        say("\n".join(f"- [{h.type}] {h.content} (id {h.id})" for h in hits) if hits
            else f"Nothing in memory matches {command.argument!r}.")
    elif command.name == "forget":
        if not command.argument:
            raise invalid("prompt", "/forget needs a memory id (from /memory)")
        memory = await agent.host.memory()
        deleted = await memory.forget(command.argument)
        say(f"Deleted memory {command.argument}." if deleted else f"No memory has the id {command.argument!r}.")
    elif command.name == "doctor":
        from cortex_lsp.doctor import run_checks

        checks = await run_checks(session.loaded.settings, session.roots, settings_messages=session.loaded.messages)
        lines = [f"{'✔' if c.ok else ('⚠' if c.warning else '✘')} {c.name}: {c.detail}"
                 + (f" — {c.fix}" if c.fix and not c.ok else "") for c in checks]
        say("\n".join(lines))
    elif command.name == "new":
        memory = await agent.host.memory()
        session.memory_id = await history.new_session(memory, session.roots[0] if session.roots else None)
        say("Started a new conversation: earlier turns are no longer context.")
    return PromptResponse(stop_reason="end_turn", field_meta={"cortex": {"command": command.name,
                                                                          "session_id": session.memory_id}})


async def _run(agent: CortexAcpAgent, session: AcpSession, command: slash.Slash, parts: PromptParts,
               pump: UpdatePump) -> None:
    """The attached file (or the pasted code) through LSP's ``cortex.run`` path: size limit, runnability, sandbox."""
    from cortex_lsp.server import services

    if parts.selection is not None:
        code = parts.selection.text
    elif command.argument:
        code = slash.code_of(command.argument)
    else:
        raise invalid("prompt", "/run needs Python: paste it after the command or attach a file")
    call_id = f"run-{uuid.uuid4().hex[:8]}"
    pump.put(start_tool_call(call_id, "python_exec (sandbox)", kind="execute", status="in_progress",
                             raw_input={"code": code[:2000]}))
    host = _SandboxHost(agent, session)
    task = asyncio.ensure_future(services.run_code(cast(Any, host), code))
    session.task = cast("asyncio.Task[object]", task)  # session/cancel stops the run (the sandbox kills its worker)
    try:
        report = await task
    except asyncio.CancelledError:
        if not session.cancelled:
            raise
        pump.put(update_tool_call(call_id, status="failed", content=[tool_content(text_block("Cancelled."))]))
        raise Cancelled from None
    if not report.ran:
        text = f"Not run: {report.reason}"
        failed = True
    else:
        pieces = [f"stdout:\n{report.stdout}" if report.stdout else "",
                  f"stderr:\n{report.stderr}" if report.stderr else "",
                  f"value: {report.value}" if report.value not in (None, "") else "",
                  f"error: {report.error}" if report.error else ""]
        text = "\n".join(p for p in pieces if p) or "(no output)"
        failed = bool(report.error)
    if report.warning:
        text += f"\n\n{report.warning}"
    pump.put(update_tool_call(call_id, status="failed" if failed else "completed",
                              content=[tool_content(text_block(text))]))
    pump.put(update_agent_message_text(text))


class Cancelled(Exception):
    """``/run`` was stopped by ``session/cancel``."""


class _SandboxHost:
    """What ``server/services.run_code`` asks of its host, answered by the ACP session and kernel host."""

    def __init__(self, agent: CortexAcpAgent, session: AcpSession) -> None:
        self._agent = agent
        self._session = session
        self._values: dict[str, Any] = {}

    @property
    def settings(self) -> Settings:
        return self._session.loaded.settings

    @property
    def roots(self) -> list[Path]:
        return self._session.roots

    def service(self, name: str) -> Any:
        if name == "sandbox":
            return self._agent.host.sandbox()
        return self._values.get(name)

    def set_service(self, name: str, value: Any) -> None:
        self._values[name] = value

    def window_show_message(self, params: Any) -> None:
        return None  # the warning is in the payload, shown with the output
