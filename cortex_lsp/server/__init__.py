"""The pygls language server: initialize + roots, commands, code actions, progress, edits."""

from __future__ import annotations

from cortex_lsp.server.app import CortexServer


def build_server() -> CortexServer:
    from cortex_lsp.server import features

    server = CortexServer()
    features.register(server)
    return server


__all__ = ["CortexServer", "build_server"]
