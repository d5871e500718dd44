"""VS Code's first start without a server, in code-server through Chromium
(scripts/editors/vscode_first_start_e2e.cjs): the notification gives the install step that works for
this repository (not `pip install cortex-lsp`: no package index has it), the status bar shows an error
state, and Reset Memory's default button (Enter) keeps the memory.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.editors.editor_scenario import make_workspace
from tests.editors.test_vscode_editor import (
    CHROMIUM,
    CODE_SERVER,
    PLAYWRIGHT,
    REPO,
    VSIX,
    _ensure_fresh_vsix,
    _free_port,
    _keep_screenshots,
    _missing,
)

pytestmark = [pytest.mark.editor, pytest.mark.slow]

DRIVER = REPO / "scripts" / "editors" / "vscode_first_start_e2e.cjs"


def test_vscode_first_start_without_server(tmp_path: Path) -> None:
    _ensure_fresh_vsix()
    why = _missing()
    if why:
        pytest.skip(why)
    root = make_workspace(tmp_path)
    work = tmp_path / "vscode"
    work.mkdir()
    scenario = {
        "codeServer": str(CODE_SERVER), "playwrightCore": str(PLAYWRIGHT), "chromium": str(CHROMIUM),
        "vsix": str(VSIX), "serverPath": "", "workspace": str(root), "work": str(work),
        "port": _free_port(), "out": str(work / "out.json"), "timeoutMs": 240_000,
    }
    (work / "scenario.json").write_text(json.dumps(scenario), encoding="utf-8")
    home = work / "home"
    home.mkdir()
    # a PATH without any cortex-lsp (node and the system tools only)
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                           if p and not (Path(p) / "cortex-lsp").exists())
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("CORTEX_")}, "PATH": path,
           "CORTEX_VSCODE_SCENARIO": str(work / "scenario.json"), "HOME": str(home),
           "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local/share")}
    proc = subprocess.run(["node", str(DRIVER)], env=env, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL, check=False)
    out = json.loads((work / "out.json").read_text(encoding="utf-8")) if (work / "out.json").exists() else {}
    _keep_screenshots(out.get("screenshots") or [])
    assert out, f"the driver wrote nothing (exit {proc.returncode}): {proc.stderr[-3000:]}"
    assert out["failures"] == [], f"{out['failures']}\ncode-server: {out.get('code_server_log', '')[-1500:]}"
    toast = out["toast"]
    assert "make run" in toast and "cortex.serverPath" in toast, toast
    assert "pip install" not in toast and "`" not in toast, toast
    status = out["status"]
    assert "no server" in status["text"], status
    assert status["background"] not in ("", "rgba(0, 0, 0, 0)", status["bar_background"]), status
    # the dialog's default (focused) button keeps the memory, and Enter took it: nothing was sent
    assert out["dialog_focused"] == "Keep Memory", (out["dialog_focused"], out["dialog_buttons"])
    assert "Not sent" not in out["after_enter"], out["after_enter"][-1500:]
