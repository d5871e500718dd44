"""Indexing runs off the event loop: every SQLite statement of an index pass (and of a search, a file
drop and a reset), and every file read, happens in a worker thread — checked by thread identity, not
by time. The code-action tail while 300 × 1 MB files are indexed is measured in benchmarks/index_bench.py.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from cortex_lsp.guards.paths import ResolvedPath
from cortex_lsp.memory.docindex import default_reader
from cortex_lsp.memory.store import PersistentMemory


def _folder(tmp_path: Path, files: int = 12) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    for i in range(files):
        body = "\n\n".join(f"## Part {k} of file {i}\n" + f"line {k} of notes {i} about topic{k % 7}. " * 40
                           for k in range(30))
        (root / f"notes{i}.md").write_text(body, encoding="utf-8")
    return root


async def test_index_search_drop_and_reset_touch_sqlite_only_in_worker_threads(
        memory: PersistentMemory, tmp_path: Path) -> None:
    root = _folder(tmp_path)
    index = memory.doc_index
    loop_thread = threading.get_ident()
    statements: list[tuple[int, str]] = []
    reads: list[int] = []
    index._db.set_trace_callback(lambda sql: statements.append((threading.get_ident(), sql)))

    def reader(target: ResolvedPath) -> str:
        reads.append(threading.get_ident())
        return default_reader(target)

    stats = await index.index_workspace([root], reader)
    assert stats.indexed == 12 and stats.chunks > 12
    (root / "notes3.md").unlink()
    (root / "notes4.md").write_text("## Changed\nnew text about topic99\n", encoding="utf-8")
    again = await index.index_workspace([root], reader)
    assert again.removed == 1 and again.indexed == 1
    hits = await index.search("topic99", [root], top_k=3)
    assert hits
    await index.reset()
    await asyncio.sleep(0)
    index._db.set_trace_callback(None)
    assert len(reads) == 13
    assert loop_thread not in reads, "a file was read on the event loop"
    on_loop = [sql for thread, sql in statements if thread == loop_thread]
    assert statements and on_loop == [], f"{len(on_loop)} SQLite statements ran on the event loop: {on_loop[:5]}"
