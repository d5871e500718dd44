"""Run a Python script as uid 65534 (``setpriv``) against this checkout's ``cortex_lsp``, wherever it lives.

A checkout in a 0700 folder (``mktemp -d``, a home directory) is unreadable to uid 65534, and so may be
the virtual environment inside it, or the interpreter (a pyenv build under ``/root``). :func:`python_argv`
uses the test's interpreter when 65534 can run it, else the system's interpreter of the same version,
and copies every non-standard-library module the sandbox imports (this package, RestrictedPython,
pyseccomp, pydantic...) into one world-readable temporary folder, put first on the script's
``sys.path``. When no usable interpreter is found, the test is skipped with that reason; an import
never fails the test.

Root's scripts get the checkout's own folder first on ``sys.path`` (``-I`` would otherwise pick the
editable install, which may be another checkout).
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import cortex_lsp

UID = 65534
#: what the sandbox's scripts import, server side and worker side
NEEDED = ("cortex_lsp.tools.sandbox.worker", "cortex_lsp.tools.sandbox.pool", "cortex_lsp.config",
          "cortex_lsp.tools.python_exec", "cortex_lsp.ports", "RestrictedPython", "pyseccomp", "platformdirs")
CHECKOUT = str(Path(cortex_lsp.__file__).resolve().parent.parent)


def readable_by_others(path: Path) -> bool:
    """Can any user read ``path`` (every folder above it searchable, the file readable)?"""
    try:
        real = path.resolve()
        for folder in real.parents:
            if not folder.stat().st_mode & stat.S_IXOTH:
                return False
        return bool(real.stat().st_mode & stat.S_IROTH)
    except OSError:
        return False


def _top_level(file: str, path: list[str]) -> tuple[str, str] | None:
    """The ``sys.path`` entry holding ``file`` and the top-level package (or module file) under it."""
    real = os.path.realpath(file)
    for entry in sorted((os.path.realpath(p) for p in path if p), key=len, reverse=True):
        if real.startswith(entry + os.sep):
            return entry, real[len(entry) + 1:].split(os.sep)[0]
    return None


def _stdlib(file: str) -> bool:
    real = os.path.realpath(file)
    prefixes = {os.path.realpath(p) for p in (sys.base_prefix, sys.base_exec_prefix)}
    return any(real.startswith(p + os.sep) for p in prefixes) and "site-packages" not in real


_LIST_MODULES = """
import json, sys
import {names}
cortex_lsp.config.Settings()  # its defaults import what they need lazily
files = [getattr(m, "__file__", None) for m in list(sys.modules.values())]
print(json.dumps({{"files": [f for f in files if f], "path": sys.path}}))
"""


@functools.lru_cache(maxsize=1)
def readable_copy() -> str:
    """A world-readable folder holding every non-standard-library module that :data:`NEEDED` imports
    (listed by a fresh interpreter, so nothing else this test session loaded is copied; made once)."""
    return _module_copy(0o755, 0o644)


@functools.lru_cache(maxsize=1)
def private_copy() -> str:
    """The same copy in folders only their owner (root) can read: a checkout in ``mktemp -d`` or a
    home directory, as root's worker sees it once its file-system uid is no longer root."""
    return _module_copy(0o700, 0o600)


def _module_copy(folder_mode: int, file_mode: int) -> str:
    listing = subprocess.run(
        [sys.executable, "-I", "-B", "-c", preamble(CHECKOUT) + _LIST_MODULES.format(names=", ".join(NEEDED))],
        capture_output=True, timeout=120, check=True, cwd="/")
    found = json.loads(listing.stdout.decode().strip().splitlines()[-1])
    target = tempfile.mkdtemp(prefix="cortex-uid65534-")
    atexit.register(shutil.rmtree, target, True)
    copied: set[str] = set()
    for file in found["files"]:
        if _stdlib(file):
            continue
        top_level = _top_level(file, found["path"])
        if top_level is None or top_level[1] in copied:
            continue
        entry, top = top_level
        source = os.path.join(entry, top)
        if os.path.isdir(source):
            shutil.copytree(source, os.path.join(target, top), ignore=shutil.ignore_patterns("__pycache__"))
        elif os.path.isfile(source):
            shutil.copy2(source, os.path.join(target, top))
        copied.add(top)
    for folder, _dirs, files in os.walk(target):
        os.chmod(folder, folder_mode)
        for name in files:
            os.chmod(os.path.join(folder, name), file_mode)
    return target


def interpreter() -> str | None:
    """An interpreter of this Python version that uid 65534 can run (``None`` when there is none)."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (sys.executable, shutil.which(version, path="/usr/local/bin:/usr/bin:/bin")):
        if candidate and readable_by_others(Path(candidate)) and readable_by_others(Path(os.path.realpath(candidate))):
            return os.path.realpath(candidate)
    return None


def setpriv() -> list[str]:
    tool = shutil.which("setpriv")
    if os.geteuid() != 0 or tool is None:
        pytest.skip("needs root and setpriv to run as an unprivileged user")
    return [tool, f"--reuid={UID}", f"--regid={UID}", "--clear-groups"]


def preamble(path: str) -> str:
    return f"import sys; sys.path.insert(0, {path!r})\n"


@functools.lru_cache(maxsize=1)
def _unprivileged_ready() -> tuple[str, str]:
    """(copy folder, interpreter) when uid 65534 can import the sandbox from the copy, else ("", why)."""
    python = interpreter()
    if python is None:
        return "", f"uid {UID} can run no Python {sys.version_info.major}.{sys.version_info.minor} here"
    copy = readable_copy()
    probe = preamble(copy) + "import " + ", ".join(NEEDED) + "\nprint(cortex_lsp.__file__)"
    argv = [*setpriv(), python, "-I", "-B", "-c", probe]
    done = subprocess.run(argv, capture_output=True, timeout=60, check=False, cwd="/")
    if done.returncode != 0 or not done.stdout.decode().strip().startswith(copy):
        lines = (done.stderr.decode("utf-8", "replace").strip() or "no output").splitlines()
        return "", f"uid {UID} cannot run {python} with the sandbox's packages ({lines[-1]})"
    return copy, python


def python_argv(script: str, *, unprivileged: bool, private: bool = False) -> list[str]:
    """``[setpriv ...] python -I -B -c SCRIPT`` running this checkout's package (see the module docstring);
    ``private``: root's script imports it from :func:`private_copy`."""
    if private:
        if os.geteuid() != 0:
            pytest.skip("needs root: a folder only root can read")
        return [sys.executable, "-I", "-B", "-c", preamble(private_copy()) + script]
    if not unprivileged:
        return [sys.executable, "-I", "-B", "-c", preamble(CHECKOUT) + script]
    prefix = setpriv()
    copy, python = _unprivileged_ready()
    if not copy:
        pytest.skip(python)
    return [*prefix, python, "-I", "-B", "-c", preamble(copy) + script]
