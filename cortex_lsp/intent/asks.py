"""Which acting tools a turn may use: running code and opening web pages, read from the user's own
words (after the provenance cuts) by granting actions, not by keywords.

- **Run** (:func:`run_requested`): a run/execute/test/try action at the start of a clause (an imperative
  or a request: "please", "can you", "now", "and then" …), not negated, whose object is code: "this",
  "it", "the script/snippet/selection/code", a ``*.py`` file, inline code; or "what does this print?".
  "Run me through", "runs the foundation", "run into", "test whether you know …" grant nothing.
- **Python** (:func:`python_requested`): "use Python to …", "compute … with Python": a granting clause
  that names Python (or the sandbox) as the instrument. "Don't use Python", "should I use Python or
  Go?", "explain how Python's exec works" grant nothing.
- **Fetch** (:func:`fetch_urls`): a URL may be opened only when a granting fetch/open/read/summarize/
  visit/check action of the same sentence has it (or "it", after the URL) as its object. A question
  about a URL ("is it a phishing link?"), a negated action ("never fetch …", "do not visit it") grant
  nothing; pasted material never reaches these words (the provenance cuts).

Pure; regexes compiled once.
"""

from __future__ import annotations

import re

from cortex_lsp.intent.patterns import split_sentences
from cortex_lsp.intent.typed_urls import user_typed_urls

__all__ = ["fetch_urls", "python_requested", "run_requested", "web_refused"]

#: where a clause may start inside a sentence
_ANCHOR = r"(?:^|[,:;]\s*|\s-+\s*|\b(?:and|then|but|so|also|jk|ok(?:ay)?)\s+)"
#: words that may precede an imperative or a request's verb
_LEAD = (
    r"(?:(?:please|pls|kindly|now|then|also|just|first|next|finally|and|so|ok(?:ay)?|go\s+ahead\s+and|"
    r"can\s+you|could\s+you|would\s+you|will\s+you|would\s+you\s+mind|"
    r"i\s+(?:want|need|would\s+like|'?d\s+like)\s+you\s+to|let'?s)\s+)*"
)
_NEGATOR = re.compile(
    r"\b(?:don'?t|do\s+not|doesn'?t|never|not|no\s+need\s+to|without|avoid|refrain|stop|"
    r"nicht|kein\w*|ne|jamais|nunca|sin)\b|n't\b",
    re.IGNORECASE,
)
_CONTRAST = re.compile(r"\b(?:but|just|instead|rather|only|then|however)\b", re.IGNORECASE)

_CODE_OBJECT = (
    r"(?:(?:it|them)\b(?!\s+(?:is|was|means|works|does)\b)"
    r"|(?:this|that|these)(?=\s*$|\s*[.!?,;:]|\s+(?:with|in|for|again|now|please|and|then|using|via|once|on|"
    r"through|code|script|snippet|program|selection|block|function|tests?|example|file|cell|lines?|query|"
    r"command|module|class|method)\b)"
    r"|(?:the|my|this|that|our|your|these|those)\s+(?:[\w-]+\s+){0,2}?"
    r"(?:code|script|scripts|snippet|program|selection|block|function|tests?|example|file|cell|lines?|"
    r"query|command|above|below|following|module|class|method)\b"
    r"|the\s+(?:above|below|following)\b|(?:unit\s+)?tests?\b|code\b|[\w./-]+\.py\b|`|[\w.]+\()"
)
_RUN_VERB = r"(?:run|re-?run|execute|exec|test|try)"
#: "run this", "execute main.py", and "Please run:" / "Run it!" before the code (the verb ends the clause)
_RUN = re.compile(
    _ANCHOR + _LEAD + _RUN_VERB + r"(?:\s+" + _CODE_OBJECT + r"|\s*:|\s*[.!]*\s*$)", re.IGNORECASE
)
#: "evaluate" also means "judge" ("evaluate this argument"): only with code named as its object
_EVAL = re.compile(
    _ANCHOR + _LEAD + r"(?:evaluate|eval)\s+(?:(?:the|my|this|that|our|your)\s+(?:[\w-]+\s+){0,2}?"
    r"(?:code|script|snippet|program|selection|block|function|cell|expression)\b|[\w./-]+\.py\b|`)",
    re.IGNORECASE,
)
_OUTPUT_QUESTION = re.compile(
    _ANCHOR + r"(?:so\s+)?what\s+(?:does|would|will|should)\s+(?:it|this|that|"
    r"(?:the|this|that|my)\s+(?:code|script|program|snippet|function|selection|block))\s+"
    r"(?:print|output|return|show|produce|give)\b"
    r"|" + _ANCHOR + _LEAD + r"(?:show|give|tell)\s+me\s+(?:the\s+|its\s+|what\s+it\s+)?(?:output|prints?)\b",
    re.IGNORECASE,
)
_PYTHON_NAME = r"(?:the\s+)?(?:python|python_exec|sandbox)"
_USE_PYTHON = re.compile(
    _ANCHOR + _LEAD + r"(?:use|using)\s+" + _PYTHON_NAME + r"(?:\s+(?:to|for)\b|\s*[:,.!]|\s*$)",
    re.IGNORECASE,
)
_WITH_PYTHON = re.compile(
    _ANCHOR + _LEAD
    + r"(?:compute|calculate|evaluate|work\s+out|find|count|solve|simulate|check|verify|determine|print|"
    r"run|re-?run|execute|test|sort|generate|list|sum|add|multiply|plot|convert)\b[^.?!]*?"
    r"\b(?:with|using|in|via|through)\s+" + _PYTHON_NAME + r"\b",
    re.IGNORECASE,
)

#: a sentence that asks whether a link is safe: the link is the subject, never a page to open
_SAFETY = re.compile(
    r"\b(?:phishing|malicious|malware|virus|scam\w*|spam|safe|unsafe|legit\w*|trust\w*|suspicious|"
    r"dangerous|fake)\b",
    re.IGNORECASE,
)
_FETCH_VERB = (
    r"(?:fetch|get|open|read|summari[sz]e|visit|browse|load|download|scrape|grab|pull|"
    r"check(?:\s+out)?|look\s+at|go\s+to|tell\s+me\s+what(?:'s|\s+is)?\s+(?:on|at|in)|"
    r"give\s+me\s+(?:a\s+|the\s+)?(?:summary|gist|tl;?dr)\s+of|what(?:'s|\s+is)\s+(?:on|at)|"
    r"what\s+does)"
)
_FETCH = re.compile(_ANCHOR + _LEAD + r"(?P<verb>" + _FETCH_VERB + r")\b", re.IGNORECASE)
_IT = re.compile(r"\b(?:it|that|this(?:\s+(?:page|site|link|url|article|one))?|the\s+(?:page|site|link|url|article))\b",
                 re.IGNORECASE)
_WEB_VERB = re.compile(
    r"\b(?:fetch|open|visit|browse|load|download|scrape|search|google|look\s+up|go\s+to|access|click)\b",
    re.IGNORECASE,
)


#: "what does this note mean?" + a new line: what follows is the note (material), not a request
_MATERIAL_AHEAD = re.compile(
    r"\b(?:this|these|the\s+following|the\s+below|below|that)\s+(?:[\w-]+\s+)?"
    r"(?:note|notes|text|message|messages|e-?mail|mail|passage|paragraph|comment|log|logs|output|document|"
    r"post|tweet|chat|content|reply|ticket|issue|instructions?|memo|letter)\b[^\n]*\n",
    re.IGNORECASE,
)


def _own_part(words: str) -> str:
    """``words`` up to a line that announces material below ("what does this note mean?\n…")."""
    m = _MATERIAL_AHEAD.search(words)
    return words[: m.end()] if m else words


def _sentences(words: str) -> list[str]:
    return split_sentences(_own_part(words))


def _negated(sentence: str, start: int, end: int | None = None) -> bool:
    """Is the clause starting at ``start`` under a negator earlier in the sentence (and no "but/just"
    between)? "Don't explain, just run it" is not; "Do not, under any circumstances, run it" is."""
    before = sentence[:start]
    end = start if end is None else end
    negators = list(_NEGATOR.finditer(before))
    if not negators:
        return False
    return _CONTRAST.search(sentence[negators[-1].end():end]) is None


def _granted(pattern: re.Pattern[str], words: str) -> bool:
    for sentence in _sentences(words):
        for m in pattern.finditer(sentence):
            if not _negated(sentence, m.start(), m.end()) and not _NEGATOR.search(m.group(0)):
                return True
    return False


def run_requested(words: str) -> bool:
    """Do the user's own words ask to run, execute or test code (see the module docstring)?"""
    return _granted(_RUN, words) or _granted(_EVAL, words) or _granted(_OUTPUT_QUESTION, words)


def python_requested(words: str) -> bool:
    """Do they ask to compute or run something *with Python* ("use Python to …", "… with Python")?"""
    return _granted(_USE_PYTHON, words) or _granted(_WITH_PYTHON, words)


def _positions(sentence: str) -> list[tuple[int, int, str]]:
    """The URLs and bare hosts of ``sentence`` (as :func:`user_typed_urls` reads them), with places."""
    found: list[tuple[int, int, str]] = []
    at = 0
    for url in user_typed_urls([sentence]):
        start = sentence.find(url, at)
        if start < 0:
            start = sentence.find(url)
        if start >= 0:
            found.append((start, start + len(url), url))
    return sorted(found)


def fetch_urls(words: str) -> tuple[str, ...]:
    """The URLs of ``words`` a granting fetch action has as its object, in order (see the docstring)."""
    out: list[str] = []
    earlier: list[str] = []  # the URLs of the sentences before: "Here is a link: X. Read it."
    for sentence in _sentences(words):
        urls = _positions(sentence)
        if _SAFETY.search(sentence):
            earlier.extend(u[2] for u in urls)
            continue
        if not urls:
            if earlier and _reads_it(sentence) and earlier[-1] not in out:
                out.append(earlier[-1])
            continue
        earlier.extend(u[2] for u in urls)
        if _ONLY_URL.fullmatch(sentence.replace(urls[0][2], "", 1)) and len(urls) == 1:
            out.extend(u[2] for u in urls if u[2] not in out)  # the whole request is the address
            continue
        for m in _FETCH.finditer(sentence):
            if _negated(sentence, m.start(), m.end()) or _NEGATOR.search(m.group(0)):
                continue
            verb_end = m.end()
            after = [u for u in urls if u[0] >= verb_end]
            # the verb's object: the next URL of its clause, or "it"/"this page" pointing back
            clause_end = _next_clause(sentence, verb_end)
            own = [u for u in after if u[0] < clause_end]
            if own:
                out.extend(u[2] for u in own if u[2] not in out)
                continue
            obj = _IT.match(sentence, _skip_space(sentence, verb_end))
            if obj is not None:
                out.extend(u[2] for u in urls if u[1] <= m.start() and u[2] not in out)
    return tuple(out)


def _reads_it(sentence: str) -> bool:
    """Does a granting fetch action of ``sentence`` have "it"/"this page" as its object?"""
    for m in _FETCH.finditer(sentence):
        if _negated(sentence, m.start(), m.end()) or _NEGATOR.search(m.group(0)):
            continue
        if _IT.match(sentence, _skip_space(sentence, m.end())):
            return True
    return False


_ONLY_URL = re.compile(r"\s*(?:please|pls|open|fetch)?\s*[.!?]*\s*(?:please)?\s*[.!?]*\s*", re.IGNORECASE)
_CLAUSE_BREAK = re.compile(r"[;]|\b(?:and|but|then)\s+(?=[a-z])(?!https?://|www\.)", re.IGNORECASE)


def _next_clause(sentence: str, start: int) -> int:
    m = _CLAUSE_BREAK.search(sentence, start)
    return m.start() if m else len(sentence)


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def web_refused(words: str) -> bool:
    """Did the user say not to go on the web ("never fetch …", "do not visit it", "don't search the
    web") and grant no fetch anywhere in the same words?"""
    for sentence in _sentences(words):
        for m in _WEB_VERB.finditer(sentence):
            if _negated(sentence, m.start()):
                return not fetch_urls(words)
    return False
