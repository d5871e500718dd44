"""A document search is one worker-thread hop (counted, not timed), and its wide-then-filter shortcuts (BM25
and vectors ranked over the whole collection, kept if in scope) never let another folder's chunks in, even
when that folder's chunks rank first by the hundreds. Real SQLite, real Chroma, the scripted embedder over HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cortex_lsp.memory.docindex import CANDIDATES, VECTOR_OVERFETCH
from cortex_lsp.memory.store import PersistentMemory

MINE = "def measure_zebra(value):\n    '''Zebra stripes, measured once.'''\n    return value\n"


def _crowd(folder: Path, sections: int) -> None:
    """One file of ``sections`` chunks that each match "zebra stripes" better than ours does."""
    folder.mkdir(parents=True)
    text = "\n\n".join(f"## Zebra {i}\n\n" + " ".join(["zebra stripes"] * 30) + f" item{i}" for i in range(sections))
    (folder / "zebras.md").write_text(text)


async def test_a_search_is_one_thread_hop(memory: PersistentMemory, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "zebra.py").write_text(MINE)
    await memory.doc_index.index_workspace([root])
    await memory.embedder.embed_one("measure_zebra")  # the query's embedding is the model client's own hop
    hops: list[str] = []
    real = asyncio.to_thread

    async def counting(func: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        hops.append(getattr(func, "__name__", repr(func)))
        return await real(func, *args, **kwargs)

    monkeypatch.setattr(asyncio, "to_thread", counting)
    for mode in ("hybrid", "bm25", "vector"):
        hops.clear()
        hits = await memory.doc_index.search("measure_zebra", [root], top_k=3, mode=mode)  # type: ignore[arg-type]
        assert hits and hits[0].path == "zebra.py", (mode, hits)
        assert len(hops) == 1, (mode, hops)


@pytest.mark.parametrize("mode", ["bm25", "vector", "hybrid"])
async def test_another_folder_ranking_first_by_hundreds_never_leaks(memory: PersistentMemory, tmp_path: Path,
                                                                    mode: str) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "zebra.py").write_text(MINE)
    other = tmp_path / "other"
    _crowd(other, CANDIDATES * VECTOR_OVERFETCH + 20)  # more than a wide ranking holds
    await memory.doc_index.index_workspace([mine])
    await memory.doc_index.index_workspace([other])
    hits = await memory.doc_index.search("zebra stripes", [mine], top_k=5, mode=mode)  # type: ignore[arg-type]
    both = await memory.doc_index.search("zebra stripes", [mine, other], top_k=5, mode=mode)  # type: ignore[arg-type]
    assert [h.path for h in hits] == ["zebra.py"], hits
    assert all(h.root == str(mine.resolve()) for h in hits)
    assert any(h.path == "zebras.md" for h in both)
