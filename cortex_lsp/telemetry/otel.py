"""The OpenTelemetry SDK behind :mod:`cortex_lsp.telemetry`: spans and metrics exported over OTLP
(HTTP/protobuf) to ``otel_endpoint``. Imported only when telemetry is on.

The providers are our own, never the process-global ones: libraries that instrument themselves
(chromadb does) keep their own choice, and their spans never land in a run's trace by accident.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Status, StatusCode

from cortex_lsp import __version__
from cortex_lsp.telemetry import Attr

log = logging.getLogger("cortex.telemetry")

#: seconds an export may take before it is given up (a missing collector must not hold a run or exit)
EXPORT_TIMEOUT = 3.0
METRIC_INTERVAL_MS = 15_000

# name → (kind, unit, description)
_METRICS: dict[str, tuple[str, str, str]] = {
    "model.latency": ("histogram", "s", "Duration of one model call, from request to the last token"),
    "model.ttft": ("histogram", "s", "Time to the first streamed token of a model call"),
    "model.tokens_per_second": ("histogram", "{token}/s", "Streamed output tokens per second after the first"),
    "model.tokens": ("counter", "{token}", "Output tokens streamed by model calls"),
    "tool.calls": ("counter", "{call}", "Tool calls by tool and outcome (ok, failed, blocked, repeated)"),
    "runs": ("counter", "{run}", "Agent runs by outcome (answered, refused, cancelled, step_budget, …)"),
    "run.steps": ("histogram", "{step}", "Agent steps per run"),
    "reviews": ("counter", "{edit}", "Edits by review outcome (accepted, rejected, unknown)"),
}


class _Handle:
    __slots__ = ("_include", "_span")

    def __init__(self, span: trace.Span, include_content: bool) -> None:
        self._span = span
        self._include = include_content

    def set(self, attrs: Mapping[str, Attr | None]) -> None:
        self._span.set_attributes({k: v for k, v in attrs.items() if v is not None})

    def content(self, attrs: Mapping[str, str]) -> None:
        if self._include:
            self._span.set_attributes(dict(attrs))

    def error(self, description: str) -> None:
        self._span.set_status(Status(StatusCode.ERROR, description))


class OtelBackend:
    """One tracer provider and one meter provider exporting to ``endpoint`` (e.g. http://127.0.0.1:4318)."""

    def __init__(self, endpoint: str, *, include_content: bool = False) -> None:
        # An unreachable collector makes the exporters log a failure per batch; on stderr an editor shows
        # each as an error. The doctor says whether the endpoint answers instead.
        logging.getLogger("opentelemetry").setLevel(logging.CRITICAL)
        self.endpoint = endpoint.rstrip("/")
        self.include_content = include_content
        resource = Resource.create({"service.name": "cortex-lsp", "service.version": __version__})
        self._tracer_provider = TracerProvider(resource=resource)
        self._tracer_provider.add_span_processor(BatchSpanProcessor(
            OTLPSpanExporter(endpoint=f"{self.endpoint}/v1/traces", timeout=EXPORT_TIMEOUT),
            schedule_delay_millis=1000, export_timeout_millis=int(EXPORT_TIMEOUT * 1000)))
        reader = PeriodicExportingMetricReader(
            OTLPMetricExporter(endpoint=f"{self.endpoint}/v1/metrics", timeout=EXPORT_TIMEOUT),
            export_interval_millis=METRIC_INTERVAL_MS, export_timeout_millis=EXPORT_TIMEOUT * 1000)
        self._meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
        self._tracer = self._tracer_provider.get_tracer("cortex_lsp", __version__)
        meter = self._meter_provider.get_meter("cortex_lsp", __version__)
        self._instruments: dict[str, Any] = {}
        for name, (kind, unit, description) in _METRICS.items():
            full = f"cortex.{name}"
            if kind == "counter":
                self._instruments[name] = meter.create_counter(full, unit=unit, description=description)
            else:
                self._instruments[name] = meter.create_histogram(full, unit=unit, description=description)

    def span(self, name: str, attrs: Mapping[str, Attr], current: bool = True) -> AbstractContextManager[_Handle]:
        return self._span(name, attrs) if current else self._detached(name, attrs)

    @contextmanager
    def _span(self, name: str, attrs: Mapping[str, Attr]) -> Iterator[_Handle]:
        with self._tracer.start_as_current_span(name, attributes=dict(attrs)) as span:
            yield _Handle(span, self.include_content)

    @contextmanager
    def _detached(self, name: str, attrs: Mapping[str, Attr]) -> Iterator[_Handle]:
        """A child of the current span that never becomes current itself: safe across the yields of an
        async generator, which may be finished in another context."""
        span = self._tracer.start_span(name, attributes=dict(attrs))
        try:
            yield _Handle(span, self.include_content)
        except (GeneratorExit, asyncio.CancelledError):
            span.set_attribute("cortex.cancelled", True)  # the reader stopped early: not an error
            raise
        except BaseException as exc:
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR, exc.__class__.__name__))
            raise
        finally:
            span.end()

    def record(self, metric: str, value: float, attrs: Mapping[str, Attr]) -> None:
        instrument = self._instruments[metric]
        if hasattr(instrument, "add"):
            instrument.add(value, dict(attrs))
        else:
            instrument.record(value, dict(attrs))

    def trace_ids(self) -> tuple[str, str] | None:
        ctx = trace.get_current_span().get_span_context()
        if not ctx.is_valid:
            return None
        return format(ctx.trace_id, "032x"), format(ctx.span_id, "016x")

    def flush(self) -> None:
        try:
            self._tracer_provider.force_flush(int(EXPORT_TIMEOUT * 1000))
            self._meter_provider.force_flush(int(EXPORT_TIMEOUT * 1000))
        except Exception as exc:  # an unreachable collector costs the export, never the caller
            log.debug("telemetry flush failed: %s", exc)

    def shutdown(self) -> None:
        try:
            self._tracer_provider.shutdown()
            self._meter_provider.shutdown(timeout_millis=EXPORT_TIMEOUT * 1000)
        except Exception as exc:
            log.debug("telemetry shutdown failed: %s", exc)
