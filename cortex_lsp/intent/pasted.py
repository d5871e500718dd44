"""Lines and spans that look pasted, for the provenance cuts in :mod:`cortex_lsp.intent.quoted_material`.

Classes of pasted material that are data, never the user's words, whatever they say:

* comments of pasted code: ``# …``, ``// …``, ``-- …``, ``; …``, ``/* … */`` (also inline), ``* …``
  continuation lines, ``REM …``;
* code-looking lines beyond the generic ones (C-like declarations, SQL statements, lines ending in
  ``;``, ``{`` or ``}``);
* markdown headings (``#``, ``##``, setext ``===``/``---`` underlines; after the first line a heading
  starts a pasted document that runs to the end), link text and image alt text (``[text](url)`` keeps
  only the URL), reference links;
* log lines (timestamps, ``[INFO]``, ``ERROR:``, ``INFO:root:``, syslog-style prefixes) and stack traces
  (``Traceback``, ``File "…", line N``, ``at pkg.Class(File.java:1)``, ``SomeError: …``);
* e-mail and chat quotes: "On Mon, Bob wrote:", "[10:32] bob: …", "<bob> …", and "name: …" lines after
  the first line;
* lines of a pasted document after the first line: bullets, numbered steps ("1.", "2)", "Step 3.").

We err on the side of data: a line that looks pasted is data. Pure functions, precompiled regexes.
"""

from __future__ import annotations

import re

__all__ = ["cut_pasted_spans", "looks_pasted", "starts_pasted_block"]

_BLOCK_COMMENT = re.compile(r"/\*.*?(?:\*/|\Z)", re.DOTALL)
_MD_IMAGE = re.compile(r"!\[[^\]\n]*\]\([^)\n]*\)")
_MD_LINK = re.compile(r"\[[^\]\n]*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"\n]*\")?\s*\)")
_MD_REF_LINK = re.compile(r"\[[^\]\n]*\]\[[^\]\n]*\]")
_MD_REF_DEF = re.compile(r"^\s{0,3}\[[^\]\n]+\]:\s*\S+.*$", re.MULTILINE)


def cut_pasted_spans(text: str) -> str:
    """Remove inline pasted spans: ``/* … */`` comments, markdown images, link text (the URL stays)."""
    if "/*" in text:
        text = _BLOCK_COMMENT.sub(" ", text)
    if "[" in text:
        text = _MD_IMAGE.sub(" ", text)
        text = _MD_LINK.sub(lambda m: f" {m.group(1)} " if m.group(1).startswith(("http", "www.")) else " ", text)
        text = _MD_REF_LINK.sub(" ", text)
        text = _MD_REF_DEF.sub(" ", text)
    return text


_COMMENT = re.compile(r"^\s*(?:#|//|--(?!-)|;|%|\*(?!\*)\s|\*/|<!--|'\s|REM\s|rem\s|\"\"\"|''')")
_SETEXT = re.compile(r"^\s*(?:={3,}|-{3,}|\*{3,}|_{3,})\s*$")
_CODE_EXTRA = re.compile(
    r"^\s*(?:(?:SELECT|INSERT\s+INTO|DELETE\s+FROM|DROP\s+(?:TABLE|DATABASE)|ALTER\s+TABLE|UPDATE\s+\w+\s+SET"
    r"|CREATE\s+(?:TABLE|INDEX|VIEW|DATABASE|FUNCTION))\b.*$"
    r"|(?:int|char|float|double|long|void|bool|auto|unsigned|String|val|let|var|const|fn|func|fun|pub|static|"
    r"struct|enum|impl)\s+[\w*&<>\[\]]+\s*(?:=|\(|;|\[|:|\{).*$"
    r"|.*(?:;|\{|\}|=>)\s*$|</?[A-Za-z][\w-]*(?:\s[^<>]*)?>\s*$|\$\s+\S.*$|>>>\s.*$|In\s\[\d+\]:.*$)"
)
_TIMESTAMP = (
    r"(?:\[?\d{4}[-/.]\d{2}[-/.]\d{2}(?:[T\s]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\]?"
    r"|\[?\d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]m)?\]?"
    r"|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\s+\d{1,2}\s+\d{2}:\d{2}(?::\d{2})?)"
)
_LEVEL = r"(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|FATAL|CRITICAL|SEVERE|PANIC|EMERG|ALERT)"
_LOG = re.compile(
    rf"^\s*(?:{_TIMESTAMP}|\[\s*{_LEVEL}\s*\]|{_LEVEL}(?::|\s+-|\s+\[|\s*\|)|<\d+>|\w+\[\d+\]:"
    rf"|{_LEVEL}:[\w.]+:)",
    re.IGNORECASE,
)
_TRACE = re.compile(
    r"^\s*(?:Traceback\s*\(most recent call last\)|File\s+\"[^\"]*\",\s+line\s+\d+|at\s+[\w.$<>]+\(.*\)\s*$"
    r"|at\s+\S+\s+\(\S+:\d+:\d+\)|(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Warning|Fault|Panic)\b\s*(?::|$)"
    r"|Caused by:|Exception in thread|panic:|goroutine\s+\d+|thread\s+'[^']*'\s+panicked|\.\.\.\s+\d+\s+more)",
)
_QUOTE_INTRO = re.compile(
    r"^\s*(?:On\s.{3,80}\s(?:wrote|schrieb|a\s+écrit|escribió)\s*:?\s*$|-{2,}\s*(?:Original|Forwarded|"
    r"Ursprüngliche|Message)|Begin forwarded message|Le\s.{3,60}\sa\s+écrit|Am\s.{3,60}\sschrieb)",
    re.IGNORECASE,
)
_CHAT_STAMPED = re.compile(rf"^\s*{_TIMESTAMP}\s*[-|]?\s*<?[\w .@-]{{1,30}}>?\s*:", re.IGNORECASE)
_CHAT_NICK = re.compile(r"^\s*<[\w .@-]{1,30}>\s+\S")
_CHAT_NAME = re.compile(r"^\s*@?[A-Za-z][\w.@-]{0,30}(?:\s[A-Za-z][\w.-]{0,20})?\s*:\s+\S")
_NOT_A_SPEAKER = re.compile(
    r"^\s*(?:note|ps|p\.s\.|also|update|edit|btw|fyi|important|reminder|task|question|q|request|todo|goal|"
    r"context|please|bitte|nota|remarque|hinweis)\s*:",
    re.IGNORECASE,
)
_DOC_LINE = re.compile(
    r"^\s*(?:[-+*•·▪◦‣–—]\s+\S|\d{1,3}[.)]\s+\S|[a-zA-Z][.)]\s+\S|(?:step|schritt|étape|etape|paso)\s+\d+\b"
    r"|\[[ xX]\]\s)",
    re.IGNORECASE,
)


def looks_pasted(line: str, *, first: bool) -> bool:
    """Does ``line`` look like pasted material (see the module docstring)?

    ``first`` is true while no line of the user's own words has been kept yet: the first line may be
    a bullet or "name: …" the user typed, so only the unambiguous classes count there.
    """
    if not line.strip():
        return False
    if (
        _COMMENT.match(line)
        or _SETEXT.match(line)
        or _LOG.match(line)
        or _TRACE.match(line)
        or _QUOTE_INTRO.match(line)
        or _CHAT_STAMPED.match(line)
        or _CHAT_NICK.match(line)
        or _CODE_EXTRA.match(line)
    ):
        return True
    if first:
        return False
    if _DOC_LINE.match(line):
        return True
    return _CHAT_NAME.match(line) is not None and _NOT_A_SPEAKER.match(line) is None


_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+\S")
_TRACEBACK = re.compile(r"^\s*Traceback\s*\(most recent")


def starts_pasted_block(line: str, *, first: bool = False) -> bool:
    """Does ``line`` open a block that is material to its end: a stack trace, a quoted e-mail, or (after
    the first line) a document heading, whose body follows it?"""
    if _QUOTE_INTRO.match(line) or _TRACEBACK.match(line):
        return True
    return not first and bool(_HEADING.match(line) or _SETEXT.match(line))
