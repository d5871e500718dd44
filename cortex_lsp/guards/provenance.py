"""Provenance: which words of a chat turn are the user's own request.

Side effects (file writes and overwrites, web fetches, code runs, learning) may only follow from the
user's own words. Two layers decide what those are:

* **Structure** (:class:`UserTurn`): the editor selection and attached file/page contents arrive as
  separate fields and are never the user's words, whatever they say.
* **Text** (:func:`instruction_text`, :func:`request_text`): inside what the user typed, quoted, fenced
  and pasted material (quotes of every kind, code fences, blockquotes, indented code, HTML/XML, YAML
  block scalars, JSON, tables, unclosed quotes, hidden characters) is data, and so is everything
  after a hand-over such as "summarize this:".

The intent predicates (:func:`asks_for_file_write`, ...) filter their input with :func:`request_text`
again (the filter is idempotent), so a guard that passes the raw message still reads only the user's
words. Every function here is pure; regexes are compiled once at import, and the two filters keep
a small memo (they are pure), since one run asks several predicates about the same message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from cortex_lsp.guards.material import (
    FILE_NAME_RE,
    cut_handover,
    cut_material_colon,
    instruction,
    normalize,
)
from cortex_lsp.guards.self_talk import is_grounded, self_statements

__all__ = [
    "UserTurn",
    "asks_for_code_writing",
    "asks_for_delete",
    "asks_for_file_write",
    "asks_for_overwrite",
    "asks_for_python",
    "asks_for_rename_or_move",
    "asks_for_web",
    "asks_to_run_code",
    "asks_to_write",
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

_FILE_INTENT = re.compile(
    r"\b(?:files?|save[ds]?|saving|store\s+(?:it|them|this|that|the)|folders?|director(?:y|ies)|disk|csv)\b"
    r"|" + FILE_NAME_RE.pattern,
    re.IGNORECASE,
)
_OVERWRITE_WORD = re.compile(r"\b(?:over-?writ(?:e|es|ing|ten)|overwrote|save\s+over)\b", re.IGNORECASE)
_CHANGE_VERB = re.compile(
    r"\b(?:replac(?:e|es|ed|ing)|updat(?:e|es|ed|ing)|chang(?:e|es|ed|ing)|edit(?:s|ed|ing)?|"
    r"modif(?:y|ies|ied|ying)|rewrit(?:e|es|ing|ten)|rewrote|append(?:s|ed|ing)?|add\s+(?:it\s+)?to)\b",
    re.IGNORECASE,
)
_FILE_OBJECT = re.compile(
    r"\b(?:files?|documents?|doc|contents?|it|existing|notes|readme|script|module)\b|"
    + FILE_NAME_RE.pattern,
    re.IGNORECASE,
)
# the change verb applied to a file: "update notes.txt", "append the result to log.txt", "replace it"
_CHANGE_ON_FILE = re.compile(
    _CHANGE_VERB.pattern + r"(?:\s+[\w.'/-]+){0,6}?\s+(?:" + _FILE_OBJECT.pattern + ")", re.IGNORECASE
)
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


def asks_for_file_write(text: str) -> bool:
    """Do the user's own words ask to save/write/create/store a file?

    True when :func:`request_text` of ``text`` mentions file|files|save|store it|folder|directory|
    disk|csv or a file name (.txt .md .json .csv .py .yaml .yml .log ...). Read by the write guard
    and by the plan guard that adds a missing save step.
    """
    return _FILE_INTENT.search(request_text(text)) is not None


def asks_for_overwrite(text: str) -> bool:
    """Do the user's own words ask to replace an existing file?

    "overwrite" anywhere, or replace|update|change|edit|modify|rewrite|append followed within a few
    words by a file (a file name, "file", "document", "it", "existing", ...). Read by the
    overwrite guard: without it a write never replaces an existing file.
    """
    for sentence in _sentences(request_text(text)):
        if _OVERWRITE_WORD.search(sentence):
            return True
        if _CHANGE_ON_FILE.search(sentence):
            return True
    return False


# a save request proper: "save ...", "write/put/create ... to/in/as/called <file>", "create a file"
_WRITE_TARGET = r"(?:files?\b|" + FILE_NAME_RE.pattern + ")"
_SAVE_REQUEST = re.compile(
    r"\b(?:save|saves|saving|store|stores|storing|dump|export)\b"
    r"|\b(?:write|put|output|create|generate|make|copy)\b[^.?!\n]{0,80}?\b(?:to|in|into|as|called|named)\s+"
    r"(?:a\s+|the\s+|new\s+)?" + _WRITE_TARGET
    + r"|\b(?:create|make|generate|write)\s+(?:a\s+|the\s+|new\s+)?" + _WRITE_TARGET,
    re.IGNORECASE,
)
_WRITE_VERB = re.compile(
    r"\b(?:sav(?:e|ed|ing)|writ(?:e|es|ing)|stor(?:e|ing)|creat(?:e|es|ing)|export|put|dump|record|make|"
    r"generate|output|add|append)\b",
    re.IGNORECASE,
)


def _path_key(path: str) -> str:
    text = path.strip().replace("\\", "/").lower()
    while text.startswith("./"):
        text = text[2:]
    return text.lstrip("/")


def asks_to_write(text: str, path: str) -> bool:
    """May a write of ``path`` follow from the user's own words?

    Stricter than :func:`asks_for_file_write` (which only sees file *intent*, and is true for "summarize
    notes.md"): the words must ask for a save ("save …", "write/put/create … to/as <file>", "create
    a file"), ask to replace/update a file, or name ``path`` together with a writing verb. A file the
    user named only to be *read* grants no write, so text read from it can't ask for one.
    """
    words = request_text(text)
    if _FILE_INTENT.search(words) is None:
        return False
    if _SAVE_REQUEST.search(words) is not None or asks_for_overwrite(words):
        return True
    if _WRITE_VERB.search(words) is None:
        return False
    target = _path_key(path)
    name = target.rsplit("/", 1)[-1]
    for match in FILE_NAME_RE.finditer(words):
        named = _path_key(match.group(0))
        if named == target or (name and named.rsplit("/", 1)[-1] == name):
            return True
    return False


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
_SAVE_VERB = re.compile(
    r"\b(?:sav(?:e|ed|ing)|writ(?:e|ing)|stor(?:e|ing)|creat(?:e|ing)|export|put|dump|record|make)\b",
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
    words = request_text(text)
    found: set[str] = set()
    code_writing = _CODE_WRITING.search(words) is not None
    if asks_for_file_write(words) and _SAVE_VERB.search(words):
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

    def asks_for_file_write(self) -> bool:
        return asks_for_file_write(self.own_words)

    def asks_for_overwrite(self) -> bool:
        return asks_for_overwrite(self.own_words)

    def asks_for_web(self) -> bool:
        return asks_for_web(self.own_words)

    def self_statements(self) -> list[str]:
        """Clauses where the user talks about themselves, from the typed words only."""
        return self_statements(self._typed())
