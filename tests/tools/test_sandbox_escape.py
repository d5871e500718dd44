# ruff: noqa: E501  (the corpora below are tables of one-line snippets)
"""Hostile corpus for the Python sandbox: every case is refused or stopped, leaks nothing, writes nothing,
and the pool keeps working (the next ``print(1)`` runs clean).

Runs real worker processes (inside bubblewrap when it is installed and usable).
"""

from __future__ import annotations

import ast
import os
import signal
import subprocess
import sys
import textwrap
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from loopback import Listener

from cortex_lsp.config import Settings
from cortex_lsp.tools.sandbox import SandboxPool
from cortex_lsp.tools.sandbox.isolation import _python_dirs, bwrap_argv, plan_isolation
from tests.procs import alive, descendants
from tests.procs import state as proc_state
from tests.user_dirs import REAL_HOME
from tests.waiting import until_sync

ASYNC = pytest.mark.asyncio(loop_scope="module")

MARKER = f"CORTEX-SECRET-{uuid.uuid4().hex}"
TIMEOUT = 2.0


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("sbx")
    root = base / "root"
    root.mkdir()
    (root / "notes.txt").write_text("ordinary notes\n", encoding="utf-8")
    secret = base / "secret.txt"
    secret.write_text(MARKER + "\n", encoding="utf-8")
    (root / "link_to_secret.txt").symlink_to(secret)
    (root / "link_to_passwd.txt").symlink_to("/etc/passwd")
    os.link(secret, root / "hard_to_secret.txt")
    (root / ".env").write_text(MARKER + "\n", encoding="utf-8")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text(MARKER + "\n", encoding="utf-8")
    return {"root": root, "secret": secret, "base": base}


@pytest.fixture(scope="module")
def listener() -> Iterator[Listener]:
    server = Listener()
    try:
        yield server
    finally:
        server.close()


@pytest_asyncio.fixture(loop_scope="module", scope="module", params=["none", "bwrap"])
async def pool(request: pytest.FixtureRequest) -> AsyncIterator[SandboxPool]:
    """The in-process layers alone (``none``) and inside bubblewrap (``bwrap``; skipped where unusable)."""
    if request.param == "bwrap":
        plan = plan_isolation(Settings(sandbox_isolation="bwrap"))
        if plan.bwrap is None:
            pytest.skip(f"bubblewrap is not usable here: {plan.detail}")
    sandbox = SandboxPool(Settings(code_exec_timeout_seconds=TIMEOUT, sandbox_isolation=request.param))
    yield sandbox
    await sandbox.aclose()


def _exists(path: Path) -> bool:
    return os.path.lexists(path)


def _case(code: str) -> str:
    return textwrap.dedent(code).strip("\n")


# (id, code). {secret} and {out} are replaced per test.
ESCAPES: list[tuple[str, str]] = [
    ("import-os", "import os\nos.system('touch {out}')"),
    ("import-subprocess", "import subprocess\nsubprocess.run(['touch', '{out}'])"),
    ("import-socket", "import socket\nsocket.create_connection(('1.1.1.1', 80))"),
    ("import-shutil", "import shutil\nshutil.copy('{secret}', '{out}')"),
    ("import-sys", "import sys\nsys.modules['os'].system('touch {out}')"),
    ("import-ctypes", "import ctypes"),
    ("import-importlib", "import importlib\nimportlib.import_module('os')"),
    ("import-builtins", "import builtins\nbuiltins.open('{secret}').read()"),
    ("import-urllib", "import urllib.request\nurllib.request.urlopen('http://example.com')"),
    ("import-multiprocessing", "import multiprocessing"),
    ("dunder-import", "__import__('os').system('touch {out}')"),
    ("dunder-builtins", "__builtins__['open']('{secret}').read()"),
    ("subclasses-walk", "[c for c in ().__class__.__bases__[0].__subclasses__()]"),
    ("subclasses-via-type", "type(()).mro()[-1].__subclasses__()"),
    ("getattr-dunder", "getattr(getattr((), '__class__'), '__bases__')"),
    ("getattr-dunder-built", "getattr(1, '_' + '_class_' + '_')"),
    ("getattr-globals", "def f():\n    pass\ngetattr(f, '__globals__')['__builtins__']"),
    ("format-attr", "'{0.__class__.__bases__}'.format(())"),
    ("format-globals", "def f():\n    pass\n'{0.__globals__}'.format(f)"),
    ("format-map-attr", "'{x.__class__}'.format_map({'x': 1})"),
    ("format-unbound", "str.format('{0.__class__}', 1)"),
    ("string-formatter", "import string\nstring.Formatter().get_field('0.__class__', [1], {})"),
    ("fstring-dunder", "f'{().__class__.__bases__}'"),
    ("gen-frame", "g = (i for i in [1])\ng.gi_frame.f_globals"),
    ("gen-frame-getattr", "g = (i for i in [1])\ngetattr(getattr(g, 'gi_' + 'frame'), 'f_globals')"),
    ("gen-code", "g = (i for i in [1])\ngetattr(g, 'gi_code')"),
    ("traceback-frame", "try:\n    1 / 0\nexcept Exception as e:\n    e.__traceback__.tb_frame.f_globals"),
    ("module-walk-json", "import json\njson.codecs.sys.modules['os'].system('touch {out}')"),
    ("module-walk-getattr", "import json\ngetattr(json, 'codecs')"),
    ("from-import-module", "from uuid import os\nos.system('touch {out}')"),
    ("from-import-private", "from random import _os"),
    ("private-module-attr", "import random\nrandom._os.system('touch {out}')"),
    ("attrgetter", "import operator\noperator.attrgetter('__class__.__bases__')(())"),
    ("methodcaller", "import operator\noperator.methodcaller('__subclasses__')(object)"),
    ("get-type-hints", "import typing\ndef f(x: '().__class__'):\n    pass\ntyping.get_type_hints(f)"),
    ("singledispatch", "from functools import singledispatch"),
    ("eval", "eval(\"__import__('os').system('touch {out}')\")"),
    ("exec", "exec(\"import os\")"),
    ("compile", "compile('1', 'x', 'eval')"),
    ("globals", "globals()['__builtins__']"),
    ("vars", "vars()"),
    ("module-write", "import math\nmath.pi = 3\nmath.pi"),
    ("module-setattr", "import json\nsetattr(json, 'dumps', print)"),
    ("open-etc-passwd", "open('/etc/passwd').read()"),
    ("open-secret-abs", "open('{secret}').read()"),
    ("open-dotdot", "open('../secret.txt').read()"),
    ("open-symlink-out", "open('link_to_secret.txt').read()"),
    ("open-symlink-passwd", "open('link_to_passwd.txt').read()"),
    ("open-hardlink", "open('hard_to_secret.txt').read()"),
    ("open-hidden", "open('.env').read()"),
    ("open-write", "open('{out}', 'w').write('pwned')"),
    ("open-append", "open('notes.txt', 'a').write('pwned')"),
    ("open-exclusive", "open('{out}', 'x')"),
    ("open-binary", "open('notes.txt', 'rb').read()"),
    ("open-plus", "open('notes.txt', 'r+').write('pwned')"),
    ("open-fd", "open(0).read()"),
    ("write-tmp", "open('/tmp/cortex-pwned.txt', 'w').write('x')"),
    ("fork-bomb", "import os\nwhile True:\n    os.fork()"),
    ("thread-bomb", "import threading"),
    ("while-true", "while True:\n    pass"),
    ("big-power", "9**9**9"),
    ("big-list", "[0] * 10**10"),
    ("big-string", "'x' * 10**10"),
    ("huge-print", "print('x' * 10**7)"),
    ("print-loop", "while True:\n    print('spam')"),
    ("print-loop-swallowed", "while True:\n    try:\n        print('spam' * 1000)\n    except Exception:\n        pass"),
    ("deep-recursion", "def f(n):\n    return f(n + 1)\nf(0)"),
    ("sleep", "import time\ntime.sleep(60)"),
    ("exit", "exit()"),
    ("system-exit", "raise SystemExit(3)"),
    ("input", "input('name? ')"),
    ("breakpoint", "breakpoint()"),
    # -- one entry per escape class ----------------------------------------------
    # stdlib helpers that get/set attributes by a name the caller picks
    ("wrapper-copies-globals", "import functools\nclass A:\n    pass\na = A()\nfunctools.update_wrapper(a, getattr, assigned=('__glo' + 'bals__',), updated=())"),
    ("wraps-dict-copy", "import functools\nclass A:\n    pass\nfunctools.wraps(getattr, updated=('__di' + 'ct__',))(A)"),
    ("wraps-foreign-class", "import functools, fractions\nfunctools.wraps(len)(fractions.Fraction)\nfractions.Fraction(1)._numerator"),
    ("update-wrapper-foreign", "import functools, fractions\nfunctools.update_wrapper(fractions.Fraction, len)"),
    ("dataclass-on-stdlib-class", "import dataclasses, fractions\ndataclasses.dataclass(fractions.Fraction)"),
    ("make-dataclass-namespace", "import dataclasses\ndataclasses.make_dataclass('X', [], namespace={'__getattr__': print})"),
    ("attrgetter-from-import", "from operator import attrgetter\nattrgetter('__class__')(1)"),
    ("copy-private", "import copy\ncopy._reconstruct"),
    ("setattr-dunder-built", "class A:\n    pass\nsetattr(A, '_' + '_getattr__', print)"),
    # metaclass tricks and class building
    ("metaclass-via-type-type", "t = type(type(1))\nt('X', (), {'__getattr__': print})"),
    ("type-three-args", "type('X', (), {'_' + '_getattr__': print})"),
    ("abc-metaclass", "import abc\nabc.ABCMeta('X', (), {})"),
    ("from-abc-metaclass", "from abc import ABCMeta"),
    ("enum-metaclass", "import enum\nenum.EnumMeta"),
    ("metaclass-of-enum", "from enum import Enum\nclass C(Enum):\n    A = 1\ntype(C)('D', (), {})"),
    ("subclass-forwardref", "import typing\nclass F(typing.ForwardRef):\n    pass"),
    ("forwardref-from-args", "import typing\nfr = typing.get_args(typing.Optional['x'])[0]\ntype(fr)('1')"),
    ("private-on-library-base", "import random\nclass R(random.Random):\n    pass\nR()._randbelow(3)"),
    ("private-slot-on-library-base", "import fractions\nclass F(fractions.Fraction):\n    pass\nF(1)._numerator"),
    ("set-private-on-library-base", "import string\nclass T(string.Template):\n    pass\nt = T('x')\nt._invalid = 1"),
    ("class-keyword-metaclass", "class M:\n    pass\nclass X(metaclass=M):\n    pass"),
    # string-evaluating internals
    ("get-type-hints-class", "import typing\nclass A:\n    x: \"__import__('os').system('touch {out}')\"\ntyping.get_type_hints(A)"),
    ("forwardref-evaluate", "import typing\nfr = typing.get_args(typing.Optional[\"__import__('os').system('touch {out}')\"])[0]\nfr._evaluate(None, None, frozenset())"),
    ("string-formatter-subclass", "import string\nclass F(string.Formatter):\n    pass"),
    ("format-map-dunder", "'{0.__class__.__mro__}'.format_map([1])"),
    ("format-map-class-attr", "class A:\n    pass\n'{a.__init__.__globals__}'.format_map({'a': A()})"),
    # super() on built-ins' guarded methods
    ("super-str-format", "class S(str):\n    pass\ns = S('{0.__class__.__mro__}')\nsuper(S, s).format(1)"),
    ("super-str-format-map", "class S(str):\n    pass\nsuper(S, S('{x.__class__}')).format_map({'x': 1})"),
    ("super-getattr-format", "class S(str):\n    pass\ngetattr(super(S, S('{0.__class__}')), 'format')(1)"),
    ("super-private", "import random\nclass R(random.Random):\n    def f(self):\n        return super()._randbelow\nR().f()"),
    # frames
    ("generator-frame-getattr", "def g():\n    yield 1\ngetattr(g(), 'gi_' + 'frame')"),
    ("async-frame", "async def c():\n    pass\nc().cr_frame"),
    ("import-inspect", "import inspect\ninspect.currentframe()"),
    # OS escapes
    ("mmap", "import mmap\nmmap.mmap(-1, 10)"),
    ("double-fork", "import os\nif os.fork() == 0:\n    os.setsid()\n    os.fork()"),
    ("socket-loopback", "import socket\nsocket.create_connection(('127.0.0.1', {port}), 1).sendall(b'leak')"),
    ("hidden-dotslash", "open('./.env').read()"),
    ("hidden-via-parent", "open('notes.txt/../.env').read()"),
    ("hidden-dir", "open('.git/config').read()"),
    # a guard's input that lies to the guard: a str subclass answering the guard's own questions
    ("lying-startswith-getattr", "class S(str):\n    def startswith(self, *a):\n        return False\ngetattr(1, S('!!class!!'.replace('!', '_'))).mro()"),
    ("lying-eq-hash-getattr", "class S(str):\n    def startswith(self, *a):\n        return False\n    def __eq__(self, o):\n        return False\n    def __hash__(self):\n        return 1\ngetattr(getattr, S('!!self!!'.replace('!', '_')))"),
    ("lying-startswith-setattr", "class S(str):\n    def startswith(self, *a):\n        return False\nclass A:\n    pass\nsetattr(A, S('!!getattr!!'.replace('!', '_')), print)\nA().x"),
    ("lying-startswith-private", "import random\nclass S(str):\n    def startswith(self, *a):\n        return False\ngetattr(random.Random(), S('_randbelow'))(3)"),
    ("lying-contains-import", "class S(str):\n    def __eq__(self, o):\n        return True\n    def __hash__(self):\n        return hash('math')\n__import__(S('os')).listdir('/')"),
    ("lying-mode-open", "class M(str):\n    def __contains__(self, x):\n        return True\n    def __iter__(self):\n        return iter('r')\nopen('{out}', M('w')).write('pwned')"),
    ("lying-path-open", "class P(str):\n    def startswith(self, *a):\n        return False\n    def __fspath__(self):\n        return '/etc/passwd'\nopen(P('notes.txt')).read()"),
    # a stdlib helper that writes into the namespace of a module the caller names
    ("global-enum-guard-module", "import enum\nenum.global_enum(enum.Enum('E', [('INSPECT_ATTRIBUTES', ((),))], type=frozenset, module='cortex_lsp.tools.sandbox.allowlist'))\ngetattr(1, '!!class!!'.replace('!', '_'))"),
    ("global-enum-from-import", "from enum import global_enum"),
    ("global-enum-attribute", "import enum\nenum.global_enum"),
    ("global-enum-builtins", "import enum\nclass M:\n    pass\nenum.global_enum(enum.Enum('E', [('getattr', 1)], module='builtins'))"),
    ("dataclass-create-fn", "import dataclasses\ndataclasses._create_fn('f', (), ['return 1'])"),
]


@ASYNC
@pytest.mark.parametrize(("code",), [(code,) for _, code in ESCAPES], ids=[name for name, _ in ESCAPES])
async def test_escape_is_refused_or_stopped(
    pool: SandboxPool, world: dict[str, Path], listener: Listener, code: str
) -> None:
    root = world["root"]
    out = world["base"] / f"pwned-{uuid.uuid4().hex}.txt"
    source = _case(code).replace("{secret}", str(world["secret"])).replace("{out}", str(out))
    source = source.replace("{port}", str(listener.port))
    before = (root / "notes.txt").read_text(encoding="utf-8")
    secret_before = world["secret"].read_text(encoding="utf-8")

    result = await pool.run(source, roots=[root])

    assert result.error, f"expected a refusal or a stop, got {result!r}"
    assert result.isolation == "bwrap" or result.isolation.startswith("not isolated (")
    everything = f"{result.stdout}{result.stderr}{result.value}{result.error}"
    assert MARKER not in everything
    assert "root:x:0:0" not in everything
    assert not _exists(out)
    assert not _exists(Path("/tmp/cortex-pwned.txt"))
    assert (root / "notes.txt").read_text(encoding="utf-8") == before
    assert len(result.stdout) <= 100_000
    assert world["secret"].read_text(encoding="utf-8") == secret_before
    assert listener.connections == 0

    follow = await pool.run("print(1)", roots=[root])
    assert follow.error is None and follow.stdout == "1\n"


@ASYNC
async def test_policy_refusals_are_marked_refused(pool: SandboxPool, world: dict[str, Path]) -> None:
    for code in ("import os", "().__class__", "open('/etc/passwd').read()", "getattr(1, '__class__')"):
        result = await pool.run(code, roots=[world["root"]])
        assert result.refused, code
    for code in ("while True:\n    pass", "1 / 0"):
        result = await pool.run(code, roots=[world["root"]])
        assert result.error and not result.refused, code


@ASYNC
async def test_no_state_carries_over(pool: SandboxPool, world: dict[str, Path]) -> None:
    first = await pool.run("import math\nsecret_value = 41\nmath.floor(1.5)", roots=[world["root"]])
    assert first.error is None
    second = await pool.run("secret_value", roots=[world["root"]])
    assert second.error and "NameError" in second.error


@ASYNC
async def test_read_inside_root_still_works(pool: SandboxPool, world: dict[str, Path]) -> None:
    result = await pool.run("open('notes.txt').read()", roots=[world["root"]])
    assert result.error is None and result.value == repr("ordinary notes\n")


@ASYNC
async def test_oversized_file_is_refused(pool: SandboxPool, world: dict[str, Path]) -> None:
    big = world["root"] / "big.txt"
    big.write_text("a" * (1024 * 1024 + 10), encoding="utf-8")
    result = await pool.run("len(open('big.txt').read())", roots=[world["root"]])
    assert result.refused and result.value is None


# -- OS isolation: even unrestricted code inside the bubblewrap jail can't reach these --------------

def _bwrap_or_skip() -> str:
    plan = plan_isolation(Settings(sandbox_isolation="auto"))
    if not plan.bwrap:
        pytest.skip(f"bubblewrap isolation not available here: {plan.detail}")
    return plan.bwrap


def _jail_run(script: str, roots: list[Path]) -> subprocess.CompletedProcess[str]:
    argv = bwrap_argv(_bwrap_or_skip(), [sys.executable, "-I", "-S", "-c", script], roots)
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)


JAIL_PROBES = {
    "no-network": "import socket\ntry:\n    socket.create_connection(('1.1.1.1', 53), timeout=3)\n"
    "    print('CONNECTED')\nexcept OSError as e:\n    print('blocked', e)",
    "no-etc-passwd": "import os\nprint(os.path.exists('/etc/passwd'))",
    "no-home": f"import os\nh = {str(REAL_HOME)!r}\nprint(sorted(os.listdir(h)) if os.path.isdir(h) else [])",
    "system-read-only": "try:\n    open('/usr/cortex-pwned', 'w')\n    print('WROTE')\nexcept OSError as e:\n"
    "    print('blocked', e)",
}


@pytest.mark.parametrize("name", list(JAIL_PROBES))
def test_bwrap_jail(name: str, world: dict[str, Path]) -> None:
    done = _jail_run(JAIL_PROBES[name], [world["root"]])
    assert done.returncode == 0, done.stderr
    if name == "no-network":
        assert "CONNECTED" not in done.stdout and "blocked" in done.stdout
    elif name == "no-etc-passwd":
        assert done.stdout.strip() == "False"
    elif name == "no-home":
        home = REAL_HOME
        bound = {d.relative_to(home).parts[0] for d in _python_dirs() if home in d.parents}
        visible = set(ast.literal_eval(done.stdout.strip()))
        assert visible <= bound, f"home folder entries visible in the jail: {visible - bound}"
    else:
        assert "WROTE" not in done.stdout and not Path("/usr/cortex-pwned").exists()


def test_bwrap_jail_roots_read_only_and_private_tmp(world: dict[str, Path]) -> None:
    root = world["root"]
    script = (
        "import os\n"
        f"try:\n    open({str(root / 'jail.txt')!r}, 'w')\n    print('WROTE')\nexcept OSError:\n    print('ro')\n"
        f"print(open({str(root / 'notes.txt')!r}).read().strip())\n"
        "open('/tmp/jail-private.txt', 'w').write('x')\n"
        f"print(os.path.exists({str(world['secret'])!r}))\n"
    )
    done = _jail_run(script, [root])
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ro", "ordinary", "notes", "False"]
    assert not (root / "jail.txt").exists()
    assert not Path("/tmp/jail-private.txt").exists()


# -- the worker dies with the server --------------------------------------------------------------

_SERVER = """
import asyncio, sys
from pathlib import Path
from cortex_lsp.config import Settings
from cortex_lsp.tools.sandbox import SandboxPool

async def main():
    pool = SandboxPool(Settings(sandbox_isolation=sys.argv[1], code_exec_timeout_seconds=60))
    await pool.prewarm([Path(sys.argv[2])])
    await pool.wait_ready()
    print("ready", flush=True)
    if sys.argv[3] == "busy":
        await asyncio.to_thread(sys.stdin.readline)  # the test has seen the waiting worker
        await pool.run("while True:\\n    pass", roots=[Path(sys.argv[2])])
    await asyncio.sleep(3600)

asyncio.run(main())
"""


@pytest.mark.parametrize("mode", ["none", "auto"])
@pytest.mark.parametrize("state", ["idle", "busy"])
def test_worker_dies_with_server(mode: str, state: str, world: dict[str, Path]) -> None:
    server = subprocess.Popen(
        [sys.executable, "-c", _SERVER, mode, str(world["root"]), state],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert server.stdout is not None and server.stdin is not None
        assert server.stdout.readline().strip() == "ready"
        if state == "busy":  # the snippet (a busy loop) has started: the waiting worker runs instead of waiting
            waiting = descendants(server.pid)  # not the spare the run starts after it
            server.stdin.write("go\n")
            server.stdin.flush()
            until_sync(lambda: any(proc_state(pid) == "R" for pid in waiting),
                       what="the worker to run the snippet (state R)")
        workers = descendants(server.pid)
        assert workers, "no worker process was started"
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=30)
        until_sync(lambda: not any(alive(pid) for pid in workers), what="the workers to die with the server")
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
