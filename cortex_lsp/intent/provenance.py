"""Provenance: which words of a chat turn are the user's own request.

Side effects (file writes and overwrites, web fetches, code runs, learning) may only follow from the
user's own words. Two layers decide what those are:

* **Structure** (:class:`UserTurn`): the editor selection and attached file/page contents arrive as
  separate fields and are never the user's words, whatever they say.
* **Text** (:func:`instruction_text`, :func:`request_text`): inside what the user typed, quoted, fenced
  and pasted material (quotes of every kind, code fences, blockquotes, indented code, HTML/XML, YAML
  block scalars, JSON, tables, unclosed quotes, hidden characters) is data, and so is everything
  after a hand-over such as "summarize this:".

What the words ask for (a write, a web fetch, a run, a delete, the tools) is read once from what is
left, by :func:`cortex_lsp.intent.intent.parse_intent`; every guard reads that ``Intent``, not the
message. Every function here is pure; regexes are compiled once at import, and the two filters keep
a small memo (they are pure), since one run parses several texts built from the same message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from cortex_lsp.intent.handover import cut_handover, cut_material_colon
from cortex_lsp.intent.quoted_material import instruction, normalize
from cortex_lsp.intent.self_talk import is_grounded, self_statements

__all__ = [
    "UserTurn",
    "instruction_text",
    "is_grounded",
    "normalize",
    "request_text",
    "self_statements",
]


def instruction_text(text: str) -> str:
    """The message with quoted, fenced and pasted material removed.

    Removed: ``` and ~~~ fences, HTML comments, HTML/XML elements (with their bodies, also when
    written as ``&lt;tag&gt;``), ``>`` and ``<blockquote>`` quotes, 4-space/tab indented lines,
    markdown tables, YAML block scalars, code-looking lines, JSON objects/arrays, backtick spans and
    quotes of every kind ("" “” „“ ‚‘ '' ‘’ «» ‹› 「」 『』 《》); an unclosed quote, fence or
    element removes everything after it, and so do pasted e-mail headers ("From: …"), chat
    transcripts ("User: …", "Assistant: …") and chat-template tokens (``<|im_start|>``, ``[INST]``).
    A quoted bare file name or URL (``"notes.txt"``) is kept, without its quote marks.
    Zero-width, bidi and other invisible characters are dropped and homoglyphs are folded first, so
    the result is the normalised text (see :func:`normalize`).
    """
    return instruction(text)


def request_text(text: str) -> str:
    """:func:`instruction_text`, also cut at a hand-over: the words side effects may act on.

    A hand-over is a verb such as summarize/translate/analyse/proofread/rewrite/paraphrase/parse/
    classify/review/explain/check/extract/convert/format/read/critique/simplify/shorten followed by
    this/these/the following/below/":" (or "the email below", "here is the text:"). Everything
    after it is material, except a clause joined to it ("translate the following into French and
    save it to fr.txt:"). A colon that introduces material (after "email", "note", "he wrote",
    "here is", a hand-over verb, or followed by a pasted block) also ends the request, and reported
    speech ("the page says to…", "Bob told me to…") is removed to the end of its sentence. A bare
    URL right after a cut is kept ("summarize this page: https://…").
    """
    return _request_cached(text) if len(text) <= _CACHE_MAX_CHARS else _request(text)


_CACHE_MAX_CHARS = 32_768


@lru_cache(maxsize=256)
def _request_cached(text: str) -> str:
    return _request(text)


def _request(text: str) -> str:
    words = instruction_text(text)
    for _ in range(4):  # the cuts feed each other; settle on a fixed point so the filter is idempotent
        cut = cut_material_colon(cut_handover(words))
        if cut == words:
            break
        words = cut
    return words


# ------------------------------------------------------------------------------------------------
# structural provenance

_MIN_ECHO = 12


@dataclass(frozen=True)
class UserTurn:
    """One user turn with its parts kept apart.

    ``words`` is what the user typed in the chat box; ``selection`` (the editor selection) and
    ``attachments`` (file and page contents) are data and never count as the user's words, even
    when they contain instructions. If the typed words repeat a selection or attachment verbatim
    (the user pasted it too), that copy is removed as well.
    """

    words: str
    selection: str | None = None
    attachments: list[str] = field(default_factory=list)

    def _typed(self) -> str:
        typed = normalize(self.words)
        for data in (self.selection, *self.attachments):
            if not data:
                continue
            data_n = normalize(data)
            if len(data_n.strip()) >= _MIN_ECHO and data_n.strip() in typed:
                typed = typed.replace(data_n.strip(), " ")
            lines = {ln.strip() for ln in data_n.splitlines() if len(ln.strip()) >= _MIN_ECHO}
            if lines:
                typed = "\n".join(ln for ln in typed.splitlines() if ln.strip() not in lines)
        return typed

    @property
    def instruction(self) -> str:
        """The typed words with quoted/pasted material removed (:func:`instruction_text`)."""
        return instruction_text(self._typed())

    @property
    def own_words(self) -> str:
        """The user's own request (:func:`request_text` of the typed words): what side effects read."""
        return request_text(self._typed())

    def self_statements(self) -> list[str]:
        """Clauses where the user talks about themselves, from the typed words only."""
        return self_statements(self._typed())
