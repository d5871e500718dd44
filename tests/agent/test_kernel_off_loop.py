"""The answer's honesty check (every sentence of it read for write claims: seconds for a long answer)
runs in a worker thread, never on the event loop: checked by thread identity, and on its result."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from cortex_lsp.agent import kernel
from tests.agent.conftest import AgentHarness
from tests.scripted_model import Reply


async def test_the_honesty_check_runs_off_the_loop_and_still_corrects(agent: AgentHarness,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    threads: list[int] = []
    real = kernel.honest_for_record

    def spy(*args: Any, **kwargs: Any) -> str:
        threads.append(threading.get_ident())
        return real(*args, **kwargs)

    monkeypatch.setattr(kernel, "honest_for_record", spy)
    long_text = " ".join(f"word{i}" for i in range(2000))
    agent.model.on(Reply(content=f"{long_text}. I saved the summary to summary.md."), contains="long text",
                   times=None)
    result = await agent.run("Write a long text about anything")
    assert threads and threading.get_ident() not in threads
    assert result.stop_reason == "answered"
    assert "I saved the summary to summary.md" not in result.answer  # the false claim was still caught
    assert not (agent.root / "summary.md").exists()
