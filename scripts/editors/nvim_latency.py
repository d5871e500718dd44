"""Code-action latency measured from inside real Neovim (0.7 and 0.11), against the real server.

    .venv/bin/python scripts/editors/nvim_latency.py [--samples 300]

Runs ``tests/editors/nvim_driver.lua`` with the scripted model and prints, per Neovim version, the
median / p99 / max of sequential ``textDocument/codeAction`` round trips while idle and while an agent
run is streaming. A benchmark, not a test: nothing is asserted about the numbers.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.editors.editor_scenario import (
    ASK_MESSAGE,
    STREAM_MESSAGE,
    WRITE_FILE,
    WRITE_MESSAGE,
    make_workspace,
    script_model,
)
from tests.editors.nvim_support import find_nvims, run_driver, server_command
from tests.lsp_harness import server_env
from tests.scripted_model import ScriptedModelServer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=300, help="idle samples (streaming: a tenth, ≥ 20)")
    args = parser.parse_args()
    rows = []
    for label, nvim in find_nvims().items():
        if nvim.path is None:
            print(f"Neovim {label}: skipped ({nvim.why_missing})")
            continue
        with tempfile.TemporaryDirectory() as tmp, ScriptedModelServer() as model:
            script_model(model)
            tmp_path = Path(tmp)
            root = make_workspace(tmp_path)
            scenario = {
                "root": str(root), "file": str(root / "calc.py"), "cmd": server_command(),
                "ask_message": ASK_MESSAGE, "write_message": WRITE_MESSAGE, "write_file": WRITE_FILE,
                "run_timeout_ms": 60000, "latency_samples": args.samples, "streaming_latency": True,
                "streaming_message": STREAM_MESSAGE, "latency_samples_streaming": max(20, args.samples // 10),
            }
            out, proc, elapsed = run_driver(nvim.path, scenario, server_env(model, tmp_path / "data"),
                                            tmp_path / "nvim", timeout_s=600)
        if out.get("failures"):
            print(f"Neovim {nvim.version}: driver failures: {out['failures']}")
        for phase, stats in (out.get("latency") or {}).items():
            rows.append((nvim.version or label, phase, stats))
        print(f"Neovim {nvim.version}: driver ran in {elapsed:.1f} s (exit {proc.returncode})")
    print(f"\n{'neovim':<8} {'phase':<10} {'n':>5} {'median ms':>10} {'p99 ms':>8} {'max ms':>8}")
    for version, phase, s in rows:
        print(f"{version:<8} {phase:<10} {s['n']:>5} {s['median']:>10.2f} {s['p99']:>8.2f} {s['max']:>8.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
