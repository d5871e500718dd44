"""Private by default: the data folder is the user's alone (folders 0700, files 0600).

The server sets its umask to 077 (:func:`private_umask`), so everything it creates is owner-only;
:func:`make_private` creates the data folder 0700 and tightens an existing one (and everything in it
that is Cortex's and the user owns: :data:`OWN_NAMES`), returning one message for the user when it
had to tighten anything.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600
#: the entries of the data folder that are Cortex's (databases with their -wal/-shm/-journal, Chroma)
OWN_NAMES = ("memory.db", "docs.db", "chroma")


def private_umask() -> int:
    """Owner-only permissions for every file this process creates from now on; returns the old umask."""
    return os.umask(0o077)


def make_private(folder: Path) -> list[str]:
    """Create ``folder`` 0700, or tighten it and its contents; a message when something was tightened."""
    folder = folder.expanduser()
    if not folder.exists():
        folder.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
        os.chmod(folder, DIR_MODE)
        return []
    tightened = _tighten(folder)
    for entry in sorted(folder.iterdir()):
        if not entry.name.startswith(OWN_NAMES):
            continue  # only what Cortex keeps here, should data_dir be shared with other things
        tightened += _tighten(entry)
        if entry.is_dir() and not entry.is_symlink():
            for dirpath, dirnames, filenames in os.walk(entry):
                for name in dirnames + filenames:
                    tightened += _tighten(Path(dirpath) / name)
    if not tightened:
        return []
    return [
        f"Cortex made its data folder private: {tightened} item(s) in {folder} could be read by other "
        "users and are now yours alone (folders 0700, files 0600)."
    ]


def _tighten(path: Path) -> int:
    try:
        st = os.lstat(path)
    except OSError:
        return 0
    if stat.S_ISLNK(st.st_mode) or st.st_uid != os.geteuid() or not st.st_mode & 0o077:
        return 0
    try:
        os.chmod(path, DIR_MODE if stat.S_ISDIR(st.st_mode) else FILE_MODE)
    except OSError:
        return 0
    return 1
