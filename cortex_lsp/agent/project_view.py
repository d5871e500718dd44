"""What the open folder holds, as routing needs it: its folders and its prose documents' sections.

A request is read against the project it is asked in: "which files are in src" names a folder only if
``src`` is one, and "how do I roll back a release?" is a question for the project's documents only if
they cover it. :func:`scan` looks at the folder (no tool call, nothing sent to a model): the folder
names two levels down, and the sections of the prose documents (Markdown, reStructuredText, text) at
the top and in documentation folders. It is bounded (entries, files, bytes), skips hidden entries,
links and vendored folders, and reads documents as untrusted text. Routing only compares a request
with it; a route it leads to still reads through the tools and every guard.
"""

from __future__ import annotations

import os
import re
import stat
import threading
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from cortex_lsp.agent.datavalue import is_data_file
from cortex_lsp.memory.docscan import SKIP_DIRS

PROSE_SUFFIXES = frozenset({".md", ".markdown", ".rst", ".txt", ".adoc"})
#: folders whose prose counts as the project's documentation (besides the top of the folder)
DOC_FOLDERS = frozenset({"docs", "doc", "documentation", "guide", "guides", "manual", "wiki", "handbook", "notes"})
#: bounds of one scan
MAX_ENTRIES = 2000
MAX_DOCS = 40
MAX_DOC_BYTES = 256 * 1024
MAX_SECTIONS = 400
MAX_DATA_NAMES = 50
MAX_CODE_NAMES = 200
#: source files whose names and routes a request may mention without naming the file
CODE_SUFFIXES = frozenset({".py", ".js", ".mjs", ".ts", ".tsx", ".jsx", ".go", ".rb", ".rs", ".java", ".kt", ".php",
                           ".cs", ".c", ".h", ".cpp", ".hpp", ".swift", ".scala", ".lua", ".sh"})
SECTION_CHARS = 600
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$|^(.+)\n(?:=+|-+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class DocSection:
    """One section of a prose document: where it starts, its heading, and its text (capped)."""

    path: str
    start: int
    title: str
    text: str


@dataclass(frozen=True)
class ProjectView:
    """Folder names (relative, ``/``-separated, two levels down) and document sections of one root."""

    folders: frozenset[str] = frozenset()
    sections: tuple[DocSection, ...] = ()
    #: the data files at the top of the folder (JSON, CSV, YAML, …), by name
    data_files: tuple[str, ...] = ()
    #: the source files two levels down (relative paths), for a request that names what is in one
    code_files: tuple[str, ...] = ()

    def folder(self, name: str) -> str | None:
        """``name`` as a folder of the project ("src", "docs/", "./src"), case as on disk, else ``None``."""
        wanted = name.strip().strip("`'\"").removeprefix("./").strip("/")
        if not wanted:
            return None
        if wanted in self.folders:
            return wanted
        lowered = {f.lower(): f for f in self.folders}
        return lowered.get(wanted.lower())


def _sections(path: str, text: str) -> list[DocSection]:
    """A document cut at its headings; a section longer than :data:`SECTION_CHARS` keeps its start."""
    out: list[DocSection] = []
    starts = [(m.start(), (m.group(2) or m.group(3) or "").strip()) for m in _HEADING.finditer(text)]
    if not starts or starts[0][0] > 0:
        starts.insert(0, (0, ""))
    for n, (offset, title) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(text)
        body = " ".join(text[offset:end].split())
        if not body:
            continue
        line = text.count("\n", 0, offset) + 1
        out.append(DocSection(path, line, title, body[:SECTION_CHARS]))
    return out


def read_text(path: Path, limit: int = MAX_DOC_BYTES) -> str | None:
    """A regular file's text, or ``None`` for a link, a FIFO or device (never blocks on one), a file
    over ``limit`` bytes, or a read error."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        data = os.read(fd, limit)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data.decode("utf-8", errors="replace")


def scan(root: Path, known: dict[str, tuple[tuple[int, int], list[DocSection]]] | None = None) -> ProjectView:
    """The :class:`ProjectView` of ``root`` (bounded; see the module docstring). Blocking: call it in a
    worker thread. ``known``: sections of documents read before, by path and (mtime, size): a document
    that did not change is not read again (the dict is updated)."""
    folders: set[str] = set()
    docs: list[tuple[str, Path]] = []
    data_files: list[str] = []
    code_files: list[str] = []
    seen = 0

    def visit(folder: Path, rel: PurePosixPath, depth: int, in_docs: bool) -> None:
        nonlocal seen
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            seen += 1
            if seen > MAX_ENTRIES:
                return
            name = entry.name
            if name.startswith(".") or entry.is_symlink():
                continue
            child = rel / name
            if entry.is_dir(follow_symlinks=False):
                if name in SKIP_DIRS or name == "__pycache__":
                    continue
                folders.add(child.as_posix())
                if depth < 2:
                    visit(Path(entry.path), child, depth + 1, in_docs or name.lower() in DOC_FOLDERS)
            elif (in_docs or depth == 0) and PurePosixPath(name.lower()).suffix in PROSE_SUFFIXES \
                    and len(docs) < MAX_DOCS:
                docs.append((child.as_posix(), Path(entry.path)))
            elif depth == 0 and is_data_file(name) and len(data_files) < MAX_DATA_NAMES:
                data_files.append(name)
            elif PurePosixPath(name.lower()).suffix in CODE_SUFFIXES and len(code_files) < MAX_CODE_NAMES \
                    and entry.is_file(follow_symlinks=False):
                code_files.append(child.as_posix())

    visit(root, PurePosixPath(), 0, False)
    sections: list[DocSection] = []
    for rel, path in docs:
        try:
            info = path.lstat()
        except OSError:
            continue
        signature = (info.st_mtime_ns, info.st_size)
        if known is not None and rel in known and known[rel][0] == signature:
            sections.extend(known[rel][1])
        else:
            text = read_text(path)
            found = _sections(rel, text) if text else []
            if known is not None:
                known[rel] = (signature, found)
            sections.extend(found)
        if len(sections) >= MAX_SECTIONS:
            break
    return ProjectView(frozenset(folders), tuple(sections[:MAX_SECTIONS]), tuple(data_files), tuple(code_files))


class ProjectViews:
    """The views of the open folders, kept between asks: a document is read again only when it changed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: dict[Path, dict[str, tuple[tuple[int, int], list[DocSection]]]] = {}

    def view(self, root: Path) -> ProjectView:
        """The view of ``root`` now (blocking: a worker thread's job)."""
        with self._lock:
            known = self._known.setdefault(root, {})
            return scan(root, known)
