"""The VS Code extension's `contributes.configuration` matches the server's settings schema.

Runs ``node vscode-extension/scripts/settings.mjs --check`` (plain Node, no npm install needed), which
regenerates the settings block from ``cortex_lsp.config.settings_json_schema()`` and compares. Then
checks the security rule on the real package.json: every setting outside the server's
``WORKSPACE_SAFE_KEYS`` is machine-scoped, so a folder's .vscode/settings.json cannot set it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cortex_lsp.config import WORKSPACE_SAFE_KEYS, Settings

pytestmark = [pytest.mark.editor]  # the editor tier (`pytest -m editor`), as docs/editors.md says

EXT = Path(__file__).resolve().parents[2] / "vscode-extension"


def _snake(name: str) -> str:
    return re.sub(r"[A-Z]", lambda m: f"_{m.group(0).lower()}", name)


def test_contributed_settings_match_the_server_schema() -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    env = {**os.environ, "CORTEX_PYTHON": sys.executable}
    proc = subprocess.run(["node", "scripts/settings.mjs", "--check"], cwd=EXT, capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr + proc.stdout


def test_security_settings_are_machine_scoped() -> None:
    props = json.loads((EXT / "package.json").read_text(encoding="utf-8"))["contributes"]["configuration"][
        "properties"
    ]
    server_keys = set(Settings.model_fields)
    seen = set()
    for name, decl in props.items():
        top = _snake(name.removeprefix("cortex.").split(".")[0])
        if top in ("server_path", "trace", "review_edits"):  # the extension's own settings
            assert decl["scope"] in ("machine", "window"), name
            continue
        assert top in server_keys, f"{name} is not a server setting"
        seen.add(top)
        expected = "window" if top in WORKSPACE_SAFE_KEYS else "machine"
        assert decl["scope"] == expected, f"{name}: scope {decl['scope']}, want {expected}"
    assert props["cortex.serverPath"]["scope"] == "machine"  # a folder must not pick the binary to run
    # every server setting is contributed, except the API key (a secret; not for settings.json)
    assert server_keys - seen == {"openai_api_key"}
