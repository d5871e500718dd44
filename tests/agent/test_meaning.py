"""The meaning classifier: held-out examples routed by the real embedder, the shape of a request,
the unsure zone, the weights cache and its use from many threads."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from cortex_lsp.agent.meaning import MeaningClassifier, packaged_classifier, request_shape
from cortex_lsp.agent.route_examples import ROUTE_EXAMPLES
from cortex_lsp.models.onnx_embedder import OnnxEmbedder, embedder_unavailable_reason, packaged_embedder_files

FOLDS = 4


class _Memo:
    """The real embedder, each distinct text embedded once (the folds share the examples' vectors)."""

    def __init__(self, inner: OnnxEmbedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.seen: dict[str, list[float]] = {}

    def embed_sync(self, texts: Sequence[str]) -> list[list[float]]:
        new = [t for t in dict.fromkeys(texts) if t not in self.seen]
        self.seen.update(zip(new, self.inner.embed_sync(new), strict=True))
        return [self.seen[t] for t in texts]


@pytest.fixture(scope="module")
def embedder() -> _Memo:
    reason = embedder_unavailable_reason()
    if reason is not None:
        pytest.skip(f"the packaged embedder is {reason}")
    files = packaged_embedder_files()
    assert files is not None
    return _Memo(OnnxEmbedder(files))


def test_held_out_examples_are_routed_by_meaning(embedder: _Memo) -> None:
    """Four folds: each quarter of every route's examples is classified by scorers fitted to the rest.
    (The split is of the examples, never of the paraphrase eval set.)"""
    right, total, wrong = 0, 0, []
    for fold in range(FOLDS):
        train = {r: tuple(t for i, t in enumerate(ts) if i % FOLDS != fold) for r, ts in ROUTE_EXAMPLES.items()}
        classifier = MeaningClassifier(embedder, train)
        for route, texts in ROUTE_EXAMPLES.items():
            for text in texts[fold::FOLDS]:
                got = classifier.classify_sync(text)
                total += 1
                right += got.route == route
                if got.route != route:
                    wrong.append(f"{route} -> {got.describe()}: {text!r}")
    assert right / total >= 0.72, f"{right}/{total}:\n" + "\n".join(wrong)
    assert right / total <= 0.99, "the held-out split leaks (near-perfect on unseen examples)"


@pytest.mark.parametrize(("message", "route"), [
    ("give me a quick overview of what's in the src folder", "list"),
    ("Where do the docs explain how to roll back a release?", "doc_search"),
    ("Run this Python code: print(sum(range(101)))", "run_code"),
    ("What is the capital of Italy?", "direct"),
])
def test_the_issue_examples_get_their_route(embedder: _Memo, message: str, route: str) -> None:
    assert MeaningClassifier(embedder).classify_sync(message).route == route


class _Axes:
    """Embeds a text on one axis per keyword it holds (a fixed, inspectable geometry)."""

    name = "axes"

    def __init__(self, axes: Sequence[str]) -> None:
        self.axes = list(axes)
        self.calls = 0

    def embed_sync(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        out = []
        for text in texts:
            vector = [1.0 if axis in text.lower() else 0.0 for axis in self.axes] + [0.05]
            norm = sum(v * v for v in vector) ** 0.5
            out.append([v / norm for v in vector])
        return out


def test_a_request_between_two_routes_is_answered_directly() -> None:
    classifier = MeaningClassifier(_Axes(["apple", "pear"]), {"a": ("apple",), "b": ("pear",)})
    assert classifier.classify_sync("an apple").route == "a"
    tied = classifier.classify_sync("apple and pear")
    assert tied.nearest in ("a", "b") and tied.route == "direct" and not tied.sure
    unlike = classifier.classify_sync("a plum")
    assert unlike.route == "direct" and unlike.score < 0.2


def test_route_weights_are_cached_on_disk_and_reused(tmp_path: Path) -> None:
    first = _Axes(["apple", "pear"])
    MeaningClassifier(first, {"a": ("apple",), "b": ("pear",)}, cache_dir=tmp_path).prepare()
    assert first.calls == 1 and len(list(tmp_path.glob("route-weights-*.npy"))) == 1
    again = _Axes(["apple", "pear"])
    cached = MeaningClassifier(again, {"a": ("apple",), "b": ("pear",)}, cache_dir=tmp_path)
    assert cached.classify_sync("apple pie").route == "a" and again.calls == 1  # only the request
    changed = _Axes(["apple", "pear"])
    MeaningClassifier(changed, {"a": ("apple", "apples"), "b": ("pear",)}, cache_dir=tmp_path).prepare()
    assert changed.calls == 1, "other examples: other key, embedded again"
    for path in tmp_path.glob("route-weights-*.npy"):
        path.write_bytes(b"not numpy")
    broken = _Axes(["apple", "pear"])
    assert MeaningClassifier(broken, {"a": ("apple",), "b": ("pear",)}, cache_dir=tmp_path) \
        .classify_sync("pear").route == "b"


def test_many_threads_share_one_preparation() -> None:
    axes = _Axes(["apple", "pear"])
    classifier = MeaningClassifier(axes, {"a": ("apple",), "b": ("pear",)})
    results: list[str] = []
    threads = [threading.Thread(target=lambda: results.append(classifier.classify_sync("pear").route))
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == ["b"] * 8 and axes.calls == 1 + 8


def test_bad_examples_are_refused() -> None:
    with pytest.raises(ValueError, match="examples"):
        MeaningClassifier(_Axes(["a"]), {"only": ("a",)})
    with pytest.raises(ValueError, match="examples"):
        MeaningClassifier(_Axes(["a"]), {"a": ("a",), "b": ()})


@pytest.mark.parametrize(("text", "shape"), [
    ("Read config.json and tell me the port", "Read the data file and tell me the port"),
    ("jot down 'call the plumber at 5' in reminders.txt", "jot down 'text' in the file"),
    ("run this:\n```python\nprint(1)\n```", "run this: code"),
    ("open src/utils.py", "open a code file"),
    ("what's in src/?", "what's in src/?"),
    ("don't", "don't"),
    ("", "."),
])
def test_the_shape_hides_the_slots(text: str, shape: str) -> None:
    assert request_shape(text) == shape


def test_no_classifier_without_the_packaged_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("cortex_lsp.models.onnx_embedder.packaged_embedder_files", lambda: None)
    assert packaged_classifier() is None
