"""What is on disk: grep the bytes of every file under a folder for a text or a vector (float32)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np


def all_files(folder: Path) -> list[Path]:
    out: list[Path] = []
    for dirpath, _, filenames in os.walk(folder):
        out.extend(Path(dirpath) / name for name in filenames)
    return sorted(out)


def files_holding(folder: Path, *needles: str) -> dict[str, list[str]]:
    """``{needle: [files whose bytes contain it (UTF-8 or UTF-16)]}``, only the needles found."""
    found: dict[str, list[str]] = {}
    blobs = {p: p.read_bytes() for p in all_files(folder)}
    for needle in needles:
        forms = [needle.encode(), needle.encode("utf-16-le"), needle.lower().encode()]
        hits = [str(p.relative_to(folder)) for p, b in blobs.items() if any(f in b for f in forms)]
        if hits:
            found[needle] = hits
    return found


def holds_vector(data: bytes, vector: Sequence[float], *, tol: float = 1e-5) -> bool:
    """Do ``data`` hold ``vector`` as float32 (raw or unit-normalised), at any byte alignment?"""
    vec = np.asarray(vector, dtype=np.float32)
    candidates = [vec]
    norm = float(np.linalg.norm(vec))
    if norm and abs(norm - 1.0) > 1e-6:
        candidates.append(vec / norm)
    k = int(np.flatnonzero(vec)[0])
    n = len(vec)
    for shift in range(4):
        usable = (len(data) - shift) // 4
        if usable < n:
            continue
        arr = np.frombuffer(data, dtype=np.float32, count=usable, offset=shift)
        for cand in candidates:
            with np.errstate(invalid="ignore"):
                starts = np.flatnonzero(np.abs(arr - cand[k]) < tol) - k
            for s in starts:
                if 0 <= s <= len(arr) - n and np.allclose(arr[s : s + n], cand, atol=tol, equal_nan=False):
                    return True
    return False


def files_holding_vector(folder: Path, vector: Sequence[float]) -> list[str]:
    return [str(p.relative_to(folder)) for p in all_files(folder) if holds_vector(p.read_bytes(), vector)]
