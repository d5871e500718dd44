"""Path guards: every path a tool touches resolves inside an allowed root.

Refused: ``..`` segments, absolute paths (unless they already sit inside a root), drive letters and
UNC paths, control and invisible characters (bidi overrides, zero-width), hidden parts (``.git``,
``.env``, ``.venv``, ``.cortex``, any dot-name), system folders, the server's own package and plugin
folders, and links that lead out of the roots. Writes also need an
allowed extension and a bounded size; reads are text-only and bounded.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from cortex_lsp.intent.patterns import INVISIBLE

MAX_READ_BYTES = 1024 * 1024
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]?")
_SYSTEM_PREFIXES = ("/etc", "/proc", "/sys", "/dev", "/boot", "/bin", "/sbin", "/usr", "/lib", "/var/run",
                    "/run", "/root/.ssh")
_PACKAGE_DIR = Path(__file__).resolve().parent.parent
#: Unicode categories refused in paths: controls (Cc), formats (Cf: bidi overrides, zero-width), line and
#: paragraph separators, unassigned and private-use code points; the invisible characters every reader
#: of the words strips (:data:`cortex_lsp.intent.patterns.INVISIBLE`: also Hangul fillers and variation
#: selectors, which are letters and marks by category) are refused too
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cn", "Co", "Cs"})


class PathRefused(ValueError):
    """A path the guards refuse; the message says why, in words a user (or a model) can act on."""


@dataclass(frozen=True)
class ResolvedPath:
    path: Path
    root: Path

    @property
    def relative(self) -> str:
        rel = self.path.relative_to(self.root).as_posix()
        return rel or "."


def _protected_dirs(extra: Iterable[Path]) -> list[Path]:
    return [_PACKAGE_DIR, *(p.resolve() for p in extra)]


def _is_within(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
        return True
    except ValueError:
        return False


def _check_text_form(raw: str) -> str:
    text = raw.strip()
    if "\x00" in text:
        raise PathRefused("Access denied: the path contains a NUL character.")
    if INVISIBLE.search(text) or any(unicodedata.category(ch) in _INVISIBLE_CATEGORIES for ch in text):
        # control, bidi-override and zero-width characters: a name shown to the user as something else
        raise PathRefused(
            f"Access denied: {raw!r} contains control or invisible characters (such as a right-to-left "
            "override); use a plain file name."
        )
    if _DRIVE.match(text) or text.startswith(("\\\\", "//")):
        raise PathRefused(f"Access denied: {raw!r} is a drive or network path; use a path relative to the folder.")
    text = text.replace("\\", "/")
    if text in ("", ".", "./", "~", "/"):
        return "."
    parts = PurePosixPath(text).parts
    if ".." in parts:
        raise PathRefused(f"Access denied: {raw!r} leaves the folder ('..' is not allowed).")
    if text.startswith("~"):
        raise PathRefused(f"Access denied: {raw!r} points into a home folder; use a path relative to the folder.")
    return text


def _hidden_part(parts: Sequence[str]) -> str | None:
    for part in parts:
        if part.startswith(".") and part not in (".",):
            return part
    return None


def resolve_in_roots(
    raw: str,
    roots: Sequence[Path],
    *,
    protected: Iterable[Path] = (),
    must_exist: bool = False,
) -> ResolvedPath:
    """Resolve ``raw`` (relative to the first root, or absolute inside one) with links followed.

    Raises :class:`PathRefused` with a clear reason when the path is not allowed.
    """
    if not roots:
        raise PathRefused(
            "No folder is open, so file tools are off. Open a folder in the editor (or pass --root) first."
        )
    text = _check_text_form(raw)
    resolved_roots = [r.resolve() for r in roots]
    candidates: list[tuple[Path, Path]] = []
    if text.startswith("/"):
        absolute = Path(text)
        for root in resolved_roots:
            if _is_within(absolute, root) or _is_within(absolute.resolve(), root):
                candidates.append((absolute, root))
                break
        if not candidates:
            if any(text == p or text.startswith(p + "/") for p in _SYSTEM_PREFIXES):
                raise PathRefused(f"Access denied: {raw!r} is a system path outside the open folder.")
            # "/notes.txt" often means "notes.txt at the root": accept it only if it exists there.
            rel = text.lstrip("/")
            for root in resolved_roots:
                if (root / rel).exists():
                    candidates.append((root / rel, root))
                    break
        if not candidates:
            raise PathRefused(f"Access denied: {raw!r} is outside the open folder; use a relative path.")
    else:
        # Relative: the first root that has it, else the first root.
        for root in resolved_roots:
            if (root / text).exists():
                candidates.append((root / text, root))
                break
        if not candidates:
            candidates.append((resolved_roots[0] / text, resolved_roots[0]))
    lexical, root = candidates[0]
    rel_parts = lexical.relative_to(root).parts if _is_within(lexical, root) else lexical.parts
    hidden = _hidden_part(rel_parts)
    if hidden:
        raise PathRefused(f"Access denied: {raw!r} is inside a hidden or private entry ({hidden}).")
    real = lexical.resolve()
    if not _is_within(real, root):
        raise PathRefused(f"Access denied: {raw!r} leads outside the open folder (through a link).")
    real_hidden = _hidden_part(real.relative_to(root).parts)
    if real_hidden:
        raise PathRefused(f"Access denied: {raw!r} leads into a hidden or private entry ({real_hidden}).")
    for folder in _protected_dirs(protected):
        if _is_within(real, folder):
            raise PathRefused(f"Access denied: {raw!r} is inside Cortex's own files.")
    if must_exist and not real.exists():
        raise PathRefused(f"Not found: {raw!r} does not exist in the open folder.")
    return ResolvedPath(path=real, root=root)


def check_write(
    target: ResolvedPath,
    text: str,
    *,
    allowed_extensions: Sequence[str],
    max_bytes: int,
) -> None:
    """Extension, size and file-type checks for a write (raises :class:`PathRefused`)."""
    suffix = target.path.suffix.lower()
    if suffix not in {e.lower() for e in allowed_extensions}:
        allowed = " ".join(allowed_extensions)
        raise PathRefused(f"Not written: {target.relative} has a file type Cortex may not write ({allowed} only).")
    size = len(text.encode("utf-8"))
    if size > max_bytes:
        raise PathRefused(f"Not written: the text is {size} bytes; the limit is {max_bytes}.")
    if target.path.is_dir():
        raise PathRefused(f"Not written: {target.relative} is a folder.")
    try:
        st = os.lstat(target.path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode):
        raise PathRefused(f"Not written: {target.relative} is not a regular file.")
    if st.st_nlink > 1:
        raise PathRefused(f"Not written: {target.relative} has other hard links (it may be a file outside the folder).")


def read_text_file(target: ResolvedPath, *, max_bytes: int = MAX_READ_BYTES) -> str:
    """Read a text file safely: no links swapped in after the check, a single-link regular file, bounded."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)  # a FIFO never blocks open()
    try:
        fd = os.open(target.path, flags)
    except FileNotFoundError:
        raise PathRefused(f"Not found: {target.relative} does not exist.") from None
    except OSError as exc:
        raise PathRefused(f"Cannot read {target.relative}: {exc.strerror}.") from None
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(handle.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise PathRefused(f"Cannot read {target.relative}: it is not a regular file.")
        if st.st_nlink > 1:
            raise PathRefused(f"Cannot read {target.relative}: it has other hard links.")
        if st.st_size > max_bytes:
            raise PathRefused(f"Cannot read {target.relative}: it is {st.st_size} bytes; the limit is {max_bytes}.")
        data = handle.read(max_bytes + 1)
    if b"\x00" in data[:4096]:
        raise PathRefused(f"Cannot read {target.relative}: it is a binary file.")
    return data.decode("utf-8", errors="replace")
