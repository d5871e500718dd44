"""Slash commands an ACP client offers (``available_commands_update``): ``/explain``, ``/run``,
``/memory``, ``/forget``, ``/doctor``, ``/new``.

``/explain`` runs the agent in explain mode on the attached file or the pasted code (data, as a
selection). ``/run`` runs the attached or pasted Python in the sandbox, exactly as LSP's ``cortex.run``
does (the same size limit, runnability check and sandbox: ``server/services.run_code``). The others
are the memory and doctor calls the LSP commands make. A command is only what the user typed first in
the message; text inside an attachment never is one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput


@dataclass(frozen=True)
class Slash:
    name: str
    argument: str


_SPECS: tuple[tuple[str, str, str | None], ...] = (
    ("explain", "Explain the attached file or the code pasted after the command", "code, or attach a file"),
    ("run", "Run the attached or pasted Python in Cortex's sandbox (no model call)", "python code"),
    ("memory", "Search what Cortex remembers", "words to look for"),
    ("forget", "Delete one memory by its id (from /memory)", "memory id"),
    ("doctor", "Check the model server, models, data folder, sandbox and folder", None),
    ("new", "Start a new conversation: earlier turns are no longer context", None),
)
NAMES = frozenset(name for name, _, _ in _SPECS)
_COMMAND = re.compile(r"^/([a-z]+)(?:\s+(.*))?$", re.S)
_FENCE = re.compile(r"^```[\w+-]*\n(.*?)\n?```\s*$", re.S)


def available_commands() -> list[AvailableCommand]:
    return [AvailableCommand(name=name, description=description,
                             input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)) if hint else None)
            for name, description, hint in _SPECS]


def parse(words: str) -> Slash | None:
    match = _COMMAND.match(words.strip())
    if match is None or match.group(1) not in NAMES:
        return None
    return Slash(match.group(1), (match.group(2) or "").strip())


def code_of(argument: str) -> str:
    """The code pasted after ``/run`` or ``/explain``, without a Markdown fence around it."""
    fenced = _FENCE.match(argument.strip())
    return fenced.group(1) if fenced else argument
