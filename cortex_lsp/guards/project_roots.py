"""Which folders may be a workspace root: a project, never the whole machine.

A root is where the agent's file tools may read and write. ``/``, the home folder itself, a folder
that holds home folders, and the system's own folders (``/etc``, ``/usr``, ``/var``, ``/proc``, …) are
not projects: opened as a root (by the editor at ``initialize``, by a ``.code-workspace`` file, by
``didChangeWorkspaceFolders`` or by the CLI's ``--root``), they would hand the model every file on the
machine. :func:`root_refusal` says why such a folder is refused; the server leaves it out of its roots
and tells the user once.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["root_refusal"]

#: system folders refused with everything inside them
SYSTEM_TREES = ("/etc", "/proc", "/sys", "/dev", "/boot", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
                "/usr", "/run", "/var/lib", "/var/log", "/var/run", "/var/cache", "/var/spool", "/var/mail",
                "/snap", "/System", "/Library", "/private/etc", "/private/var")
#: folders that hold other folders (homes, mounts, services): refused themselves, their sub-folders may be projects
CONTAINERS = ("/var", "/home", "/Users", "/opt", "/srv", "/mnt", "/media", "/tmp", "/var/tmp", "/private",
              "/usr/local")


def _home() -> Path | None:
    try:
        return Path(os.path.expanduser("~")).resolve()
    except (OSError, RuntimeError):
        return None


def root_refusal(folder: Path) -> str | None:
    """Why ``folder`` may not be a workspace root (a sentence naming it), or ``None`` when it may."""
    try:
        path = folder.resolve()
    except (OSError, RuntimeError):
        path = Path(os.path.abspath(folder))
    text = path.as_posix()
    shown = str(folder) if str(folder) == text else f"{folder} ({text})"
    if path == Path(path.anchor):
        return f"{shown} is the whole file system, not a project folder"
    home = _home()
    if home is not None and path == home:
        return f"{shown} is your home folder itself, not a project folder"
    if home is not None and home != Path(home.anchor) and path in home.parents:
        return f"{shown} holds home folders, it is not a project folder"
    if text in CONTAINERS:
        return f"{shown} is a system folder, not a project folder"
    for tree in SYSTEM_TREES:
        if text == tree or text.startswith(tree + "/"):
            # /usr/local/src/project and the like are projects: /usr/local is a container, not a system tree
            if text.startswith("/usr/local/") and tree == "/usr":
                return None
            return f"{shown} is a system folder, not a project folder"
    return None
