"""The edit sink: the one way Cortex writes anything.

A proposed write is checked by the hard rules first, whoever reviews it: the path guards (inside an
allowed root after links, no hidden or system paths, allowed extension, size), and a file that programs
run or read as configuration only when the user's own words named it
(:func:`~cortex_lsp.guards.consent.hazard`). Then consent (:mod:`cortex_lsp.guards.consent`):

* **review** (the client declares ``workspace.workspaceEdit.changeAnnotationSupport`` or
  ``experimental.cortexReview``): the write is proposed whether or not the user's words asked for it;
  every change carries the ``cortex-write`` annotation with ``needsConfirmation: true``, the label
  "Cortex: create NAME" / "Cortex: replace NAME" and a description saying whether the user asked for
  it. The user's accept is the consent;
* **strict** (nobody reviews): only a write the words clearly asked for (``asked``) is sent.

The write becomes one labelled ``workspace/applyEdit``: a ``CreateFile`` (``overwrite: false``) plus the
text, or a replace of the whole document (a diff of the existing file). The editor applies it or
declines; nothing is written by any other route.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from cortex_lsp.guards.consent import description, sink_refusal
from cortex_lsp.guards.paths import PathRefused, check_write, resolve_in_roots
from cortex_lsp.ports import EditKind, EditOutcome, EditRequest
from cortex_lsp.server.capabilities import (
    reviews_edits,
    supports_apply_edit,
    supports_create_file,
    supports_document_changes,
)
from cortex_lsp.server.documents import open_document
from cortex_lsp.tools.user_wait import waiting_for_user

if TYPE_CHECKING:
    from cortex_lsp.server.app import CortexServer

log = logging.getLogger("cortex.edits")
ANNOTATION_ID = "cortex-write"
NO_APPLY_EDIT = (
    "Not written: this editor does not accept workspace edits (workspace/applyEdit), so Cortex cannot "
    "write files here. The text is in the answer instead."
)


def _end_of(text: str) -> types.Position:
    lines = text.split("\n")
    return types.Position(line=len(lines) - 1, character=len(lines[-1].encode("utf-16-le")) // 2)


class LspEditSink:
    def __init__(self, server: CortexServer) -> None:
        self.server = server

    @property
    def reviewed(self) -> bool:
        """Does the user review every write before it applies (see the module docstring)?"""
        return reviews_edits(self.server.client_capabilities)

    async def propose(self, request: EditRequest) -> EditOutcome:
        settings = self.server.settings
        uri = request.path.as_uri()
        exists = request.path.exists() or self._open_text(uri) is not None
        kind: EditKind = "replace" if exists else "create"
        said = description(request.asked, request.unasked_reason)
        refused = sink_refusal(request, self.server.roots, reviewed=self.reviewed)
        if refused is not None:
            return EditOutcome(uri=uri, kind=kind, applied=False, reason=refused, asked=request.asked)
        caps = self.server.client_capabilities
        try:
            target = resolve_in_roots(str(request.path), self.server.roots,
                                      protected=self.server.protected_dirs())
            check_write(target, request.text, allowed_extensions=settings.allowed_write_extensions,
                        max_bytes=settings.max_write_bytes)
        except PathRefused as exc:
            return EditOutcome(uri=uri, kind=kind, applied=False, reason=str(exc), asked=request.asked)
        if target.path != request.path.resolve():
            return EditOutcome(uri=uri, kind=kind, applied=False, asked=request.asked,
                               reason="Not written: the path changed on resolution.")
        if not supports_apply_edit(caps):
            return EditOutcome(uri=uri, kind=kind, applied=False, reason=NO_APPLY_EDIT, asked=request.asked)
        if exists and not request.overwrite and not self.reviewed:
            return EditOutcome(uri=uri, kind=kind, applied=False, asked=request.asked,
                               reason=f"Not written: {target.relative} already exists and you did not ask "
                                      "to replace it.")
        label = f"Cortex: {'replace' if exists else 'create'} {target.relative}"
        edit = self._build_edit(uri, target.path, request.text, exists, label, said)
        if edit is None:
            return EditOutcome(uri=uri, kind=kind, applied=False, asked=request.asked,
                               reason="Not written: this editor cannot create files through workspace edits.")
        # never sent after a cancel; if the run is cancelled while the editor applies it, the outcome is
        # still recorded. The user's review is bounded by cancel, not by the tool time-out.
        with waiting_for_user():
            return await self.server.runs.apply_edit(types.ApplyWorkspaceEditParams(edit=edit, label=label),
                                                     uri=uri, kind=kind, asked=request.asked, description=said)

    def _open_text(self, uri: str) -> str | None:
        doc = open_document(self.server, uri)
        return doc.source if doc is not None else None

    def _build_edit(self, uri: str, path: Path, text: str, exists: bool, label: str,
                    said: str) -> types.WorkspaceEdit | None:
        caps = self.server.client_capabilities
        annotated = reviews_edits(caps)  # every change of a reviewed write asks for the user's accept
        annotation_id = ANNOTATION_ID if annotated else None
        annotations = (
            {ANNOTATION_ID: types.ChangeAnnotation(label=label, needs_confirmation=True, description=said)}
            if annotated else None
        )

        def text_edit(range_: types.Range) -> types.TextEdit | types.AnnotatedTextEdit:
            if annotation_id:
                return types.AnnotatedTextEdit(range=range_, new_text=text, annotation_id=annotation_id)
            return types.TextEdit(range=range_, new_text=text)

        if exists:
            open_text = self._open_text(uri)
            current = open_text if open_text is not None else path.read_text(encoding="utf-8", errors="replace")
            whole = types.Range(start=types.Position(0, 0), end=_end_of(current))
            if supports_document_changes(caps):
                doc = open_document(self.server, uri)
                version = doc.version if doc is not None else None
                return types.WorkspaceEdit(
                    document_changes=[types.TextDocumentEdit(
                        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
                        edits=[text_edit(whole)])],
                    change_annotations=annotations,
                )
            return types.WorkspaceEdit(changes={uri: [types.TextEdit(range=whole, new_text=text)]})
        if not supports_create_file(caps):
            return None
        start = types.Range(start=types.Position(0, 0), end=types.Position(0, 0))
        return types.WorkspaceEdit(
            document_changes=[
                types.CreateFile(uri=uri, options=types.CreateFileOptions(overwrite=False, ignore_if_exists=False),
                                 annotation_id=annotation_id),
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None),
                    edits=[text_edit(start)],
                ),
            ],
            change_annotations=annotations,
        )
