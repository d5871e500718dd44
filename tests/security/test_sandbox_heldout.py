"""Two held-out sets of sandbox payloads by independent attackers (``data/sandbox_heldout.py``,
``data/sandbox_heldout2.py``) through the real pool.

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
from cortex_lsp.tools.sandbox import SandboxPool, SandboxResult
from tests.security.data import sandbox_heldout, sandbox_heldout2

PAYLOADS = sandbox_heldout.PAYLOADS
SECRET = "TOPSECRET-outside-8d3f"
DOTENV = "dotenv-XYZZY-42"
#: (payloads, the base folder they name, the secret beside the folder, the .env's value)
CORPORA = {
    "round-1": (sandbox_heldout.PAYLOADS, "/tmp/redteam", SECRET, DOTENV),
    "round-2": (sandbox_heldout2.PAYLOADS, "/tmp/redteam2", "TOP-SECRET-7731", "dotenv-secret-42"),
}
#: what only an escaped snippet can print
ESCAPE_SIGNS = ("<module 'sys'", "<module 'os'", "built-in function eval", "environ({", "FORGED-BY-SNIPPET",
                "MEMREAD-OK", "getframe OK", "eval OK", "<frame at", "sandbox_open at 0x", "NO-METACLASS",
                "<class 'cortex_lsp.tools.sandbox.allowlist.Guards'>", "Guards object at", '"armed": false')


def _world(base: Path, secret: str = SECRET, dotenv: str = DOTENV) -> Path:
    folder = base / "folder"
    (folder / "sub").mkdir(parents=True)
    (base / "secret.txt").write_text(secret + "\n")
    (folder / ".env").write_text(f"DOTENV_SECRET={dotenv}\n")
    (folder / "notes.txt").write_text("hello notes\n")
    os.symlink(base / "secret.txt", folder / "link_secret.txt")
    os.symlink(".env", folder / "envlink.txt")
    return folder


def _run(code: str, folder: Path) -> SandboxResult:
    """``code`` through a fresh pool on the in-process layers alone."""

    async def run() -> SandboxResult:
        pool = SandboxPool(Settings(sandbox_isolation="none", code_exec_timeout_seconds=10))
        try:
            return await pool.run(code, roots=[folder])
        finally:
            await pool.aclose()

    return asyncio.run(run())


def _refusal(result: SandboxResult) -> tuple[bool, str]:
    return result.refused, "\n".join(str(x) for x in (result.stdout, result.error))


def _state(base: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for path in sorted(base.rglob("*")):
        rel = path.relative_to(base).as_posix()
        out[rel] = "link" if path.is_symlink() else "dir" if path.is_dir() else \
            hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@pytest.mark.parametrize("corpus", list(CORPORA))
def test_the_held_out_payloads_stay_inside(tmp_path: Path, corpus: str) -> None:
    payloads, token, secret, dotenv = CORPORA[corpus]
    base = tmp_path / "redteam"
    folder = _world(base, secret, dotenv)
    before = _state(base)

    async def run_all() -> list[tuple[str, str]]:
        pool = SandboxPool(Settings(sandbox_isolation="none", code_exec_timeout_seconds=10))
        seen: list[tuple[str, str]] = []
        try:
            for name, code in payloads:
                result = await pool.run(code.replace(token, str(base)), roots=[folder])
                text = "\n".join(str(x) for x in (result.stdout, result.stderr, result.value, result.error))
                seen.append((name, text))
            sanity = await pool.run("print(sum(range(10)))", roots=[folder])
            seen.append(("sanity", sanity.stdout))
        finally:
            await pool.aclose()
        return seen

    seen = asyncio.run(run_all())
    assert len(seen) == len(payloads) + 1
    leaked = [name for name, text in seen if secret in text or dotenv in text]
    escaped = [(name, sign) for name, text in seen for sign in ESCAPE_SIGNS if sign in text]
    assert leaked == [], leaked
    assert escaped == [], escaped
    assert _state(base) == before, "a payload changed or created a file"
    assert seen[-1] == ("sanity", "45\n"), "the pool is not usable after the payloads"


@pytest.mark.parametrize("name", ["A01_os_module", "A28_no_metaclass_field_subclass_rename_injection",
                                  "B01_get_origin_type", "A37_frames_in_reading_window_via_linecache"])
def test_the_second_rounds_escapes_are_refused(tmp_path: Path, name: str) -> None:
    """A metaclass made from ``typing.Type`` (its __mro_entries__ resolves to ``type``), a
    ``dataclasses.Field`` subclass whose name the code generator pastes into source, and
    ``typing.get_origin(typing.Type[int])`` (the real ``type``): each refused before it runs."""
    folder = _world(tmp_path / "redteam2")
    code = dict(sandbox_heldout2.PAYLOADS)[name].replace("/tmp/redteam2", str(tmp_path / "redteam2"))
    refused, text = _refusal(_run(code, folder))
    assert refused, text


@pytest.mark.parametrize(("code", "shown"), [
    ("raise BaseException('gone')", "BaseException: gone"),
    ("class R:\n    def __repr__(self):\n        raise BaseException('x')\nR()", "could not be shown"),
])
def test_a_base_exception_is_reported_not_lost(tmp_path: Path, code: str, shown: str) -> None:
    """What the snippet printed before a BaseException (or a value whose repr raises one) comes back."""
    result = _run("print('before')\n" + code, _world(tmp_path / "w"))
    stdout, error = result.stdout, result.error or ""
    assert stdout == "before\n" and shown in error, (stdout, error)


@pytest.mark.parametrize("name", ["escape_enum_convert_real_sys", "intro_abc_metaclass_private",
                                  "intro_userstring_format_leak", "intro_subclass_instance_private"])
def test_the_payloads_that_escaped_are_refused(tmp_path: Path, name: str) -> None:
    """The four classes that got past the restricted layer before: a metaclass's private method
    (``EnumType._convert_``, ``ABCMeta._dump_registry``), ``UserString.format`` (the real str.format),
    and a private attribute a Python base class set on the snippet's instance."""
    folder = _world(tmp_path / "redteam")
    code = dict(PAYLOADS)[name].replace("/tmp/redteam", str(tmp_path / "redteam"))
    refused, text = _refusal(_run(code, folder))
    assert refused, text
    assert "not allowed in the sandbox" in text or "not available in the sandbox" in text, text
