"""The editors' own commands: ``cortex.apply`` (a code block from an answer into a file, reviewed),
``cortex.fix`` (the agent proposes a reviewed fix of a diagnostic's file), ``cortex.session.turns`` (a
session's messages for a reopened chat), and keeping a "Run this" in its session.

Parse the arguments, call the plain modules (editing.py, agent/fix.py, agent/turn_texts.py, the
memory), return JSON. Every write goes through the edit sink (server/edits.py) like an agent's write:
the same path, extension and size rules, one labelled ``workspace/applyEdit`` the editor reviews.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import to_fs_path

from cortex_lsp.agent.types import AgentRequest
from cortex_lsp.guards.paths import MAX_READ_BYTES, PathRefused, ResolvedPath, check_write, resolve_in_roots
from cortex_lsp.guards.workspace_files import UnsafeFile, read_untrusted_text
from cortex_lsp.intent.grants import WriteGrant
from cortex_lsp.ports import EditRequest
from cortex_lsp.server import commands
from cortex_lsp.server.app import CortexServer
from cortex_lsp.server.documents import open_document

if TYPE_CHECKING:
    from cortex_lsp.server.services import CodeRunReport


def _target(ls: CortexServer, uri: str) -> ResolvedPath:
    """``uri`` as a path inside an open folder (not hidden, not Cortex's own); InvalidParams naming uri."""
    if not uri.startswith("file:"):
        raise JsonRpcInvalidParams(f"uri: only file: URIs are supported, got {uri[:80]!r}")
    fs = to_fs_path(uri)
    if not fs:
        raise JsonRpcInvalidParams(f"uri: cannot map {uri[:80]!r} to a file")
    try:
        return resolve_in_roots(fs, ls.roots, protected=ls.protected_dirs())
    except PathRefused as exc:
        raise JsonRpcInvalidParams(f"uri: {exc}") from None


def _current_text(ls: CortexServer, uri: str, target: ResolvedPath) -> str | None:
    """The editor's text of the file, else the disk's; ``None`` when it does not exist."""
    doc = open_document(ls, uri)
    if doc is not None:
        return doc.source
    if not target.path.exists():
        return None
    try:
        return read_untrusted_text(target.path, max_bytes=MAX_READ_BYTES, strict=False)
    except (UnsafeFile, OSError) as exc:
        raise JsonRpcInvalidParams(f"uri: cannot read {target.relative}: {exc}") from None


async def apply(ls: CortexServer, *args: Any) -> dict[str, Any]:
    """``cortex.apply {uri, text, range?}``: ``text`` in place of ``range`` (or as the whole file, or a new
    file), as a reviewed write the user asked for (they clicked Apply)."""
    await commands._imports_settled(ls)
    from cortex_lsp.editing import BadRange, Position, replace_range, whole_file
    from cortex_lsp.server.arguments import ApplyArgs, parse_args

    a = parse_args("cortex.apply", ApplyArgs, args)
    target = await asyncio.to_thread(_target, ls, a.uri)
    current = await asyncio.to_thread(_current_text, ls, a.uri, target)
    if current is None and a.range is not None:
        raise JsonRpcInvalidParams(f"range: {target.relative} does not exist; leave out range to create it")
    if current is not None and "\x00" in current[:4096]:
        raise JsonRpcInvalidParams(f"uri: {target.relative} is a binary file")
    if a.range is not None and current is not None:
        try:
            text = replace_range(current, Position(a.range.start.line, a.range.start.character),
                                 Position(a.range.end.line, a.range.end.character), a.text)
        except BadRange as exc:
            raise JsonRpcInvalidParams(f"range: {exc}") from None
    else:
        text = whole_file(a.text)
    try:
        check_write(target, text, allowed_extensions=ls.settings.allowed_write_extensions,
                    max_bytes=ls.settings.max_write_bytes)
    except PathRefused as exc:
        field = "text" if "bytes" in str(exc) else "uri"
        raise JsonRpcInvalidParams(f"{field}: {exc}") from None
    if text == current:
        return {"uri": a.uri, "applied": False, "unchanged": True, "edits": [],
                "reason": f"{target.relative} already has this text."}
    exists = current is not None
    names = frozenset({target.relative})
    grant = WriteGrant(replace=names) if exists else WriteGrant(create=names)
    outcome = await ls.edits.propose(EditRequest(path=target.path, text=text, overwrite=exists, grant=grant,
                                                 asked=True))
    edit = {"uri": outcome.uri, "kind": outcome.kind, "applied": outcome.applied, "asked": True,
            "reason": outcome.reason}
    return {"uri": a.uri, "applied": outcome.applied is True, "edits": [edit], "reason": outcome.reason}


async def fix(ls: CortexServer, *args: Any) -> dict[str, Any]:
    """``cortex.fix {uri, diagnostic, range?}``: the agent proposes a reviewed edit of that file."""
    async def prepare() -> commands.Prepared:
        await commands._imports_settled(ls)
        from cortex_lsp.agent.fix import Unnameable, diagnostic_text, fix_words
        from cortex_lsp.agent.turn_texts import code_turn
        from cortex_lsp.server.arguments import FixArgs, parse_args

        a = parse_args("cortex.fix", FixArgs, args)
        target = await asyncio.to_thread(_target, ls, a.uri)
        allowed = {e.lower() for e in ls.settings.allowed_write_extensions}
        if target.path.suffix.lower() not in allowed:
            raise JsonRpcInvalidParams(f"uri: Cortex may not write {target.path.suffix or 'extensionless'} files "
                                       f"(allowed_write_extensions: {', '.join(sorted(allowed))})")
        notes: list[str] = []
        selection = commands._selection(ls, a.uri, None, notes)  # the whole file: the fix rewrites it
        try:
            words, intent = fix_words(target.relative, selection.text if selection else None)
        except Unnameable as exc:
            raise JsonRpcInvalidParams(f"uri: {exc}") from None
        diag = a.diagnostic
        message = diag if isinstance(diag, str) else diag.message
        where = a.range or (None if isinstance(diag, str) else diag.range)
        line = where.start.line if where is not None else None
        diagnostic = diagnostic_text(message, line, None if isinstance(diag, str) else diag.source,
                                     None if isinstance(diag, str) else diag.code)
        nearby = ""
        if selection is not None and line is not None:
            lines = selection.text.split("\n")
            first, last = max(0, line - 5), min(len(lines), (where.end.line if where else line) + 6)
            nearby = "\n".join(lines[first:last])
        history = code_turn(words, nearby, f"{target.relative} around line {line + 1}" if line is not None
                            else target.relative, selection.language if selection else "", diagnostic)
        request = AgentRequest(message=words, session_id=await commands._session(ls, a.session_id),
                               selection=selection, diagnostic=diagnostic, mode="ask", history_text=history,
                               intent=intent)
        return request, notes, a.wait

    return await commands._agent_command(ls, "Cortex: Fix", prepare)


async def session_turns(ls: CortexServer, *args: Any) -> dict[str, Any]:
    """``cortex.session.turns {session_id}``: the session's title and messages, oldest first."""
    await commands._imports_settled(ls)
    from cortex_lsp.server.arguments import SessionTurnsArgs, parse_args

    a = parse_args("cortex.session.turns", SessionTurnsArgs, args)
    memory = await ls.memory()
    transcript = await memory.transcript(a.session_id)
    if transcript is None:
        raise JsonRpcInvalidParams(f"session_id: there is no session {a.session_id!r}")
    return {"session_id": transcript.session_id, "title": transcript.title,
            "turns": [{"role": t.role, "text": t.text, "created_at": t.created_at} for t in transcript.turns]}


async def keep_run(ls: CortexServer, session_id: str, uri: str, lines: tuple[int, int], code: str,
                   report: CodeRunReport) -> None:
    """Keep a "Run this" in its session: the code as the user turn, what ran as the answer."""
    from cortex_lsp.agent.turn_texts import code_turn, run_answer

    name = Path(to_fs_path(uri) or uri).name
    where = f"{name} lines {lines[0] + 1}-{lines[1] + 1}"
    memory = await ls.memory()
    root = str(ls.roots[0]) if ls.roots else ""
    await memory.store_turn(session_id, "user", code_turn("Run this code.", code, where, "python"), root=root)
    await memory.store_turn(session_id, "assistant", run_answer(report.summary, report.stdout, report.stderr,
                                                                report.error), root=root)
