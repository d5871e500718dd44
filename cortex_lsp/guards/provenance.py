"""Provenance: which words of a chat turn are the user's own request.

Side effects (file writes and overwrites, web fetches, code runs, learning) may only follow from the
user's own words. Two layers decide what those are:

* **Structure** (:class:`UserTurn`): the editor selection and attached file/page contents arrive as
  separate fields and are never the user's words, whatever they say.
* **Text** (:func:`instruction_text`, :func:`request_text`): inside what the user typed, quoted, fenced
  and pasted material (quotes of every kind, code fences, blockquotes, indented code, HTML/XML, YAML
  block scalars, JSON, tables, unclosed quotes, hidden characters) is data, and so is everything
  after a hand-over such as "summarize this:".

Whether a file may be written is decided by the parsed intent (:mod:`cortex_lsp.guards.intent`, its
write grant), not here. The remaining predicates (:func:`asks_for_web`, :func:`asks_for_delete`, ...)
filter their input with :func:`request_text` again (the filter is idempotent), so a guard that passes
the raw message still reads only the user's words. Every function here is pure; regexes are compiled
once at import, and the two filters keep a small memo (they are pure), since one run asks several
predicates about the same message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from cortex_lsp.guards.material import (
    FILE_NAME_RE,
    cut_handover,
    cut_material_colon,
    instruction,
    normalize,
)
from cortex_lsp.guards.self_talk import is_grounded, self_statements

if TYPE_CHECKING:
    from cortex_lsp.guards.intent import Intent

__all__ = [
    "UserTurn",
    "asks_for_code_writing",
    "asks_for_delete",
    "asks_for_python",
    "asks_for_rename_or_move",
    "asks_for_web",
    "asks_to_run_code",
    "instruction_text",
    "intended_tools",
    "is_grounded",
    "normalize",
    "request_text",
    "self_statements",
    "user_urls",
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
# intents, read from the user's words only

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?;])\s+|\n+")

_DELETE_VERB = re.compile(
    r"\b(?:delet(?:e|es|ed|ing)|wip(?:e|es|ed|ing)|eras(?:e|es|ed|ing)|destroy(?:s|ed|ing)?|"
    r"shred(?:s|ded|ding)?|purg(?:e|es|ed|ing)|unlink|trash|nuke|get\s+rid\s+of|clean\s+out|"
    r"clear\s+out|empty)\b|\brm\s+-|\brmdir\b|\bremov(?:e|es|ed|ing)\b",
    re.IGNORECASE,
)
_DELETE_OBJECT = re.compile(
    r"\b(?:files?|folders?|director(?:y|ies)|dirs?|workspace|project|repo(?:sitory)?|disk|drive|"
    r"everything|documents?|notes|data|database|backups?)\b|\ball(?:\s+of\s+(?:it|them|this|that))?\s*(?:[.!,;]|$)|"
    + FILE_NAME_RE.pattern,
    re.IGNORECASE,
)
_STRONG_DELETE = re.compile(r"\brm\s+-\w*[rf]|\b(?:sudo\s+)?rm\s+(?:-\w+\s+)*[/~*]", re.IGNORECASE)

_RENAME = re.compile(r"\b(?:renam(?:e|es|ed|ing))\b|\bmv\s+\S", re.IGNORECASE)
_MOVE = re.compile(r"\b(?:mov(?:e|es|ed|ing)|relocat(?:e|es|ed|ing))\b", re.IGNORECASE)
_MOVE_OBJECT = re.compile(
    r"\b(?:files?|folders?|director(?:y|ies)|dirs?)\b|" + FILE_NAME_RE.pattern, re.IGNORECASE
)
_MOVE_CODE = re.compile(
    r"\b(?:function|method|class|code|line|lines|import|block|variable|var|parameter|param|argument|"
    r"field|attribute|column|key|symbol|identifier|heading|section|tab|branch)s?\b",
    re.IGNORECASE,
)

_URL = re.compile(r"\bhttps?://[^\s<>\"'`]+|\bwww\.[a-z0-9-]+\.[a-z]{2,}[^\s<>\"'`]*", re.IGNORECASE)
_WEB_WORDS = re.compile(
    r"\b(?:web|internet|online|website|webpage|web\s*page|web\s*site|browse|browsing|google|bing|"
    r"duckduckgo|search\s+engine|fetch\s+(?:the\s+)?(?:page|site))\b"
    r"|\b(?:latest|recent|today'?s|current|breaking)\s+(?:news|headlines)\b|\bnews\s+(?:about|on|for)\b",
    re.IGNORECASE,
)

_RUN = re.compile(
    r"\b(?:run|re-?run|runs|running|execute|executes|executing|exec)\b"
    r"(?!\s+(?:out|away|into|through|across|over|late|short|low|smoothly|fast|faster|slow|slower)\b)"
    r"|\bwhat\s+(?:does|would|will)\s+(?:it|(?:this|that|the|my)(?:\s+(?:code|script|program|snippet))?)\s+"
    r"(?:print|output|return|show)"
    r"|\b(?:show|give|tell)\s+me\s+(?:the\s+|its\s+|what\s+it\s+)?(?:output|result|prints?)\b"
    r"|\btry\s+it\b|\btest\s+it\b",
    re.IGNORECASE,
)
_PYTHON = re.compile(
    r"\b(?:use|using|with|in|via|through|by)\s+(?:the\s+)?(?:python|python_exec|sandbox)\b"
    r"|\bpython\s+(?:to|for\s+(?:comput|calculat))|\bpython_exec\b",
    re.IGNORECASE,
)
_PYTHON_WORD = re.compile(r"\bpython\b", re.IGNORECASE)
_CODE_VERB = (
    r"(?:write|writ(?:ing)|fix|fixing|generate|create|make|give\s+me|show\s+me|implement|refactor|debug|"
    r"correct|complete|improve|optimi[sz]e|build|draft|code\s+up|rewrite|produce|add)"
)
_CODE_NOUN = (
    r"(?:code|script|scripts|function|functions|program|programs|class|classes|method|snippet|module|"
    r"app|bot|game|algorithm|regex|query|unit\s+tests?|tests?|bug|error|decorator|cli|class)"
)
_CODE_WRITING = re.compile(
    rf"\b{_CODE_VERB}\b(?:\s+[\w.'-]+){{0,6}}?\s+{_CODE_NOUN}\b|\bfix\s+(?:this|it|that)\b",
    re.IGNORECASE,
)


def _sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_SPLIT.split(text) if s.strip()]


def asks_for_delete(text: str) -> bool:
    """Do the user's own words ask to delete/wipe/erase files (or everything)?

    Read by the destructive-plan guard: such a request becomes a polite refusal before anything runs.
    "wipe/erase/destroy/rm -rf" count on their own; delete/remove/… need a file-ish object
    (file, folder, everything, all, a file name) in the same sentence.
    """
    for sentence in _sentences(request_text(text)):
        if _STRONG_DELETE.search(sentence):
            return True
        if _DELETE_VERB.search(sentence) and _DELETE_OBJECT.search(sentence):
            return True
    return False


def asks_for_rename_or_move(text: str) -> bool:
    """Do the user's own words ask to rename or move a file or folder? (Refused: no such tool.)"""
    for sentence in _sentences(request_text(text)):
        if _RENAME.search(sentence) and not _MOVE_CODE.search(sentence):
            return True
        if _RENAME.search(sentence) and _MOVE_OBJECT.search(sentence):
            return True
        if _MOVE.search(sentence) and _MOVE_OBJECT.search(sentence):
            return True
    return False


def asks_for_web(text: str) -> bool:
    """Do the user's own words give a URL or ask for web content? Unrequested web steps are dropped."""
    words = request_text(text)
    return _URL.search(words) is not None or _WEB_WORDS.search(words) is not None


def user_urls(text: str) -> list[str]:
    """The URLs in the user's own words (not in quoted or pasted material), in order."""
    return [m.group(0).rstrip(".,;:!?)]}") for m in _URL.finditer(request_text(text))]


def asks_to_run_code(text: str) -> bool:
    """Do the user's own words ask to run/execute code ("run it", "what does it print")?"""
    return _RUN.search(request_text(text)) is not None


def asks_for_code_writing(text: str) -> bool:
    """Do the user's own words ask to write/fix/generate code (a script, function, program)?

    Such a request is answered with code, not run, unless :func:`asks_to_run_code` is also true.
    """
    return _CODE_WRITING.search(request_text(text)) is not None


def asks_for_python(text: str) -> bool:
    """Does the user explicitly ask to compute with Python ("use Python", "with the sandbox")?

    A request to *write* Python code is not one, unless it also asks to run it: the plan guard then
    makes sure the Python tool is used.
    """
    words = request_text(text)
    runs = _RUN.search(words) is not None
    if _PYTHON.search(words) is None and not (runs and _PYTHON_WORD.search(words)):
        return False
    return runs or _CODE_WRITING.search(words) is None


_ARITHMETIC = re.compile(
    r"\d\s*(?:[-+*/×÷^%]|\*\*)\s*\(?\s*\d|\b(?:calculate|compute|how\s+much\s+is|square\s+root|"
    r"factorial|percent\s+of|\d+\s*%\s+of)\b",
    re.IGNORECASE,
)
_TIME = re.compile(
    r"\b(?:what\s+time|current\s+(?:time|date)|time\s+is\s+it|today'?s\s+date|what\s+day|"
    r"date\s+today|what'?s\s+the\s+date|what\s+is\s+the\s+date|day\s+of\s+the\s+week\s+is\s+it)\b",
    re.IGNORECASE,
)
_READ = re.compile(
    r"\b(?:read|open|show|cat|view|look\s+at|summari[sz]e|explain|review|what'?s\s+in|contents?\s+of)\b",
    re.IGNORECASE,
)
_LIST = re.compile(
    r"\b(?:list|show|which|what)\b(?:\s+[\w'-]+){0,4}?\s+(?:files|folders|director(?:y|ies)|dirs?|folder)\b"
    r"|\bls\b|\bwhat'?s\s+in\s+(?:the\s+|this\s+|my\s+)?(?:folder|directory|workspace|project)\b",
    re.IGNORECASE,
)
_SEARCH = re.compile(
    r"\b(?:search|find|grep|look\s+for|where\s+is|where\s+are|which\s+files?)\b(?:\s+[\w'\"-]+){0,6}?\s+"
    r"(?:in|across|through|inside)\s+(?:the\s+|my\s+|this\s+|all\s+)?(?:files?|project|workspace|code|"
    r"codebase|folder|repo(?:sitory)?|sources?)\b|\bgrep\b",
    re.IGNORECASE,
)
_DOCS = re.compile(r"\b(?:my|the|indexed|local)\s+(?:documents|docs|notes)\b|\bdoc_search\b|\bindex\b",
                   re.IGNORECASE)


def intended_tools(text: str) -> frozenset[str]:
    """The tools the user's own words call for (``write_file``, ``web_fetch``, ``python_exec``,
    ``calculator``, ``current_time``, ``read_file``, ``list_dir``, ``search_files``, ``doc_search``).

    Used with the plan's tools to decide which skipped tool a recovery may ask for. A request to
    write code does not call for the calculator ("generate Python code for a calculator").
    """
    from cortex_lsp.guards.intent import parse_intent  # the intent parses on top of this module

    words = request_text(text)
    found: set[str] = set()
    code_writing = _CODE_WRITING.search(words) is not None
    if not parse_intent(words).write_grant.empty:
        found.add("write_file")
    if asks_for_web(words):
        found.add("web_fetch")
    python = asks_to_run_code(words) or asks_for_python(words)
    if python:
        found.add("python_exec")
    if _ARITHMETIC.search(words) and not code_writing and not python:
        found.add("calculator")
    if _TIME.search(words):
        found.add("current_time")
    if _READ.search(words) and FILE_NAME_RE.search(words):
        found.add("read_file")
    if _LIST.search(words):
        found.add("list_dir")
    if _SEARCH.search(words):
        found.add("search_files")
    if _DOCS.search(words):
        found.add("doc_search")
    return frozenset(found)


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

    @property
    def intent(self) -> Intent:
        """The parsed intent of the user's own words (:func:`~cortex_lsp.guards.intent.parse_intent`)."""
        from cortex_lsp.guards.intent import parse_intent

        return parse_intent(self.own_words)

    def asks_for_web(self) -> bool:
        return asks_for_web(self.own_words)

    def self_statements(self) -> list[str]:
        """Clauses where the user talks about themselves, from the typed words only."""
        return self_statements(self._typed())
