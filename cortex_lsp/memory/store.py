"""The persistent memory: episodic SQLite + semantic/procedural memory + the document index.

Text (turns, facts, tasks, document chunks) lives in our SQLite files; Chroma holds ids and vectors
only. Forget and reset erase from every file (see docs/storage.md); the data folder is private
(0700/0600, tightened on open with a message in :attr:`PersistentMemory.notices`).

:class:`PersistentMemory` implements the :class:`~cortex_lsp.memory.api.Memory` protocol. Create it,
``await open()``, use it, ``await aclose()``. Consolidation runs as a background task after an
answer (``schedule_consolidation``); ``wait_idle()`` waits for those tasks (tests, shutdown).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from cortex_lsp.config import Settings
from cortex_lsp.memory.api import MemoryHit, MemoryType, RecallNotReady, SessionInfo, SessionTranscript, ToolPattern
from cortex_lsp.memory.chroma import Embedder, collection_name, get_chroma_client, start_vector_process
from cortex_lsp.memory.consolidation import Verdict, extract_facts
from cortex_lsp.memory.docindex import DocIndex
from cortex_lsp.memory.episodic import EPISODIC_DB, EpisodicStore
from cortex_lsp.memory.erase import scrub_chroma_files
from cortex_lsp.memory.failed_runs import drop_unanswered_ask
from cortex_lsp.memory.private import make_private
from cortex_lsp.memory.procedural import LearnDecision, ProceduralMemory
from cortex_lsp.memory.semantic import SemanticMemory
from cortex_lsp.memory.texts import FactText, FactTexts, TaskText, TaskTexts
from cortex_lsp.memory.vectors import VectorIndex
from cortex_lsp.models.base import Message, ModelClient, ModelError

log = logging.getLogger(__name__)

DOCS_DB = "docs.db"


class MemoryNotOpen(RuntimeError):
    pass


class PersistentMemory:
    """Long-term memory in ``settings.data_dir`` (or a Chroma server when ``chroma_host`` is set)."""

    def __init__(
        self, settings: Settings, model_client: ModelClient, *, known_tools: set[str] | None = None
    ) -> None:
        self.settings = settings
        self.model_client = model_client
        self.embedder = Embedder(model_client, settings.embed_model)
        self._known_tools = known_tools
        self._episodic: EpisodicStore | None = None
        self._semantic: SemanticMemory | None = None
        self._procedural: ProceduralMemory | None = None
        self._docs: DocIndex | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        #: the verdicts of the last consolidation per session (what was kept or refused, and why)
        self.last_verdicts: dict[str, list[Verdict]] = {}
        #: messages for the user from opening the store (e.g. the data folder was tightened)
        self.notices: list[str] = []
        self._chroma_lock = asyncio.Lock()
        self._chroma_dir: Path | None = None
        self._client: Any = None
        self._vectors_task: asyncio.Future[None] | None = None
        self._vectors_failed: list[Callable[[BaseException], None]] = []
        self._opened = False

    # -- lifecycle ----------------------------------------------------------------------------------
    async def open(self, *, wait_for_vectors: bool = True) -> PersistentMemory:
        """Open the SQLite stores, start the vector process (Chroma, in a process of its own:
        :mod:`cortex_lsp.memory.vector_process`) and wait until its collections are checked and tidied
        (text an older Cortex kept in Chroma moved out, vectors whose text is gone erased).

        ``wait_for_vectors=False`` returns before that and leaves the start to :meth:`start_vectors` (the
        server: the process takes seconds to import Chroma, and a first ask needs only the turn log):
        whatever needs vectors starts them and waits (:meth:`vectors`), except recall, which is skipped
        with a note until they are ready (:meth:`related_facts`, :attr:`vectors_ready`)."""
        data = self.settings.data_dir.expanduser()
        self.notices = await asyncio.to_thread(make_private, data)
        self._episodic = await asyncio.to_thread(EpisodicStore, data / EPISODIC_DB)
        client = self._client = get_chroma_client(self.settings)  # a stand-in: no call is made yet
        self._chroma_dir = None if self.settings.chroma_host else data / "chroma"
        model = self.settings.embed_model

        def index(kind: str, *, metadata: bool = False) -> VectorIndex:
            name = collection_name(kind, model)
            return VectorIndex(client, name, self._chroma_dir, self._chroma_lock, metadata=metadata,
                               small=not metadata)  # the document index is the large one

        self._semantic = SemanticMemory(index("facts"), FactTexts(self._episodic), self.embedder)
        self._procedural = ProceduralMemory(index("procedures"), TaskTexts(self._episodic), self.embedder,
                                            known_tools=self._known_tools)
        docs = index("docs", metadata=True)
        self._docs = await asyncio.to_thread(DocIndex, data / DOCS_DB, docs, self.embedder)
        self._opened = True
        if wait_for_vectors:
            await self.vectors()
        return self

    def start_vectors(self) -> None:
        """Start the vector process and its checks now, if nothing has yet (the server does this once a
        first ask has what it needs: importing Chroma takes seconds of CPU on a 2-core machine);
        whatever needs vectors starts it too."""
        if self._vectors_task is None and self._opened:
            self._vectors_task = asyncio.ensure_future(self._prepare_vectors())
            self._vectors_task.add_done_callback(self._report_vectors)

    async def _prepare_vectors(self) -> None:
        await asyncio.to_thread(start_vector_process)  # it imports Chroma while this process goes on
        await self._move_legacy_text()
        await self._drop_orphan_vectors()

    @property
    def vectors_ready(self) -> bool:
        """Whether the vector store answers and has been checked (recall works now)."""
        task = self._vectors_task
        return task is not None and task.done() and not task.cancelled() and task.exception() is None

    def on_vectors_failed(self, callback: Callable[[BaseException], None]) -> None:
        """Call ``callback`` with the error if the vector store fails to come up (once it is started)."""
        self._vectors_failed.append(callback)

    def _report_vectors(self, task: asyncio.Future[None]) -> None:
        if not task.cancelled() and (exc := task.exception()) is not None:
            for callback in self._vectors_failed:
                callback(exc)

    async def vectors(self) -> None:
        """Wait until the vector store is ready (starting it if need be); raises what made it fail
        (e.g. Chroma would not start)."""
        self.start_vectors()
        if self._vectors_task is None:
            raise MemoryNotOpen("call `await memory.open()` first")
        await asyncio.shield(self._vectors_task)

    async def _move_legacy_text(self) -> None:
        """An older Cortex kept text in Chroma: move it to SQLite and rebuild the collections without it."""
        for rec in await self.semantic.index.take_legacy_text():
            meta = rec.metadata
            await self.semantic.texts.put([FactText(rec.id, rec.document, str(meta.get("session_id", "")),
                                                    str(meta.get("source", "")), float(meta.get("updated", 0.0)))])
        for rec in await self.procedural.index.take_legacy_text():
            meta = rec.metadata
            await self.procedural.texts.put(TaskText(rec.id, rec.document, str(meta.get("tools", "[]")),
                                                     int(meta.get("steps", 1)), float(meta.get("updated", 0.0))))
        await self.doc_index.vectors.take_legacy_text()  # docs.db has the chunk text already

    async def _drop_orphan_vectors(self) -> None:
        """A vector whose text is gone (a forget cut short) is erased too. The ids are read before the
        texts: a fact added meanwhile has its text written before its vector, so it is never taken for
        an orphan."""
        pairs = ((self.semantic.index, self.semantic.texts), (self.procedural.index, self.procedural.texts))
        for index, texts in pairs:
            ids = await index.ids()
            known = set(await texts.get())
            orphans = [i for i in ids if i not in known]
            if orphans:
                await index.erase(orphans)

    async def aclose(self) -> None:
        task = self._vectors_task
        if task is not None and not task.done():  # still starting: its tidying is done on the next open
            task.cancel()
            await asyncio.wait({task})
        await self.wait_idle()
        if self._episodic is not None:
            self._episodic.close()
        if self._docs is not None:
            self._docs.close()
        # files Chroma created in a process without the server's umask are tightened too
        await asyncio.to_thread(make_private, self.settings.data_dir.expanduser(), create=False)

    async def wait_idle(self) -> None:
        """Wait for background consolidation to finish."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    @property
    def episodic(self) -> EpisodicStore:
        if self._episodic is None:
            raise MemoryNotOpen("call `await memory.open()` first")
        return self._episodic

    @property
    def semantic(self) -> SemanticMemory:
        if self._semantic is None:
            raise MemoryNotOpen("call `await memory.open()` first")
        return self._semantic

    @property
    def procedural(self) -> ProceduralMemory:
        if self._procedural is None:
            raise MemoryNotOpen("call `await memory.open()` first")
        return self._procedural

    @property
    def doc_index(self) -> DocIndex:
        if self._docs is None:
            raise MemoryNotOpen("call `await memory.open()` first")
        return self._docs

    # -- episodic -----------------------------------------------------------------------------------
    async def new_session(self, root: str = "") -> str:
        return await asyncio.to_thread(self.episodic.new_session, root)

    async def history(self, session_id: str, turns: int) -> list[Message]:
        return await asyncio.to_thread(self.episodic.history, session_id, turns)

    async def drop_last_exchange(self, session_id: str) -> int:
        return await asyncio.to_thread(self.episodic.drop_last_exchange, session_id)

    async def store_turn(
        self,
        session_id: str,
        role: Literal["user", "assistant", "tool"],
        content: str,
        *,
        root: str = "",
        tool_name: str | None = None,
    ) -> None:
        await asyncio.to_thread(
            self.episodic.add_turn, session_id, role, content, root=root, tool_name=tool_name
        )

    async def record_error(self, session_id: str, message: str, *, root: str = "", ask: str = "") -> None:
        """An infrastructure error during a run: logged with the session, never replayed as an answer;
        the failed run's own message ``ask`` is dropped (:mod:`cortex_lsp.memory.failed_runs`)."""
        await asyncio.to_thread(self.episodic.add_turn, session_id, "error", message, root=root)
        await asyncio.to_thread(drop_unanswered_ask, self.episodic, session_id, ask)

    async def sessions(self) -> list[SessionInfo]:
        return await asyncio.to_thread(self.episodic.sessions)

    async def transcript(self, session_id: str) -> SessionTranscript | None:
        return await asyncio.to_thread(self.episodic.transcript, session_id)

    # -- semantic -----------------------------------------------------------------------------------
    async def related_facts(self, query: str, *, limit: int = 5, min_relevance: float = 0.0) -> list[str]:
        """Facts relevant to ``query``; ``semantic_min_relevance`` is a floor whatever the caller asks."""
        floor = max(min_relevance, self.settings.semantic_min_relevance)
        if not self.vectors_ready:
            self.start_vectors()
            if await self.semantic.texts.count() == 0:  # nothing stored: nothing is missed
                return []
            task = self._vectors_task
            if task is not None and task.done():  # it failed to start: the user was told (on_vectors_failed)
                log.warning("memory: facts not retrieved (the vector store did not start)")
                return []
            raise RecallNotReady("Long-term memory was still starting, so facts you told me in earlier "
                                 "sessions were not recalled for this answer.")
        try:
            return [f.content for f in await self.semantic.related(query, limit=limit, min_relevance=floor)]
        except ModelError as exc:
            log.warning("memory: facts not retrieved (%s)", exc)
            return []

    def schedule_consolidation(self, session_id: str, user_message: str) -> None:
        if not self.settings.memory_consolidation:
            return
        task = asyncio.get_running_loop().create_task(self.consolidate(session_id, user_message))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def consolidate(self, session_id: str, user_message: str) -> list[str]:
        """Learn facts from the user's own self-statements in ``user_message``; returns the stored ids."""
        try:
            facts, verdicts = await extract_facts(self.model_client, self.settings.ollama_model, user_message)
        except ModelError as exc:
            log.warning("memory: consolidation skipped (%s)", exc)
            return []
        self.last_verdicts[session_id] = verdicts
        if facts:
            await self.vectors()  # a fact is kept once the vector store is up: never dropped meanwhile
        stored = []
        for fact in facts:
            fid = await self.semantic.add(fact, session_id=session_id)
            if fid:
                stored.append(fid)
        return stored

    # -- procedural ---------------------------------------------------------------------------------
    async def tool_hints(self, task: str, *, min_relevance: float = 0.6) -> list[ToolPattern]:
        """Tool sequences of near-duplicate tasks (``procedural_min_relevance`` is a floor), names only."""
        if not self.settings.procedural_memory_enabled or not self.vectors_ready:
            return []  # a planner hint, not the user's memory: skipped while the vector store starts
        try:
            floor = max(min_relevance, self.settings.procedural_min_relevance)
            found = await self.procedural.hints(task, min_relevance=floor)
        except ModelError as exc:
            log.warning("memory: no tool hints (%s)", exc)
            return []
        # Hints carry tool names only: the earlier task's text never reaches the planner.
        return [ToolPattern(task="", tools=p.tools, steps=p.steps, score=p.score) for _, p in found]

    async def record_tool_pattern(
        self, task: str, tools: list[str], steps: int, *, hinted: bool = False, steered: bool = False
    ) -> None:
        await self.learn_tool_pattern(task, tools, steps, hinted=hinted, steered=steered)

    async def learn_tool_pattern(
        self,
        task: str,
        tools: list[str],
        steps: int,
        *,
        hinted: bool = False,
        steered: bool = False,
        success: bool = True,
    ) -> LearnDecision:
        """Like :meth:`record_tool_pattern`, and says whether (and why not) it learned."""
        if not self.settings.procedural_memory_enabled:
            return LearnDecision(False, "procedural memory is off")
        await self.vectors()
        return await self.procedural.record(
            task, tools, steps, success=success, hinted=hinted, steered=steered
        )

    # -- commands -----------------------------------------------------------------------------------
    async def search(
        self, query: str, types: list[MemoryType] | None = None, limit: int = 10
    ) -> list[MemoryHit]:
        wanted = set(types or ("semantic", "procedural", "episodic"))
        if wanted & {"semantic", "procedural"}:
            await self.vectors()
        hits: list[MemoryHit] = []
        if "semantic" in wanted:
            for f in await self.semantic.related(query, limit=limit):
                hits.append(
                    MemoryHit(
                        id=f.id,
                        type="semantic",
                        content=f.content,
                        score=round(f.score, 4),
                        metadata=_scalars(f.metadata),
                    )
                )
        if "procedural" in wanted:
            for pid, p in await self.procedural.hints(query, min_relevance=0.0, limit=limit):
                hits.append(
                    MemoryHit(
                        id=pid,
                        type="procedural",
                        content=f"{p.task} → {', '.join(p.tools)}",
                        score=round(p.score, 4),
                        metadata={"tools": ",".join(p.tools), "steps": p.steps},
                    )
                )
        if "episodic" in wanted:
            found = await asyncio.to_thread(self.episodic.search, query, limit)
            for turn, score in found:
                hits.append(
                    MemoryHit(
                        id=f"turn-{turn.id}",
                        type="episodic",
                        content=turn.content,
                        score=round(score, 4),
                        metadata={"session_id": turn.session_id, "role": turn.role, "created": turn.created},
                    )
                )
        hits.sort(key=lambda h: -h.score)
        return hits[:limit]

    async def forget(self, memory_id: str) -> bool:
        """Delete one fact (``fact-…``) or tool sequence (``proc-…``); ``turn-<n>`` deletes one turn."""
        if memory_id.startswith(("fact-", "proc-")):
            await self.vectors()
        if memory_id.startswith("fact-"):
            return await self.semantic.delete(memory_id)
        if memory_id.startswith("proc-"):
            return await self.procedural.delete(memory_id)
        if memory_id.startswith("turn-") and memory_id[5:].isdigit():
            return await asyncio.to_thread(self.episodic.delete_turn, int(memory_id[5:]))
        return False

    async def forget_many(self, memory_ids: list[str]) -> list[str]:
        """Forget many facts, tool sequences and turns at once; returns the ids that existed.

        Facts and tool sequences are batched: one transaction and one scrub for their texts, one rebuild
        per vector collection (forgetting them one by one rebuilds the collection once per id)."""
        facts = [i for i in memory_ids if i.startswith("fact-")]
        tasks = [i for i in memory_ids if i.startswith("proc-")]
        if facts or tasks:
            await self.vectors()
        gone = await self.semantic.delete_many(facts) if facts else []
        gone += await self.procedural.delete_many(tasks) if tasks else []
        for memory_id in dict.fromkeys(memory_ids):
            if memory_id.startswith("turn-") and await self.forget(memory_id):
                gone.append(memory_id)
        return gone

    async def reset(self) -> None:
        """Delete all memory: chat history, facts, tool sequences and the document index, from every file.

        Collections Cortex made for other embedding models go too.
        """
        await self.wait_idle()
        await self.vectors()
        await asyncio.to_thread(self.episodic.reset)
        await self.semantic.index.clear()
        await self.procedural.index.clear()
        await self.doc_index.reset()
        current = {self.semantic.index.name, self.procedural.index.name, self.doc_index.vectors.name}
        async with self._chroma_lock:
            await asyncio.to_thread(self._drop_other_collections, current)
        self.last_verdicts.clear()
        self.embedder.clear_cache()

    def _drop_other_collections(self, keep: set[str]) -> None:
        for col in self._client.list_collections():
            name = col if isinstance(col, str) else getattr(col, "name", "")
            if name.startswith("cortex_") and name not in keep:
                self._client.delete_collection(name)
        if self._chroma_dir is not None:
            scrub_chroma_files(self._chroma_dir)


def _scalars(meta: dict[str, Any]) -> dict[str, str | int | float]:
    return {k: v for k, v in meta.items() if isinstance(v, str | int | float)}
