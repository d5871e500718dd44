"""'Cortex: Run this' on the sample's bottom block works as the sample says: through the real server and
sandbox, the block runs with the definitions it uses from workspace/stats.py (no NameError)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.lsp_harness import execute, lsp_session

SAMPLE = Path(__file__).resolve().parents[2] / "workspace" / "stats.py"


async def test_run_this_on_the_samples_bottom_block(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    src = ws / "stats.py"
    shutil.copy(SAMPLE, src)
    lines = src.read_text(encoding="utf-8").split("\n")
    first = next(i for i, line in enumerate(lines) if line.startswith("if __name__"))
    last = max(i for i, line in enumerate(lines) if line.strip())
    async with lsp_session(None, tmp_path) as client:
        actions_range = {"start": {"line": first, "character": 0}, "end": {"line": last, "character": len(lines[last])}}
        ran = await execute(client, "cortex.run", {"uri": src.as_uri(), "range": actions_range})
    assert ran["ran"] is True, ran
    assert ran["error"] in (None, ""), ran
    assert "'n': 8" in ran["stdout"] and "'median': 3.5" in ran["stdout"], ran
