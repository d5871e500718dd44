"""Client-capability checks, one small named function each."""

from __future__ import annotations

from lsprotocol import types


def supports_work_done_progress(caps: types.ClientCapabilities) -> bool:
    return bool(caps.window and caps.window.work_done_progress)


def supports_apply_edit(caps: types.ClientCapabilities) -> bool:
    return bool(caps.workspace and caps.workspace.apply_edit)


def _workspace_edit(caps: types.ClientCapabilities) -> types.WorkspaceEditClientCapabilities | None:
    return caps.workspace.workspace_edit if caps.workspace else None


def supports_document_changes(caps: types.ClientCapabilities) -> bool:
    we = _workspace_edit(caps)
    return bool(we and we.document_changes)


def supports_create_file(caps: types.ClientCapabilities) -> bool:
    we = _workspace_edit(caps)
    ops = (we.resource_operations or []) if we else []
    return supports_document_changes(caps) and types.ResourceOperationKind.Create in ops


def supports_change_annotations(caps: types.ClientCapabilities) -> bool:
    we = _workspace_edit(caps)
    return bool(we and we.change_annotation_support is not None)


def declares_review(caps: types.ClientCapabilities) -> bool:
    """The client shows the user a review of every agent edit (``experimental.cortexReview: true``)."""
    experimental = caps.experimental
    return isinstance(experimental, dict) and experimental.get("cortexReview") is True


def reviews_edits(caps: types.ClientCapabilities) -> bool:
    """Can the user review each agent edit before it applies (a declared review, or change annotations
    the edit can carry: an annotated text edit travels only in ``documentChanges``, so annotations
    without ``documentChanges`` review nothing)?"""
    return declares_review(caps) or (supports_change_annotations(caps) and supports_document_changes(caps))


def supports_configuration(caps: types.ClientCapabilities) -> bool:
    return bool(caps.workspace and caps.workspace.configuration)
