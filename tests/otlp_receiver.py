"""A real OTLP/HTTP receiver for tests: a small HTTP server on 127.0.0.1 that decodes what an
OpenTelemetry exporter POSTs to ``/v1/traces`` and ``/v1/metrics`` (protobuf, as
``opentelemetry-proto`` defines it) and keeps the spans and metric points.

    receiver = OtlpReceiver().start()
    ... point the server under test at receiver.url (otel_endpoint) ...
    spans = receiver.spans()          # every span received, attributes as a plain dict
"""

from __future__ import annotations

import gzip
import threading
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None


@dataclass(frozen=True)
class Span:
    name: str
    trace_id: str
    span_id: str
    parent_id: str
    attributes: dict[str, Any]
    start_ns: int
    end_ns: int
    status_code: int


@dataclass(frozen=True)
class Point:
    """One data point of a metric: a counter's value or a histogram's count and sum."""

    metric: str
    attributes: dict[str, Any]
    value: float
    count: int = 0


@dataclass
class OtlpReceiver:
    bodies: list[tuple[str, bytes]] = field(default_factory=list)
    _spans: list[Span] = field(default_factory=list)
    _exports: list[list[Point]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> OtlpReceiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                encoding = (self.headers.get("Content-Encoding") or "").lower()
                if encoding == "gzip":
                    body = gzip.decompress(body)
                elif encoding == "deflate":
                    body = zlib.decompress(body)
                if self.path == "/v1/traces":
                    receiver._traces(body)
                    answer = ExportTraceServiceResponse().SerializeToString()
                elif self.path == "/v1/metrics":
                    receiver._metrics(body)
                    answer = ExportMetricsServiceResponse().SerializeToString()
                else:
                    self.send_response(404)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def _traces(self, body: bytes) -> None:
        request = ExportTraceServiceRequest.FromString(body)
        spans = [
            Span(name=s.name, trace_id=s.trace_id.hex(), span_id=s.span_id.hex(), parent_id=s.parent_span_id.hex(),
                 attributes={a.key: _value(a.value) for a in s.attributes}, start_ns=s.start_time_unix_nano,
                 end_ns=s.end_time_unix_nano, status_code=s.status.code)
            for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans
        ]
        with self._lock:
            self.bodies.append(("traces", body))
            self._spans.extend(spans)

    def _metrics(self, body: bytes) -> None:
        request = ExportMetricsServiceRequest.FromString(body)
        points: list[Point] = []
        for rm in request.resource_metrics:
            for sm in rm.scope_metrics:
                for metric in sm.metrics:
                    kind = metric.WhichOneof("data")
                    for p in getattr(metric, kind).data_points:
                        attrs = {a.key: _value(a.value) for a in p.attributes}
                        if kind == "histogram":
                            points.append(Point(metric.name, attrs, p.sum, p.count))
                        else:
                            points.append(Point(metric.name, attrs, p.as_double or p.as_int))
        with self._lock:
            self.bodies.append(("metrics", body))
            self._exports.append(points)

    def spans(self) -> list[Span]:
        with self._lock:
            return list(self._spans)

    def points(self, metric: str) -> list[Point]:
        """The metric's points from the last export that had it (cumulative: the latest totals)."""
        with self._lock:
            for points in reversed(self._exports):
                mine = [p for p in points if p.metric == metric]
                if mine:
                    return mine
        return []
