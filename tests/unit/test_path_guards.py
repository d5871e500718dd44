"""Path guards: each hostile path is refused; ordinary ones resolve inside the root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cortex_lsp.guards.paths import PathRefused, check_write, read_text_file, resolve_in_roots

EXTS = [".txt", ".md", ".json", ".csv", ".py"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "root"
    (r / "sub").mkdir(parents=True)
    (r / "notes.txt").write_text("hello")
    (r / "sub" / "a.md").write_text("# a")
    (r / ".git").mkdir()
    (r / ".git" / "config").write_text("[core]")
    (r / ".env").write_text("SECRET=1")
    (tmp_path / "outside.txt").write_text("secret outside")
    return r


@pytest.mark.parametrize("raw", ["notes.txt", "./notes.txt", "sub/a.md", "sub/./a.md",
                                 "/notes.txt", "new.txt", "sub/new.md"])
def test_ordinary_paths_resolve_inside(root: Path, raw: str) -> None:
    resolved = resolve_in_roots(raw, [root])
    assert resolved.path.is_relative_to(root.resolve())


@pytest.mark.parametrize("raw", [
    "../outside.txt", "sub/../../outside.txt", "..", "/etc/passwd", "/etc/shadow", "~/.ssh/id_rsa", "~root",
    ".env", ".git/config", "sub/.hidden.txt", ".cortex/memory.db", ".venv/bin/python", "C:\\Windows\\win.ini",
    "c:/boot.ini", "\\\\server\\share\\x.txt", "//server/share/x.txt", "notes.txt\x00.py", "/proc/self/environ",
])
def test_hostile_paths_are_refused(root: Path, raw: str) -> None:
    with pytest.raises(PathRefused):
        resolve_in_roots(raw, [root])


def test_absolute_path_inside_a_root_is_accepted(root: Path) -> None:
    assert resolve_in_roots(str(root / "sub" / "a.md"), [root]).relative == "sub/a.md"


def test_symlink_out_of_root_is_refused(root: Path, tmp_path: Path) -> None:
    (root / "link.txt").symlink_to(tmp_path / "outside.txt")
    (root / "dirlink").symlink_to(tmp_path)
    for raw in ("link.txt", "dirlink/outside.txt"):
        with pytest.raises(PathRefused, match="outside"):
            resolve_in_roots(raw, [root])


def test_symlink_into_hidden_is_refused(root: Path) -> None:
    (root / "innocent.txt").symlink_to(root / ".env")
    with pytest.raises(PathRefused, match="hidden"):
        resolve_in_roots("innocent.txt", [root])


def test_no_roots_means_no_file_tools() -> None:
    with pytest.raises(PathRefused, match="No folder is open"):
        resolve_in_roots("notes.txt", [])


def test_protected_folders_are_refused(root: Path) -> None:
    plugins = root / "plugins"
    plugins.mkdir()
    with pytest.raises(PathRefused, match="Cortex's own files"):
        resolve_in_roots("plugins/x.py", [root], protected=[plugins])
    package_dir = Path(__file__).resolve().parents[2] / "cortex_lsp"
    with pytest.raises(PathRefused):
        resolve_in_roots(str(package_dir / "config.py"), [package_dir.parent])


def test_multiple_roots(root: Path, tmp_path: Path) -> None:
    second = tmp_path / "second"
    second.mkdir()
    (second / "only-here.md").write_text("x")
    assert resolve_in_roots("only-here.md", [root, second]).root == second.resolve()
    assert resolve_in_roots(str(second / "only-here.md"), [root, second]).root == second.resolve()


@pytest.mark.parametrize("name", ["run.sh", "evil.exe", "Makefile", "notes", "x.PY.bak"])
def test_write_extension_must_be_allowed(root: Path, name: str) -> None:
    with pytest.raises(PathRefused, match="file type"):
        check_write(resolve_in_roots(name, [root]), "x", allowed_extensions=EXTS, max_bytes=1000)


def test_write_size_limit(root: Path) -> None:
    target = resolve_in_roots("big.txt", [root])
    check_write(target, "x" * 1000, allowed_extensions=EXTS, max_bytes=1000)
    with pytest.raises(PathRefused, match="limit"):
        check_write(target, "x" * 1001, allowed_extensions=EXTS, max_bytes=1000)
    with pytest.raises(PathRefused, match="limit"):
        check_write(target, "é" * 600, allowed_extensions=EXTS, max_bytes=1000)  # bytes, not characters


def test_hard_link_to_outside_file_is_refused(root: Path, tmp_path: Path) -> None:
    os.link(tmp_path / "outside.txt", root / "hard.txt")
    target = resolve_in_roots("hard.txt", [root])
    with pytest.raises(PathRefused, match="hard links"):
        check_write(target, "overwrite", allowed_extensions=EXTS, max_bytes=1000)
    with pytest.raises(PathRefused, match="hard links"):
        read_text_file(target)
    assert (tmp_path / "outside.txt").read_text() == "secret outside"


def test_write_to_a_folder_is_refused(root: Path) -> None:
    (root / "dir.txt").mkdir()
    with pytest.raises(PathRefused, match="folder"):
        check_write(resolve_in_roots("dir.txt", [root]), "x", allowed_extensions=EXTS, max_bytes=1000)


def test_read_refuses_binary_and_big_and_swapped_links(root: Path, tmp_path: Path) -> None:
    (root / "bin.txt").write_bytes(b"abc\x00def")
    with pytest.raises(PathRefused, match="binary"):
        read_text_file(resolve_in_roots("bin.txt", [root]))
    (root / "big.txt").write_text("x" * 2000)
    with pytest.raises(PathRefused, match="limit"):
        read_text_file(resolve_in_roots("big.txt", [root]), max_bytes=1000)
    # checked, then swapped for a link before the read: O_NOFOLLOW refuses it
    target = resolve_in_roots("notes.txt", [root])
    (root / "notes.txt").unlink()
    (root / "notes.txt").symlink_to(tmp_path / "outside.txt")
    with pytest.raises(PathRefused):
        read_text_file(target)
