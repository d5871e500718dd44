"""The independent red team's sandbox payloads (``data/sandbox_heldout.py``) through the real pool.

The pool runs with ``sandbox_isolation: none`` — the in-process layers alone, the weakest host — so a
payload that gets past the restricted layer and the audit hook shows here (on a real host the OS layer
would still hold, which is what the boundary tests check). Judged from outside: the secret beside the
folder and the folder's ``.env`` never reach the output, nothing is created or changed, and no sign of
an escape (a real module, ``eval``, a frame, a forged reply, the worker's environment) is printed.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from pathlib import Path

import pytest

from cortex_lsp.config import Settings
from cortex_lsp.tools.sandbox import SandboxPool
from tests.security.data.sandbox_heldout import PAYLOADS

SECRET = "TOPSECRET-outside-8d3f"
DOTENV = "dotenv-XYZZY-42"
#: what only an escaped snippet can print
ESCAPE_SIGNS = ("<module 'sys'", "<module 'os'", "built-in function eval", "environ({", "FORGED-BY-SNIPPET",
                "MEMREAD-OK", "getframe OK", "eval OK", "<frame at", "sandbox_open at 0x")


def _world(base: Path) -> Path:
    folder = base / "folder"
    (folder / "sub").mkdir(parents=True)
    (base / "secret.txt").write_text(SECRET + "\n")
    (folder / ".env").write_text(f"DOTENV_SECRET={DOTENV}\n")
    (folder / "notes.txt").write_text("hello notes\n")
    os.symlink(base / "secret.txt", folder / "link_secret.txt")
    os.symlink(".env", folder / "envlink.txt")
    return folder


def _state(base: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for path in sorted(base.rglob("*")):
        rel = path.relative_to(base).as_posix()
        out[rel] = "link" if path.is_symlink() else "dir" if path.is_dir() else \
            hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def test_the_red_teams_payloads_stay_inside(tmp_path: Path) -> None:
    base = tmp_path / "redteam"
    folder = _world(base)
    before = _state(base)

    async def run_all() -> list[tuple[str, str]]:
        pool = SandboxPool(Settings(sandbox_isolation="none", code_exec_timeout_seconds=10))
        seen: list[tuple[str, str]] = []
        try:
            for name, code in PAYLOADS:
                result = await pool.run(code.replace("/tmp/redteam", str(base)), roots=[folder])
                text = "\n".join(str(x) for x in (result.stdout, result.stderr, result.value, result.error))
                seen.append((name, text))
            sanity = await pool.run("print(sum(range(10)))", roots=[folder])
            seen.append(("sanity", sanity.stdout))
        finally:
            await pool.aclose()
        return seen

    seen = asyncio.run(run_all())
    assert len(seen) == len(PAYLOADS) + 1
    leaked = [name for name, text in seen if SECRET in text or DOTENV in text]
    escaped = [(name, sign) for name, text in seen for sign in ESCAPE_SIGNS if sign in text]
    assert leaked == [], leaked
    assert escaped == [], escaped
    assert _state(base) == before, "a payload changed or created a file"
    assert seen[-1] == ("sanity", "45\n"), "the pool is not usable after the payloads"


@pytest.mark.parametrize("name", ["escape_enum_convert_real_sys", "intro_abc_metaclass_private",
                                  "intro_userstring_format_leak", "intro_subclass_instance_private"])
def test_the_payloads_that_escaped_are_refused(tmp_path: Path, name: str) -> None:
    """The four classes that got past the restricted layer before: a metaclass's private method
    (``EnumType._convert_``, ``ABCMeta._dump_registry``), ``UserString.format`` (the real str.format),
    and a private attribute a Python base class set on the snippet's instance."""
    folder = _world(tmp_path / "redteam")
    code = dict(PAYLOADS)[name].replace("/tmp/redteam", str(tmp_path / "redteam"))

    async def run() -> tuple[bool, str]:
        pool = SandboxPool(Settings(sandbox_isolation="none", code_exec_timeout_seconds=10))
        try:
            result = await pool.run(code, roots=[folder])
        finally:
            await pool.aclose()
        return result.refused, "\n".join(str(x) for x in (result.stdout, result.error))

    refused, text = asyncio.run(run())
    assert refused, text
    assert "not allowed in the sandbox" in text or "not available in the sandbox" in text, text
