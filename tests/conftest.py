"""Shared fixtures: a scripted model server per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.scripted_model import ScriptedModelServer


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    server = ScriptedModelServer().start()
    try:
        yield server
    finally:
        server.stop()
