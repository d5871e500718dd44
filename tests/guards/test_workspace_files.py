"""The untrusted-file reader: regular files only, never blocks, capped, decoding errors handled."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cortex_lsp.guards.workspace_files import UnsafeFile, check_regular_file, read_untrusted, read_untrusted_text


def test_reads_a_small_regular_file(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("héllo", encoding="utf-8")
    assert read_untrusted_text(path, max_bytes=100) == "héllo"


@pytest.mark.parametrize("kind", ["dev_zero_link", "fifo", "directory", "too_big", "sparse_gb", "link_to_file"])
def test_refuses_what_is_not_a_small_regular_file(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "f"
    if kind == "dev_zero_link":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)  # opening it blocking would wait for a writer forever
    elif kind == "directory":
        path.mkdir()
    elif kind == "too_big":
        path.write_bytes(b"x" * 101)
    elif kind == "sparse_gb":
        with path.open("wb") as handle:
            handle.truncate(1 << 30)
    else:
        (tmp_path / "real").write_text("ok", encoding="utf-8")
        path.symlink_to(tmp_path / "real")
    with pytest.raises(UnsafeFile):
        read_untrusted(path, max_bytes=100)


def test_followed_link_still_needs_a_regular_target(tmp_path: Path) -> None:
    (tmp_path / "real").write_text("ok", encoding="utf-8")
    (tmp_path / "good").symlink_to(tmp_path / "real")
    (tmp_path / "zero").symlink_to("/dev/zero")
    assert read_untrusted(tmp_path / "good", max_bytes=10, follow_symlinks=True) == b"ok"
    with pytest.raises(UnsafeFile):
        read_untrusted(tmp_path / "zero", max_bytes=10, follow_symlinks=True)


def test_decoding(tmp_path: Path) -> None:
    path = tmp_path / "bad"
    path.write_bytes(b"ok \xff\xfe")
    with pytest.raises(UnsafeFile, match="not UTF-8"):
        read_untrusted_text(path, max_bytes=100)
    assert read_untrusted_text(path, max_bytes=100, strict=False) == "ok \ufffd\ufffd"


def test_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_untrusted(tmp_path / "none", max_bytes=10)


def test_check_regular_file(tmp_path: Path) -> None:
    (tmp_path / "p.py").write_text("x = 1\n", encoding="utf-8")
    check_regular_file(tmp_path / "p.py", max_bytes=100)
    os.mkfifo(tmp_path / "fifo.py")
    with pytest.raises(UnsafeFile):
        check_regular_file(tmp_path / "fifo.py", max_bytes=100)
    with pytest.raises(UnsafeFile):
        check_regular_file(tmp_path / "p.py", max_bytes=3)
