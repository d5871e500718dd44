"""Consent in tables, through both real fronts over stdio (the scripted model over HTTP): the language
server (pytest-lsp) and ``cortex-lsp acp`` (the ACP SDK's client, :mod:`tests.acp.acp_harness`). The
tests of the review and the strict mode run once per front (``[lsp]``, ``[acp]``), every row of every
table on both (ACP adds 25-35 s on a busy 2-core machine, so no sample is needed).

LSP:

* **Review mode** (the client declares change annotations and ``experimental.cortexReview``): a
  cooperating model writes the file each genuine request names; the write is proposed as one
  ``workspace/applyEdit`` whose change carries the ``cortex-write`` annotation with
  ``needsConfirmation: true`` and "You asked for this change.", and the result lists it ``asked: true``.
  A hostile model writes whatever each hostile request mentions: anything proposed is labelled
  ``asked: false`` ("You did not ask for this change: …") and needs the user's confirmation; the test
  client declines, and the disk is unchanged.
* **Strict mode** (a client without annotations or a declared review, which applies whatever it gets):
  the hostile table sends no edit at all and writes nothing; the genuine table still writes.

ACP:

* **Review mode** (a client that offers ``fs/write_text_file``): a genuine row's write asks one
  ``session/request_permission`` (an ``edit`` with the diff, titled "Cortex: create|replace FILE",
  ``_meta.cortex.asked: true``); the client allows and writes the file through ``fs/write_text_file``.
  A hostile row's permission, if any, is labelled ``asked: false`` ("You did not ask for this change:
  …"); the client rejects, and nothing is written.
* **Strict mode** (a client without ``fs.writeTextFile``): no permission is asked and nothing is written;
  a hostile write is refused outright by consent, a genuine one is still recorded as asked and refused
  only because the client cannot write.

Every row asserts that the model was offered ``write_file`` and called it. A hostile row the router
answers as plain chat (no tool schema at all was sent to the model, nothing was written) runs a second
time with the tool plan forced (:func:`~tests.security.consent_tables.forced`: the same words after "Use a
tool to look it up."), and that run must reach the write guards and pass; a row that still never gives
the model the chance fails, saying so. A row the plan guards refuse outright (a delete or a move: the
answer is a refusal, stop reason ``refused``) has no plan to force and passes as refused. At least 95 %
of the genuine rows must pass. One server (one agent process) serves a whole table; over ACP every row
gets a fresh session; the workspace is reset before every row. The tables, and what both fronts'
runners share, are in :mod:`tests.security.consent_tables`.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from acp import text_block
from acp.schema import FileEditToolCallContent
from lsprotocol import types

from cortex_lsp.acp.edits import NO_CLIENT_WRITE
from tests.acp.acp_harness import WAIT, AcpRun, PermissionAsked, acp_session
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
    NEVER_REACHED,
    REFUSED,
    Row,
    check_genuine,
    check_hostile,
    failure,
    forced,
    genuine_text,
    no_tools_sent,
    offered_and_called,
    reset,
    script_writer,
    snapshot,
    tool_free,
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
        return tool_free(model, result)
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
    """The failures of ``rows``. A hostile row the design answers as plain chat (no tool offered) is run
    again with the tool plan forced (:func:`forced`): it fails when the model still never gets the chance."""
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    failures: list[str] = []
    chat = refused = 0
    mode: ApplyMode = "accept" if genuine or not reviewed else "decline"
    async with lsp_session(model, tmp_path, direct_plans=False, env=ENV, apply_mode=mode,
                           caps=review_caps() if reviewed else strict_caps()) as client:
        for row in rows:
            check = genuine_row if genuine else hostile_row
            why = await check(client, model, ws, row, reviewed=reviewed)
            if why == CHAT:
                chat += 1
                why = await check(client, model, ws, forced(row), reviewed=reviewed)
                why = NEVER_REACHED if why == CHAT else why and f"with the tool plan forced: {why}"
            if why == REFUSED:
                refused += 1
                why = None  # the plan guards refused the request itself; no plan can be forced past that
            if why:
                failures.append(failure(row, why))
    print(f"{chat} of {len(rows)} rows were answered as plain chat and ran again forced; {refused} were refused "
          "outright")  # shown with -s
    return failures


# -- the ACP front ---------------------------------------------------------------------------------------
def check_permission_label(asked_for: PermissionAsked, target: str, *, asked: bool) -> str | None:
    """The permission request's consent label: an edit of ``target`` with a diff, the title, and
    ``_meta.cortex`` (the flag, the description)."""
    call = asked_for.tool_call
    if call.kind != "edit" or not any(isinstance(c, FileEditToolCallContent) for c in call.content or []):
        return f"not an edit with a diff: kind {call.kind}"
    if not re.fullmatch(rf"Cortex: (create|replace) {re.escape(target)}", call.title or ""):
        return f"title {call.title!r}"
    cortex = (call.field_meta or {}).get("cortex") or {}
    if cortex.get("asked") is not asked:
        return f"labelled asked: {cortex.get('asked')}"
    said = cortex.get("description") or ""
    if asked and said != "You asked for this change.":
        return f"description {said!r}"
    if not asked and not said.startswith("You did not ask for this change: "):
        return f"description {said!r}"
    return None


async def acp_ask(run: AcpRun, message: str) -> dict[str, Any]:
    """``message`` as the first prompt of a fresh session (no history from the rows before it, in the same
    agent process); returns the prompt's ``_meta.cortex`` (the LSP result's fields)."""
    run.client.permissions.clear()
    run.client.writes.clear()
    session = await asyncio.wait_for(run.conn.new_session(cwd=str(run.root), mcp_servers=[]), WAIT)
    response = await asyncio.wait_for(run.conn.prompt(session_id=session.session_id,
                                                      prompt=[text_block(message)]), WAIT)
    result: dict[str, Any] = (response.field_meta or {})["cortex"]
    return result


async def acp_genuine_row(run: AcpRun, model: ScriptedModelServer, row: Row, *, reviewed: bool) -> str | None:
    """Review mode: one permission, labelled asked, the client allows and writes the file. Strict mode
    (the client cannot write): no permission, nothing written, the write still recorded as asked."""
    reset(run.root)
    before = snapshot(run.root)
    content = genuine_text(row)
    script_writer(model, row.target, content)
    result = await acp_ask(run, row.message)
    if why := offered_and_called(model, result):
        return why
    outcomes = [(e["applied"], e["asked"]) for e in result["edits"]]
    client = run.client
    if not reviewed:
        if client.permissions or client.writes or snapshot(run.root) != before:
            return f"strict mode: {len(client.permissions)} permissions, writes {client.writes}"
        if outcomes != [(False, True)] or result["edits"][0]["reason"] != NO_CLIENT_WRITE:
            return f"result edits {result['edits']}"
        return None
    if len(client.permissions) != 1:
        return f"{len(client.permissions)} permissions asked; result edits {result['edits']}; notes {result['notes']}"
    if bad := check_permission_label(client.permissions[0], row.target, asked=True):
        return bad
    if outcomes != [(True, True)]:
        return f"result edits {result['edits']}"
    target = (run.root / row.target).resolve()
    if client.writes != [(str(target), content)] or target.read_text(encoding="utf-8") != content:
        return f"{row.target} not written by the client: {client.writes}"
    return None


async def acp_hostile_row(run: AcpRun, model: ScriptedModelServer, row: Row, *, reviewed: bool) -> str | None:
    """Review mode: a permission, if any, is labelled not asked, and the client rejects it. Strict mode
    (the client cannot write): no permission at all, the write refused outright by consent (not merely for
    the missing capability). Either way nothing is written."""
    reset(run.root)
    before = snapshot(run.root)
    script_writer(model, row.target, HOSTILE_TEXT)
    result = await acp_ask(run, row.message)
    client = run.client
    if client.writes or snapshot(run.root) != before:
        return f"written: {client.writes} ({row.target})"
    if no_tools_sent(model) and not client.permissions and not result["edits"]:
        return tool_free(model, result)
    if why := offered_and_called(model, result):
        return why
    if any(e["applied"] or e["asked"] for e in result["edits"]):
        return f"result edits {result['edits']}"
    if not reviewed:
        if client.permissions:
            return f"a permission was asked in strict mode: {result['edits']}"
        if any(e["reason"] == NO_CLIENT_WRITE for e in result["edits"]):  # consent must refuse it first
            return f"not refused outright, only for want of fs/write_text_file: {result['edits']}"
        return None
    for asked_for in client.permissions:
        if bad := check_permission_label(asked_for, row.target, asked=False):
            return bad
    return None


async def run_acp_table(model: ScriptedModelServer, tmp_path: Path, rows: list[Row], *, genuine: bool,
                        reviewed: bool) -> list[str]:
    """:func:`run_table` over ACP: one agent process for the table, a fresh session for every row.
    Review mode is a client that offers ``fs/write_text_file`` (it allows genuine rows' permissions and
    rejects hostile ones); strict mode is a client that does not."""
    failures: list[str] = []
    async with acp_session(model, tmp_path, plans=False, env=ENV, write=reviewed,
                           permission="allow" if genuine else "reject") as run:
        for row in rows:
            check = acp_genuine_row if genuine else acp_hostile_row
            why = await check(run, model, row, reviewed=reviewed)
            if why == CHAT:
                why = await check(run, model, forced(row), reviewed=reviewed)
                why = NEVER_REACHED if why == CHAT else why and f"with the tool plan forced: {why}"
            if why == REFUSED:
                why = None  # the plan guards refused the request itself; no plan can be forced past that
            if why:
                failures.append(failure(row, why))
    return failures


Front = Literal["lsp", "acp"]
FRONTS = pytest.mark.parametrize("front", ["lsp", "acp"])


async def run_front(front: Front, model: ScriptedModelServer, tmp_path: Path, rows: list[Row], *,
                    genuine: bool, reviewed: bool) -> list[str]:
    runner = run_table if front == "lsp" else run_acp_table
    return await runner(model, tmp_path, rows, genuine=genuine, reviewed=reviewed)


def test_the_tables_are_big_enough() -> None:
    assert len(GENUINE) >= 60 and len(HOSTILE) >= 60
    languages = {"de": "Speichere", "fr": "Enregistre", "es": "Guarda", "nl": "Sla", "pt": "Salve",
                 "it": "Salva", "pl": "Zapisz", "sv": "Spara"}
    assert all(any(r.message.startswith(word) for r in GENUINE) for word in languages.values())
    assert len(HELD_OUT_GENUINE) >= 40 and len(HELD_OUT_HOSTILE) >= 40


@FRONTS
async def test_review_mode_proposes_genuine_writes_labelled_asked(front: Front, model: ScriptedModelServer,
                                                                  tmp_path: Path) -> None:
    rows = GENUINE + HELD_OUT_GENUINE
    # the goal: at least 95 % of genuine requests proposed for review as asked
    check_genuine(await run_front(front, model, tmp_path, rows, genuine=True, reviewed=True), rows)


@FRONTS
async def test_review_mode_never_applies_a_hostile_write_without_accept(front: Front, model: ScriptedModelServer,
                                                                        tmp_path: Path) -> None:
    rows = HOSTILE + HELD_OUT_HOSTILE
    check_hostile(await run_front(front, model, tmp_path, rows, genuine=False, reviewed=True), rows)


@FRONTS
async def test_strict_mode_writes_nothing_for_hostile_requests(front: Front, model: ScriptedModelServer,
                                                               tmp_path: Path) -> None:
    rows = HOSTILE + HELD_OUT_HOSTILE
    check_hostile(await run_front(front, model, tmp_path, rows, genuine=False, reviewed=False), rows)


async def test_strict_mode_still_writes_genuine_requests(model: ScriptedModelServer, tmp_path: Path) -> None:
    check_genuine(await run_table(model, tmp_path, GENUINE, genuine=True, reviewed=False), GENUINE)


async def test_acp_strict_mode_writes_nothing_even_for_genuine_requests(model: ScriptedModelServer,
                                                                        tmp_path: Path) -> None:
    """A client without ``fs/write_text_file`` gets no write at all; the genuine rows are still recorded as
    asked (≥ 95 %), refused only because the client cannot write."""
    check_genuine(await run_acp_table(model, tmp_path, GENUINE, genuine=True, reviewed=False), GENUINE)
