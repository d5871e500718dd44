"""The sandbox's second and third layers, each tested as if RestrictedPython had already been bypassed.

Each payload is plain, unrestricted Python (what an escape would give). It runs in a child process
that hardens itself exactly as the worker does (:func:`~cortex_lsp.tools.sandbox.worker.drop_root`,
``_preload``, :func:`~cortex_lsp.tools.sandbox.worker.harden`), arms the audit hook with the payload's
code object, then executes it. Assertions are on side effects: a file outside the root unchanged or
absent, a loopback listener that received nothing, no process left behind, no secret in the output.

The corpus runs as root (CI runs as root) and again as an unprivileged user through ``setpriv``; the
seccomp filter is also tested alone, and bubblewrap alone (the hidden files of the folder are not there).
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from loopback import Listener
from unprivileged import python_argv, setpriv

from cortex_lsp.config import Settings
from cortex_lsp.tools.sandbox.audit import KILLED_STATUS
from cortex_lsp.tools.sandbox.isolation import bwrap_argv, plan_isolation, root_binds, seccomp_pipe

HARDENED = """
import os, sys
from cortex_lsp.tools.sandbox import audit
from cortex_lsp.tools.sandbox.worker import _python_dirs, confine, start_os_layers
confinement, layers = start_os_layers()
controls = audit.install(1, _python_dirs())
confine(confinement, [sys.argv[2]])
payload = sys.argv[1]
code = compile(payload, "<escaped>", "exec")
controls.arm(code, [sys.argv[2]])
exec(code, {"ROOT": sys.argv[2], "OUT": sys.argv[3], "PORT": int(sys.argv[4])})
print("SURVIVED", flush=True)
os._exit(0)  # as the worker does: interpreter shutdown is not the snippet's business
"""

SECCOMP_ONLY = """
import sys
from cortex_lsp.tools.sandbox import seccomp
seccomp.install(seccomp.program(worker=True))
payload = sys.argv[1]
try:
    exec(compile(payload, "<escaped>", "exec"), {"ROOT": sys.argv[2], "OUT": sys.argv[3], "PORT": int(sys.argv[4])})
except OSError as exc:
    print("REFUSED", exc.errno, flush=True)
else:
    print("SURVIVED", flush=True)
"""


@dataclass
class World:
    root: Path
    outside: Path  # a file outside the root the payloads try to read, change or remove
    secret: str
    out: Path  # a path the payloads try to create


@pytest.fixture
def world() -> Iterator[World]:
    base = Path(tempfile.mkdtemp(prefix="cortex-layers-"))
    base.chmod(0o755)  # the unprivileged run must see the root
    root = base / "root"
    root.mkdir()
    root.chmod(0o755)
    secret = f"CORTEX-SECRET-{uuid.uuid4().hex}"
    (root / "notes.txt").write_text("ordinary notes\n")
    (root / ".env").write_text(secret + "\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text(secret + "\n")
    outside = base / "outside.txt"
    outside.write_text(secret + "\n")
    outside.chmod(0o666)  # writable by anyone: only the sandbox stands in the way
    try:
        yield World(root=root, outside=outside, secret=secret, out=base / "created.txt")
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    try:
        yield server
    finally:
        server.close()


#: (id, payload). Plain Python: ROOT, OUT, PORT are given.
PAYLOADS: list[tuple[str, str]] = [
    ("read-outside", "print(open(ROOT + '/../outside.txt').read())"),
    ("read-passwd", "print(open('/etc/passwd').read())"),
    ("read-hidden-env", "print(open(ROOT + '/.env').read())"),
    ("read-hidden-git", "print(open(ROOT + '/.git/config').read())"),
    ("read-via-symlink-dir", "import os\nprint(open(ROOT + '/notes.txt/../../outside.txt').read())"),
    ("write-outside", "open(ROOT + '/../outside.txt', 'w').write('pwned')"),
    ("create-outside", "open(OUT, 'x').write('pwned')"),
    ("os-open-write", "import os\nos.write(os.open(ROOT + '/../outside.txt', os.O_WRONLY | os.O_TRUNC), b'x')"),
    ("rename", "import os\nos.rename(ROOT + '/../outside.txt', OUT)"),
    ("unlink", "import os\nos.unlink(ROOT + '/../outside.txt')"),
    ("truncate", "import os\nos.truncate(ROOT + '/../outside.txt', 0)"),
    ("chmod", "import os\nos.chmod(ROOT + '/../outside.txt', 0)"),
    ("mmap-in-place", "import mmap, os\nfd = os.open(ROOT + '/../outside.txt', os.O_RDWR)\n"
     "m = mmap.mmap(fd, 0)\nm[:6] = b'pwned!'\nm.flush()"),
    ("socket", "import socket\nsocket.create_connection(('127.0.0.1', PORT), 1).sendall(b'leak')"),
    ("double-fork", "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
     "        time.sleep(30)\n    os._exit(0)"),
    ("os-system", "import os\nos.system('touch ' + OUT)"),
    ("subprocess", "import subprocess\nsubprocess.run(['touch', OUT])"),
    ("posix-spawn", "import os\nos.posix_spawn('/usr/bin/touch', ['touch', OUT], {})"),
    ("exec-replace", "import os\nos.execv('/usr/bin/touch', ['touch', OUT])"),
    ("kill-parent", "import os, signal\nos.kill(os.getppid(), signal.SIGTERM)"),
    ("ctypes-system", "import ctypes\nctypes.CDLL(None).system(('touch ' + OUT).encode())"),
    ("getframe", "import sys\nprint(sys._getframe().f_back.f_globals)"),
    ("frame-via-traceback", "try:\n    1/0\nexcept Exception as e:\n    print(e.__traceback__.tb_frame.f_globals)"),
    ("gc-walk", "import gc\nprint(len(gc.get_objects()))"),
    ("compile-new-code", "exec('import os')"),
    ("code-replace", "f = lambda: 0\nf.__code__ = f.__code__.replace(co_consts=(1,))"),
    ("new-import", "import sqlite3"),
    ("settrace", "import sys\nsys.settrace(lambda *a: None)"),
]


def _no_side_effects(world: World, listener: Listener, output: str) -> None:
    assert world.outside.read_text() == world.secret + "\n", "the file outside the root was changed"
    assert oct(world.outside.stat().st_mode & 0o777) == oct(0o666)
    assert not os.path.lexists(world.out), "a file was created outside the root"
    assert listener.connections == 0, "the loopback listener received a connection"
    assert world.secret not in output, "the secret reached the output"


def _leftover(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _run(script: str, payload: str, world: World, listener: Listener, *, prefix: list[str]) -> tuple[int, str]:
    """Run ``script`` (this checkout's package first on its path) as root, or as uid 65534 when
    ``prefix`` is :func:`_setpriv`'s (from a readable copy: see :mod:`unprivileged`)."""
    marker = f"cortex-layer-{uuid.uuid4().hex}"
    argv = [*python_argv(script, unprivileged=bool(prefix)), payload, str(world.root), str(world.out),
            str(listener.port), marker]
    done = subprocess.run(argv, capture_output=True, timeout=60, check=False, cwd="/",
                          env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    output = done.stdout.decode("utf-8", "replace") + done.stderr.decode("utf-8", "replace")
    left = _leftover(marker)
    for pid in left:
        os.kill(pid, 9)
    assert left == [], f"processes left behind: {left}"
    return done.returncode, output


def _setpriv() -> list[str]:
    return setpriv()


@pytest.mark.parametrize("user", ["as-is", "unprivileged"])
@pytest.mark.parametrize(("name", "payload"), PAYLOADS, ids=[p[0] for p in PAYLOADS])
def test_audit_layer_ends_the_escaped_worker(
    world: World, listener: Listener, user: str, name: str, payload: str
) -> None:
    prefix = _setpriv() if user == "unprivileged" else []
    status, output = _run(HARDENED, payload, world, listener, prefix=prefix)
    _no_side_effects(world, listener, output)
    assert "SURVIVED" not in output, f"{name}: the escaped code ran to its end: {output[-400:]}"
    assert status == KILLED_STATUS, f"{name}: exit status {status}: {output[-400:]}"
    assert "Stopped by the sandbox" in output


def test_benign_stdlib_paths_survive_the_armed_hook(world: World, listener: Listener) -> None:
    """The control: what benign snippets do (dataclasses, namedtuple defaults, Enum's functional API,
    TypeVar, a string annotation, reading a file in the root) is not an audit violation."""
    payload = (
        "import dataclasses, collections, enum, typing, json, statistics\n"
        "@dataclasses.dataclass(frozen=True)\nclass P:\n    x: int\n    nxt: 'typing.Optional[P]' = None\n"
        "T = typing.TypeVar('T')\nPt = collections.namedtuple('Pt', 'x y', defaults=[0])\n"
        "E = enum.Enum('E', 'A B')\nref = typing.Optional['P']\n"
        "print(P(1), Pt(1), E.A, statistics.mean([1, 2]), json.dumps({'a': 1}), open(ROOT + '/notes.txt').read())\n"
        "'é'.encode('latin-1')\n"
    )
    status, output = _run(HARDENED, payload, world, listener, prefix=[])
    assert status == 0 and "SURVIVED" in output and "ordinary notes" in output, output[-600:]


#: what a worker escaped to real ``os``/``resource`` could do to the server that started it (same uid
#: without bubblewrap): limits, priority and CPUs of another process. Each sets the parent's current
#: value again, so a filter that lets it through harms nothing while the test sees SURVIVED.
HOST_PAYLOADS: list[tuple[str, str]] = [
    ("prlimit-parent", "import os, resource\nnow = resource.prlimit(os.getppid(), resource.RLIMIT_CORE)\n"
     "resource.prlimit(os.getppid(), resource.RLIMIT_CORE, now)"),
    ("renice-parent", "import os\nnow = os.getpriority(os.PRIO_PROCESS, os.getppid())\n"
     "os.setpriority(os.PRIO_PROCESS, os.getppid(), now)"),
    ("affinity-parent", "import os\nos.sched_setaffinity(os.getppid(), os.sched_getaffinity(os.getppid()))"),
]
SYSCALL_PAYLOADS = [p for p in PAYLOADS if p[0] in {
    "write-outside", "create-outside", "os-open-write", "rename", "unlink", "truncate", "chmod",
    "mmap-in-place", "socket", "double-fork", "posix-spawn", "exec-replace", "kill-parent",
}] + HOST_PAYLOADS


@pytest.mark.parametrize(("name", "payload"), SYSCALL_PAYLOADS, ids=[p[0] for p in SYSCALL_PAYLOADS])
def test_seccomp_alone_refuses_changes_network_and_processes(
    world: World, listener: Listener, name: str, payload: str
) -> None:
    """No audit hook, no bubblewrap, as the user the tests run as (root in CI): the filter alone."""
    _status, output = _run(SECCOMP_ONLY, payload, world, listener, prefix=[])
    _no_side_effects(world, listener, output)
    assert "SURVIVED" not in output, f"{name}: {output[-400:]}"


@pytest.fixture(scope="module")
def bwrap() -> str:
    plan = plan_isolation(Settings(sandbox_isolation="auto"))
    if plan.bwrap is None:
        pytest.skip(f"bubblewrap is not usable here: {plan.detail}")
    return plan.bwrap


BWRAP_PAYLOADS: list[tuple[str, str]] = [
    ("hidden-env", "print(open(ROOT + '/.env').read())"),
    ("hidden-git", "print(open(ROOT + '/.git/config').read())"),
    ("list-hidden", "import os\nnames = [n for n in os.listdir(ROOT) if n.startswith('.')]\n"
     "print([open(ROOT + '/' + n).read() for n in names if os.path.isfile(ROOT + '/' + n)])"),
    ("outside", "print(open(ROOT + '/../outside.txt').read())"),
    ("write-root", "open(ROOT + '/notes.txt', 'w').write('pwned')"),
    ("socket", "import socket\nsocket.create_connection(('127.0.0.1', PORT), 1).sendall(b'leak')"),
]


@pytest.mark.parametrize(("name", "payload"), BWRAP_PAYLOADS, ids=[p[0] for p in BWRAP_PAYLOADS])
def test_bubblewrap_alone_hides_the_folders_secrets(
    bwrap: str, world: World, listener: Listener, name: str, payload: str
) -> None:
    script = (
        "import sys\npayload = sys.argv[1]\n"
        "try:\n    exec(compile(payload, '<escaped>', 'exec'), {'ROOT': sys.argv[2], 'OUT': sys.argv[3], "
        "'PORT': int(sys.argv[4])})\nexcept OSError as exc:\n    print('REFUSED', type(exc).__name__)\n"
    )
    with seccomp_pipe() as fd:
        argv = bwrap_argv(bwrap, [sys.executable, "-I", "-S", "-c", script, payload, str(world.root),
                                  str(world.out), str(listener.port)], [world.root],
                          binds=root_binds([world.root]), seccomp_fd=fd)
        done = subprocess.run(argv, capture_output=True, timeout=60, check=False,
                              pass_fds=() if fd is None else (fd,))
    output = done.stdout.decode("utf-8", "replace") + done.stderr.decode("utf-8", "replace")
    _no_side_effects(world, listener, output)
    assert (world.root / "notes.txt").read_text() == "ordinary notes\n"


def test_bubblewrap_still_shows_the_folders_ordinary_files(bwrap: str, world: World) -> None:
    script = "import sys\nprint(open(sys.argv[1] + '/notes.txt').read())"
    argv = bwrap_argv(bwrap, [sys.executable, "-I", "-S", "-c", script, str(world.root)], [world.root])
    done = subprocess.run(argv, capture_output=True, timeout=60, check=False)
    assert done.stdout.decode() == "ordinary notes\n\n", done.stderr.decode()


def _worker_uids() -> list[int]:
    uids = []
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if b"cortex_lsp.tools.sandbox.worker" in cmdline and f"--parent-pid\x00{me}".encode() in cmdline:
            uids += [int(line.split()[1]) for line in status.splitlines() if line.startswith("Uid:")]
    return uids


async def test_worker_without_bubblewrap_is_not_root(tmp_path: Path) -> None:
    """As root with ``sandbox_isolation: none``, the waiting worker already runs as uid 65534, and can
    still read a folder only root may enter (it keeps the capability to read, nothing else)."""
    if os.geteuid() != 0:
        pytest.skip("runs as root only (the drop is a no-op otherwise)")
    from cortex_lsp.tools.sandbox import SandboxPool

    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    (private / "notes.txt").write_text("ordinary notes\n")
    (private / "notes.txt").chmod(0o600)
    pool = SandboxPool(Settings(sandbox_isolation="none"))
    try:
        await pool.prewarm([private])
        await pool.wait_ready()
        assert _worker_uids() == [65534]
        result = await pool.run("print(open('notes.txt').read())", roots=[private])
        assert result.stdout == "ordinary notes\n\n", result  # it can still read the folder
    finally:
        await pool.aclose()


def test_hidden_entries_are_found_at_every_depth_and_a_late_one_is_noticed(tmp_path: Path) -> None:
    from cortex_lsp.tools.sandbox.isolation import hidden_entries, hidden_now

    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / ".env").write_text("x")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("x")
    (tmp_path / "src" / "visible.py").write_text("x")
    found = dict(hidden_entries(tmp_path) or [])
    assert found == {str(tmp_path / "src" / "pkg" / ".env"): False, str(tmp_path / ".git"): True}
    binds = root_binds([tmp_path])
    assert binds.hidden == hidden_now([tmp_path])
    (tmp_path / "src" / ".late_secret").write_text("x")  # made after a worker started
    assert hidden_now([tmp_path]) != binds.hidden
    assert hidden_entries(tmp_path, limit=3) is None  # too large to scan: the caller binds nothing


async def test_a_hidden_file_made_after_the_worker_started_gets_a_fresh_worker(bwrap: str, world: World) -> None:
    """The waiting worker's bind predates ``.late``: it must not be the one that runs the snippet."""
    import asyncio

    from cortex_lsp.tools.sandbox import SandboxPool

    pool = SandboxPool(Settings(sandbox_isolation="bwrap"))
    try:
        await pool.prewarm([world.root])
        await pool.wait_ready()
        waiting = _bwrap_pids(world.root)
        assert waiting  # bubblewrap and its PID-namespace init
        (world.root / ".late").write_text(world.secret)
        run = asyncio.create_task(pool.run("import time\ntime.sleep(2)\nprint('done')", roots=[world.root]))
        retired_before_the_run_ended = False
        while not run.done():
            if not (waiting & _bwrap_pids(world.root)):
                retired_before_the_run_ended = True
                break
            await asyncio.sleep(0.05)
        result = await run
    finally:
        await pool.aclose()
    assert result.stdout == "done\n", result
    assert retired_before_the_run_ended, "the worker started before .late existed ran the snippet"


def _bwrap_pids(root: Path) -> set[int]:
    """The bubblewrap processes below this one (the only pool here is ``root``'s; its bind arguments
    come through ``--args FD``, so the folder is not on their command line)."""
    from tests.procs import descendants

    found = set()
    for pid in descendants(os.getpid()):
        try:
            parts = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if parts and parts[0].endswith(b"bwrap"):
            found.add(pid)
    return found


# -- the OS layer alone: no RestrictedPython, no audit hook -------------------------------------------

OS_ONLY = """
import sys
from cortex_lsp.tools.sandbox.worker import confine, start_os_layers
confinement, layers = start_os_layers()
with open("/proc/self/status") as status:  # before Landlock (which leaves /proc out)
    print("STATUS", [line.split() for line in status if line.startswith(("Uid:", "Cap"))], flush=True)
notes = confine(confinement, [sys.argv[2]])
print("LAYERS", layers, notes, flush=True)
payload = sys.argv[1]
try:
    exec(compile(payload, "<escaped>", "exec"), {"ROOT": sys.argv[2], "OUT": sys.argv[3], "PORT": int(sys.argv[4])})
except OSError as exc:
    print("REFUSED", type(exc).__name__, exc.errno, flush=True)
else:
    print("SURVIVED", flush=True)
"""

LANDLOCK_ONLY = """
import sys
from cortex_lsp.tools.sandbox import landlock
from cortex_lsp.tools.sandbox.worker import _preload, _python_dirs
_preload()
confinement, state = landlock.prepare(_python_dirs())
assert confinement is not None, state
confinement.confine([sys.argv[2]])
print("LAYERS", state, flush=True)
payload = sys.argv[1]
try:
    exec(compile(payload, "<escaped>", "exec"), {"ROOT": sys.argv[2], "OUT": sys.argv[3], "PORT": int(sys.argv[4])})
except OSError as exc:
    print("REFUSED", type(exc).__name__, exc.errno, flush=True)
else:
    print("SURVIVED", flush=True)
"""


@pytest.fixture(scope="module")
def landlock_abi() -> int:
    from cortex_lsp.tools.sandbox.landlock import abi

    version, why = abi()
    if version < 1:
        pytest.skip(f"Landlock is not available here: {why}")
    return version


@pytest.fixture
def root_secret() -> Iterator[tuple[Path, str]]:
    """A secret file in a 0700 folder under root's home (what CAP_DAC_READ_SEARCH used to reach)."""
    home = Path("/root")
    if os.geteuid() != 0 or not home.is_dir():
        pytest.skip("needs root and /root")
    folder = Path(tempfile.mkdtemp(prefix=".cortex-layers-", dir=home))
    folder.chmod(0o700)
    secret = f"ROOT-SECRET-{uuid.uuid4().hex}"
    (folder / "key").write_text(secret)
    (folder / "key").chmod(0o600)
    try:
        yield folder / "key", secret
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _shadow_line() -> str:
    try:
        return Path("/etc/shadow").read_text().splitlines()[0]
    except (OSError, IndexError):
        return "root:"  # not readable by the test itself: the payload must not print it either


#: (id, payload): unrestricted Python run after the OS layer is in place. {root_file} is filled in.
OS_PAYLOADS: list[tuple[str, str]] = [
    ("read-shadow", "print(open('/etc/shadow').read())"),
    ("read-under-root", "print(open({root_file!r}).read())"),
    ("read-outside-folder", "print(open(ROOT + '/../outside.txt').read())"),
    ("read-hidden-env", "print(open(ROOT + '/.env').read())"),
    ("read-hidden-git", "print(open(ROOT + '/.git/config').read())"),
    ("read-proc-environ", "print(open('/proc/1/environ', 'rb').read())"),
    ("list-etc", "import os\nprint(os.listdir('/etc'))"),
    ("write-tmp", "open(OUT, 'w').write('pwned')"),
    ("write-outside", "open(ROOT + '/../outside.txt', 'w').write('pwned')"),
    ("write-in-folder", "open(ROOT + '/notes.txt', 'a').write('pwned')"),
    ("connect-socket", "import socket\nsocket.create_connection(('127.0.0.1', PORT), 1).sendall(b'leak')"),
]


def _os_payload(payload: str, root_file: Path) -> str:
    return payload.replace("{root_file!r}", repr(str(root_file)))


def _assert_os_refused(name: str, output: str, world: World, listener: Listener, root_secret: str) -> None:
    _no_side_effects(world, listener, output)
    assert (world.root / "notes.txt").read_text() == "ordinary notes\n"
    assert root_secret not in output and _shadow_line() not in output
    assert "SURVIVED" not in output, f"{name}: the OS layer let it through: {output[-500:]}"
    assert "REFUSED" in output, f"{name}: {output[-500:]}"


@pytest.mark.parametrize("user", ["as-is", "unprivileged"])
@pytest.mark.parametrize(("name", "payload"), OS_PAYLOADS, ids=[p[0] for p in OS_PAYLOADS])
def test_os_layer_alone_refuses_reads_writes_and_network(
    landlock_abi: int, world: World, listener: Listener, root_secret: tuple[Path, str], user: str, name: str,
    payload: str,
) -> None:
    """Layers 1 and 2 switched off: the drop (no capability left), Landlock and seccomp alone."""
    prefix = _setpriv() if user == "unprivileged" else []
    _status, output = _run(OS_ONLY, _os_payload(payload, root_secret[0]), world, listener, prefix=prefix)
    assert "'landlock': 'on" in output, output[-500:]
    if user == "as-is":
        assert "no capabilities" in output, output[-500:]
    _assert_os_refused(name, output, world, listener, root_secret[1])


LANDLOCK_PAYLOADS = [*OS_PAYLOADS,
    ("truncate-outside", "import os\nos.truncate(ROOT + '/../outside.txt', 0)"),
    ("unlink-outside", "import os\nos.unlink(ROOT + '/../outside.txt')"),
    ("rename-outside", "import os\nos.rename(ROOT + '/../outside.txt', OUT)"),
]


@pytest.mark.parametrize(("name", "payload"), LANDLOCK_PAYLOADS, ids=[p[0] for p in LANDLOCK_PAYLOADS])
def test_landlock_alone_confines_even_root(
    landlock_abi: int, world: World, listener: Listener, root_secret: tuple[Path, str], name: str, payload: str
) -> None:
    """No uid drop, no seccomp, no audit hook: root with every capability, and only Landlock in the way."""
    if name in ("connect-socket",) and landlock_abi < 4:
        pytest.skip("TCP rules need Landlock ABI 4")
    _status, output = _run(LANDLOCK_ONLY, _os_payload(payload, root_secret[0]), world, listener, prefix=[])
    assert oct(world.outside.stat().st_mode & 0o777) == oct(0o666)
    _assert_os_refused(name, output, world, listener, root_secret[1])


BENIGN_OS_PAYLOAD = (
    "import dataclasses, collections, enum, typing, json, statistics, time, decimal, re, hashlib, random\n"
    "@dataclasses.dataclass\nclass P:\n    x: int\n"
    "E = enum.Enum('E', 'A B')\n"
    "print(P(1), E.A, statistics.mean([1, 2]), json.dumps({'a': 1}), time.localtime().tm_year > 2000,\n"
    "      decimal.Decimal('1.1') + 1, re.sub('a', 'b', 'aa'), hashlib.sha256(b'x').hexdigest()[:8],\n"
    "      random.Random(1).random() < 1, open(ROOT + '/notes.txt').read(), open(ROOT + '/sub/data.txt').read())\n"
)


@pytest.mark.parametrize("user", ["as-is", "unprivileged"])
def test_os_layer_keeps_benign_code_and_the_folder_readable(
    landlock_abi: int, world: World, listener: Listener, user: str
) -> None:
    prefix = _setpriv() if user == "unprivileged" else []
    (world.root / "sub").mkdir()
    (world.root / "sub" / "data.txt").write_text("visible data\n")
    (world.root / "sub").chmod(0o755)
    _status, output = _run(OS_ONLY, BENIGN_OS_PAYLOAD, world, listener, prefix=prefix)
    assert "SURVIVED" in output and "ordinary notes" in output and "visible data" in output, output[-800:]
    assert "E.A" in output and "True" in output
    status = {row[0]: row[1:] for row in ast.literal_eval(output.split("STATUS ", 1)[1].splitlines()[0])}
    assert all(int(status[cap][0], 16) == 0 for cap in ("CapInh:", "CapPrm:", "CapEff:", "CapAmb:")), status
    if user == "as-is" and os.geteuid() == 0:  # dropped: real/effective/saved 65534; file-system uid 0 under Landlock
        assert status["Uid:"] == ["65534", "65534", "65534", "0"], status
        assert int(status["CapBnd:"][0], 16) == 0, status


def test_folder_rules_leave_every_hidden_entry_out(tmp_path: Path) -> None:
    from cortex_lsp.tools.sandbox.hidden import hidden_entries
    from cortex_lsp.tools.sandbox.landlock import FS_READ_DIR, FS_READ_FILE, READ_DIR_RIGHTS, folder_rules

    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / ".env").write_text("x")
    (tmp_path / "src" / "pkg" / "mod.py").write_text("x")
    (tmp_path / "src" / "clean").mkdir()
    (tmp_path / "src" / "clean" / "a.py").write_text("x")
    (tmp_path / ".git").mkdir()
    (tmp_path / "README.md").write_text("x")
    (tmp_path / "link.md").symlink_to("/etc/passwd")
    root = str(tmp_path)
    rules = dict(folder_rules(root, hidden_entries(tmp_path) or []))
    assert rules == {
        root: FS_READ_DIR,
        f"{root}/src": FS_READ_DIR,
        f"{root}/src/pkg": FS_READ_DIR,
        f"{root}/src/pkg/mod.py": FS_READ_FILE,
        f"{root}/src/clean": READ_DIR_RIGHTS,
        f"{root}/README.md": FS_READ_FILE,
    }
    clean = tmp_path / "clean-root"
    clean.mkdir()
    (clean / "a.txt").write_text("x")
    assert folder_rules(str(clean), []) == [(str(clean), READ_DIR_RIGHTS)]


async def test_results_carry_no_landlock_warning_when_it_is_on(
    landlock_abi: int, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the real pool, without bubblewrap (Landlock and seccomp are the boundary): the folder is
    read, and no result note says a layer is missing or the code is not isolated."""
    from cortex_lsp.tools.sandbox import SandboxPool

    monkeypatch.setenv("PATH", "/nonexistent")  # no bubblewrap, as far as the sandbox can tell
    pool = SandboxPool(Settings(sandbox_isolation="auto"), keep_warm=False)
    try:
        result = await pool.run("print(open('notes.txt').read())", roots=[world.root])
    finally:
        await pool.aclose()
    assert result.stdout == "ordinary notes\n\n", result
    assert result.isolation == "landlock+seccomp", result
    assert not any("without its" in note or "not isolated" in note for note in result.notes), result.notes


def test_doctor_and_the_warning_say_how_landlock_stands() -> None:
    from cortex_lsp.doctor import _sandbox_landlock_check
    from cortex_lsp.tools.sandbox.landlock import abi

    version, why = abi()
    check = _sandbox_landlock_check()
    warning = plan_isolation(Settings(sandbox_isolation="none")).warning or ""
    assert "not isolated" in warning and "only the in-process layers are guaranteed" in warning
    if version > 0:
        assert check.ok and f"ABI {version}" in check.detail
    else:
        assert not check.ok and check.warning and why in check.detail and "`" in check.fix
        assert "runs no code" in check.detail


def test_bubblewrap_namespace_alone_keeps_the_network_out(bwrap: str, world: World, listener: Listener) -> None:
    """The network namespace on its own (no seccomp filter behind it): a connection to a loopback
    listener of the host fails."""
    script = (
        "import socket, sys\n"
        "try:\n    socket.create_connection(('127.0.0.1', int(sys.argv[1])), 2).sendall(b'leak')\n"
        "    print('CONNECTED')\nexcept OSError as exc:\n    print('REFUSED', type(exc).__name__)\n"
    )
    argv = bwrap_argv(bwrap, [sys.executable, "-I", "-S", "-c", script, str(listener.port)], [world.root],
                      binds=root_binds([world.root]), seccomp_fd=None)
    done = subprocess.run(argv, capture_output=True, timeout=60, check=False)
    output = done.stdout.decode("utf-8", "replace") + done.stderr.decode("utf-8", "replace")
    assert "REFUSED" in output and "CONNECTED" not in output, output
    assert listener.connections == 0
