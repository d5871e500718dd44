"""The Python sandbox: RestrictedPython in recycled worker processes, isolated by bubblewrap if present.

Public API (``from cortex_lsp.tools.sandbox import ...``): :class:`SandboxPool`, :class:`SandboxResult`,
:func:`isolation_status`. The names are loaded lazily so the worker process, which imports the
``restricted`` half of this package, does not pay for the server-side imports (settings, asyncio pool).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cortex_lsp.tools.sandbox.isolation import isolation_status
    from cortex_lsp.tools.sandbox.pool import SandboxPool, SandboxResult

__all__ = ["SandboxPool", "SandboxResult", "isolation_status"]


def __getattr__(name: str) -> Any:
    if name in ("SandboxPool", "SandboxResult"):
        from cortex_lsp.tools.sandbox import pool

        return getattr(pool, name)
    if name == "isolation_status":
        from cortex_lsp.tools.sandbox import isolation

        return isolation.isolation_status
    raise AttributeError(name)
