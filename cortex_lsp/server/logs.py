"""Logging: JSON lines on stderr (stdout is the protocol), a run id on every line, and a mirror of
Cortex's own records to ``window/logMessage`` at the configured level."""

from __future__ import annotations

import contextvars
import json
import logging
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


def setup_logging(level: str = "INFO") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.getLogger("cortex").setLevel(level)
