"""Logging: JSON lines on stderr (stdout is the protocol), a run id on every line, and a mirror of
Cortex's own records to ``window/logMessage`` at the configured level (``log_level``).

An editor may treat every stderr line as an error (Neovim logs a server's stderr at ERROR level), so
stderr carries warnings and errors only until the editor is connected, and errors only after that:
routine records (INFO, and warnings) reach the editor through ``window/logMessage`` with their own
level. ``CORTEX_STDERR_LOG_LEVEL`` (e.g. ``INFO`` or ``DEBUG``) puts a fixed level on stderr instead,
for running the server by hand.
"""

from __future__ import annotations

import contextvars
import json
import logging
import os
import sys
import time
from collections.abc import Callable

run_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("cortex_run_id", default="")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": round(time.time(), 3),
            "level": record.levelname,
            "logger": record.name,
            "run_id": getattr(record, "run_id", None) or run_id_var.get(),
            "msg": record.getMessage(),
        }
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


class LspMirror(logging.Handler):
    """Sends Cortex's log records to the editor (``window/logMessage``)."""

    def __init__(self, send: Callable[[int, str], None]) -> None:
        super().__init__()
        self._send = send
        self._busy = False

    def emit(self, record: logging.LogRecord) -> None:
        if self._busy:
            return
        self._busy = True
        try:
            run = getattr(record, "run_id", None) or run_id_var.get()
            prefix = f"[{run}] " if run else ""
            self._send(record.levelno, f"{prefix}{record.name}: {record.getMessage()}")
        except Exception:
            pass
        finally:
            self._busy = False


STDERR_LEVEL_ENV = "CORTEX_STDERR_LOG_LEVEL"
_STDERR_HANDLER = "cortex-stderr"
_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def _chosen_stderr_level() -> str | None:
    value = os.environ.get(STDERR_LEVEL_ENV, "").strip().upper()
    return value if value in _LEVELS else None


def mirror_to_client(mirror: LspMirror) -> None:
    """Send Cortex's records to the editor; from now on stderr keeps only errors (unless chosen)."""
    cortex = logging.getLogger("cortex")
    for old in [h for h in cortex.handlers if isinstance(h, LspMirror)]:
        cortex.removeHandler(old)
    cortex.addHandler(mirror)
    if _chosen_stderr_level() is None:
        for handler in logging.getLogger().handlers:
            if handler.get_name() == _STDERR_HANDLER:
                handler.setLevel(logging.ERROR)


def setup_logging(level: str = "INFO") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.set_name(_STDERR_HANDLER)
    handler.setLevel(_chosen_stderr_level() or logging.WARNING)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.getLogger("cortex").setLevel(level)
