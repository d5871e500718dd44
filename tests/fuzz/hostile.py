"""Hostile files for the fuzz and config tests: what a repository can hold under a familiar name."""

from __future__ import annotations

import os
from pathlib import Path

HOSTILE_CONFIGS = ["dev_zero", "symlink_to_regular", "fifo", "huge", "directory", "billion_laughs",
                   "recursive_alias", "recursive_alias_ignored_key", "non_utf8", "deep_nesting", "deep_mapping",
                   "not_a_mapping", "binary_junk", "tabs_and_garbage", "just_over_cap"]


def hostile_folder(tmp_path: Path, kind: str) -> Path:
    """A folder whose cortex.yaml is hostile in the way ``kind`` names."""
    root = tmp_path / f"repo-{kind}"
    root.mkdir()
    target = root / "cortex.yaml"
    if kind == "dev_zero":
        target.symlink_to("/dev/zero")
    elif kind == "symlink_to_regular":
        (tmp_path / "elsewhere.yaml").write_text("max_agent_steps: 2\n", encoding="utf-8")
        target.symlink_to(tmp_path / "elsewhere.yaml")
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "huge":
        with target.open("wb") as handle:
            handle.truncate(1024 * 1024 * 1024)  # sparse 1 GB
    elif kind == "directory":
        target.mkdir()
    elif kind == "billion_laughs":
        lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
        for i in range(1, 10):
            prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
            lines.append(f"{cur}: &{cur} [{', '.join(['*' + prev] * 9)}]")
        target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    elif kind == "recursive_alias":
        target.write_text("max_agent_steps: 3\nlats: &a {x: *a}\n", encoding="utf-8")
    elif kind == "recursive_alias_ignored_key":
        target.write_text("whatever: &a {x: *a}\n", encoding="utf-8")
    elif kind == "non_utf8":
        target.write_bytes(b"max_agent_steps: \xff\xfe\x80 3\n")
    elif kind == "deep_nesting":
        target.write_text("lats: " + "[" * 30000 + "]" * 30000 + "\n", encoding="utf-8")
    elif kind == "deep_mapping":
        target.write_text("lats: " + "{a: " * 15000 + "1" + "}" * 15000 + "\n", encoding="utf-8")
    elif kind == "not_a_mapping":
        target.write_text("- 1\n- 2\n", encoding="utf-8")
    elif kind == "binary_junk":
        target.write_bytes(bytes(range(256)) * 10)
    elif kind == "tabs_and_garbage":
        target.write_text("\t: : : {{{ ]]] &&& ***\n", encoding="utf-8")
    elif kind == "just_over_cap":
        target.write_text("# " + "x" * (64 * 1024) + "\nmax_agent_steps: 2\n", encoding="utf-8")
    else:
        raise AssertionError(kind)
    return root


HOSTILE_DOCUMENTS = ["fifo.py", "zero.py", "big.txt", "dir.py", "binary.py", "bad_utf8.py"]


def hostile_documents(root: Path) -> list[Path]:
    """Files an agent command may be pointed at, each hostile to a naive reader."""
    os.mkfifo(root / "fifo.py")
    (root / "zero.py").symlink_to("/dev/zero")
    with (root / "big.txt").open("wb") as handle:
        handle.truncate(1 << 30)
    (root / "dir.py").mkdir()
    (root / "binary.py").write_bytes(b"\x00\x01\x02" * 1000)
    (root / "bad_utf8.py").write_bytes(b"x = '\xff\xfe'\n")
    return [root / name for name in HOSTILE_DOCUMENTS]
