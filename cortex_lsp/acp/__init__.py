"""Cortex over the Agent Client Protocol (``cortex-lsp acp``): the same kernel, tools, guards, memory and
settings as the language server, for ACP clients (Zed, JetBrains, Neovim CodeCompanion, Emacs agent-shell).

:func:`serve` runs one connection on stdio with the official SDK (``agent-client-protocol``) behind a
guarded transport (acp/transport.py) on stdio streams that work whatever stdin and stdout are
(acp/stdio.py), and returns when the client closes its end.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, cast

log = logging.getLogger("cortex.acp")


async def serve() -> int:
    from acp.agent.connection import AgentSideConnection

    from cortex_lsp.acp.agent import CortexAcpAgent
    from cortex_lsp.acp.stdio import stdio_streams
    from cortex_lsp.acp.transport import GuardedTransport

    reader, writer = await stdio_streams(limit=1024 * 1024)
    transport = GuardedTransport(reader, writer)
    agent = CortexAcpAgent()
    transport.on_cancel = agent.cancel_session
    connection = AgentSideConnection(cast(Any, agent), transport, listening=False)  # the methods Cortex serves
    try:
        await connection.listen()
    finally:
        try:
            await asyncio.wait_for(agent.aclose(), 10)
        except Exception:
            log.exception("shutdown: closing the agent failed")
        await connection.close()
    return 0


def main() -> int:
    return asyncio.run(serve())
