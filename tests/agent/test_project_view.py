"""The open folder as routing reads it: folders, document sections (bounded, hidden and linked entries
left out, unchanged documents not read again), and the document section nearest to a request."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pytest

from cortex_lsp.agent.docs_match import DocsMatcher
from cortex_lsp.agent.meaning import MeaningClassifier
from cortex_lsp.agent.meaning_route import DOCS_MATCH
from cortex_lsp.agent.project_view import MAX_DOCS, ProjectViews, scan
from cortex_lsp.models.onnx_embedder import OnnxEmbedder, embedder_unavailable_reason, packaged_embedder_files

OPERATIONS = """# Operations

## Backing up the database

Every night `pg_dump` writes a copy of the orders database to the cold-storage bucket; copies are
kept for thirty days.

## Sending the newsletter

Newsletters go out on Fridays: run `python -m shop.mail --send` after the product team approves.
"""


def _project(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir(parents=True)
    (tmp_path / "docs" / "operations.md").write_text(OPERATIONS)
    (tmp_path / "README.md").write_text("Garden shop\n===========\n\nAn online shop for seeds and tools.\n")
    (tmp_path / "shop" / "api").mkdir(parents=True)
    (tmp_path / "shop" / "notes.md").write_text("# Not documentation\n\nA note beside the code.\n")
    (tmp_path / ".private").mkdir()
    (tmp_path / ".private" / "secrets.md").write_text("# Keys\n\nthe admin password is hunter2\n")
    (tmp_path / "node_modules" / "pkg").mkdir(parents=True)
    (tmp_path / "node_modules" / "pkg" / "README.md").write_text("# Vendored\n")
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "leak.md").write_text("# Leak\n\nsecret outside the folder\n")
    (tmp_path / "docs" / "linked.md").symlink_to(outside / "leak.md")
    return tmp_path


def test_folders_and_sections_of_the_project(tmp_path: Path) -> None:
    view = scan(_project(tmp_path))
    assert {"docs", "shop", "shop/api"} <= view.folders
    assert not any(f.startswith((".private", "node_modules")) for f in view.folders)
    where = {(s.path, s.title) for s in view.sections}
    assert ("docs/operations.md", "Backing up the database") in where
    assert ("README.md", "Garden shop") in where  # a setext heading
    text = " ".join(s.text for s in view.sections)
    assert "hunter2" not in text and "secret outside" not in text and "Vendored" not in text
    assert "A note beside the code" not in text  # prose beside code is not the project's documentation
    assert view.folder("Docs/") == "docs" and view.folder("./shop/api") == "shop/api" and view.folder("x") is None


def test_the_scan_is_bounded(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    for n in range(MAX_DOCS + 20):
        (tmp_path / "docs" / f"page{n:03}.md").write_text(f"# Page {n}\n\nbody {n}\n")
    (tmp_path / "docs" / "huge.md").write_text("# Huge\n" + "x" * (1024 * 1024))
    view = scan(tmp_path)
    assert len({s.path for s in view.sections}) <= MAX_DOCS
    assert all(len(s.text) <= 600 for s in view.sections)


def test_an_unchanged_document_is_not_read_again(tmp_path: Path) -> None:
    root = _project(tmp_path)
    views = ProjectViews()
    first = views.view(root)
    page = root / "docs" / "operations.md"
    os.chmod(page, 0)  # unreadable now: an unchanged document must come from what was read before
    try:
        again = views.view(root)
    finally:
        os.chmod(page, 0o644)
    assert again.sections == first.sections
    page.write_text("# Operations\n\n## Restoring\n\nRun restore.sh.\n")
    assert any(s.title == "Restoring" for s in views.view(root).sections)


@pytest.fixture(scope="module")
def embedder() -> OnnxEmbedder:
    reason = embedder_unavailable_reason()
    if reason is not None:
        pytest.skip(f"the packaged embedder is {reason}")
    files = packaged_embedder_files()
    assert files is not None
    return OnnxEmbedder(files, threads=1)


@pytest.fixture(scope="module")
def classifier(embedder: OnnxEmbedder) -> MeaningClassifier:
    return MeaningClassifier(embedder)


@pytest.mark.parametrize(("request_text", "covered"), [
    ("how do I back up the database?", True),
    ("how long do we keep the database copies", True),
    ("when does the newsletter go out?", True),
    ("what is the capital of Portugal?", False),
    ("who wrote War and Peace", False),
    ("what does HTTP 500 mean?", False),
])
def test_the_nearest_section_says_whether_the_documents_cover_a_request(
        tmp_path: Path, classifier: MeaningClassifier, request_text: str, covered: bool) -> None:
    meaning = classifier.classify_sync(request_text, _project(tmp_path))
    assert meaning.docs is not None and meaning.project is not None
    assert (meaning.docs.score >= DOCS_MATCH) is covered, meaning.describe()


def test_section_vectors_are_cached_for_every_server(tmp_path: Path, embedder: OnnxEmbedder) -> None:
    root = _project(tmp_path / "project")
    cache = tmp_path / "cache"
    sections = scan(root).sections

    class Counting:
        name = embedder.name
        texts = 0

        def embed_sync(self, texts: Sequence[str]) -> list[list[float]]:
            Counting.texts += len(texts)
            return embedder.embed_sync(texts)

    assert DocsMatcher(Counting(), cache).prepare(sections) == 0
    embedded = Counting.texts
    assert embedded == len(sections)
    assert DocsMatcher(Counting(), cache).prepare(sections) == 0
    assert Counting.texts == embedded, "a new matcher reads the cached vectors"
    assert DocsMatcher(Counting(), cache).prepare(sections, limit=0) == 0
    moved = _project(tmp_path / "elsewhere")  # the same documents in another folder: nothing new to embed
    assert DocsMatcher(Counting(), cache).prepare(scan(moved).sections) == 0 and Counting.texts == embedded
