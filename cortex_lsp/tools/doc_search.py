"""The ``doc_search`` tool: index workspace documents and search them (hybrid BM25 + vectors) with citations.

Every file is reached through the path guards; a search scoped to ``path`` indexes that file first and
searches only it. A search of the whole folder first brings the index up to date
(:func:`~cortex_lsp.memory.docfresh.refresh`): with the editor's file changes (``changes``), only the
changed paths are re-read; without them, the folder is walked incrementally. ``index`` always walks.
Results cite ``path:start-end`` so the answer can link to the passage.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cortex_lsp.guards.paths import PathRefused, ResolvedPath, read_text_file, resolve_in_roots
from cortex_lsp.memory.docchanges import DocChanges
from cortex_lsp.memory.docfresh import refresh
from cortex_lsp.memory.docindex import MAX_FILE_BYTES, DocIndex
from cortex_lsp.tools.base import BaseTool, ToolContext, ToolResult
from cortex_lsp.tools.details import DocHits, Passage

EXCERPT_CHARS = 700


class DocSearchTool(BaseTool):
    name = "doc_search"
    description = (
        "Search the documents in the open folder (Markdown, text, code) by words and meaning. "
        "action 'search' needs a query (optionally 'path' to search one file); action 'index' (re)indexes "
        "the folder or one 'path'. Results cite file:line-range."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["search", "index"]},
            "query": {"type": "string"},
            "path": {"type": "string"},
            "top_k": {"type": "integer"},
        },
        "required": ["action"],
        "additionalProperties": False,
    }

    def __init__(self, index: DocIndex | Callable[[], DocIndex], changes: DocChanges | None = None) -> None:
        self._index = index
        self.changes = changes

    @property
    def index(self) -> DocIndex:
        return self._index if isinstance(self._index, DocIndex) else self._index()

    def repair_arguments(self, arguments: Any) -> dict[str, Any]:
        args = {k: v for k, v in dict(arguments).items() if k in self.parameters["properties"]}
        action = str(args.get("action") or "").lower()
        if action in ("index_document", "index_documents", "reindex"):
            args["action"] = "index"
        elif not action:
            args["action"] = "search" if args.get("query") else "index"
        top_k = args.get("top_k")
        if top_k is not None:
            try:
                args["top_k"] = max(1, min(20, int(top_k)))
            except (TypeError, ValueError):
                args.pop("top_k")
        return args

    async def execute(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        roots = context.workspace.roots
        index = self.index

        def reader(target: ResolvedPath) -> str:
            overlay = context.workspace.read_text(target.path)
            return overlay if overlay is not None else read_text_file(target, max_bytes=MAX_FILE_BYTES)

        path = arguments.get("path")
        scoped: ResolvedPath | None = None
        try:
            if path:
                scoped = resolve_in_roots(str(path), roots, must_exist=True)
                if not scoped.path.is_file():
                    return self.fail(
                        f"{scoped.relative} is a folder; give a file, or no path to search everything."
                    )
                _, chunks = await index.index_file(scoped, reader)
                if arguments["action"] == "index":
                    return self.ok(f"Indexed {scoped.relative}: {chunks} passage(s).")
            else:
                fresh = await refresh(index, roots, self.changes, reader, walk=arguments["action"] == "index")
                stats = fresh.walk
                if stats is not None and arguments["action"] == "index":
                    return self.ok(
                        f"Indexed the folder: {stats.indexed} file(s) updated, {stats.unchanged} "
                        f"unchanged, {stats.removed} removed; {stats.chunks} passage(s)."
                    )
        except PathRefused as exc:
            return self.fail(str(exc))
        query = str(arguments.get("query") or "").strip()
        if not query:
            return self.fail("doc_search 'search' needs a query.")
        top_k = int(arguments.get("top_k") or 5)
        hits = await index.search(query, roots, path=scoped.relative if scoped else None, top_k=top_k)
        if scoped is not None:
            hits = [h for h in hits if h.root == str(scoped.root)]
        if not hits:
            where = scoped.relative if scoped else "the open folder"
            return self.ok(f"No passage in {where} matches {query!r}.", detail=DocHits(()))
        blocks = []
        for n, hit in enumerate(hits, 1):
            excerpt = hit.text if len(hit.text) <= EXCERPT_CHARS else hit.text[:EXCERPT_CHARS] + " …"
            blocks.append(f"[{n}] {hit.citation}\n{excerpt}")
        found = DocHits(tuple(Passage(path=h.path, start_line=h.start_line, end_line=h.end_line,
                                     score=round(h.score, 5), citation=h.citation, text=h.text) for h in hits))
        return ToolResult(
            tool_name=self.name,
            success=True,
            output="Passages (cite as path:lines):\n\n" + "\n\n".join(blocks),
            detail=found,
        )
