"""Escape classes of the in-process layers, on every kind of host, judged by what is seen from outside.

Hosts: ``none`` (``sandbox_isolation: none`` on a simulated host whose kernel answers ``ENOSYS`` to
Landlock and refuses seccomp filters: the in-process layers alone), ``landlock`` (no bubblewrap on the
``PATH``: Landlock and the seccomp filter in the worker) and ``bwrap``. Each as root and as uid 65534
(``setpriv``; :mod:`unprivileged` copies what that user can't read).

Two kinds of payload:

- **snippets** (what a user's *Run this* or the model sends) go through the real pool in a driver
  process: the first two are the escapes the in-process layers had (``copy.deepcopy(getattr, memo)``
  with a ``dict`` subclass as memo, which handed out the real ``functools.update_wrapper`` and through
  it a library module's globals; ``Enum``'s functional API defining ``__reduce_ex__``), then the other
  object walkers;
- **escaped code** (plain Python, as if RestrictedPython had been bypassed) runs in a harness that sets
  the worker's layers up exactly as the worker does, arms the audit hook and executes it: a
  ``SIGALRM`` + ``setitimer`` handler walking ``f_back``/``f_locals`` to the hook's state, a finaliser, a
  ``str``/``bytes`` subclass path or a ``str`` subclass attribute name running code inside the hook,
  frames through generators, coroutines and tracebacks.

Every payload ends by trying the damage (:data:`DAMAGE`). The assertions are on side effects: the
secret file outside the folder and the folder's ``.env`` not in any output, nothing created outside,
nothing deleted or changed inside, loopback TCP and UDP listeners that received nothing, no process
left. A host without Landlock or without seccomp refuses to run code at all (``auto``).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from loopback import Listener
from unprivileged import python_argv

from cortex_lsp.config import Settings
from cortex_lsp.tools.sandbox.isolation import plan_isolation

HOSTS = ("none", "landlock", "bwrap")
USERS = ("root", "unprivileged")
#: root again, with the package in folders only root can read (a checkout in ``mktemp -d`` or ``/root``):
#: the worker drops root, so whatever it imports after that fails unless it was imported before
SNIPPET_USERS = (*USERS, "root-private")

#: Runs the rest of its arguments (a Python command) on a simulated host: the filter makes Landlock's
#: syscalls answer ENOSYS and/or every way to install a seccomp filter fail, for the whole process tree.
SIMULATED_HOST = """
import errno, os, sys
import pyseccomp as lib
flags, rest = sys.argv[1].split(","), sys.argv[2:]
rules = lib.SyscallFilter(lib.ALLOW)
if "no-landlock" in flags:
    for name in ("landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self"):
        rules.add_rule(lib.ERRNO(errno.ENOSYS), name)
if "no-seccomp" in flags:
    rules.add_rule(lib.ERRNO(errno.ENOSYS), "seccomp")
    for option in (21, 22):  # PR_GET_SECCOMP, PR_SET_SECCOMP: a kernel built without seccomp
        rules.add_rule(lib.ERRNO(errno.EINVAL), "prctl", lib.Arg(0, lib.EQ, option))
rules.load()
os.execv("/proc/self/exe", rest)  # the same interpreter, however it was reached
"""

#: A driver: runs each snippet through the real pool, prints the results as JSON.
DRIVER = """
import asyncio, json, os, sys
from pathlib import Path
from cortex_lsp.config import Settings
from cortex_lsp.tools.sandbox import SandboxPool
from cortex_lsp.tools.python_exec import PythonExecTool

async def main():
    mode, root, snippets = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    pool = SandboxPool(Settings(sandbox_isolation=mode, code_exec_timeout_seconds=20))
    results = []
    try:
        plan = await pool.isolation()
        for code in snippets:
            for _attempt in range(3):  # a worker that could not start under load is no verdict: try again
                r = await pool.run(code, roots=[Path(root)])
                if not (r.error or "").startswith("Not run: the sandbox worker did not start"):
                    break
            results.append({"stdout": r.stdout, "stderr": r.stderr, "value": r.value, "error": r.error,
                            "refused": r.refused, "isolation": r.isolation, "notes": r.notes})
    finally:
        await pool.aclose()
    print("RESULTS " + json.dumps({"boundary": plan.boundary, "refuse": plan.refuse, "results": results}))

asyncio.run(main())
"""

#: The worker's layers, set up as the worker does, then escaped code (plain Python) with the hook armed.
HARNESS = """
import os, sys
from cortex_lsp.tools.sandbox import audit
from cortex_lsp.tools.sandbox.worker import _python_dirs, confine, start_os_layers
program = bytes.fromhex(sys.argv[7]) if len(sys.argv) > 7 else None  # compiled outside bubblewrap
confinement, layers = start_os_layers(0, program)
controls = audit.install(1, _python_dirs())
notes = confine(confinement, [sys.argv[2]])
print("LAYERS", layers, notes, flush=True)
code = compile(sys.argv[1], "<escaped>", "exec")
controls.arm(code, [sys.argv[2]])
exec(code, {"ROOT": sys.argv[2], "OUT": sys.argv[3], "PORT": int(sys.argv[4]), "UDP": int(sys.argv[5]),
            "SECRET": sys.argv[6]})
print("SURVIVED", flush=True)
os._exit(0)
"""

#: Runs HARNESS inside bubblewrap with the folder bound as the pool would (as whoever runs it).
IN_BWRAP = """
import shutil, subprocess, sys
from cortex_lsp.tools.sandbox import seccomp
from cortex_lsp.tools.sandbox.isolation import bwrap_argv, package_root, root_binds, seccomp_pipe
from pathlib import Path
harness, args = sys.argv[1], [*sys.argv[2:], seccomp.program(worker=True).hex()]
start = f"import sys; sys.path.insert(0, {package_root()!r})\\n" + harness
with seccomp_pipe() as fd:
    argv = bwrap_argv(shutil.which("bwrap"), [sys.executable, "-I", "-B", "-c", start, *args], [],
                      binds=root_binds([Path(args[1])]), seccomp_fd=fd)
    done = subprocess.run(argv, pass_fds=(fd,), check=False)
sys.exit(done.returncode)
"""

#: What every payload tries once it believes a layer is gone (plain Python).
DAMAGE = """
def damage(opener=open, importer=__import__):
    seen = []
    for path in (SECRET, ROOT + '/.env'):
        try:
            seen.append(opener(path).read())
        except BaseException as exc:
            seen.append(repr(exc))
    for attempt in (
        lambda: opener(OUT, 'w').write('pwned'),
        lambda: importer('os').unlink(ROOT + '/notes.txt'),
        lambda: importer('socket').create_connection(('127.0.0.1', PORT), 1).sendall(b'leak'),
        lambda: importer('socket').socket(2, 2).sendto(b'leak', ('127.0.0.1', UDP)),
        lambda: importer('os').system('sleep 30 &'),
    ):
        try:
            attempt()
        except BaseException as exc:
            seen.append(repr(exc))
    print('DAMAGE', seen, flush=True)
"""

#: (id, escaped code): plain Python run with the audit hook armed (as if RestrictedPython were bypassed).
ESCAPED: list[tuple[str, str]] = [
    ("signal-itimer-frame-walk", DAMAGE + """
import signal
found = []
def handler(signum, frame):
    f = frame
    while f is not None:
        for value in list(f.f_locals.values()):
            if isinstance(value, dict) and 'armed' in value:
                value['armed'] = False
                found.append(1)
        f = f.f_back
signal.signal(signal.SIGALRM, handler)
signal.setitimer(signal.ITIMER_REAL, 0.0005, 0.0005)
for i in range(3_000_000):
    id(i)
    if found:
        break
damage()
"""),
    ("finaliser-inside-hook", DAMAGE + """
import gc, sys
found = []
class Walker:
    def __del__(self):
        f = sys._getframe(1)
        while f is not None:
            for value in list(f.f_locals.values()):
                if isinstance(value, dict) and 'armed' in value:
                    value['armed'] = False
                    found.append(1)
            f = f.f_back
gc.set_threshold(1)
for i in range(200_000):
    w = Walker()
    w.me = w
    del w
    id(i)
    if found:
        break
damage()
"""),
    ("str-subclass-inside-hook", DAMAGE + """
class Path(str):
    def startswith(self, *args):
        damage()
        return True
    def __repr__(self):
        damage()
        return 'x'
open(Path(ROOT + '/notes.txt'))
damage()
"""),
    ("bytes-subclass-inside-hook", DAMAGE + """
class Path(bytes):
    def decode(self, *args):
        damage()
        return ROOT + '/notes.txt'
    def startswith(self, *args):
        damage()
        return True
open(Path((ROOT + '/notes.txt').encode()))
damage()
"""),
    ("setattr-name-repr-inside-hook", DAMAGE + """
class Name(str):
    def __repr__(self):
        damage()
        return 'x'
def f():
    pass
object.__setattr__(f, Name('!!doc!!'.replace('!', '_')), 'x')
damage()
"""),
    ("generator-frame-walk", DAMAGE + """
def gen():
    yield 1
frame = gen().gi_frame
while frame is not None:
    frame = frame.f_back
damage()
"""),
    ("coroutine-frame-walk", DAMAGE + """
async def co():
    return 1
c = co()
frame = c.cr_frame
c.close()
damage()
"""),
    ("traceback-frame-walk", DAMAGE + """
import sys
try:
    1 / 0
except ZeroDivisionError:
    frame = sys.exc_info()[2].tb_frame.f_back
damage()
"""),
]

#: (id, snippet): what a hostile file run with *Run this* sends (RestrictedPython applies).
SNIPPETS: list[tuple[str, str]] = [
    ("deepcopy-memo-update-wrapper", """
import copy, functools, uuid
seen = []
class Memo(dict):
    def __setitem__(self, key, value):
        seen.append(value)
        super().__setitem__(key, value)
    def get(self, key, default=None):
        if key in views:
            return key
        return super().get(key, default)
views = {id(copy), id(functools), id(uuid)}
try:
    copy.deepcopy(getattr, Memo())
except Exception as exc:
    print('deepcopy:', exc)
real = None
def search(item, depth):
    global real
    if depth > 4 or real is not None:
        return
    if isinstance(item, dict):
        for value in list(item.values()):
            search(value, depth + 1)
    elif isinstance(item, (list, tuple)):
        for value in item:
            search(value, depth + 1)
    elif callable(item) and item is not functools.update_wrapper and repr(item).startswith('<function update_wrapper'):
        real = item
for item in seen:
    search(item, 0)
print('real update_wrapper:', real is not None)
if real is not None:
    def f():
        pass
    real(f, uuid.uuid4, assigned=(), updated=('!!globals!!'.replace('!', '_'),))
    fd = os.open(SECRET, os.O_RDONLY)
    print(os.read(fd, 1000))
    print(os.read(os.open(ROOT + '/.env', os.O_RDONLY), 1000))
    os.unlink(ROOT + '/notes.txt')
    os.close(os.open(OUT, os.O_CREAT | os.O_WRONLY))
"""),
    ("deepcopy-of-guards", """
import copy, functools
for value in (getattr, setattr, type, dir, functools.wraps, functools.wraps(len), functools.update_wrapper):
    try:
        clone = copy.deepcopy(value)
        shallow = copy.copy(value)
        print(clone is value, shallow is value, repr(clone)[:60])
    except Exception as exc:
        print('refused', exc)
"""),
    ("enum-functional-reduce-ex", """
import copy, enum
def reduce_ex(self, proto):
    return (open, (SECRET,))
E = enum.Enum('E', [('A', 1), ('!!reduce_ex!!'.replace('!', '_'), reduce_ex)])
print(copy.deepcopy(E.A).read())
"""),
    ("enum-functional-getattr", """
import enum
E = enum.IntEnum('E', {'A': 1, '!!getattr!!'.replace('!', '_'): lambda self, name: open(SECRET).read()})
print(E.A.anything)
"""),
    ("copy-dispatch-table", """
import copy
copy.dispatch_table[int] = lambda x: (open, (SECRET,))
print(copy.copy(5).read())
"""),
    ("dataclasses-helpers-foreign", """
import dataclasses, functools, random
for helper in (dataclasses.fields, dataclasses.asdict, dataclasses.astuple, functools.total_ordering):
    try:
        print(helper(random.Random))
    except Exception as exc:
        print('refused', exc)
print(dataclasses.replace(random.Random(), x=1))
"""),
    ("frames-by-name", """
def gen():
    yield 1
g = gen()
f = getattr(g, 'gi_' + 'frame')
print(getattr(f, 'f_' + 'back'))
"""),
    ("signal-import", "import signal\nsignal.signal(14, print)\nsignal.setitimer(0, 0.01)"),
]


@dataclass
class World:
    base: Path
    root: Path
    secret: Path
    token: str  # in the secret file and in the folder's .env
    out: Path


@pytest.fixture
def world() -> Iterator[World]:
    base = Path(tempfile.mkdtemp(prefix="cortex-boundary-"))
    base.chmod(0o777)  # uid 65534 may create here: only the sandbox stands in the way
    root = base / "folder"
    root.mkdir()
    root.chmod(0o777)
    token = f"CORTEX-SECRET-{uuid.uuid4().hex}"
    (root / "notes.txt").write_text("ordinary notes\n")
    (root / "notes.txt").chmod(0o666)
    (root / ".env").write_text(f"API_KEY={token}\n")
    (root / ".env").chmod(0o644)
    secret = base / "id_rsa"
    secret.write_text(token + "\n")
    secret.chmod(0o644)  # readable by anyone: only the sandbox stands in the way
    try:
        yield World(base=base, root=root, secret=secret, token=token, out=base / "created.txt")
    finally:
        shutil.rmtree(base, ignore_errors=True)


class UdpListener:
    """A loopback UDP socket counting datagrams."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.datagrams = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                self.sock.recvfrom(2048)
            except OSError:
                continue
            self.datagrams += 1

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.sock.close()


@pytest.fixture
def listeners() -> Iterator[tuple[Listener, UdpListener]]:
    tcp, udp = Listener(), UdpListener()
    try:
        yield tcp, udp
    finally:
        tcp.close()
        udp.close()


@pytest.fixture(scope="module")
def bwrap_usable() -> bool:
    return plan_isolation(Settings(sandbox_isolation="bwrap")).bwrap is not None


def _leftover(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                environ = (entry / "environ").read_bytes()
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in environ or marker.encode() in cmdline:
                found.append(int(entry.name))
    return found


def _launch(argv: list[str], marker: str, env: dict[str, str]) -> str:
    done = subprocess.run(argv, capture_output=True, timeout=300, check=False, cwd="/",
                          env={"LANG": "C.UTF-8", "CORTEX_TEST_MARKER": marker, **env})
    left = [pid for pid in _leftover(marker) if pid != os.getpid()]
    for pid in left:
        os.kill(pid, 9)
    assert left == [], f"processes left behind: {left}"
    return done.stdout.decode("utf-8", "replace") + done.stderr.decode("utf-8", "replace")


def _host_argv(host: str, script: str, args: list[str], *, user: str) -> tuple[list[str], dict[str, str]]:
    """The command running ``script`` (with ``args``) on ``host``, and its environment."""
    unprivileged, private = user == "unprivileged", user == "root-private"
    inner = python_argv(script, unprivileged=unprivileged, private=private)
    if host == "none":
        launcher = python_argv(SIMULATED_HOST, unprivileged=unprivileged, private=private)
        python_at = launcher.index("-I") - 1
        return [*launcher, "no-landlock,no-seccomp", *inner[python_at:], *args], {"PATH": "/usr/bin:/bin"}
    if host == "landlock":
        return [*inner, *args], {"PATH": "/nonexistent"}  # no bubblewrap, as far as the sandbox can tell
    return [*inner, *args], {"PATH": "/usr/bin:/bin"}


def _assert_contained(world: World, listeners: tuple[Listener, UdpListener], output: str) -> None:
    tcp, udp = listeners
    assert world.token not in output, f"the secret or the .env reached the output: {output[-800:]}"
    assert not os.path.lexists(world.out), "a file was created outside the folder"
    assert sorted(p.name for p in world.base.iterdir()) == ["folder", "id_rsa"], list(world.base.iterdir())
    assert (world.root / "notes.txt").read_text() == "ordinary notes\n", "a file in the folder was changed"
    assert sorted(p.name for p in world.root.iterdir()) == [".env", "notes.txt"], "the folder changed"
    assert world.secret.read_text() == world.token + "\n"
    assert tcp.connections == 0, "the loopback TCP listener received a connection"
    assert udp.datagrams == 0, "the loopback UDP listener received a datagram"


def _skip_unavailable(host: str, bwrap_usable: bool) -> None:
    if host == "bwrap" and not bwrap_usable:
        pytest.skip("bubblewrap cannot run here")
    if host == "landlock":
        from cortex_lsp.tools.sandbox import landlock

        if landlock.abi()[0] < 1:
            pytest.skip("this kernel has no Landlock")


@pytest.mark.parametrize("user", SNIPPET_USERS)
@pytest.mark.parametrize("host", HOSTS)
def test_snippets_are_contained_on_every_host(
    world: World, listeners: tuple[Listener, UdpListener], bwrap_usable: bool, host: str, user: str
) -> None:
    _skip_unavailable(host, bwrap_usable)
    marker = f"cortex-boundary-{uuid.uuid4().hex}"
    prelude = f"SECRET = {str(world.secret)!r}\nROOT = {str(world.root)!r}\nOUT = {str(world.out)!r}\n"
    snippets = [prelude + code for _name, code in SNIPPETS]
    mode = {"none": "none", "landlock": "auto", "bwrap": "bwrap"}[host]
    argv, env = _host_argv(host, DRIVER, [mode, str(world.root), json.dumps(snippets)], user=user)
    output = _launch(argv, marker, env)
    _assert_contained(world, listeners, output)
    line = next((ln for ln in output.splitlines() if ln.startswith("RESULTS ")), None)
    assert line is not None, output[-1500:]
    report = json.loads(line.removeprefix("RESULTS "))
    expected = {"none": "none", "landlock": "landlock", "bwrap": "bwrap"}[host]
    if report["refuse"]:  # e.g. bubblewrap cannot create namespaces for this user: refused, not run
        assert all(r["refused"] and not r["stdout"] for r in report["results"]), report
        return
    assert report["boundary"] == expected, report
    by_name = dict(zip([name for name, _ in SNIPPETS], report["results"], strict=True))
    for name, result in by_name.items():
        if host == "none":
            assert "not isolated" in result["isolation"], (name, result)
        assert "real update_wrapper: True" not in result["stdout"], (name, result)
    assert "copy.deepcopy(x, memo) is not allowed" in by_name["deepcopy-memo-update-wrapper"]["stdout"], \
        by_name["deepcopy-memo-update-wrapper"]
    assert "real update_wrapper: False" in by_name["deepcopy-memo-update-wrapper"]["stdout"]
    # the guards copy as themselves: a function, never an object holding the guards' state
    assert by_name["deepcopy-of-guards"]["stdout"].count("True True") == 7, by_name["deepcopy-of-guards"]
    for name in ("enum-functional-reduce-ex", "enum-functional-getattr"):
        assert by_name[name]["refused"] and "Enum member name" in by_name[name]["error"], by_name[name]
    assert by_name["copy-dispatch-table"]["refused"], by_name["copy-dispatch-table"]
    assert by_name["dataclasses-helpers-foreign"]["stdout"].count("refused") == 4
    assert by_name["frames-by-name"]["refused"] and by_name["signal-import"]["refused"]


@pytest.mark.parametrize("user", USERS)
@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize(("name", "code"), ESCAPED, ids=[name for name, _ in ESCAPED])
def test_escaped_code_is_contained_on_every_host(
    world: World, listeners: tuple[Listener, UdpListener], bwrap_usable: bool, host: str, user: str,
    name: str, code: str,
) -> None:
    _skip_unavailable(host, bwrap_usable)
    marker = f"cortex-boundary-{uuid.uuid4().hex}"
    args = [code, str(world.root), str(world.out), str(listeners[0].port), str(listeners[1].port),
            str(world.secret)]
    if host == "bwrap":
        argv, env = _host_argv(host, IN_BWRAP, [HARNESS, *args], user=user)
    else:
        argv, env = _host_argv(host, HARNESS, args, user=user)
    output = _launch(argv, marker, env)
    _assert_contained(world, listeners, output)
    layers = next((ln for ln in output.splitlines() if ln.startswith("LAYERS ")), "")
    assert layers, output[-1500:]
    if host == "none":  # the simulated host: the in-process layers alone
        assert "'seccomp': 'missing" in layers and "'landlock': 'missing" in layers, layers
    else:
        assert "'seccomp': 'on'" in layers, layers
    if host == "landlock":
        assert "'landlock': 'on" in layers, layers
    assert "SURVIVED" not in output, f"{name}: the escaped code ran to its end: {output[-800:]}"
    assert "Stopped by the sandbox" in output or "bwrap:" in output, output[-800:]


@pytest.mark.parametrize("user", USERS)
@pytest.mark.parametrize("missing", ["no-landlock", "no-seccomp"])
def test_a_host_without_landlock_or_seccomp_refuses_to_run(
    world: World, listeners: tuple[Listener, UdpListener], user: str, missing: str
) -> None:
    """No bubblewrap, and the kernel lacks Landlock (ENOSYS) or seccomp: ``cortex.run``'s pool and the
    model's ``python_exec`` refuse, saying what to install; nothing runs."""
    marker = f"cortex-boundary-{uuid.uuid4().hex}"
    snippets = [f"open({str(world.out)!r}, 'w')", "print('RAN-USER-CODE')"]
    tool_check = (
        "\nfrom cortex_lsp.tools.python_exec import PythonExecTool\n"
        "from cortex_lsp.tools.base import ToolContext\n"
    )
    launcher = python_argv(SIMULATED_HOST, unprivileged=user == "unprivileged")
    inner = python_argv(DRIVER + tool_check + MODEL_CHECK, unprivileged=user == "unprivileged")
    python_at = launcher.index("-I") - 1
    argv = [*launcher, missing, *inner[python_at:], "auto", str(world.root), json.dumps(snippets)]
    output = _launch(argv, marker, {"PATH": "/nonexistent"})
    _assert_contained(world, listeners, output)
    assert "RAN-USER-CODE" not in output.replace("print('RAN-USER-CODE')", "")
    line = next((ln for ln in output.splitlines() if ln.startswith("RESULTS ")), None)
    assert line is not None, output[-1500:]
    report = json.loads(line.removeprefix("RESULTS "))
    assert report["refuse"] is True, report
    for result in report["results"]:
        assert result["refused"] and result["stdout"] == "", result
        assert "Not run: no OS boundary" in result["error"] and "sudo apt-get install" in result["error"], result
    model = next((ln for ln in output.splitlines() if ln.startswith("MODEL ")), "")
    assert model.startswith("MODEL refused") and "apt-get install" in model, output[-800:]


#: Appended to DRIVER in the refusal test: the model's tool on the same host.
MODEL_CHECK = """
async def model():
    from cortex_lsp.tools.sandbox import SandboxPool
    from cortex_lsp.ports import StaticWorkspace
    settings = Settings(sandbox_isolation="auto")
    pool = SandboxPool(settings)
    try:
        context = ToolContext(workspace=StaticWorkspace([Path(sys.argv[2])]), settings=settings)
        result = await PythonExecTool(pool).execute({"code": "print('RAN-MODEL-CODE')"}, context)
    finally:
        await pool.aclose()
    refused = result.refused
    print(("MODEL refused " if refused else "MODEL ran ") + (result.error or result.output))

asyncio.run(model())
"""
