"""The Python sandbox: single-use worker processes behind three layers (see docs/sandbox.md).

1. RestrictedPython with module views and per-run guards (``policy``, ``allowlist``, ``restricted``),
   run from a copy sealed once per worker so no module global is read at call time (``sealed``);
2. an audit hook, deny by default once armed (``audit``);
3. the OS: a seccomp filter, Landlock rules (read-only Python install and folder without hidden entries,
   no writes, no TCP) and, as root, a drop to uid 65534 with no capability (``seccomp``, ``landlock``,
   ``worker``), and bubblewrap where it works (``isolation``). The warm pool is ``pool``.

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
