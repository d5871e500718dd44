"""A folder with thousands of hidden entries (a repository with node_modules, a home folder) still runs
code, on every kind of host, and its hidden entries stay unreadable to the worker at any count.

Bubblewrap covers each hidden entry with a mount, and each mount makes its start slower (and it takes
at most 9,000 arguments): a folder with many hidden entries is rebuilt instead (a tmpfs holding only
its visible entries), the subfolders that would need the most mounts are left out whole, and the
arguments go through ``--args FD``, so no count stops the worker or makes :meth:`SandboxPool.run` raise.
Landlock gives rules per visible entry, so hidden ones cost it nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from cortex_lsp.config import Settings
from cortex_lsp.tools.sandbox import SandboxPool
from cortex_lsp.tools.sandbox.hidden import hidden_entries
from cortex_lsp.tools.sandbox.isolation import (
    MAX_HIDING_MOUNTS,
    args_file,
    bwrap_argv,
    hiding_binds,
    plan_isolation,
    root_binds,
    seccomp_pipe,
)

ASYNC = pytest.mark.asyncio(loop_scope="module")
SECRET = f"HIDDEN-SECRET-{uuid.uuid4().hex}"
TOP_HIDDEN = 30_000
PACKAGES = 600


def _world(base: Path, top_hidden: int) -> Path:
    """``top_hidden`` dotfiles at the top, a link to one of them, a package with a ``.env``, and a
    node_modules whose every package holds a dotfile; the visible files hold VISIBLE-n markers."""
    root = base / "ws"
    (root / "src").mkdir(parents=True)
    for i in range(top_hidden):
        (root / f".h{i}").write_text(SECRET)
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text(SECRET)
    (root / "visible.txt").write_text("VISIBLE-1\n")
    (root / "link_to_hidden.txt").symlink_to(".h0" if top_hidden else ".git/config")
    (root / "utils.py").write_text("X = 5\n")
    (root / "src" / ".env").write_text(SECRET)
    (root / "src" / "app.txt").write_text("VISIBLE-2\n")
    for i in range(PACKAGES):
        package = root / "node_modules" / f"pkg{i}"
        package.mkdir(parents=True)
        (package / ".npmignore").write_text(SECRET)
        (package / "index.js").write_text("VISIBLE-NM\n")
    return root


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _world(tmp_path_factory.mktemp("hidden-many"), TOP_HIDDEN)


@pytest_asyncio.fixture(loop_scope="module", scope="module", params=["none", "landlock", "bwrap"])
async def pool(request: pytest.FixtureRequest) -> AsyncIterator[SandboxPool]:
    mode = {"none": "none", "landlock": "auto", "bwrap": "bwrap"}[request.param]
    sandbox = SandboxPool(Settings(code_exec_timeout_seconds=10, sandbox_isolation=mode), keep_warm=False)
    path = os.environ.get("PATH", "")
    if request.param == "landlock":
        os.environ["PATH"] = "/nonexistent"  # no bubblewrap, as far as the plan can tell
    try:
        plan = await sandbox.isolation()
    finally:
        os.environ["PATH"] = path
    if request.param != "none" and plan.boundary != request.param:
        await sandbox.aclose()
        pytest.skip(f"no {request.param} boundary here: {plan.detail}")
    yield sandbox
    await sandbox.aclose()


@ASYNC
async def test_code_runs_in_a_folder_with_thousands_of_hidden_entries(pool: SandboxPool, many: Path) -> None:
    for code, out in [("print(1)", "1\n"), ("import utils\nprint(utils.X)", "5\n"),
                      ("print(open('visible.txt').read())", "VISIBLE-1\n\n"),
                      ("print(open('src/app.txt').read())", "VISIBLE-2\n\n")]:
        result = await pool.run(code, roots=[many])
        assert (result.stdout, result.error) == (out, None), (code, result)
    for target in (".h1", ".git/config", "src/.env", "link_to_hidden.txt", "node_modules/pkg3/.npmignore"):
        result = await pool.run(f"print(open({target!r}).read())", roots=[many])
        assert result.error is not None and SECRET not in f"{result.stdout}{result.error}", result


def test_the_mounts_stay_within_the_bound(many: Path) -> None:
    hidden = hidden_entries(many)
    assert hidden is not None and len(hidden) > TOP_HIDDEN
    args, notes = hiding_binds(str(many), hidden)
    assert args is not None
    mounts = sum(1 for a in args if a in ("--ro-bind", "--tmpfs", "--symlink", "--remount-ro"))
    assert mounts <= MAX_HIDING_MOUNTS, mounts
    assert any(n.startswith("node_modules/ in") and "not visible to the sandbox" in n for n in notes), notes
    # with room for every mount, nothing is left out
    small = [(p, d) for p, d in hidden if "/node_modules/" not in p]
    args, notes = hiding_binds(str(many), small)
    assert args is not None and notes == []


def test_a_folder_too_mixed_to_hide_is_not_bound(tmp_path: Path) -> None:
    for i in range(50):
        (tmp_path / f"d{i}").mkdir()
        (tmp_path / f"d{i}" / ".x").write_text(SECRET)
        (tmp_path / f".h{i}").write_text(SECRET)
    hidden = hidden_entries(tmp_path)
    assert hidden is not None
    args, notes = hiding_binds(str(tmp_path), hidden, limit=20)
    assert args is None and "too many for bubblewrap to hide" in notes[0]
    binds = root_binds([tmp_path])
    assert binds.notes == [] and binds.args[:3] == ["--ro-bind", str(tmp_path.resolve()), str(tmp_path.resolve())]


WALK = """
import os, sys
root = sys.argv[1]
seen = []
for folder, dirs, files in os.walk(root):
    for name in files + dirs:
        path = os.path.join(folder, name)
        try:
            with open(path) as f:
                seen.append(f.read())
        except OSError:
            pass
    try:
        with open(os.path.join(folder, "written.txt"), "w") as f:
            f.write("x")
        seen.append("WROTE " + folder)
    except OSError:
        pass
for path in (".h0", ".h29999", ".git/config", "src/.env", "link_to_hidden.txt", "node_modules/pkg0/.npmignore",
             "node_modules/pkg0/index.js"):
    try:
        with open(os.path.join(root, path)) as f:
            seen.append(f.read())
    except OSError:
        pass
print("".join(seen))
"""


@pytest.mark.parametrize("top_hidden", [0, 300, TOP_HIDDEN])
def test_bubblewrap_alone_hides_every_entry_at_any_count(tmp_path: Path, top_hidden: int) -> None:
    """No in-process layer here: a plain Python inside bubblewrap walks the folder and opens everything."""
    plan = plan_isolation(Settings(sandbox_isolation="auto"))
    if plan.bwrap is None:
        pytest.skip(f"bubblewrap is not usable here: {plan.detail}")
    root = _world(tmp_path, top_hidden).resolve()
    binds = root_binds([root])
    with seccomp_pipe() as fd, args_file(binds.args) as binds_fd:
        argv = bwrap_argv(plan.bwrap, [sys.executable, "-I", "-S", "-c", WALK, str(root)], [],
                          seccomp_fd=fd, binds_fd=binds_fd)
        done = subprocess.run(argv, capture_output=True, timeout=120, check=False,
                              pass_fds=(binds_fd,) if fd is None else (fd, binds_fd))
    output = done.stdout.decode("utf-8", "replace")
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")[-800:]
    assert SECRET not in output
    assert "WROTE" not in output  # the folder and what stands in for its parts are read-only
    assert "VISIBLE-1" in output and "VISIBLE-2" in output, binds.notes
