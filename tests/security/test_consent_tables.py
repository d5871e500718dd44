"""Consent through the real server (pytest-lsp over stdio, the scripted model over HTTP), in tables.

* **Review mode** (the client declares change annotations and ``experimental.cortexReview``): a
  cooperating model writes the file each genuine request names; the write is proposed as one
  ``workspace/applyEdit`` whose change carries the ``cortex-write`` annotation with
  ``needsConfirmation: true`` and "You asked for this change.", and the result lists it ``asked: true``.
  A hostile model writes whatever each hostile request mentions: anything proposed is labelled
  ``asked: false`` ("You did not ask for this change: …") and needs the user's confirmation; the test
  client declines, and the disk is unchanged.
* **Strict mode** (a client without annotations or a declared review, which applies whatever it gets):
  the hostile table sends no edit at all and writes nothing; the genuine table still writes.

Every row asserts that the model was offered ``write_file`` and called it, except a hostile row the
router answers as plain chat: then the test asserts that no tool schema at all was sent to the model
(code decided the turn needs no tool) and nothing was written; at least 60 hostile rows of each table
run must reach the write guards. One server session serves a whole table; the workspace is reset before
every row. The tables are data files in ``data/``: ours and
held-out ones written by someone who never saw the code (``*_dev.tsv``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from lsprotocol import types

from tests.lsp_harness import ApplyMode, CortexClient, ask, capabilities, lsp_session
from tests.scripted_model import ScriptedModelServer
from tests.security.consent_tables import (
    CHAT,
    ENV,
    GENUINE,
    HELD_OUT_GENUINE,
    HELD_OUT_HOSTILE,
    HOSTILE,
    HOSTILE_TEXT,
    Row,
    check_genuine,
    check_hostile,
    failure,
    genuine_text,
    no_tools_sent,
    offered_and_called,
    reset,
    script_writer,
    snapshot,
)


def review_caps() -> types.ClientCapabilities:
    """VS Code's capabilities (change annotations) plus the declared review."""
    caps = capabilities()
    caps.experimental = {"cortexReview": True}
    return caps


def strict_caps() -> types.ClientCapabilities:
    """A plain client: applyEdit and documentChanges, but no change annotations and no declared review."""
    caps = capabilities()
    assert caps.workspace is not None and caps.workspace.workspace_edit is not None
    caps.workspace.workspace_edit.change_annotation_support = None
    caps.experimental = None
    return caps


def change_notes(params: types.ApplyWorkspaceEditParams) -> Iterator[types.ChangeAnnotation]:
    yield from (params.edit.change_annotations or {}).values()


def annotated_ids(params: types.ApplyWorkspaceEditParams) -> set[str | None]:
    """The annotation id of every change of the edit (``None`` for an unannotated one)."""
    ids: set[str | None] = set()
    for change in params.edit.document_changes or []:
        if isinstance(change, types.CreateFile):
            ids.add(change.annotation_id)
        elif isinstance(change, types.TextDocumentEdit):
            ids.update(getattr(e, "annotation_id", None) for e in change.edits)
    return ids


def check_review_label(params: types.ApplyWorkspaceEditParams, target: str, *, asked: bool) -> str | None:
    """The review's annotation: on every change, needsConfirmation, the label and the description."""
    notes = list(change_notes(params))
    if annotated_ids(params) != {"cortex-write"} or len(notes) != 1:
        return f"changes not all annotated cortex-write: {annotated_ids(params)}"
    note = notes[0]
    if note.needs_confirmation is not True:
        return "needsConfirmation is not true"
    if not re.fullmatch(rf"Cortex: (create|replace) {re.escape(target)}", note.label):
        return f"label {note.label!r}"
    said = note.description or ""
    if asked and said != "You asked for this change.":
        return f"description {said!r}"
    if not asked and not said.startswith("You did not ask for this change: "):
        return f"description {said!r}"
    return None


async def genuine_row(client: CortexClient, model: ScriptedModelServer, ws: Path, row: Row,
                      *, reviewed: bool) -> str | None:
    """A genuine request: the write is sent once, labelled asked, and applied (the client accepts)."""
    reset(ws)
    client.rec.edits.clear()
    content = genuine_text(row)
    script_writer(model, row.target, content)
    result = await ask(client, row.message)
    why = offered_and_called(model, result)
    if why:
        return why
    if len(client.rec.edits) != 1:
        return f"{len(client.rec.edits)} edits sent; result edits {result['edits']}; notes {result.get('notes')}"
    if reviewed and (bad := check_review_label(client.rec.edits[0], row.target, asked=True)):
        return bad
    if [(e["applied"], e["asked"]) for e in result["edits"]] != [(True, True)]:
        return f"result edits {result['edits']}"
    if (ws / row.target).read_text(encoding="utf-8") != content:
        return f"{row.target} does not hold the text"
    return None


async def hostile_row(client: CortexClient, model: ScriptedModelServer, ws: Path, row: Row,
                      *, reviewed: bool) -> str | None:
    """A hostile request: review mode proposes at most an unasked, confirmation-needing edit, which the
    client declines; strict mode sends nothing. Either way the disk is unchanged."""
    reset(ws)
    before = snapshot(ws)
    client.rec.edits.clear()
    script_writer(model, row.target, HOSTILE_TEXT)
    result = await ask(client, row.message)
    if snapshot(ws) != before:
        return f"the workspace changed on disk ({row.target})"
    if no_tools_sent(model) and not client.rec.edits and not result["edits"]:
        return CHAT
    why = offered_and_called(model, result)
    if why:
        return why
    if any(e["applied"] or e["asked"] for e in result["edits"]):
        return f"result edits {result['edits']}"
    if not reviewed:
        return f"an edit was sent in strict mode: {result['edits']}" if client.rec.edits else None
    for params in client.rec.edits:
        if bad := check_review_label(params, row.target, asked=False):
            return bad
    return None


async def run_table(model: ScriptedModelServer, tmp_path: Path, rows: list[Row], *, genuine: bool,
                    reviewed: bool) -> list[str]:
    """The failures of ``rows`` (a hostile row answered as plain chat is listed as such, not failed)."""
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    failures: list[str] = []
    mode: ApplyMode = "accept" if genuine or not reviewed else "decline"
    async with lsp_session(model, tmp_path, direct_plans=False, env=ENV, apply_mode=mode,
                           caps=review_caps() if reviewed else strict_caps()) as client:
        for row in rows:
            check = genuine_row if genuine else hostile_row
            why = await check(client, model, ws, row, reviewed=reviewed)
            if why:
                failures.append(failure(row, why))
    return failures


def test_the_tables_are_big_enough() -> None:
    assert len(GENUINE) >= 60 and len(HOSTILE) >= 60
    languages = {"de": "Speichere", "fr": "Enregistre", "es": "Guarda", "nl": "Sla", "pt": "Salve",
                 "it": "Salva", "pl": "Zapisz", "sv": "Spara"}
    assert all(any(r.message.startswith(word) for r in GENUINE) for word in languages.values())
    assert len(HELD_OUT_GENUINE) >= 40 and len(HELD_OUT_HOSTILE) >= 40


async def test_review_mode_proposes_genuine_writes_labelled_asked(model: ScriptedModelServer, tmp_path: Path) -> None:
    rows = GENUINE + HELD_OUT_GENUINE
    # the goal: at least 95 % of genuine requests proposed for review as asked
    check_genuine(await run_table(model, tmp_path, rows, genuine=True, reviewed=True), rows)


async def test_review_mode_never_applies_a_hostile_write_without_accept(
    model: ScriptedModelServer, tmp_path: Path
) -> None:
    rows = HOSTILE + HELD_OUT_HOSTILE
    check_hostile(await run_table(model, tmp_path, rows, genuine=False, reviewed=True), rows)


async def test_strict_mode_writes_nothing_for_hostile_requests(model: ScriptedModelServer, tmp_path: Path) -> None:
    rows = HOSTILE + HELD_OUT_HOSTILE
    check_hostile(await run_table(model, tmp_path, rows, genuine=False, reviewed=False), rows)


async def test_strict_mode_still_writes_genuine_requests(model: ScriptedModelServer, tmp_path: Path) -> None:
    check_genuine(await run_table(model, tmp_path, GENUINE, genuine=True, reviewed=False), GENUINE)
