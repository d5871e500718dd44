"""VS Code, for real: code-server 4.100.3 (VS Code 1.100) with the built .vsix, driven by headless
Chromium (Debian's) through playwright-core. The lightbulb's "Cortex: Explain this" and the palette's
"Cortex: Ask…" run against the real server and a scripted model; the agent's write arrives as a
workspace edit, the document shows it unsaved, Ctrl+S saves it, and the file is checked on disk.

Prerequisites (skipped with the reason when missing): scripts/editors/install-code-server.sh (code-server,
playwright-core, chromium) and the packaged extension (cd vscode-extension && npm ci && npm run package).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cortex_lsp.agent.prompts import ROLE_DIRECT
from tests.editors.editor_scenario import (
    ASK_ANSWER,
    ASK_MESSAGE,
    BACK_ANSWER,
    BACK_MESSAGE,
    CODE_LEAD,
    CODE_MESSAGE,
    EXPLAIN_ANSWER,
    NOTE_TEXT,
    REJECT_FILE,
    REJECT_MESSAGE,
    STREAM_ANSWER,
    STREAM_MESSAGE,
    WRITE_ANSWER,
    WRITE_FILE,
    WRITE_MESSAGE,
    make_workspace,
    role,
    script_model,
)
from tests.lsp_harness import server_env
from tests.scripted_model import Reply, ScriptedModelServer

pytestmark = [pytest.mark.editor, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
TOOLS = Path(os.environ.get("CORTEX_EDITORS_DIR", "/opt/cortex-editors"))
CODE_SERVER = TOOLS / "code-server" / "bin" / "code-server"
PLAYWRIGHT = TOOLS / "driver" / "node_modules" / "playwright-core"
CHROMIUM = Path(os.environ.get("CORTEX_CHROMIUM", "/usr/bin/chromium"))
VSIX = REPO / "vscode-extension" / "dist" / "cortex-lsp.vsix"
DRIVER = REPO / "scripts" / "editors" / "vscode_e2e.cjs"
REVIEW_SECONDS = 4  # the tool time-out in this run; the scripted user reviews for longer
ARTIFACTS = Path(os.environ.get("CORTEX_EDITOR_ARTIFACTS", REPO / "tests" / "editors" / "artifacts"))


def _missing() -> str | None:
    install = "run scripts/editors/install-code-server.sh"
    if shutil.which("node") is None:
        return "node is not installed"
    if not CODE_SERVER.exists():
        return f"code-server is not installed at {CODE_SERVER} ({install})"
    if not PLAYWRIGHT.exists():
        return f"playwright-core is not installed at {PLAYWRIGHT} ({install})"
    if not CHROMIUM.exists():
        return f"Chromium is not installed at {CHROMIUM} (apt-get install -y chromium)"
    if not VSIX.exists():
        return f"the extension is not packaged: {VSIX} (cd vscode-extension && npm ci && npm run package)"
    return None


def _ensure_fresh_vsix() -> None:
    """Repackage when a source is newer than the .vsix (and the build tools are installed)."""
    ext = REPO / "vscode-extension"
    sources = [ext / "package.json", *(ext / "src").rglob("*.ts")]
    if VSIX.exists() and VSIX.stat().st_mtime >= max(p.stat().st_mtime for p in sources):
        return
    if not (ext / "node_modules").exists():
        return  # _missing() explains how to build it
    subprocess.run(["npm", "run", "package"], cwd=ext, check=True, capture_output=True, timeout=300)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _server_path() -> str:
    exe = Path(sys.executable).parent / "cortex-lsp"
    if not exe.exists():
        pytest.skip(f"cortex-lsp is not installed next to {sys.executable}")
    return str(exe)


def _run_driver(env: dict[str, str], work: Path, model: ScriptedModelServer) -> subprocess.CompletedProcess[str]:
    """Run the driver; when it asks (a `stop-model` file), stop the model server, as if it went down."""
    logs = work / "driver.log"
    with logs.open("w") as log:
        proc = subprocess.Popen(["node", str(DRIVER)], env=env, stdout=log, stderr=subprocess.STDOUT, text=True,
                                stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 480
        stopped = False
        while proc.poll() is None and time.monotonic() < deadline:
            if not stopped and (work / "stop-model").exists():
                model.stop()
                (work / "model-stopped").write_text("")
                stopped = True
            time.sleep(0.2)
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    output = logs.read_text(encoding="utf-8", errors="replace")
    return subprocess.CompletedProcess(proc.args, proc.returncode, output, output)


def _keep_screenshots(shots: list[str]) -> None:
    """Copy the driver's screenshots to the artifacts folder (gitignored), to look at as a user would."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for shot in shots:
        if Path(shot).exists():
            shutil.copy(shot, ARTIFACTS / f"vscode-{Path(shot).name}")


@pytest.fixture
def spare() -> Iterator[ScriptedModelServer]:
    """A second model server: after the first goes down, the user points cortex.ollamaBaseUrl here."""
    server = ScriptedModelServer().start()
    try:
        yield server
    finally:
        server.stop()


def test_vscode_lightbulb_palette_and_write(model: ScriptedModelServer, spare: ScriptedModelServer,
                                            tmp_path: Path) -> None:
    _ensure_fresh_vsix()
    why = _missing()
    if why:
        pytest.skip(why)
    root = make_workspace(tmp_path)
    script_model(model)
    # the streaming run lasts long enough (16 s) for its progress notice to be cancelled on a loaded machine
    model.on(Reply(content=STREAM_ANSWER, token_delay=0.2), when=role(ROLE_DIRECT, STREAM_MESSAGE), times=None,
             first=True)
    script_model(spare)
    work = tmp_path / "vscode"
    work.mkdir()
    scenario = {
        "codeServer": str(CODE_SERVER),
        "playwrightCore": str(PLAYWRIGHT),
        "chromium": str(CHROMIUM),
        "vsix": str(VSIX),
        "serverPath": _server_path(),
        "workspace": str(root),
        "work": str(work),
        "port": _free_port(),
        "out": str(work / "out.json"),
        "explainAnswer": EXPLAIN_ANSWER,
        "askMessage": WRITE_MESSAGE,
        "writeFile": WRITE_FILE,
        "noteText": NOTE_TEXT,
        "writeAnswer": WRITE_ANSWER,
        "streamMessage": STREAM_MESSAGE,
        "reviewWaitMs": REVIEW_SECONDS * 1000 + 2000,
        "rejectMessage": REJECT_MESSAGE,
        "rejectFile": REJECT_FILE,
        "modelDownMessage": "Are you there?",
        "spareModelUrl": spare.url,
        "backMessage": BACK_MESSAGE,
        "backAnswer": BACK_ANSWER,
        "chatMessage": ASK_MESSAGE,
        "chatAnswer": ASK_ANSWER,
        "codeMessage": CODE_MESSAGE,
        "codeLead": CODE_LEAD,
        "timeoutMs": 420_000,
    }
    (work / "scenario.json").write_text(json.dumps(scenario), encoding="utf-8")
    home = work / "home"
    home.mkdir()
    server = server_env(model, tmp_path / "data", CORTEX_TOOL_TIMEOUT_SECONDS=str(REVIEW_SECONDS))
    env = {**server, "CORTEX_VSCODE_SCENARIO": str(work / "scenario.json"),
           "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
           "XDG_DATA_HOME": str(home / ".local/share")}
    started = time.monotonic()
    proc = _run_driver(env, work, model)
    elapsed = time.monotonic() - started
    out = json.loads((work / "out.json").read_text(encoding="utf-8")) if (work / "out.json").exists() else {}
    steps = out.get("steps") or {}
    print(f"\n[code-server] driver ran in {elapsed:.1f} s; steps: "
          + ", ".join(f"{k}={v['ms']}ms" for k, v in steps.items()))
    _keep_screenshots(out.get("screenshots") or [])
    assert out, f"the driver wrote nothing (exit {proc.returncode}): {proc.stderr[-3000:]}"
    log = out.get("code_server_log", "")[-1500:]
    shots = out.get("screenshots")
    assert out["failures"] == [], f"{out['failures']}\nscreenshots: {shots}\ncode-server: {log}"
    assert proc.returncode == 0
    # the lightbulb offered the server's code actions on the Python selection
    assert any("Cortex: Explain this" in item for item in out["code_action_menu_items"])
    assert any("Cortex: Run this" in item for item in out["code_action_menu_items"])
    # the chat view: a follow-up typed into its box was answered there; the answer did not split the
    # editor (one editor group); the status bar shows Cortex
    assert ASK_ANSWER in out["chat_view_text"]
    assert out["editor_groups"] == 1
    assert any("Cortex" in item for item in out["status_bar"]), out["status_bar"]
    # the chat view reads well: the python block is highlighted in theme colours, the tool call is one
    # collapsible line (closed, a click opens it to the arguments and result), and calc.py:4 opens the
    # file at line 4
    view = out["chat_code"]
    assert view["python_blocks"] >= 1 and view["keyword_spans"] >= 2 and view["string_or_number_spans"] >= 1, view
    assert view["keyword_colour"] != view["text_colour"], view
    assert view["tool_lines"] == 1 and view["tool_open_before"] is False and view["tool_open_after"] is True, view
    assert "read_file" in view["tool_summary"] and "✔" in view["tool_summary"], view
    assert "Arguments" in view["tool_body"] and "calc.py" in view["tool_body"], view
    assert view["active_tab"] and "calc.py" in view["active_tab"], view
    assert view["cursor"].startswith("Ln 4,"), view
    # in a dark theme the keywords take the dark theme's colour, still distinct from the text
    assert view["keyword_colour_dark"] not in ("", view["keyword_colour"], view["text_colour_dark"]), view
    # the agent's write was shown as a diff with Accept/Reject, nothing on disk during the review;
    # accepted after longer than the tool time-out: the file is on disk and saved (no dirty tab)
    accept = out["review_accept"]
    assert accept["diff_editor"] is True and WRITE_FILE in accept["tab"], accept
    assert f"create {WRITE_FILE}" in accept["toast"], accept
    card = accept["card"]
    assert "Waiting for your review" in card and "Accept" in card and "Reject" in card, accept
    assert any("Accept Edit" in a for a in accept["title_actions"]), accept["title_actions"]
    assert accept["on_disk_during_review"] is False
    assert out["disk_after_accept"] == NOTE_TEXT
    assert (root / WRITE_FILE).read_text(encoding="utf-8") == NOTE_TEXT
    assert out["dirty_tabs_after_accept"] == 0
    # a rejected write leaves nothing on disk; the model's words stay, and the ledger names the file
    assert out["review_reject"]["on_disk_during_review"] is False
    assert out["reject_on_disk"] is False and not (root / REJECT_FILE).exists()
    # the chat says what happened, from the edit outcome (not from the model's words); a model claim of
    # the save, if the server shows it at all, comes before the facts
    answer = out["answer_after_reject"]
    assert f"{REJECT_FILE} — not written" in answer, answer
    assert f"Declined: {REJECT_FILE}" in answer, answer  # the run's ledger, after the model's words
    # model down: one error notification naming the setting, with Open Settings and Run Doctor (not
    # repeated for the next ask); the answer view shows an error, never the raw stop reason
    toast = out["model_down_toast"]
    assert "cortex.ollamaBaseUrl" in toast and "Open Settings" in toast and "Run Doctor" in toast, toast
    assert "model_unavailable" not in toast
    assert out["model_down_toasts"] == 1
    # the status bar shows the outage while it lasts (error colours, not the bar's own), and the next
    # answer clears it
    down, back = out["status_down"], out["status_recovered"]
    assert "model down" in down["text"], down
    assert down["background"] not in ("", "rgba(0, 0, 0, 0)", down["bar_background"]), down
    assert "model down" not in back["text"] and back["background"] != down["background"], back
    assert "Error:" in out["model_down_view"] and "model_unavailable" not in out["model_down_view"]
    # the model URL changed in the Settings editor applies to the next ask, without a restart: the
    # second server answers, and the extension started the server once
    assert BACK_ANSWER in out["after_url_change"]
    assert any(BACK_MESSAGE in json.dumps(r.get("messages", [])) for r in spare.chat_requests)
    assert out["server_starts"] == 1, out["server_starts"]
    # the long run showed native progress with Cancel, and Cancel stopped it
    assert "Cortex" in out["progress_toast_text"]
    # no Cortex progress notification is left a few seconds after an answer showed
    assert out["progress_toasts_after"] == {"explain": [], "chat": [], "code": []}, out["progress_toasts_after"]
    # the explain request carried the selection as data, from the editor
    explain = [r for r in model.chat_requests if "return a + b" in json.dumps(r.get("messages", []))]
    assert explain, "the selected code never reached the model"
