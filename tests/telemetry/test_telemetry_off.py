"""Telemetry off (the default) imports nothing of OpenTelemetry and costs nothing: every code path that
traces (the run, the kernel, the executor, the sandbox, the model and memory wrappers) is imported and
exercised in a fresh interpreter, and ``sys.modules`` is checked afterwards."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = r"""
import asyncio, json, sys
import cortex_lsp.server.app, cortex_lsp.server.runs, cortex_lsp.server.commands, cortex_lsp.server.logs
import cortex_lsp.agent.kernel, cortex_lsp.agent.executor, cortex_lsp.tools.sandbox.pool, cortex_lsp.doctor
from cortex_lsp import telemetry
from cortex_lsp.config import Settings
from cortex_lsp.server.logs import observe

assert observe(Settings()) == []
model, memory = object(), object()
assert telemetry.traced_model(model) is model and telemetry.traced_memory(memory) is memory
with telemetry.run_span(command="cortex.ask", run_id="r1", session_id="s1") as run:
    with telemetry.span("agent.step", {"a": 1}, content={"secret": "x"}) as span:
        span.set({"b": 2}); span.content({"c": "d"}); span.error("e")
    telemetry.count_step(); telemetry.set_route("tools")
    telemetry.record_model_call(model="m", latency_s=1.0, ttft_s=0.1, output_tokens=5, outcome="ok")
    telemetry.record_tool_call("read_file", "ok"); telemetry.record_run("answered", 1, "cortex.ask")
    telemetry.record_review("accepted"); telemetry.flush()
assert run.steps == 1 and not telemetry.enabled()
from cortex_lsp.doctor import _telemetry_check
check = asyncio.run(_telemetry_check(Settings()))
print(json.dumps({"loaded": sorted(m for m in sys.modules if m.startswith("opentelemetry")
                                   or m == "cortex_lsp.telemetry.otel"), "detail": check.detail}))
"""


def test_nothing_of_opentelemetry_is_imported_when_off() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={"PATH": "/usr/bin:/bin", "HOME": str(ROOT)})
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["loaded"] == []
    assert report["detail"].startswith("off")


def test_turning_it_on_loads_the_sdk_and_off_again_stops_it() -> None:
    probe = r"""
import sys
from cortex_lsp import telemetry
from cortex_lsp.config import Settings
assert telemetry.configure(Settings(telemetry_enabled=True, otel_endpoint="http://127.0.0.1:9")) is None
assert telemetry.wait_ready() and telemetry.enabled() and "opentelemetry.sdk.trace" in sys.modules
with telemetry.run_span(command="cortex.ask", run_id="r1", session_id="s1"):
    with telemetry.span("agent.step"):
        assert telemetry.trace_ids() is not None
telemetry.configure(Settings())
assert not telemetry.enabled() and telemetry.trace_ids() is None
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={"PATH": "/usr/bin:/bin", "HOME": str(ROOT)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("ok")
