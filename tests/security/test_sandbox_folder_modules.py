"""Hostile code in the folder's own modules: contained like the same code in a snippet.

Two parts:

- every held-out payload (``data/sandbox_heldout*.py``, written by people who had not seen the tests),
  each written as a module of the folder that the snippet imports, through the real pool with
  ``sandbox_isolation: none``: no secret, no sign of an escape, no file changed (as
  :mod:`test_sandbox_heldout` asserts for the payloads as snippets);
- on every kind of host of :mod:`test_sandbox_boundary` (the in-process layers alone on a simulated
  host without Landlock and seccomp, Landlock + seccomp, bubblewrap), as root and as uid 65534: the
  boundary's snippet escapes as folder modules, a module trying the damage, a link to the secret
  beside the folder, and a benign package, through a driver process. Judged from outside: the secret
  and the ``.env`` in no output, nothing created outside, nothing changed inside, the loopback
  listeners received nothing, no process left.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from loopback import Listener

from cortex_lsp.config import Settings
from cortex_lsp.tools.sandbox import SandboxPool
from cortex_lsp.tools.sandbox.audit import KILLED_STATUS
from tests.security.data import sandbox_heldout
from tests.security.test_sandbox_boundary import (
    DRIVER,
    HOSTS,
    SNIPPETS,
    USERS,
    UdpListener,
    _host_argv,
    _launch,
    _skip_unavailable,
    bwrap_usable,  # noqa: F401  (a fixture)
    listeners,  # noqa: F401  (a fixture)
)
from tests.security.test_sandbox_heldout import CORPORA, ESCAPE_SIGNS, _state, _world


def _module_names(payloads: list[tuple[str, str]]) -> list[str]:
    return [f"payload_{i}" for i in range(len(payloads))]


@pytest.mark.parametrize("corpus", list(CORPORA), ids=["first-set", "second-set"])
def test_the_held_out_payloads_as_folder_modules_stay_inside(tmp_path: Path, corpus: str) -> None:
    payloads, token, secret, dotenv = CORPORA[corpus]
    base = tmp_path / "redteam"
    folder = _world(base, secret, dotenv)
    names = _module_names(payloads)
    for name, (_id, code) in zip(names, payloads, strict=True):
        (folder / f"{name}.py").write_bytes(code.replace(token, str(base)).encode("utf-8", "surrogatepass"))
    (folder / "sanity_module.py").write_text("def total():\n    return sum(range(10))\n", encoding="utf-8")
    before = _state(base)

    async def run_all() -> tuple[list[tuple[str, str]], list[tuple[str, bool, bool]]]:
        pool = SandboxPool(Settings(sandbox_isolation="none", code_exec_timeout_seconds=10))
        seen: list[tuple[str, str]] = []
        verdicts: list[tuple[str, bool, bool]] = []  # (payload, refused as a module, refused as a snippet)
        try:
            for name, (payload_id, code) in zip(names, payloads, strict=True):
                result = await pool.run(f"import {name}", roots=[folder])
                text = "\n".join(str(x) for x in (result.stdout, result.stderr, result.value, result.error))
                seen.append((payload_id, text))
                as_snippet = await pool.run(code.replace(token, str(base)), roots=[folder])
                verdicts.append((payload_id, result.refused, as_snippet.refused))
            sanity = await pool.run("import sanity_module\nprint(sanity_module.total())", roots=[folder])
            seen.append(("sanity", sanity.stdout))
        finally:
            await pool.aclose()
        return seen, verdicts

    seen, verdicts = asyncio.run(run_all())
    assert len(seen) == len(payloads) + 1
    leaked = [name for name, text in seen if secret in text or dotenv in text]
    escaped = [(name, sign) for name, text in seen for sign in ESCAPE_SIGNS if sign in text]
    assert leaked == [], leaked
    assert escaped == [], escaped
    assert _state(base) == before, "a payload changed or created a file"
    # the one difference: a file with a NUL byte is a binary file to the path guard (refused, not read),
    # where the same text as a snippet is a SyntaxError
    differ = [v for v in verdicts if v[1] != v[2] and v[0] != "enc_null_byte"]
    assert differ == [], f"refused as a module but not as a snippet, or the other way: {differ}"
    assert seen[-1] == ("sanity", "45\n"), seen[-1]


@pytest.mark.parametrize("name", ["escape_enum_convert_real_sys", "intro_userstring_format_leak"])
def test_the_payloads_that_escaped_are_refused_as_folder_modules(tmp_path: Path, name: str) -> None:
    folder = _world(tmp_path / "redteam")
    code = dict(sandbox_heldout.PAYLOADS)[name].replace("/tmp/redteam", str(tmp_path / "redteam"))
    (folder / "hostile.py").write_text(code, encoding="utf-8")

    async def run() -> tuple[bool, str]:
        pool = SandboxPool(Settings(sandbox_isolation="none", code_exec_timeout_seconds=10))
        try:
            result = await pool.run("import hostile", roots=[folder])
        finally:
            await pool.aclose()
        return result.refused, f"{result.stdout}\n{result.error}"

    refused, text = asyncio.run(run())
    assert refused and "(hostile.py, line" in text, text
    assert "not allowed in the sandbox" in text or "not available in the sandbox" in text, text


# -- on every host -------------------------------------------------------------------------------------
#: What a module tries once it believes a layer is gone (module globals give it the paths).
DAMAGE_MODULE = """
seen = []
for path in (SECRET, ROOT + '/.env'):
    try:
        seen.append(open(path).read())
    except BaseException as exc:
        seen.append(repr(exc))
for attempt in (lambda: open(OUT, 'w').write('pwned'), lambda: open(ROOT + '/notes.txt', 'a')):
    try:
        attempt()
    except BaseException as exc:
        seen.append(repr(exc))
print('DAMAGE', seen)
"""


@pytest.fixture
def world() -> Iterator[dict[str, Path | str]]:
    base = Path(tempfile.mkdtemp(prefix="cortex-folder-modules-"))
    base.chmod(0o777)  # uid 65534 may create here: only the sandbox stands in the way
    root = base / "folder"
    (root / "pkg").mkdir(parents=True)
    token = f"CORTEX-SECRET-{uuid.uuid4().hex}"
    secret, out = base / "id_rsa", base / "created.txt"
    prelude = f"SECRET = {str(secret)!r}\nROOT = {str(root)!r}\nOUT = {str(out)!r}\n"
    files = {
        "notes.txt": "ordinary notes\n",
        ".env": f"API_KEY={token}\n",
        "pkg/__init__.py": "from .core import double\n",
        "pkg/core.py": "from . import consts\n\ndef double(x):\n    return x * consts.TWO\n",
        "pkg/consts.py": "TWO = 2\n",
        "damage.py": prelude + DAMAGE_MODULE,
        **{f"escape_{i}.py": prelude + code for i, (_name, code) in enumerate(SNIPPETS)},
    }
    for rel, text in files.items():
        (root / rel).write_text(text, encoding="utf-8")
    secret.write_text(token + "\n")
    (root / "secret_link.py").symlink_to(secret)
    for path in [root, root / "pkg", *root.rglob("*"), secret]:
        if not path.is_symlink():
            path.chmod(0o777 if path.is_dir() else 0o666 if path.name == "notes.txt" else 0o644)
    try:
        yield {"base": base, "root": root, "secret": secret, "out": out, "token": token}
    finally:
        shutil.rmtree(base, ignore_errors=True)


SNIPPET_CODES = [
    "from pkg import double\nprint(double(21))",
    "import damage",
    "import secret_link",
    *[f"import escape_{i}" for i in range(len(SNIPPETS))],
]


@pytest.mark.parametrize("user", USERS)
@pytest.mark.parametrize("host", HOSTS)
def test_hostile_folder_modules_are_contained_on_every_host(
    world: dict[str, Path | str], listeners: tuple[Listener, UdpListener], bwrap_usable: bool,  # noqa: F811
    host: str, user: str,
) -> None:
    _skip_unavailable(host, bwrap_usable)
    base, root, token = Path(world["base"]), Path(world["root"]), str(world["token"])
    before = {p.relative_to(base).as_posix(): p.read_bytes() if p.is_file() and not p.is_symlink() else b""
              for p in base.rglob("*")}
    marker = f"cortex-folder-modules-{uuid.uuid4().hex}"
    mode = {"none": "none", "landlock": "auto", "bwrap": "bwrap"}[host]
    argv, env = _host_argv(host, DRIVER, [mode, str(root), json.dumps(SNIPPET_CODES)], user=user)
    output = _launch(argv, marker, env)
    tcp, udp = listeners
    assert token not in output, f"the secret or the .env reached the output: {output[-800:]}"
    assert not os.path.lexists(Path(world["out"])), "a file was created outside the folder"
    after = {p.relative_to(base).as_posix(): p.read_bytes() if p.is_file() and not p.is_symlink() else b""
             for p in base.rglob("*")}
    assert after == before, "a file was created, changed or deleted"
    assert tcp.connections == 0 and udp.datagrams == 0
    line = next((ln for ln in output.splitlines() if ln.startswith("RESULTS ")), None)
    assert line is not None, output[-1500:]
    report = json.loads(line.removeprefix("RESULTS "))
    if report["refuse"]:  # e.g. bubblewrap cannot create namespaces for this user: refused, not run
        assert all(r["refused"] and not r["stdout"] for r in report["results"]), report
        return
    assert report["boundary"] == {"none": "none", "landlock": "landlock", "bwrap": "bwrap"}[host], report
    benign, damage, link, *escapes = report["results"]
    assert benign["stdout"] == "42\n" and benign["error"] is None, benign
    assert damage["stdout"].startswith("DAMAGE") and "RefusedOpen" in damage["stdout"], damage
    assert link["refused"] and "outside the open folder" in str(link["error"]), link
    by_name = dict(zip([name for name, _ in SNIPPETS], escapes, strict=True))
    assert "real update_wrapper: True" not in by_name["deepcopy-memo-update-wrapper"]["stdout"]
    assert "copy.deepcopy(x, memo) is not allowed" in by_name["deepcopy-memo-update-wrapper"]["stdout"]
    assert by_name["deepcopy-of-guards"]["stdout"].count("True True") == 7, by_name["deepcopy-of-guards"]
    for name in ("enum-functional-reduce-ex", "enum-functional-getattr", "copy-dispatch-table", "frames-by-name",
                 "signal-import"):
        assert by_name[name]["refused"], (name, by_name[name])
    assert by_name["dataclasses-helpers-foreign"]["stdout"].count("refused") == 4


#: The audit hook armed with the snippet's and two folder modules' code objects (escaped code holding
#: them, as if every guard were gone): each may be ``exec``-ed once; a second time, or a code object
#: compiled before arming but not armed, ends the worker.
EXEC_ONCE = """
import sys
from cortex_lsp.tools.sandbox import audit
controls = audit.install(1, [])
snippet, first, second, other = (compile(f"X = {i}", f"<folder>/m{i}.py", "exec") for i in range(4))
controls.arm([snippet, first, second], [sys.argv[1]])
last = {"first-again": first, "not-armed": other}[sys.argv[2]]
for label, code in (("snippet", snippet), ("first", first), ("second", second), (sys.argv[2], last)):
    exec(code, {})
    print("RAN", label, flush=True)
"""


@pytest.mark.parametrize("last", ["first-again", "not-armed"])
def test_the_audit_hook_lets_each_armed_code_object_run_once(tmp_path: Path, last: str) -> None:
    from unprivileged import CHECKOUT

    start = f"import sys; sys.path.insert(0, {CHECKOUT!r})\n"
    done = subprocess.run([sys.executable, "-I", "-c", start + EXEC_ONCE, str(tmp_path), last],
                          capture_output=True, timeout=60, check=False)
    out = done.stdout.decode("utf-8", "replace")
    assert "RAN snippet" in out and "RAN first" in out and "RAN second" in out, out
    assert f"RAN {last}" not in out, out
    assert done.returncode == KILLED_STATUS and "Stopped by the sandbox" in out and "(exec)" in out, out
