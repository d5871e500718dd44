"""A ``session/prompt``'s content blocks as the request's words and its context.

Text blocks are the user's words (the message, at most ``MAX_MESSAGE`` characters). An embedded
resource, and the file a ``resource_link`` points at, are data: they become the request's selection
(as LSP's uri/range selection does), never its words, so nothing in them can ask for a write, a fetch
or a run. A linked file is read only inside the session's folder (the path guards), from the editor's
buffer when it offers one; a link to anything else is not followed (a web page is fetched only when the
user types its URL). Images and audio are not accepted (the capabilities say so).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from acp import RequestError
from acp.schema import (
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ResourceContentBlock,
    TextContentBlock,
)

from cortex_lsp.agent.types import Selection
from cortex_lsp.guards.paths import MAX_READ_BYTES, PathRefused, resolve_in_roots
from cortex_lsp.guards.workspace_files import UnsafeFile, read_untrusted_text
from cortex_lsp.runtime.limits import MAX_MESSAGE, cap_selection

#: the most content blocks one prompt may carry
MAX_BLOCKS = 64

ReadOpen = Callable[[Path], Awaitable[str | None]]


@dataclass
class PromptParts:
    words: str
    selection: Selection | None = None
    notes: list[str] = field(default_factory=list)


def invalid(field_name: str, message: str) -> RequestError:
    return RequestError.invalid_params({"field": field_name, "message": message})


async def read_prompt(blocks: Sequence[Any], roots: list[Path], protected: list[Path],
                      read_open: ReadOpen) -> PromptParts:
    if len(blocks) > MAX_BLOCKS:
        raise invalid("prompt", f"at most {MAX_BLOCKS} content blocks, got {len(blocks)}")
    words: list[str] = []
    data: list[tuple[str, str, Path | None]] = []  # (uri, text, path)
    notes: list[str] = []
    for index, block in enumerate(blocks):
        where = f"prompt[{index}]"
        if isinstance(block, TextContentBlock):
            words.append(block.text)
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, BlobResourceContents):
                notes.append(f"{_name(resource.uri)} is binary; it was not read.")
                continue
            data.append((resource.uri, resource.text, _file_path(resource.uri)))
        elif isinstance(block, ResourceContentBlock):
            linked = await _linked(block, roots, protected, read_open, notes)
            if linked is not None:
                data.append(linked)
        else:
            kind = getattr(block, "type", type(block).__name__)
            raise invalid(where, f"{kind} content is not supported (text, resource and resource_link are)")
    message = "\n".join(w for w in words if w.strip()).strip()
    if len(message) > MAX_MESSAGE:
        raise invalid("prompt", f"the message is {len(message)} characters; at most {MAX_MESSAGE}")
    if not message and not data:
        raise invalid("prompt", "no text: type a request")
    selection = None
    if data:
        if len(data) == 1:
            uri, text, path = data[0]
        else:
            uri, path = data[0][0], None
            text = "\n\n".join(f"--- {_name(u)} ---\n{t}" for u, t, _ in data)
        text, note = cap_selection(text)
        if note:
            notes.append(note)
        selection = Selection(uri=uri, text=text, path=path, language=_language(uri),
                              start_line=0, end_line=max(text.count("\n"), 0))
    return PromptParts(message, selection, notes)


async def _linked(block: ResourceContentBlock, roots: list[Path], protected: list[Path], read_open: ReadOpen,
                  notes: list[str]) -> tuple[str, str, Path | None] | None:
    path = _file_path(block.uri)
    name = block.name or _name(block.uri)
    if path is None:
        notes.append(f"{name} is a link, not a file in the open folder: it was not opened (type a URL in your "
                     "message to have it fetched).")
        return None
    try:
        target = resolve_in_roots(str(path), roots, protected=protected, must_exist=True)
    except PathRefused as exc:
        notes.append(f"{name} was not read: {exc}")
        return None
    text = await read_open(target.path)
    if text is None:
        try:
            text = await asyncio.to_thread(read_untrusted_text, target.path, max_bytes=MAX_READ_BYTES, strict=False)
        except (UnsafeFile, OSError, PathRefused) as exc:
            notes.append(f"{name} was not read: {exc}")
            return None
    if "\x00" in text[:4096]:
        notes.append(f"{name} is a binary file; it was not read.")
        return None
    return block.uri, text, target.path


def _file_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    return Path(unquote(parsed.path))


def _name(uri: str) -> str:
    return unquote(uri.rstrip("/").rsplit("/", 1)[-1]) or uri


def _language(uri: str) -> str:
    suffix = Path(urlparse(uri).path).suffix.lower()
    return {".py": "python", ".md": "markdown", ".json": "json", ".ts": "typescript", ".js": "javascript",
            ".txt": "plaintext"}.get(suffix, "")
