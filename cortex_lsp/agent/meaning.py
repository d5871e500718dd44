"""The request's kind by meaning: a linear classifier over sentence embeddings of labelled examples.

:class:`MeaningClassifier` embeds the examples of :mod:`cortex_lsp.agent.route_examples` once and fits
one linear scorer per route to them (ridge regression on the embeddings, one route against the rest,
solved in closed form: a few milliseconds), built lazily in a worker thread or by
:meth:`MeaningClassifier.warm`; a request then costs one embedding and one small matrix product.
Both examples and requests are embedded as their *shape* (:func:`request_shape`): file names, quoted
text and code blocks are replaced by placeholders, so "config.json" or "print('hi')" do not pull a
request towards an example that happens to share them. The best route wins when its score reaches
:data:`MIN_SCORE` and leads the runner-up by :data:`MIN_MARGIN`, else the request is answered
directly (``sure`` is false). On paraphrase sets written by people who had not seen the examples, the
fitted scorers choose the right route more often than each route's centroid (85/96 against 83/96, and
73/80 against 66/80) or the nearest examples' vote.

The classifier only names a kind of request: the router fills the slots from the parsed intent, and a
write still needs the user's words (it grants nothing).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import logging
import os
import re
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cortex_lsp.agent.code_mentions import SourceIndex, file_holding, mentioned_names
from cortex_lsp.agent.docs_match import EMBED_AT_ASK, DocsMatch, DocsMatcher, SyncEmbedder
from cortex_lsp.agent.project_view import ProjectView, ProjectViews
from cortex_lsp.agent.route_examples import ROUTE_EXAMPLES

#: below this best score the request is unlike every route: answer directly (scores are fitted to
#: +1 for a route's own examples and -1 for the others')
MIN_SCORE = -0.30
#: the best route must lead the runner-up by this much, else answer directly
MIN_MARGIN = 0.05
#: the ridge penalty of the fit (chosen on held-out paraphrases: 0.1 overfits, 10 underfits)
RIDGE = 1.0
#: the request text the classifier reads (the encoder truncates at 256 tokens anyway)
MAX_CHARS = 600
UNSURE = "direct"
#: how long a warm-up waits for the embedder to choose its thread count (it takes a fraction of a second)
SETTLE_SECONDS = 5.0
#: bump when :func:`request_shape` changes: cached weights of the old shapes are then not used
SHAPE_VERSION = 2

log = logging.getLogger("cortex.agent")


def default_cache_dir() -> Path:
    """Where route weights and document vectors are cached: ``$XDG_CACHE_HOME/cortex-lsp`` (else
    ``~/.cache/cortex-lsp``)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cortex-lsp"


_FENCE = re.compile(r"```.*?(?:```|$)|~~~.*?(?:~~~|$)", re.DOTALL)
_QUOTE = re.compile(r"\"[^\"\n]+\"|(?<!\w)'[^'\n]{2,}'(?!\w)|«[^»\n]+»|“[^”\n]+”|‘[^’\n]+’")
_FILE = re.compile(r"(?<![\w/.])(?:[\w.-]+/)*[\w-]*\.([A-Za-z]\w{0,4})(?![\w/])")
_DATA_SUFFIXES = frozenset({"json", "csv", "tsv", "yaml", "yml", "toml", "ini", "xml"})
_CODE_SUFFIXES = frozenset({"py", "js", "ts", "sh", "rb", "go", "rs", "java", "c", "cpp"})


def request_shape(text: str) -> str:
    """``text`` with its slots as placeholders: code blocks → "code", quoted text → 'text', a data file
    → "the data file", a code file → "a code file", any other file → "the file"."""
    shape = _FENCE.sub(" code ", text)
    shape = _QUOTE.sub(" 'text' ", shape)

    def file(match: re.Match[str]) -> str:
        suffix = match.group(1).lower()
        if suffix in _DATA_SUFFIXES:
            return "the data file"
        return "a code file" if suffix in _CODE_SUFFIXES else "the file"

    shape = _FILE.sub(file, shape)
    return " ".join(shape.split())[:MAX_CHARS] or "."


@dataclass(frozen=True)
class Meaning:
    """One classification: the route to take and why."""

    #: the route to take: ``nearest`` when sure, else ``direct``
    route: str
    #: the best-scoring route
    nearest: str
    score: float
    #: the lead of ``nearest`` over the runner-up
    margin: float
    runner_up: str
    #: seconds the classification took (embedding + scoring)
    seconds: float = 0.0
    #: the open folder as routing reads it (its folders, its documents' sections), when one is open
    project: ProjectView | None = None
    #: the project's document section nearest to the request
    docs: DocsMatch | None = None
    #: the one source file that defines a name the request writes as code ("/health")
    code_file: str | None = None

    @property
    def sure(self) -> bool:
        return self.route == self.nearest

    def describe(self) -> str:
        verdict = self.route if self.sure else f"{UNSURE} (unsure: {self.nearest})"
        docs = f"; {self.docs.describe()}" if self.docs is not None and self.docs.section is not None else ""
        return (f"meaning: {verdict}, score {self.score:.2f}, margin {self.margin:.2f} over "
                f"{self.runner_up}{docs}, {self.seconds * 1000:.1f} ms")


class MeaningClassifier:
    """Nearest-example classification of requests (see the module docstring). Thread-safe."""

    def __init__(
        self,
        embedder: SyncEmbedder,
        examples: Mapping[str, Sequence[str]] = ROUTE_EXAMPLES,
        *,
        min_score: float = MIN_SCORE,
        min_margin: float = MIN_MARGIN,
        cache_dir: Path | None = None,
    ) -> None:
        if len(examples) < 2 or any(not texts for texts in examples.values()):
            raise ValueError("examples: at least two routes, each with at least one example")
        self.embedder = embedder
        self.examples = {label: tuple(texts) for label, texts in examples.items()}
        self.min_score = min_score
        self.min_margin = min_margin
        self.cache_dir = cache_dir
        self._lock = threading.Lock()
        self.docs = DocsMatcher(embedder, cache_dir)
        self.views = ProjectViews()
        self.sources = SourceIndex()
        # the folder is read in this thread while the request is embedded (the encoder releases the GIL)
        self._reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cortex-project-view")
        self._weights: Any = None
        self._labels: tuple[str, ...] = ()

    @property
    def ready(self) -> bool:
        return self._weights is not None

    def prepare(self) -> None:
        """Embed the examples and fit each route's scorer (once; later calls return at once). With a
        ``cache_dir`` the weights are read from (and written to) a file keyed by the embedder, the
        examples and the shape rules, so a new server embeds nothing."""
        if self._weights is not None:
            return
        with self._lock:
            if self._weights is not None:
                return
            labels = tuple(self.examples)
            weights = self._cached(labels)
            if weights is None:
                weights = self._fit(labels)
                self._store(weights)
            self._labels = labels
            self._weights = weights

    def _fit(self, labels: tuple[str, ...]) -> Any:
        """Ridge regression of +1 (the route's own examples) / -1 (the others') on the embeddings, with a
        bias: one row of weights per route."""
        import numpy as np

        texts = [request_shape(t) for label in labels for t in self.examples[label]]
        vectors = np.asarray(self.embedder.embed_sync(texts), dtype=np.float64)
        truth = np.concatenate([np.full(len(self.examples[label]), n) for n, label in enumerate(labels)])
        targets = np.eye(len(labels))[truth] * 2 - 1
        design = np.hstack([vectors, np.ones((len(vectors), 1))])
        gram = design.T @ design + RIDGE * np.eye(design.shape[1])
        return np.linalg.solve(gram, design.T @ targets).T.astype(np.float32)

    def _cache_file(self) -> Path | None:
        if self.cache_dir is None:
            return None
        key = hashlib.sha256(repr((self.embedder.name, SHAPE_VERSION, RIDGE,
                                   sorted(self.examples.items()))).encode())
        return self.cache_dir / f"route-weights-{key.hexdigest()[:24]}.npy"

    def _cached(self, labels: tuple[str, ...]) -> Any:
        import numpy as np

        path = self._cache_file()
        if path is None:
            return None
        try:
            weights = np.load(path, allow_pickle=False)
        except (OSError, ValueError):
            return None
        return weights if weights.ndim == 2 and weights.shape[0] == len(labels) else None

    def _store(self, weights: Any) -> None:
        import numpy as np

        path = self._cache_file()
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            with tmp.open("wb") as handle:
                np.save(handle, weights, allow_pickle=False)
            tmp.replace(path)
        except OSError as exc:
            log.warning("could not cache the route weights: %s", exc)

    def load(self) -> None:
        """:meth:`prepare`, and one embedding run (a cached matrix needs no embedding: this loads the
        session and makes its first, slowest run); then wait for the embedder to settle on its thread
        count (timed beside the serving session: two encoders running at once on a small machine made a
        first ask's classification 4-8 times slower)."""
        self.prepare()
        self.embedder.embed_sync(["warm up"])  # the session's first run allocates: not on the first ask
        settle = getattr(self.embedder, "settle", None)
        if settle is not None:
            settle(SETTLE_SECONDS)

    async def warm(self) -> None:
        """:meth:`load` in a worker thread."""
        await asyncio.to_thread(self.load)

    def classify_sync(self, text: str, root: Path | None = None, *, own_words: str | None = None) -> Meaning:
        """Classify ``text`` in this thread (embeds the examples first if not done yet); with the open
        folder ``root``, also read it (:mod:`cortex_lsp.agent.project_view`), find the document
        section nearest to the request, and the one source file that defines a name written as code in
        ``own_words`` (the user's own words; ``text`` when not given)."""
        import numpy as np

        began = time.perf_counter()
        self.prepare()
        reading = self._reader.submit(self.views.view, root) if root is not None else None
        vector = np.asarray(self.embedder.embed_sync([request_shape(text)])[0], dtype=np.float32)
        docs = project = code_file = None
        if reading is not None and root is not None:
            project = reading.result()
            if project.sections:
                self.docs.prepare(project.sections, limit=EMBED_AT_ASK)
                unit = vector / max(float(np.linalg.norm(vector)), 1e-12)
                docs = self.docs.nearest(unit, project.sections)
            names = mentioned_names(text if own_words is None else own_words)
            if names:
                code_file = file_holding(root, project.code_files, names, self.sources)
        raw = self._weights[:, :-1] @ vector + self._weights[:, -1]
        scores = dict(zip(self._labels, (float(x) for x in raw), strict=True))
        ranked = sorted(scores, key=lambda label: -scores[label])
        best, second = ranked[0], ranked[1]
        margin = scores[best] - scores[second]
        sure = scores[best] >= self.min_score and margin >= self.min_margin
        return Meaning(route=best if sure else UNSURE, nearest=best, score=scores[best], margin=margin,
                       runner_up=second, seconds=time.perf_counter() - began, project=project, docs=docs,
                       code_file=code_file)

    async def classify(self, text: str, root: Path | None = None, *, own_words: str | None = None) -> Meaning:
        """:meth:`classify_sync` in a worker thread: the event loop keeps serving."""
        return await asyncio.to_thread(functools.partial(self.classify_sync, text, root, own_words=own_words))

    def prepare_project(self, root: Path) -> None:
        """Read ``root``, embed its documents' sections and index what its source files define (the
        warm-up's job, in a worker thread)."""
        self.prepare()
        view = self.views.view(root)
        if view.sections:
            self.docs.prepare(view.sections)
        self.sources.folder(root, view.code_files)  # what its source files define, for asks that name code


def packaged_classifier(cache_dir: Path | None = None) -> MeaningClassifier | None:
    """A classifier over its own session of the packaged ONNX embedder (memory's embeddings never wait
    for it), on one thread or two, whichever runs a short sentence faster on this machine when it
    loads; ``None`` when the embedder is not installed."""
    from cortex_lsp.models.onnx_embedder import OnnxEmbedder, packaged_embedder_files

    files = packaged_embedder_files()
    if files is None:
        return None
    return MeaningClassifier(OnnxEmbedder(files, threads=1, fastest_of=(1, 2)), cache_dir=cache_dir)
