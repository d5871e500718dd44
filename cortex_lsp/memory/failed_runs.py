"""A failed ask leaves no memory.

A run that ended without an answer (the model was down, an error, a cancel) keeps only an ``error``
event with its session. The user's message of that run, stored when the run began, is deleted again
(title recomputed, file scrubbed): it is not replayed into the next request of the session, not found by
memory search, and nothing was consolidated from it or learned as a tool sequence (that happens only
when a run answers). Only the newest matching user turn with no answer after it is dropped, so an ask
that was answered, or another run's ask in the same session, stays.
"""

from __future__ import annotations

from cortex_lsp.memory.episodic import EpisodicStore


def drop_unanswered_ask(episodic: EpisodicStore, session_id: str, ask: str) -> bool:
    """Delete the session's newest user turn holding ``ask`` that no answer follows; True if one was."""
    if not ask:
        return False
    rows = episodic.read(
        "SELECT t.id FROM turns t WHERE t.session_id = ? AND t.role = 'user' AND t.content = ? "
        "AND NOT EXISTS (SELECT 1 FROM turns a WHERE a.session_id = t.session_id "
        "AND a.role = 'assistant' AND a.id > t.id) ORDER BY t.id DESC LIMIT 1",
        (session_id, ask),
    )
    return bool(rows) and episodic.delete_turn(int(rows[0][0]))
