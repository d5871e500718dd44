"""The doctor's fixes are actions, never circular: each failed check names a command to run or a
setting by its names (config key, VS Code `cortex.*`, CORTEX_*), never "fix it" or "run doctor"."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cortex_lsp.config import Settings
from cortex_lsp.doctor import Check, not_circular, run_checks, setting
from cortex_lsp.models.local_server import EMBEDDED_ADVICE, INSTALL_ADVICE
from cortex_lsp.models.openai_client import DEFAULT_UNAVAILABLE_ADVICE

CIRCULAR = re.compile(r"doctor|fix the|fix it|the named settings|reinstall", re.IGNORECASE)
#: a command or a setting name in backticks
ACTION = re.compile(r"`[^`]+`")


def assert_actionable(checks: list[Check]) -> None:
    for check in checks:
        if check.ok or check.name == "sandbox layers":  # an architecture limit: nothing to do
            continue
        assert check.fix, check
        assert not CIRCULAR.search(check.fix), check.fix
        assert ACTION.search(check.fix), check.fix


DOWN = "http://127.0.0.1:9"


@pytest.mark.parametrize(("backend", "named"), [
    ("ollama", "`cortex.ollamaBaseUrl`"),
    ("openai", "`cortex.openaiBaseUrl`"),
])
async def test_model_down_fix_names_the_setting(tmp_path: Path, backend: str, named: str) -> None:
    settings = Settings(model_backend=backend, ollama_base_url=DOWN, openai_base_url=DOWN + "/v1",
                        data_dir=tmp_path / "data")
    checks = await run_checks(settings, [tmp_path])
    server = {c.name: c for c in checks}["model server"]
    assert not server.ok
    assert named in server.fix
    assert DOWN in server.fix, "the fix says where Cortex looks now"
    assert_actionable(checks)


async def test_every_failure_has_an_action(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    settings = Settings(model_backend="ollama", ollama_base_url=DOWN, data_dir=blocker / "data",
                        sandbox_isolation="none")
    checks = await run_checks(settings, [tmp_path / "missing"],
                              settings_messages=["Unknown setting 'bogus' (from editor) was ignored."])
    by_name = {c.name: c for c in checks}
    for name in ("model server", "data folder", "workspace roots", "sandbox isolation", "settings"):
        assert not by_name[name].ok, name
    assert "`cortex.dataDir`" in by_name["data folder"].fix
    assert "`cortex.sandboxIsolation`" in by_name["sandbox isolation"].fix
    assert_actionable(checks)


async def test_no_folder_fix_says_how_to_open_one(tmp_path: Path) -> None:
    checks = await run_checks(Settings(model_backend="ollama", ollama_base_url=DOWN, data_dir=tmp_path), [])
    roots = {c.name: c for c in checks}["workspace roots"]
    assert not roots.ok and "--root" in roots.fix
    assert_actionable(checks)


@pytest.mark.parametrize("advice", [INSTALL_ADVICE, EMBEDDED_ADVICE, DEFAULT_UNAVAILABLE_ADVICE,
                                    "Start Ollama; `cortex-lsp doctor` checks the set-up."])
def test_model_advice_never_points_back_at_the_doctor(advice: str) -> None:
    text = not_circular(advice)
    assert "doctor" not in text
    assert text.startswith(advice[:12])


def test_setting_names_every_place() -> None:
    assert setting("ollama_base_url") == (
        "`ollama_base_url` (VS Code: `cortex.ollamaBaseUrl`; Neovim: `setup{settings={ollama_base_url=…}}`; "
        "environment: `CORTEX_OLLAMA_BASE_URL`)")
