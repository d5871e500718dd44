"""Structure-aware chunking for document search, with 1-based line ranges for citations.

Markdown is cut at headings (then paragraphs when a section is long), Python at top-level
definitions (``ast``; methods when a class is long), other text at blank lines. Line endings are
normalised first, so CRLF and CR files chunk (and cite) exactly like LF files.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from cortex_lsp.memory.stemming import stem

DEFAULT_MAX_CHARS = 1500
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+\S")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_TOKEN = re.compile(r"[A-Za-z0-9_]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


@dataclass(frozen=True)
class Chunk:
    start_line: int
    end_line: int
    text: str
    heading: str = ""

    @property
    def index_text(self) -> str:
        """What gets embedded and BM25-indexed: the chunk with its section heading."""
        if self.heading and not self.text.lstrip().startswith(self.heading):
            return f"{self.heading}\n{self.text}"
        return self.text


def normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


#: bump when :func:`tokenize` changes: an index's BM25 postings of another version are rebuilt
TOKENS_VERSION = 2


def tokenize(text: str) -> list[str]:
    """Lower-cased words, and a word's stem when it differs ("releases" → "releases releas"); identifiers
    also yield their snake_case and camelCase parts."""
    out: list[str] = []
    for word in _TOKEN.findall(text):
        low = word.lower()
        out.append(low)
        if low.isalpha() and (cut := stem(low)) != low:
            out.append(cut)
        parts = [p for piece in word.split("_") for p in _CAMEL.findall(piece)]
        if len(parts) > 1:
            out.extend(p.lower() for p in parts if len(p) > 1)
    return out


def _make(lines: list[str], start: int, end: int, heading: str = "") -> Chunk | None:
    """Lines ``start..end`` (0-based, inclusive) as a chunk, trimmed of blank edges."""
    while start <= end and not lines[start].strip():
        start += 1
    while end >= start and not lines[end].strip():
        end -= 1
    if start > end:
        return None
    return Chunk(
        start_line=start + 1, end_line=end + 1, text="\n".join(lines[start : end + 1]), heading=heading
    )


def _blocks(lines: list[str], start: int, end: int) -> list[tuple[int, int]]:
    """Paragraph blocks (blank-line separated, fences kept whole) within ``start..end``."""
    blocks: list[tuple[int, int]] = []
    cur: int | None = None
    in_fence = False
    for i in range(start, end + 1):
        line = lines[i]
        if _FENCE.match(line):
            in_fence = not in_fence
        if not line.strip() and not in_fence:
            if cur is not None:
                blocks.append((cur, i - 1))
                cur = None
            continue
        if cur is None:
            cur = i
    if cur is not None:
        blocks.append((cur, end))
    return blocks


def _pack(lines: list[str], start: int, end: int, max_chars: int, heading: str = "") -> list[Chunk]:
    """Pack the paragraphs of ``start..end`` into chunks of about ``max_chars`` (huge ones by lines)."""
    out: list[Chunk] = []
    pieces: list[tuple[int, int]] = []
    for b_start, b_end in _blocks(lines, start, end):
        size = sum(len(lines[i]) + 1 for i in range(b_start, b_end + 1))
        if size <= max_chars:
            pieces.append((b_start, b_end))
            continue
        s, acc = b_start, 0
        for i in range(b_start, b_end + 1):
            acc += len(lines[i]) + 1
            if acc >= max_chars:
                pieces.append((s, i))
                s, acc = i + 1, 0
        if s <= b_end:
            pieces.append((s, b_end))
    cur_start: int | None = None
    cur_end = 0
    acc = 0
    for p_start, p_end in pieces:
        size = sum(len(lines[i]) + 1 for i in range(p_start, p_end + 1))
        if cur_start is not None and acc + size > max_chars:
            chunk = _make(lines, cur_start, cur_end, heading)
            if chunk:
                out.append(chunk)
            cur_start, acc = None, 0
        if cur_start is None:
            cur_start = p_start
        cur_end = p_end
        acc += size
    if cur_start is not None:
        chunk = _make(lines, cur_start, cur_end, heading)
        if chunk:
            out.append(chunk)
    return out


def chunk_markdown(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> list[Chunk]:
    lines = normalise_newlines(text).split("\n")
    starts: list[int] = []
    in_fence = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and _HEADING.match(line):
            starts.append(i)
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    out: list[Chunk] = []
    for n, s in enumerate(starts):
        e = (starts[n + 1] - 1) if n + 1 < len(starts) else len(lines) - 1
        heading = lines[s].strip() if _HEADING.match(lines[s]) else ""
        size = sum(len(lines[i]) + 1 for i in range(s, e + 1))
        if size <= max_chars:
            chunk = _make(lines, s, e, heading)
            if chunk:
                out.append(chunk)
        else:
            out.extend(_pack(lines, s, e, max_chars, heading))
    return out


def _node_start(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)]) - 1


def chunk_python(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> list[Chunk]:
    norm = normalise_newlines(text)
    lines = norm.split("\n")
    try:
        tree = ast.parse(norm)
    except (SyntaxError, ValueError):
        return chunk_text(norm, max_chars)
    out: list[Chunk] = []
    loose_start: int | None = None
    cursor = 0

    def flush_loose(upto: int) -> None:
        nonlocal loose_start
        if loose_start is not None and loose_start <= upto:
            out.extend(_pack(lines, loose_start, upto, max_chars))
        loose_start = None

    for node in tree.body:
        start = max(_node_start(node), cursor)
        end = (node.end_lineno or node.lineno) - 1
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            flush_loose(start - 1)
            heading = lines[node.lineno - 1].strip()
            size = sum(len(lines[i]) + 1 for i in range(start, end + 1))
            if isinstance(node, ast.ClassDef) and size > max_chars:
                inner = [n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
                head_end = (_node_start(inner[0]) - 1) if inner else end
                out.extend(_pack(lines, start, head_end, max_chars, heading))
                for k, method in enumerate(inner):
                    m_start = _node_start(method)
                    m_end = (_node_start(inner[k + 1]) - 1) if k + 1 < len(inner) else end
                    out.extend(_pack(lines, m_start, m_end, max_chars, heading))
            else:
                out.extend(
                    _pack(lines, start, end, max_chars, heading)
                    if size > max_chars
                    else [c for c in [_make(lines, start, end, heading)] if c]
                )
        elif loose_start is None:
            loose_start = start
        cursor = end + 1
    flush_loose(len(lines) - 1)
    return out


def chunk_text(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> list[Chunk]:
    lines = normalise_newlines(text).split("\n")
    return _pack(lines, 0, len(lines) - 1, max_chars)


def chunk_document(path: str, text: str, max_chars: int = DEFAULT_MAX_CHARS) -> list[Chunk]:
    """Chunks for a file, by its kind (from the name)."""
    low = path.lower()
    if low.endswith((".md", ".markdown", ".mdx", ".rst")):
        return chunk_markdown(text, max_chars)
    if low.endswith((".py", ".pyi")):
        return chunk_python(text, max_chars)
    return chunk_text(text, max_chars)
