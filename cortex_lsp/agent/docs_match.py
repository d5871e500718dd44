"""How closely the project's own documents cover a request: the nearest document section by meaning.

"How do I roll back a bad release?" is a question for the project's documents when they have a
section about it, and general knowledge when they do not. :class:`DocsMatcher` embeds the sections of
:class:`~cortex_lsp.agent.project_view.ProjectView` (heading and text, in the classifier's embedding
space) once, keeps the vectors by the section's text (in memory, and in one cache file shared by every
server and folder, so a new server embeds nothing it has seen), and scores a request's vector against
them: one matrix product per ask. Embedding new sections is work for a worker thread (the server's
warm-up does it); a request that arrives before they are ready is scored against what is ready, and at
most :data:`EMBED_AT_ASK` sections are embedded while it waits.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from cortex_lsp.agent.project_view import DocSection

#: characters of a section that are embedded (its heading first): the start says what it is about
EMBED_CHARS = 300
#: sections an ask embeds itself when the warm-up has not yet (a small folder's documents)
EMBED_AT_ASK = 12
#: vectors kept in memory (all folders)
MAX_VECTORS = 5000

log = logging.getLogger("cortex.agent")


class SyncEmbedder(Protocol):
    """What the classifier and the documents' matcher need of an embedder
    (:class:`~cortex_lsp.models.onnx_embedder.OnnxEmbedder`)."""

    name: str

    def embed_sync(self, texts: Sequence[str]) -> list[list[float]]: ...


@dataclass(frozen=True)
class DocsMatch:
    """The section nearest to a request, and its cosine."""

    score: float
    section: DocSection | None

    def describe(self) -> str:
        where = f"{self.section.path}:{self.section.start}" if self.section else "none"
        return f"documents: nearest {where}, score {self.score:.2f}"


def section_text(section: DocSection) -> str:
    head = f"{section.title}: " if section.title and not section.text.lstrip("# ").startswith(section.title) else ""
    return (head + section.text)[:EMBED_CHARS]


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:32]


class DocsMatcher:
    """Section vectors by text, and the nearest section to a request vector. Thread-safe."""

    def __init__(self, embedder: SyncEmbedder, cache_dir: Path | None = None) -> None:
        self.embedder = embedder
        self.cache_dir = cache_dir
        self._lock = threading.Lock()
        self._vectors: dict[str, Any] = {}
        self._loaded = False

    def _cache_file(self) -> Path | None:
        if self.cache_dir is None:
            return None
        return self.cache_dir / f"doc-sections-{_key(self.embedder.name)[:24]}.npz"

    def _read_cache(self) -> dict[str, Any]:
        import numpy as np

        path = self._cache_file()
        if path is None:
            return {}
        try:
            with np.load(path, allow_pickle=False) as data:
                keys, vectors = data["keys"], data["vectors"]
        except (OSError, ValueError, KeyError):
            return {}
        if vectors.ndim != 2 or len(keys) != vectors.shape[0]:
            return {}
        return dict(zip((str(k) for k in keys.tolist()), vectors, strict=True))

    def _load(self) -> None:
        if not self._loaded:
            self._loaded = True
            for key, vector in self._read_cache().items():
                self._vectors.setdefault(key, vector)

    def _store(self) -> None:
        """Write the vectors known here, with those another server wrote meanwhile (at most
        :data:`MAX_VECTORS`, this server's first)."""
        import numpy as np

        path = self._cache_file()
        if path is None or not self._vectors:
            return
        merged = dict(self._vectors)
        for key, vector in self._read_cache().items():
            if len(merged) >= MAX_VECTORS:
                break
            merged.setdefault(key, vector)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            with tmp.open("wb") as handle:
                np.savez(handle, keys=np.asarray(list(merged)), vectors=np.stack(list(merged.values())))
            tmp.replace(path)
        except OSError as exc:
            log.warning("could not cache the document sections' vectors: %s", exc)

    def prepare(self, sections: Sequence[DocSection], *, limit: int | None = None) -> int:
        """Embed the sections not embedded yet (at most ``limit``); returns how many are still missing.
        Blocking: call it in a worker thread."""
        import numpy as np

        texts = {_key(t): t for t in (section_text(s) for s in sections)}
        with self._lock:
            self._load()
            missing = [k for k in texts if k not in self._vectors]
        todo = missing if limit is None else missing[:limit]
        if todo:
            vectors = np.asarray(self.embedder.embed_sync([texts[k] for k in todo]), dtype=np.float32)
            norms = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
            with self._lock:
                if len(self._vectors) + len(todo) > MAX_VECTORS:
                    self._vectors.clear()
                for key, vector in zip(todo, vectors / norms, strict=True):
                    self._vectors[key] = vector
                self._store()
        return len(missing) - len(todo)

    def nearest(self, vector: Any, sections: Sequence[DocSection]) -> DocsMatch:
        """The section whose vector is nearest to ``vector`` (a unit vector), among those embedded."""
        import numpy as np

        best, found = -1.0, None
        with self._lock:
            pairs = [(s, self._vectors.get(_key(section_text(s)))) for s in sections]
        ready = [(s, v) for s, v in pairs if v is not None]
        if not ready:
            return DocsMatch(0.0, None)
        scores = np.stack([v for _, v in ready]) @ vector
        index = int(scores.argmax())
        best, found = float(scores[index]), ready[index][0]
        return DocsMatch(best, found)
