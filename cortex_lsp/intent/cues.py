"""Word cues the intent reads: which tools, web content, code runs, deletes and moves the user's own
words call for.

Only :func:`cortex_lsp.intent.intent.parse_intent` calls :func:`read_cues`, on the words left after
the provenance cuts; every guard then reads the result as ``Intent.cues`` (the user's words are parsed
once). The verbs with polarity and mood come from the clause analysis (:mod:`cortex_lsp.intent.clauses`);
these cues are the keyword readings that have no verb of their own to hang on ("what time is it", "a
URL", "use Python", "rm -rf"). Pure; regexes compiled once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cortex_lsp.intent.asks import fetch_urls, python_requested, run_requested, web_refused
from cortex_lsp.intent.patterns import URL, split_sentences
from cortex_lsp.intent.quoted_material import FILE_NAME_RE

__all__ = ["DOC_PLACES", "TIME_WORDS", "Cues", "read_cues", "urls_in"]

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

_WEB_WORDS = re.compile(
    r"\b(?:web|internet|online|website|webpage|web\s*page|web\s*site|browse|browsing|google|bing|"
    r"duckduckgo|search\s+engine|fetch\s+(?:the\s+)?(?:page|site))\b"
    r"|\b(?:latest|recent|today'?s|current|breaking)\s+(?:news|headlines)\b|\bnews\s+(?:about|on|for)\b",
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

_ARITHMETIC = re.compile(
    r"\d\s*(?:[-+*/×÷^%]|\*\*)\s*\(?\s*\d|\b(?:calculate|compute|how\s+much\s+is|square\s+root|"
    r"factorial|percent\s+of|\d+\s*%\s+of)\b",
    re.IGNORECASE,
)
#: "what time is it", "today's date": the one table of time questions (the router and the tools read it)
TIME_WORDS = re.compile(
    r"\b(?:what\s+time|current\s+(?:time|date)|time\s+is\s+it|today'?s\s+date|what\s+day\s+is|"
    r"what'?s\s+the\s+date|what\s+is\s+the\s+date|date\s+today|day\s+of\s+the\s+week\s+is\s+it)\b",
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

# the router's readings: which calls the words ask for, and whether the result is shown as it is
_TOOL_WORD = re.compile(r"\b(?:use|using|with|call)\s+(?:the\s+|a\s+|your\s+)?[\w-]+\s+tool\b", re.IGNORECASE)
_READ_FOUND = re.compile(
    r"\b(?:open|read|show)\s+(?:me\s+)?(?:the\s+|each\s+|every\s+|all\s+)?(?:files?|it|them|one)\b"
    r"(?:[^.?!]*\b(?:there|you\s+find|found|to\s+me|in\s+it|inside)\b)?",
    re.IGNORECASE,
)
_SAVE_PREVIOUS = re.compile(
    r"\b(?:save|write|put|store)\s+(?:that|it|this|these|those|the\s+(?:answer|result|above|last\s+\w+)|"
    r"(?:that|this|the)\s+\w+)\s+(?:in|into|to|as)\b",
    re.IGNORECASE,
)
_ASKS = re.compile(r"\?|\b(?:tell|what|which|who|when|where|how|why|summar\w*|explain|describe)\b", re.IGNORECASE)
_LIST_WORDS = re.compile(
    r"\blook\s+(?:in|inside|into|through)\s+(?:the\s+|my\s+|this\s+)?[\w./-]+\s+(?:folder|directory|dir)\b|"
    r"^\s*(?:please\s+)?(?:list|ls)\b|\b(?:list|ls)\s+(?:all\s+|the\s+|my\s+|of\s+)*"
    r"(?:files|folders|contents|directory|directories|dir|everything)\b|\b(?:what|which)\s+files\b|\bfiles\s+(?:are\s+)?(?:in|under|inside)\b|"
    r"\bwhat'?s\s+in\s+(?:the\s+|this\s+|my\s+)?(?:folder|directory|workspace|project)\b",
    re.IGNORECASE,
)
#: where the user's documents are ("search the docs", "look in my knowledge base")
DOC_PLACES = r"(?:documents|docs|notes|indexed\s+files|knowledge\s+base)"
_DOC_WORDS = re.compile(
    r"\b(?:search|check|look\s+in|look\s+through|ask|according\s+to|in)\s+(?:the\s+|my\s+|our\s+)?"
    rf"{DOC_PLACES}\b",
    re.IGNORECASE,
)
_SHOW_ONLY = re.compile(
    r"^\s*(?:please\s+)?(?:read|show|open|cat|display|print|view)(?:\s+me)?\s+(?:the\s+)?(?:file\s+)?"
    r"[\w./-]+(?:\s+(?:file|please))?\s*[.!]?\s*$",
    re.IGNORECASE,
)

#: "try again", "retry", "one more time": the request is the one before
_AGAIN = re.compile(
    r"\s*(?:please\s+)?(?:try\s+(?:it\s+)?again|again|retry|redo(?:\s+it)?|one\s+more\s+time)"
    r"(?:\s+please)?\s*[.!]*\s*",
    re.IGNORECASE,
)

# loose hints: a tool the words may need (recovery nudges, procedural learning), read widely
_HINT_FILE = re.compile(
    r"(?<![\w/.-])[\w.-]+\.(?:txt|md|json|csv|py|yaml|yml|log|toml|ini|cfg|js|ts|html|css|rs|go)\b",
    re.IGNORECASE,
)
_HINT_READ = re.compile(
    r"\b(?:read|open|show|summari[sz]e|look at|what(?:'s| is) in|contents? of|file)\b", re.IGNORECASE
)
_HINT_LIST = re.compile(r"\b(?:list|ls|which files|what files|folder|directory|directories)\b", re.IGNORECASE)
_HINT_SEARCH = re.compile(r"\b(?:search|find|grep|look for|where is|occurrences?)\b", re.IGNORECASE)
_HINT_CALC = re.compile(
    r"\b(?:calculat\w*|comput\w*|how much|sum of|multipl\w*|divid\w*|percent\w*|square root)\b|"
    r"\d\s*(?:[-+*/^×÷]|\*\*)\s*\(?\d",
    re.IGNORECASE,
)
_HINT_TIME = re.compile(r"\b(?:time|date|today|what day|clock|timezone)\b", re.IGNORECASE)
_HINT_DOCS = re.compile(r"\b(?:docs?|documents?|documentation|notes|index)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Cues:
    """The keyword readings of the user's own words (see the module docstring)."""

    #: delete/wipe/erase with a file-ish object, or ``rm -rf`` (before the verbs' polarity is read)
    delete: bool = False
    #: rename or move a file or folder
    move: bool = False
    #: a URL a granting fetch action names, or a request for web content ("search the web", "latest news")
    web: bool = False
    #: the URLs a granting fetch/open/read/summarize/visit action names (:func:`~cortex_lsp.intent.asks.fetch_urls`)
    fetch: tuple[str, ...] = ()
    #: the user said not to go on the web ("never fetch …", "do not visit it") and granted no fetch
    web_refused: bool = False
    #: a granting run/execute/test of code ("run it", "what does it print"; not "run me through")
    run: bool = False
    #: compute with Python ("use Python to …", "… with Python"), not merely "write Python code"
    python: bool = False
    #: "use Python / with the sandbox" as a tool (the same granting reading as :attr:`python`)
    use_python: bool = False
    #: write/fix/generate code (a script, a function, a program)
    code_writing: bool = False
    #: a question about the current time or date
    time: bool = False
    #: "list the files", "what files are in src", "look in the docs folder"
    list_files: bool = False
    #: "search my documents", "according to the notes"
    documents: bool = False
    #: "use the probe tool": a tool named without its arguments
    tool_word: bool = False
    #: "open the files you find there": read what a listing or a search turned up
    read_found: bool = False
    #: "read notes.md", "show me app.py": the file is the answer, no words needed
    show_only: bool = False
    #: a question or a "tell/explain/summarize": the answer needs the model's words
    asks: bool = False
    #: "save that to NAME": the previous answer is the text
    save_previous: bool = False
    #: the whole request is "try again" / "retry": the previous request is meant
    again: bool = False
    #: the tools the words call for, read strictly (without ``write_file``: the grant decides that)
    tools: frozenset[str] = frozenset()
    #: the tools the words may need, read widely (recovery nudges, procedural learning)
    hints: frozenset[str] = frozenset()


def urls_in(words: str) -> list[str]:
    """The URLs in ``words``, in order, without trailing punctuation."""
    return [m.group(0).rstrip(".,;:!?)]}") for m in URL.finditer(words)]


def _sentences(text: str) -> list[str]:
    return split_sentences(text)


# "… in utils.py", "… from notes.md": the file is where an edit happens, not what is deleted or moved
_PLACE_BEFORE = re.compile(r"\b(?:in|inside|within|from|of|into|to|for|at)\s+(?:the\s+)?[`'\"]?$", re.IGNORECASE)
# "empty" is a delete verb only before its object ("empty the folder"), not an adjective ("empty input")
_EMPTY_ADJECTIVE = re.compile(r"\bempty\s+(?!the\b|my\b|this\b|that\b|all\b|it\b|them\b|out\b)(?=[^\W\d_]+\b(?![./]))",
                              re.IGNORECASE)


def _object(sentence: str, verb: re.Match[str], pattern: re.Pattern[str]) -> bool:
    """Is there an object of ``pattern`` after the verb that is not a place ("in utils.py")?"""
    return any(not _PLACE_BEFORE.search(sentence[verb.end():m.start()])
               for m in pattern.finditer(sentence, verb.end()))


def _delete(words: str) -> bool:
    """"wipe/erase/destroy/rm -rf" count on their own; delete/remove/… need a file-ish object (file,
    folder, everything, all, a file name) after them in the same sentence, not a place ("remove the
    import from utils.py", "handle empty input in utils.py" delete nothing)."""
    for s in _sentences(words):
        if _STRONG_DELETE.search(s):
            return True
        text = _EMPTY_ADJECTIVE.sub(" ", s)
        if any(_object(text, verb, _DELETE_OBJECT) for verb in _DELETE_VERB.finditer(text)):
            return True
    return False


def _move(words: str) -> bool:
    for s in _sentences(words):
        for verb in _RENAME.finditer(s):
            if (not _MOVE_CODE.search(s) and not _object_is_place(s, verb)) or _object(s, verb, _MOVE_OBJECT):
                return True
        if any(_object(s, verb, _MOVE_OBJECT) for verb in _MOVE.finditer(s)):
            return True
    return False


def _object_is_place(sentence: str, verb: re.Match[str]) -> bool:
    """"Rename the service in config.json": the only file is where the rename happens."""
    files = list(_MOVE_OBJECT.finditer(sentence, verb.end()))
    return bool(files) and all(_IN_PLACE.search(sentence[verb.end():m.start()]) for m in files)


_IN_PLACE = re.compile(r"\b(?:in|inside|within|from|of|for|at)\s+(?:the\s+)?[`'\"]?$", re.IGNORECASE)


def _python(words: str, runs: bool, code_writing: bool) -> bool:
    """A granting "use Python to …"/"… with Python" (:func:`~cortex_lsp.intent.asks.python_requested`),
    or a run request that names Python; a request to *write* Python code is not one unless it also asks
    to run it."""
    if not python_requested(words) and not (runs and _PYTHON_WORD.search(words)):
        return False
    return runs or not code_writing


def _hints(words: str) -> set[str]:
    found: set[str] = set()
    if _HINT_FILE.search(words) or _HINT_READ.search(words):
        found.add("read_file")
    if _HINT_LIST.search(words):
        found.add("list_dir")
    if _HINT_SEARCH.search(words):
        found.update({"search_files", "doc_search"})
    if _HINT_CALC.search(words):
        found.add("calculator")
    if _HINT_TIME.search(words):
        found.add("current_time")
    if _HINT_DOCS.search(words):
        found.add("doc_search")
    return found


def read_cues(words: str) -> Cues:
    """The cues of ``words`` (the user's own words, after the provenance cuts)."""
    fetch = fetch_urls(words)
    refused = web_refused(words)
    web = bool(fetch) or (_WEB_WORDS.search(words) is not None and not refused)
    runs = run_requested(words)
    code_writing = _CODE_WRITING.search(words) is not None
    python = _python(words, runs, code_writing)
    time = TIME_WORDS.search(words) is not None
    tools: set[str] = set()
    if web:
        tools.add("web_fetch")
    if runs or python:
        tools.add("python_exec")
    if _ARITHMETIC.search(words) and not code_writing and not (runs or python):
        tools.add("calculator")  # "generate Python code for a calculator" is no sum
    if time:
        tools.add("current_time")
    if _READ.search(words) and FILE_NAME_RE.search(words):
        tools.add("read_file")
    if _LIST.search(words):
        tools.add("list_dir")
    if _SEARCH.search(words):
        tools.add("search_files")
    if _DOCS.search(words):
        tools.add("doc_search")
    hints = _hints(words) | ({"web_fetch"} if web else set())
    return Cues(
        delete=_delete(words),
        move=_move(words),
        web=web,
        fetch=fetch,
        web_refused=refused,
        run=runs,
        python=python,
        use_python=python,
        code_writing=code_writing,
        time=time,
        list_files=_LIST_WORDS.search(words) is not None,
        documents=_DOC_WORDS.search(words) is not None,
        tool_word=_TOOL_WORD.search(words) is not None,
        read_found=_READ_FOUND.search(words) is not None,
        show_only=_SHOW_ONLY.match(words) is not None,
        asks=_ASKS.search(words) is not None,
        save_previous=_SAVE_PREVIOUS.search(words) is not None,
        again=_AGAIN.fullmatch(words) is not None,
        tools=frozenset(tools),
        hints=frozenset(hints),
    )
