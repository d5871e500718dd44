"""Which open folder a granted file name means, when several folders are open.

A write grant names a relative path ("notes.md"). With several workspace roots the name is read in the
first root that holds that file; a write whose absolute path lands in another root is refused. When the
name exists under several roots the reason says so and asks the user to name the folder. A name that
exists under no root (a new file) is not ambiguous: the grant's own check decides.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path, PurePosixPath

__all__ = ["relative_to_roots", "root_refusal"]


def _holder(path: Path, roots: list[Path]) -> tuple[Path, str] | None:
    for root in roots:
        try:
            return root, path.relative_to(root).as_posix()
        except ValueError:
            continue
    return None


def root_refusal(path: Path, roots: Iterable[Path]) -> str | None:
    """Why writing ``path`` is refused because its name means a file in another open folder, else ``None``."""
    resolved_roots = [root.resolve() for root in roots]
    if len(resolved_roots) < 2:
        return None
    held = _holder(path.resolve(), resolved_roots)
    if held is None:
        return None  # outside every root: the path guards refuse it
    root, relative = held
    having = [r for r in resolved_roots if (r / relative).exists()]
    if not having or having[0] == root:
        return None
    if len(having) > 1:
        names = ", ".join(r.name for r in having)
        return (f"Not written: {relative} exists in several open folders ({names}); the request's {relative} "
                f"means the one in {having[0].name}. Name the folder to write the one in {root.name}.")
    return (f"Not written: {relative} is the file in the open folder {having[0].name}, not in {root.name}; "
            "name the folder to write there.")


def relative_to_roots(path: Path, roots: Iterable[Path]) -> str | None:
    """``path`` relative to the first root that holds it (POSIX separators), else ``None``."""
    resolved = path.resolve()
    for root in roots:
        try:
            return PurePosixPath(resolved.relative_to(root.resolve())).as_posix()
        except ValueError:
            continue
    return None
