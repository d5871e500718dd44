"""The test run's own home: the user's folders stay untouched.

Before anything is collected, ``HOME`` and the XDG folders (data, config, cache, state) point at a
temporary folder for the whole run, and every server subprocess inherits them; so a default data folder,
a fallback to it, or a ``~`` path lands there. :data:`REAL_HOME` and :data:`REAL_DATA_DIR` are what they
were before; :func:`snapshot` lets the run check at its end that nothing was written under the real
default data folder.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cortex_lsp.config import default_data_dir

#: the user's home and default data folder, as they were before the run redirected them
REAL_HOME = Path.home()
REAL_DATA_DIR = default_data_dir()

REDIRECTED = ("HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME")

Snapshot = dict[str, tuple[int, int]]


@dataclass(frozen=True)
class TestHome:
    """The temporary home of one run, and the environment it replaced."""

    root: Path
    saved: dict[str, str | None]

    @property
    def data_dir(self) -> Path:
        """Where the default data folder is during the run."""
        return self.root / ".local" / "share" / "cortex-lsp"


def redirect() -> TestHome:
    """Point ``HOME`` and the XDG folders at a new temporary folder (readable by the tests' other users)."""
    root = Path(tempfile.mkdtemp(prefix="cortex-test-home-")).resolve()
    root.chmod(0o755)
    saved = {name: os.environ.get(name) for name in REDIRECTED}
    os.environ.update({
        "HOME": str(root),
        "XDG_DATA_HOME": str(root / ".local" / "share"),
        "XDG_CONFIG_HOME": str(root / ".config"),
        "XDG_CACHE_HOME": str(root / ".cache"),
        "XDG_STATE_HOME": str(root / ".local" / "state"),
    })
    return TestHome(root, saved)


def restore(home: TestHome) -> None:
    for name, value in home.saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    shutil.rmtree(home.root, ignore_errors=True)


def snapshot(folder: Path = REAL_DATA_DIR) -> Snapshot:
    """Every entry under ``folder`` with its size and modification time (empty when it doesn't exist)."""
    seen: Snapshot = {}
    if not folder.exists():
        return seen
    for current, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            path = Path(current) / name
            try:
                info = path.lstat()
            except OSError:
                continue
            seen[str(path.relative_to(folder))] = (info.st_size, info.st_mtime_ns)
    try:
        seen["."] = (0, folder.lstat().st_mtime_ns)
    except OSError:
        pass
    return seen


def changes(before: Snapshot, after: Snapshot) -> list[str]:
    """What changed between two snapshots: created, modified or removed entries."""
    found = [f"created {p}" for p in sorted(after.keys() - before.keys())]
    found += [f"removed {p}" for p in sorted(before.keys() - after.keys())]
    found += [f"modified {p}" for p in sorted(before.keys() & after.keys()) if before[p] != after[p]]
    return found
