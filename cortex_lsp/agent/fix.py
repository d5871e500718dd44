"""``cortex.fix``: the request "Fix this error" makes of a diagnostic in a file.

The user's pick of *Fix this error* on a file is their ask to change that file: the request's own words
name the file with an update verb, so the write grant (intent/grants.py) allows replacing exactly that
file and the write is labelled asked. The diagnostic and the file's text go with the request as data;
the edit is a reviewed write like every other. :func:`fix_words` refuses a path the words can't name
exactly (the grant would then be another file or none); the reading it checked is the run's reading
of its request (:attr:`AgentRequest.intent <cortex_lsp.agent.types.AgentRequest.intent>`).
"""

from __future__ import annotations

from cortex_lsp.intent.intent import Intent, parse_intent


class Unnameable(ValueError):
    """The file's path can't be named in a request so that the grant is exactly that file."""


def fix_words(relative: str, selection: str | None = None) -> tuple[str, Intent]:
    """The request's words for fixing ``relative`` and their reading with ``selection`` (the file's text,
    sent with the request); raises :class:`Unnameable` when the grant they make is not exactly that file."""
    words = f"Fix the error in {relative} and update {relative} with the fix."
    intent = parse_intent(words, selection=selection)
    grant = intent.write_grant
    if grant.replace != frozenset({relative}) or grant.create or grant.unnamed_create:
        raise Unnameable(f"Cortex can't name {relative!r} exactly in a request (spaces or unusual characters "
                         "in the path); rename it or ask in the chat")
    return words, intent


def diagnostic_text(message: str, line: int | None = None, source: str | None = None,
                    code: str | int | None = None) -> str:
    """The diagnostic as the model reads it: ``line 5: name 'x' is not defined (pyright, reportUndefined)``."""
    where = f"line {line + 1}: " if line is not None else ""
    origin = ", ".join(str(x) for x in (source, code) if x not in (None, ""))
    return f"{where}{message}" + (f" ({origin})" if origin else "")
