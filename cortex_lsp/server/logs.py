"""Logging: stderr lines (stdout is the protocol), a run id on every line, and a mirror of Cortex's own
records to ``window/logMessage`` at the configured level (``log_level``).

A filter stamps each record with the run it belongs to (``run_id``, from a context variable set by the
run) and, while telemetry is on, the current ``trace_id``/``span_id``, so a slow run's log lines and its
trace find each other. ``log_format``: ``console`` (one readable line) or ``json`` (JSON lines).

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
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cortex_lsp.config import Settings

run_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("cortex_run_id", default="")


class RunFilter(logging.Filter):
    """Stamps ``run_id`` (and ``trace_id``/``span_id`` while telemetry is on) on every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not getattr(record, "run_id", None):
            record.run_id = run_id_var.get()
        if "cortex_lsp.telemetry" in sys.modules and not hasattr(record, "trace_id"):
            from cortex_lsp import telemetry

            ids = telemetry.trace_ids()
            if ids is not None:
                record.trace_id, record.span_id = ids
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": round(record.created, 3),
            "level": record.levelname,
            "logger": record.name,
            "run_id": getattr(record, "run_id", None) or run_id_var.get(),
            "msg": record.getMessage(),
        }
        trace_id = getattr(record, "trace_id", None)
        if trace_id:
            entry["trace_id"] = trace_id
            entry["span_id"] = getattr(record, "span_id", "")
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


class ConsoleFormatter(logging.Formatter):
    """``12:03:04.512 INFO cortex.runs [run 3f2a…] message`` (the exception, if any, below it)."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%H:%M:%S", time.localtime(record.created)) + f".{int(record.msecs):03d}"
        run = getattr(record, "run_id", None) or run_id_var.get()
        trace_id = getattr(record, "trace_id", None)
        where = f" [run {run}{f' trace {trace_id}' if trace_id else ''}]" if run or trace_id else ""
        text = f"{stamp} {record.levelname} {record.name}{where} {record.getMessage()}"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


FORMATTERS: dict[str, type[logging.Formatter]] = {"console": ConsoleFormatter, "json": JsonFormatter}


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
            run = getattr(record, "run_id", None) or run_id_var.get()  # window/logMessage: one format
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
    if not any(isinstance(f, RunFilter) for f in mirror.filters):
        mirror.addFilter(RunFilter())
    cortex.addHandler(mirror)
    if _chosen_stderr_level() is None:
        for handler in logging.getLogger().handlers:
            if handler.get_name() == _STDERR_HANDLER:
                handler.setLevel(logging.ERROR)


def setup_logging(level: str = "INFO", log_format: str | None = None) -> None:
    """stderr logging in ``log_format`` (default: ``CORTEX_LOG_FORMAT``, else console)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.set_name(_STDERR_HANDLER)
    handler.setLevel(_chosen_stderr_level() or logging.WARNING)
    handler.addFilter(RunFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.getLogger("cortex").setLevel(level)
    use_format(log_format or os.environ.get("CORTEX_LOG_FORMAT", "console"))


def use_format(log_format: str) -> None:
    """Switch the stderr lines to ``console`` or ``json`` (an unknown name keeps console)."""
    formatter = FORMATTERS.get(log_format.strip().lower(), ConsoleFormatter)
    for handler in logging.getLogger().handlers:
        if handler.get_name() == _STDERR_HANDLER and type(handler.formatter) is not formatter:
            handler.setFormatter(formatter())


def observe(settings: Settings) -> list[str]:
    """Apply ``log_format`` and the telemetry settings; what went wrong, as messages for the user."""
    from cortex_lsp import telemetry

    use_format(settings.log_format)
    problem = telemetry.configure(settings)
    return [problem] if problem else []
