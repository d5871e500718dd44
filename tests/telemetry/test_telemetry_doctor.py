"""The doctor says whether telemetry is on and whether its OTLP endpoint answers (a real receiver on
127.0.0.1, and a port where nothing listens)."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from cortex_lsp.config import Settings
from cortex_lsp.doctor import _telemetry_check
from tests.otlp_receiver import OtlpReceiver


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    server = OtlpReceiver().start()
    try:
        yield server
    finally:
        server.stop()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_off_says_off() -> None:
    check = await _telemetry_check(Settings())
    assert check.ok and check.detail.startswith("off") and "telemetry_enabled" in check.detail


async def test_on_with_a_collector_that_answers(receiver: OtlpReceiver) -> None:
    check = await _telemetry_check(Settings(telemetry_enabled=True, otel_endpoint=receiver.url))
    assert check.ok, check
    assert receiver.url in check.detail and "answers" in check.detail
    assert receiver.spans() == []  # the probe is an empty export: nothing recorded


async def test_on_with_nothing_listening_is_a_warning_with_a_fix() -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    check = await _telemetry_check(Settings(telemetry_enabled=True, otel_endpoint=url))
    assert not check.ok and check.warning
    assert url in check.detail and "nothing answers" in check.detail
    assert "`docker run" in check.fix and "`cortex.otelEndpoint`" in check.fix
