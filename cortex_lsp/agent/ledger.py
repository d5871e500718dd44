"""The run's ledger of writes, shown as facts after the answer.

The model's answer is never rewritten. After it, when the run tried to write anything, one line says
what happened to each file, from the edit outcomes and the write tool's calls (never from the
answer's prose): ``Written: summary.md · Declined: app.py · Refused: x.py (reason)``. A write whose
outcome is unknown (the run was cancelled while the editor held it) is ``Unknown: check notes.md``.
The answer and the ledger are what the user sees and what memory keeps.

Plain module: it knows nothing of LSP or of the model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlparse

from cortex_lsp.agent.types import RunRecord, ToolCallRecord
from cortex_lsp.ports import EditOutcome

__all__ = ["Ledger", "ledger", "with_ledger"]

WRITE_TOOL = "write_file"
SEPARATOR = " · "


@dataclass(frozen=True)
class Ledger:
    """What a run's writes came to, per file (workspace-relative names where known)."""

    written: tuple[str, ...] = ()
    declined: tuple[str, ...] = ()
    refused: tuple[tuple[str, str], ...] = ()
    unknown: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.written or self.declined or self.refused or self.unknown)

    def line(self) -> str:
        """One line of facts, or ``""`` when the run tried no write."""
        parts: list[str] = []
        if self.written:
            parts.append("Written: " + ", ".join(self.written))
        if self.declined:
            parts.append("Declined: " + ", ".join(self.declined))
        if self.refused:
            parts.append("Refused: " + ", ".join(f"{name} ({why})" for name, why in self.refused))
        if self.unknown:
            parts.append("Unknown: " + ", ".join(f"check {name}" for name in self.unknown))
        return SEPARATOR.join(parts)


def _name_of(uri: str, roots: Sequence[Path]) -> str:
    path = unquote(urlparse(uri).path) if uri.startswith("file:") else uri
    for root in roots:
        prefix = str(root).rstrip("/") + "/"
        if path.startswith(prefix):
            return path[len(prefix):]
    return PurePosixPath(path).name


def _short(reason: str) -> str:
    text = reason.strip().rstrip(".")
    while text.startswith("Not written:"):
        text = text[len("Not written:"):].strip()
    return text[:160] or "not applied"


def ledger(edits: Sequence[EditOutcome], tool_calls: Sequence[ToolCallRecord],
           roots: Sequence[Path] = ()) -> Ledger:
    """The run's writes: edits the editor applied, declined or did not answer, and write_file calls
    refused before any edit was sent. A file written at last is listed only as written."""
    written: list[str] = []
    declined: list[str] = []
    refused: dict[str, str] = {}
    unknown: list[str] = []
    for edit in edits:
        name = _name_of(edit.uri, roots)
        if edit.applied is None:
            unknown.append(name)
        elif edit.applied:
            written.append(name)
        elif edit.declined:
            declined.append(name)
        else:
            refused.setdefault(name, _short(edit.reason))
    for call in tool_calls:
        if call.tool != WRITE_TOOL or call.success:
            continue
        raw = call.arguments.get("path") if isinstance(call.arguments, dict) else None
        name = str(raw).strip().lstrip("./") if raw else "(no file name)"
        if any(PurePosixPath(n).name == PurePosixPath(name).name for n in (*written, *declined, *unknown)):
            continue
        refused.setdefault(name, _short(call.output.replace("ERROR: ", "", 1)))

    done = tuple(dict.fromkeys(written))
    return Ledger(
        written=done,
        declined=tuple(n for n in dict.fromkeys(declined) if n not in done),
        refused=tuple((n, why) for n, why in refused.items() if n not in done and n not in declined),
        unknown=tuple(n for n in dict.fromkeys(unknown) if n not in done),
    )


def with_ledger(answer: str, record: RunRecord, roots: Sequence[Path] = ()) -> str:
    """``answer`` as the model wrote it, then the ledger line when the run tried a write (also noted)."""
    line = ledger(record.edits, record.tool_calls, roots).line()
    if not line:
        return answer
    if line not in record.notes:
        record.notes.append(line)
    if line in answer:
        return answer
    return f"{answer.rstrip()}\n\n{line}" if answer.strip() else line
