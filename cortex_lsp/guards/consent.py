"""Consent for an agent write: who decides, and how the user's words label it.

Two modes, chosen by the host (:attr:`cortex_lsp.ports.EditSink.reviewed`):

* **review** (the editor shows the user every agent edit and applies it only on their accept): the
  accept is the consent. Any write that passes the hard rules is proposed; the user's own words only
  label it: ``asked`` (they asked for this file) or not, with why the model proposed it.
* **strict** (nobody reviews: a client without change annotations or a declared review, the CLI with
  ``--yes``): only a write the words clearly asked for is sent; anything else is refused with one
  sentence addressed to the user.

The hard rules hold in both modes (the path guards check roots, links, hidden paths, extensions and
size): names that programs run or read as configuration (``conftest.py``, ``sitecustomize.py``,
``*.pth``, CI and build files, dotfiles) are written only when the user's own words named that file
(:func:`hazard`).

``asked`` is read conservatively (:func:`asked_for`): the write grant of the clause analysis
(:class:`~cortex_lsp.intent.grants.WriteGrant`), and no doubt in the words: no retraction ("lol no",
"changed my mind", "/s"), no negation near a write, no label, aside, quoted record or statement
instead of a request (:func:`doubt`), and the sentence that asks opens as a request.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from cortex_lsp.guards.asked import asked_for
from cortex_lsp.guards.root_choice import relative_to_roots, root_refusal
from cortex_lsp.intent.grants import exact_key, hazard
from cortex_lsp.intent.intent import Intent

if TYPE_CHECKING:
    from cortex_lsp.ports import EditRequest

__all__ = ["WriteDecision", "asked_for", "decide", "description", "hazard", "sink_refusal", "unasked_reason"]

ASKED = "You asked for this change."

NO_GRANT_GIVEN = "Not written: the edit carries no write grant from the user's own words."

def unasked_reason(read: Sequence[str], *, intent: Intent | None = None, relative: str = "",
                   exists: bool = False) -> str:
    """Why the model proposed a write the user did not ask for: a save to a file that exists (they asked
    for a new file, not a replace), else from what the run read."""
    if exists and relative and intent is not None and intent.write_grant.named(relative):
        return f"{relative} already exists, and you asked to save to it, not to replace it"
    seen = list(dict.fromkeys(r for r in read if r))
    if not seen:
        return "the model proposed it on its own"
    shown = ", ".join(seen[:3]) + (f" and {len(seen) - 3} more" if len(seen) > 3 else "")
    return f"the model proposed it after reading {shown}"


def description(asked: bool, reason: str = "") -> str:
    """The review's description of a write (the ``cortex-write`` change annotation's)."""
    if asked:
        return ASKED
    return f"You did not ask for this change: {(reason or 'the model proposed it on its own').rstrip('.')}."


@dataclass(frozen=True)
class WriteDecision:
    """What happens to a proposed write: ``refused`` (a sentence for the user) or sent, labelled ``asked``."""

    asked: bool
    refused: str | None = None


def named_by_user(intent: Intent, relative: str) -> bool:
    """Did the user's own words name ``relative`` (its path, or its file name)?"""
    key = exact_key(relative).casefold()
    name = PurePosixPath(key).name
    files = {exact_key(f).casefold() for f in intent.files}
    return key in files or name in {PurePosixPath(f).name for f in files}


def decide(intent: Intent, relative: str, *, exists: bool, reviewed: bool,
           written: Collection[str] = ()) -> WriteDecision:
    """The consent decision for writing ``relative`` (already inside a root and past the path guards),
    from the run's one reading of the user's words."""
    asked = asked_for(intent, relative, exists=exists, written=written)
    danger = hazard(relative)
    if danger is not None and not named_by_user(intent, relative):
        return WriteDecision(asked=False, refused=f"Not written: {danger}, and Cortex writes such a file only "
                                                  "when you name it in your request.")
    if reviewed or asked:
        return WriteDecision(asked=asked)
    if exists and intent.write_grant.named(relative):
        return WriteDecision(asked=False, refused=f"Not written: {relative} already exists, and you asked to save "
                                                  "to it, not to replace it.")
    return WriteDecision(asked=False, refused=strict_refusal(relative))


def sink_refusal(request: EditRequest, roots: Sequence[Path], *, reviewed: bool) -> str | None:
    """Why an edit sink may not send ``request`` at all (the hard rules, then strict mode), else ``None``.
    Every front's sink asks this before it shows or sends a write."""
    relative = relative_to_roots(request.path, roots)
    if relative is None:
        return f"Not written: {request.path.name} is outside the open folder."
    danger = hazard(relative)
    if danger is not None and not request.named:
        return f"Not written: {danger}, and Cortex writes such a file only when you name it in your request."
    if not reviewed:
        if request.grant is None:
            return NO_GRANT_GIVEN
        if not request.asked:
            return strict_refusal(relative)
    return root_refusal(request.path, roots)  # several folders: which one the name means


def strict_refusal(relative: str) -> str:
    """The one sentence a user reads when a write they did not clearly ask for is refused (strict mode)."""
    return (f"Not written: you did not clearly ask for {relative} to be written, and this editor cannot show "
            "you the change to review.")
