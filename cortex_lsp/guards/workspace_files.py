"""Read a file from an opened folder without trusting it.

A repository can hold anything under a familiar name: a symlink to ``/dev/zero``, a FIFO that never
yields, a 1 GB file, a directory. Every file the server reads on its own from an opened folder
(``cortex.yaml``, documents for the index, plugins) goes through :func:`read_untrusted`:

- ``O_NOFOLLOW`` (a symlink as the last component is refused) unless the caller trusts links,
- ``O_NONBLOCK`` (opening a FIFO never waits for a writer),
- ``fstat`` on the open descriptor: regular files only,
- a size cap checked on the descriptor and again while reading (a file that grows is cut off),
- decoding errors become a refusal (or replacement characters, when the caller allows them).

Failures raise :class:`UnsafeFile` with a one-line reason; nothing here blocks or raises anything else.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["UnsafeFile", "check_regular_file", "read_untrusted", "read_untrusted_text"]


class UnsafeFile(Exception):
    """The file was not read; ``str(exc)`` says why in one line."""


def _flags(follow_symlinks: bool) -> int:
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    return flags


def read_untrusted(path: Path, *, max_bytes: int, follow_symlinks: bool = False) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``max_bytes``; else :class:`UnsafeFile`."""
    try:
        fd = os.open(path, _flags(follow_symlinks))
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno is not None and os.path.islink(path):
            raise UnsafeFile(f"{path.name} is a symbolic link; it is not followed") from None
        raise UnsafeFile(f"cannot open {path.name}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFile(f"{path.name} is not a regular file")
        if st.st_size > max_bytes:
            raise UnsafeFile(f"{path.name} is {st.st_size} bytes; the limit is {max_bytes}")
        chunks: list[bytes] = []
        total = 0
        while True:
            try:
                chunk = os.read(fd, min(65536, max_bytes + 1 - total))
            except BlockingIOError:  # not possible for a regular file; refuse rather than spin
                raise UnsafeFile(f"{path.name} would block") from None
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise UnsafeFile(f"{path.name} is larger than the limit of {max_bytes} bytes")
        return b"".join(chunks)
    except OSError as exc:
        raise UnsafeFile(f"cannot read {path.name}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def read_untrusted_text(path: Path, *, max_bytes: int, follow_symlinks: bool = False,
                        strict: bool = True) -> str:
    """:func:`read_untrusted` decoded as UTF-8 (a BOM is dropped). ``strict``: bad bytes refuse the
    file; otherwise they become U+FFFD."""
    data = read_untrusted(path, max_bytes=max_bytes, follow_symlinks=follow_symlinks)
    try:
        return data.decode("utf-8-sig", errors="strict" if strict else "replace")
    except UnicodeDecodeError as exc:
        raise UnsafeFile(f"{path.name} is not UTF-8 text (byte {exc.start})") from None


def check_regular_file(path: Path, *, max_bytes: int, follow_symlinks: bool = False) -> None:
    """Refuse (:class:`UnsafeFile`) unless ``path`` is a regular file (not a link, unless followed) within
    ``max_bytes``; for files a library opens itself (plugins), checked just before."""
    try:
        st = os.stat(path) if follow_symlinks else os.lstat(path)
    except OSError as exc:
        raise UnsafeFile(f"cannot stat {path.name}: {exc.strerror or exc}") from None
    if stat.S_ISLNK(st.st_mode):
        raise UnsafeFile(f"{path.name} is a symbolic link; it is not followed")
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeFile(f"{path.name} is not a regular file")
    if st.st_size > max_bytes:
        raise UnsafeFile(f"{path.name} is {st.st_size} bytes; the limit is {max_bytes}")
