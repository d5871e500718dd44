"""``cortex.doctor`` through the real server: with the model down and a bad setting, every failed
check's fix is an action (a command, a setting by its names), never circular."""

from __future__ import annotations

from pathlib import Path

from cortex_lsp.doctor import Check
from tests.lsp_harness import execute, lsp_session
from tests.unit.test_doctor import assert_actionable


async def test_doctor_fixes_are_actions_with_the_model_down(tmp_path: Path) -> None:
    async with lsp_session(None, tmp_path, init_options={"cortex": {"bogus": 1}}) as client:
        result = await execute(client, "cortex.doctor")
    checks = [Check(**c) for c in result["checks"]]
    by_name = {c.name: c for c in checks}
    assert result["ok"] is False
    assert not by_name["model server"].ok
    assert "`cortex.ollamaBaseUrl`" in by_name["model server"].fix
    assert "http://127.0.0.1:9" in by_name["model server"].fix
    assert not by_name["settings"].ok and "'bogus'" in by_name["settings"].detail
    assert_actionable(checks)
