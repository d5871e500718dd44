"""Telemetry: OpenTelemetry traces and metrics of each run, behind ``telemetry_enabled``.

The API is tiny and costs next to nothing when telemetry is off (the default): :func:`span` returns
one shared do-nothing context manager and the ``record_*`` helpers return at once. Nothing of
OpenTelemetry is imported until :func:`configure` sees ``telemetry_enabled: true``; the SDK-backed
part lives in :mod:`cortex_lsp.telemetry.otel`.

Every span of a run carries ``cortex.run_id``, ``cortex.session_id``, ``cortex.command`` (and
``cortex.route`` once chosen); the user's text and file contents go on spans only through ``content=``,
which is dropped unless ``telemetry_include_content`` is on.
"""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from cortex_lsp.config import Settings

Attr = str | bool | int | float


class SpanHandle(Protocol):
    """What a ``with span(...) as s`` block may do with its span."""

    def set(self, attrs: Mapping[str, Attr | None]) -> None: ...

    def content(self, attrs: Mapping[str, str]) -> None: ...

    def error(self, description: str) -> None: ...


class Backend(Protocol):
    """The OpenTelemetry side (telemetry/otel.py), present only while telemetry is on."""

    include_content: bool
    endpoint: str

    def span(self, name: str, attrs: Mapping[str, Attr], current: bool = True
             ) -> AbstractContextManager[SpanHandle]: ...

    def record(self, metric: str, value: float, attrs: Mapping[str, Attr]) -> None: ...

    def trace_ids(self) -> tuple[str, str] | None: ...

    def flush(self) -> None: ...

    def shutdown(self) -> None: ...


class _NoSpan:
    """The span of telemetry off: every method does nothing."""

    __slots__ = ()

    def __enter__(self) -> _NoSpan:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def set(self, attrs: Mapping[str, Attr | None]) -> None:
        return None

    def content(self, attrs: Mapping[str, str]) -> None:
        return None

    def error(self, description: str) -> None:
        return None


NO_SPAN = _NoSpan()


@dataclass
class RunInfo:
    """The attributes every span of one run carries, and what the run's metrics count."""

    run_id: str
    session_id: str
    command: str
    route: str = ""
    steps: int = 0
    attrs: dict[str, Attr] = field(default_factory=dict)

    def span_attrs(self) -> dict[str, Attr]:
        out: dict[str, Attr] = {"cortex.run_id": self.run_id, "cortex.session_id": self.session_id,
                                "cortex.command": self.command}
        if self.route:
            out["cortex.route"] = self.route
        return out


@dataclass
class _Holder:
    backend: Backend | None = None
    key: tuple[Any, ...] = ()
    #: set when the backend being built (off the event loop) is ready, or failed
    building: threading.Event | None = None


_holder = _Holder()
_run: contextvars.ContextVar[RunInfo | None] = contextvars.ContextVar("cortex_telemetry_run", default=None)

#: the most a run waits for telemetry that is still starting (importing the SDK takes about a second)
READY_SECONDS = 15.0


def configure(settings: Settings) -> str | None:
    """Switch telemetry on, off or to another endpoint to match ``settings``; the message when it can't.

    Off costs nothing and imports nothing. On imports the OpenTelemetry SDK (the ``telemetry`` extra) in a
    thread of its own (about a second: never on the event loop); runs wait for it (:func:`ready`)."""
    key = (settings.telemetry_enabled, settings.otel_endpoint, settings.telemetry_include_content)
    if key == _holder.key:
        return None
    old, _holder.backend, _holder.key, _holder.building = _holder.backend, None, key, None
    if old is not None:  # its last export may wait on the network: not on the caller's thread
        threading.Thread(target=old.shutdown, name="cortex-telemetry-stop", daemon=True).start()
    if not settings.telemetry_enabled:
        return None
    missing = next((name for name in ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http")
                    if not _installed(name)), None)
    if missing is not None:
        return (f"telemetry_enabled is on but OpenTelemetry is not installed ({missing}): "
                "pip install 'cortex-lsp[telemetry]'.")
    done = _holder.building = threading.Event()
    threading.Thread(target=_build, args=(settings.otel_endpoint, settings.telemetry_include_content, key, done),
                     name="cortex-telemetry-start", daemon=True).start()
    return None


def _installed(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False


def _build(endpoint: str, include_content: bool, key: tuple[Any, ...], done: threading.Event) -> None:
    try:
        from cortex_lsp.telemetry.otel import OtelBackend

        backend = OtelBackend(endpoint, include_content=include_content)
    except Exception:
        logging.getLogger("cortex.telemetry").exception("telemetry could not start")
        done.set()
        return
    if _holder.key == key and _holder.building is done:
        _holder.backend = backend
    else:  # the settings changed while it started
        backend.shutdown()
    done.set()


def wait_ready(timeout: float = READY_SECONDS) -> bool:
    """Block until telemetry that is starting is ready (True when it is on)."""
    building = _holder.building
    if building is not None and not building.is_set():
        building.wait(timeout)
    return _holder.backend is not None


async def ready() -> None:
    """Before a run: wait (off the loop) for telemetry that is still starting; at once when off or ready."""
    building = _holder.building
    if building is not None and not building.is_set():
        import asyncio

        await asyncio.to_thread(building.wait, READY_SECONDS)


def enabled() -> bool:
    return _holder.backend is not None


def endpoint() -> str | None:
    return _holder.backend.endpoint if _holder.backend is not None else None


def span(name: str, attrs: Mapping[str, Attr | None] | None = None, *, content: Mapping[str, str] | None = None,
         current: bool = True) -> AbstractContextManager[SpanHandle]:
    """A child span of the current one (``None`` attributes are left out); nothing when telemetry is off.

    ``current=False``: the span is not made current (no children; safe inside an async generator)."""
    backend = _holder.backend
    if backend is None:
        return NO_SPAN
    return backend.span(name, _attributes(backend, content, attrs or {}), current)


def _attributes(backend: Backend, content: Mapping[str, str] | None, attrs: Mapping[str, Attr | None]
                ) -> dict[str, Attr]:
    run = _run.get()
    out: dict[str, Attr] = run.span_attrs() if run is not None else {}
    out.update((k, v) for k, v in attrs.items() if v is not None)
    if content and backend.include_content:
        out.update(content)
    return out


@contextmanager
def run_span(*, command: str, run_id: str, session_id: str,
             content: Mapping[str, str] | None = None) -> Iterator[RunInfo]:
    """The root span of one run; the spans and log lines inside it carry its ids."""
    info = RunInfo(run_id=run_id, session_id=session_id, command=command)
    token = _run.set(info)
    try:
        backend = _holder.backend
        if backend is None:
            yield info
            return
        with backend.span("cortex.run", _attributes(backend, content, {})) as handle:
            try:
                yield info
            finally:
                handle.set({**info.attrs, "cortex.route": info.route or None, "cortex.run.steps": info.steps})
    finally:
        _run.reset(token)


def current_run() -> RunInfo | None:
    return _run.get()


def set_route(route: str) -> None:
    """The run's route (direct, tools, …): on the run span and every span after it."""
    run = _run.get()
    if run is not None:
        run.route = route


def note_run(attrs: Mapping[str, Attr]) -> None:
    """Attributes for the run's root span (set when the run ends)."""
    run = _run.get()
    if run is not None:
        run.attrs.update(attrs)


def count_step() -> None:
    run = _run.get()
    if run is not None:
        run.steps += 1


def trace_ids() -> tuple[str, str] | None:
    """(trace id, span id) of the current span, for log lines; None when off or outside a span."""
    backend = _holder.backend
    return backend.trace_ids() if backend is not None else None


# -- metrics ---------------------------------------------------------------------------------------
def _record(metric: str, value: float, **attrs: Attr) -> None:
    backend = _holder.backend
    if backend is not None:
        backend.record(metric, value, attrs)


def record_model_call(*, model: str, latency_s: float, ttft_s: float | None, output_tokens: int,
                      outcome: str) -> None:
    if _holder.backend is None:
        return
    _record("model.latency", latency_s, model=model, outcome=outcome)
    if ttft_s is not None:
        _record("model.ttft", ttft_s, model=model)
        generating = latency_s - ttft_s
        if output_tokens > 1 and generating > 0:
            _record("model.tokens_per_second", (output_tokens - 1) / generating, model=model)
    _record("model.tokens", output_tokens, model=model)


def record_tool_call(tool: str, outcome: str) -> None:
    """``outcome``: ok, failed, blocked or repeated."""
    _record("tool.calls", 1, tool=tool, outcome=outcome)


def record_run(stop_reason: str, steps: int, command: str) -> None:
    """A finished run: ``outcome`` answered, refused, cancelled, budget (step or time), model_unavailable or
    error, with the exact ``stop_reason``; and its agent steps."""
    if _holder.backend is None:
        return
    outcome = "budget" if stop_reason.endswith("_budget") else stop_reason
    _record("runs", 1, outcome=outcome, stop_reason=stop_reason, command=command)
    _record("run.steps", steps, outcome=outcome)


def record_review(outcome: str) -> None:
    """``outcome``: accepted, rejected or unknown (an edit the editor reviewed or applied)."""
    _record("reviews", 1, outcome=outcome)


def flush() -> None:
    """Export what is buffered now (blocking: call it off the event loop)."""
    backend = _holder.backend
    if backend is not None:
        backend.flush()


def shutdown() -> None:
    """Export what is left and stop (blocking: call it off the event loop)."""
    wait_ready()
    old, _holder.backend, _holder.key, _holder.building = _holder.backend, None, (), None
    if old is not None:
        old.shutdown()


def traced_model(client: Any) -> Any:
    """``client`` with a span and metrics per chat call while telemetry is on (itself when off)."""
    if _holder.backend is None:
        return client
    from cortex_lsp.telemetry.wrappers import TracedModel

    return TracedModel(client)


def traced_memory(memory: Any) -> Any:
    """``memory`` with a span per read and write while telemetry is on (itself when off)."""
    if _holder.backend is None:
        return memory
    from cortex_lsp.telemetry.wrappers import TracedMemory

    return TracedMemory(memory)
