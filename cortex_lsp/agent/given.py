"""Text the user gave for a file, and the file it is for: read from the request as typed.

"save 'fix the invoice endpoint' to todo.md", "new file scratch.py, content: answer = 42",
"can u put this into meeting.txt: standup moved to 10am", "make shopping.md with milk, eggs and bread
in it", "create a .gitignore with these two lines:\\n.venv/\\n__pycache__/", "out.txt <- 42": the text is
written as given (a small model asked to copy it writes an apology instead). :func:`given_text` finds
the text for a known target; :func:`given_write` also finds the target, for a request the meaning
classifier read as "write this text to a new file". Neither grants anything: the write still goes
through the consent rules (the user's review, or in strict mode the words' own grant) and the path
guards.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

_FENCED = re.compile(r"```[\w+-]*\n(.*?)```", re.DOTALL)
_JSON_BLOCK = re.compile(r"(\{.*\}|\[.*\])", re.DOTALL)
_QUOTED = re.compile(
    r"\"([^\"\n]{1,2000})\"|“([^”\n]{1,2000})”|«\s*([^»\n]{1,2000}?)\s*»|‘([^’\n]{1,2000})’"
    r"|(?<![\w'])'([^'\n]*?[^'\n\s][^'\n]*?)'(?![\w'])|`([^`\n]{1,2000})`"
)
#: "containing …", "that says …", "with the text …", "mit dem Inhalt …", "qui contient …"
_CONTAINING = re.compile(
    r"\b(?:(?:containing|that\s+(?:just\s+|only\s+)?(?:contains|says|reads)|contains|saying|reading)"
    r"(?:\s+(?:the\s+)?(?:text|words?|line|content))?|"
    r"with\s+(?:the\s+|this\s+)?(?:(?:single|following|one)\s+)?(?:text|content|contents|words?|line|body)|"
    r"mit\s+(?:dem\s+)?(?:inhalt|text)|qui\s+contient|contenant|avec\s+(?:le\s+)?(?:texte|contenu)|"
    r"con\s+(?:el\s+)?(?:texto|contenido)|que\s+(?:diga|contenga)|che\s+contiene|con\s+(?:il\s+)?testo|"
    r"com\s+o\s+(?:texto|conteúdo)|que\s+contém|met\s+(?:de\s+)?(?:tekst|inhoud)|die\s+zegt)"
    r"\s*:?\s+(.+?)\s*$",
    re.IGNORECASE | re.DOTALL,
)
#: "content: …", "contents: …", "Inhalt: …", "the following as X: …", "these lines: …"
_MARKED = re.compile(
    r"\b(?:content|contents|text|body|inhalt|contenu|contenido|contenuto|conte[uú]do|inhoud|tekst|texte|texto|"
    r"lines?|zeilen?|lignes?|l[ií]neas?|righe|linhas|regels)\s*:\s*(.+?)\s*$",
    re.IGNORECASE | re.DOTALL,
)
#: "a file with milk, eggs and bread in it": the items the user listed
_WITH_ITEMS = re.compile(
    r"\b(?:with|containing|listing|that\s+(?:has|lists)|mit|avec|con|com|met|med)\s+"
    r"(?:the\s+(?:items?|words?)\s+)?:?\s*"
    r"(.+?)\s+(?:in\s+it|inside|in\s+there|on\s+it|drin|darin|dedans|dentro|erin|i\s+den|i\s+det)\s*[.!]?\s*$",
    re.IGNORECASE,
)
#: the words that join the last item: "milk, eggs and bread", "Äpfel, Brot und Käse", "pain et lait"
_ITEM_JOIN = re.compile(r"\s*,(?!\d)\s*(?:(?:and|und|et|y|e|en|och)\s+)?|\s+(?:and|und|et|y|e|en|och)\s+",
                        re.IGNORECASE)  # "3,5 kg Mehl": a decimal comma joins nothing
#: one item "with … in it" is text to write only when it reads as a literal: a file name or code signs
#: ("with python app.py in it"), not a description ("with some ideas in it")
_LITERAL_SIGNS = re.compile(r"[\w-]\.[A-Za-z0-9]{1,8}\b|[=/()$;:<>]")
_FILE = re.compile(r"(?<![\w/.@-])((?:[\w-]+/)*(?:\.?[\w-]+(?:\.[\w-]+)*\.[A-Za-z0-9]{1,8}|\.[\w-]{2,}))(?![\w/-])")
#: an extension-less file name the words introduce ("as AUTHORS", "a file called Makefile")
_BARE_TARGET = re.compile(r"\b(?:as|called|named|file|fichier|datei|archivo|file\s+called)\s+"
                          r"`?([A-Z][A-Za-z0-9_-]{2,40})`?(?=\s|$|[:,]|\.(?:\s|$))")
_TARGET_LEAD = re.compile(r"\b(?:to|into|in|as|called|named|file|fichier|datei|archivo|ficheiro|bestand|en|dans|"
                          r"nach|naar|a)\s+(?:a\s+|the\s+|new\s+|le\s+|la\s+|el\s+|die\s+|eine?\s+|un\s+)*"
                          r"(?:file\s+|fichier\s+|datei\s+)?(?:called\s+|named\s+)?`?$", re.IGNORECASE)
_POLITE_TAIL = re.compile(r"\s*[,;]?\s*(?:please|pls|plz|thanks?|thank\s+you|merci|danke|bitte|gracias|por\s+favor)"
                          r"[.!]*\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class GivenWrite:
    """A file to create and the text the user gave for it."""

    target: str
    text: str


def _after_target(message: str, target: str) -> str | None:
    """"out.txt <- 42", "meeting.txt: standup moved …", "AUTHORS in the project root: Jane Doe": the text
    after the target's colon (or arrow)."""
    at = message.find(target)
    if at < 0:
        return None
    tail = message[at + len(target):]
    match = re.match(r"`?\s*(?:<-|:=|=|:)\s*(.+?)\s*$", tail, re.DOTALL) or \
        re.match(r"`?[^:\n]{0,40}?:\s*(.+?)\s*$", tail, re.DOTALL)
    return match.group(1) if match else None


def _clean(text: str) -> str | None:
    text = _POLITE_TAIL.sub("", text.strip()).strip()
    quoted = _QUOTED.fullmatch(text.rstrip("?!. "))
    if quoted and text.rstrip("?!. ")[:1] in "`'\"“«‘":
        text = next(g for g in quoted.groups() if g)  # a quoted text, then only the sentence's end
    return text or None


def given_text(message: str, save_to: str, *, words: str = "") -> str | None:
    """The text the user gave for ``save_to`` (fenced, JSON, quoted, "containing …", after a colon,
    on the lines below), or ``None``."""
    fenced = _FENCED.search(message)
    if fenced:
        return fenced.group(1)
    if save_to.lower().endswith(".json"):
        block = _JSON_BLOCK.search(message)
        if block:
            return block.group(1)
    first, _, below = message.partition("\n")
    # the request on the first line and the text on the next ones, unless the first line gives its own
    # ("create ideas.md with A, B in it" and then a pasted email)
    if below.strip() and (first.rstrip().endswith(":") or (save_to in first and not _WITH_ITEMS.search(first))):
        return below.strip("\n") + "\n"  # the request on the first line, the text on the next ones
    items = _WITH_ITEMS.search(first) or _WITH_ITEMS.search(words or message)
    if items and not _QUOTED.search(items.group(1)):
        listed = [i.strip(" .") for i in _ITEM_JOIN.split(items.group(1)) if i.strip(" .")]
        if len(listed) > 1:
            return "\n".join(listed) + "\n"
        if len(listed) == 1 and _LITERAL_SIGNS.search(listed[0]):
            return listed[0] + "\n"  # "with python app.py in it": a command, not a description
    for pattern in (_MARKED, _CONTAINING):
        match = pattern.search(message)
        if match:
            text = match.group(1).strip()
            text = re.sub(r"\s+(?:to|in|into)\s+(?:the\s+file\s+)?" + re.escape(save_to) + r"\s*$", "", text)
            text = text.rstrip(".") if not re.search(r"\.\s*\S", text) else text
            return _clean(text)
    after = _after_target(message, save_to)
    if after:
        return _clean(after)
    for quoted in _QUOTED.finditer(message):
        text = next((g for g in quoted.groups() if g), "")
        if text and text != save_to and save_to not in text:
            return text
    return None


def _dotfile(name: str) -> bool:
    return name.startswith(".") and name.count(".") == 1


def _targets(message: str) -> list[str]:
    # a version ("3.0.0") or an address ("10.0.0.1") is no file name: the name has a letter before its suffix
    named = [m.group(1) for m in _FILE.finditer(message)
             if re.search(r"[A-Za-z_]", m.group(1).rpartition(".")[0]) or _dotfile(m.group(1))]
    named += [m.group(1) for m in _BARE_TARGET.finditer(message)]
    return list(dict.fromkeys(named))


def given_write(message: str, exists: Callable[[str], bool]) -> GivenWrite | None:
    """The new file the request puts given text into, and the text: one target that does not exist yet
    (``exists`` says), preferably the name after "to / into / as / called / file", and text the user
    gave for it. ``None`` when either is missing or ambiguous."""
    head = _FENCED.sub("", message)
    candidates = [t for t in _targets(head.partition("\n")[0] if "\n" in head else head) if not exists(t)]
    if not candidates:
        return None
    if len(candidates) > 1:
        led = [t for t in candidates if _TARGET_LEAD.search(head[:head.find(t)])]
        if len(led) != 1:
            return None
        candidates = led
    target = candidates[0]
    text = given_text(message, target)
    if text is None or not text.strip() or text.strip() == target:
        return None
    return GivenWrite(target, text)
