"""The text the write-claim check reads: an answer folded to plain Latin letters, outside its code blocks.

A model that wants a false claim to pass can hide the claim's words from a regex: a Cyrillic ``ѕ`` in
"ѕaved", a zero-width space inside "sav\u200bed", full-width or mathematical letters. :func:`fold` undoes
that before detection (NFKC, format characters dropped, Cyrillic/Greek look-alikes of Latin letters
mapped to the letters they look like); the answer shown to the user keeps its own characters unless a
claim in it is replaced. :func:`prose_and_code` splits an answer into prose and fenced code blocks: code
is never rewritten (``f.write(...)`` or ``# saved to out.txt`` in a snippet is not a claim).

A file name can be hidden the same way: "haiku. md", "haiku .md", "`haiku`.md", "haiku dot md", a
Markdown link ``[the poem](./haiku.md)``. :func:`mend_names` writes such a name back as ``haiku.md`` (only
before a known file extension, so "I finished. Then" stays two words), and :data:`EXTENSION_AHEAD` tells
the sentence splitter not to cut a sentence at "haiku. md".
"""

from __future__ import annotations

import re
import unicodedata

# Cyrillic and Greek letters (and a few others) drawn like Latin ones; NFKC leaves them alone.
_LOOK_ALIKES = {
    # Cyrillic lower case
    "а": "a", "в": "b", "е": "e", "ё": "e", "з": "3", "і": "i", "ї": "i", "ј": "j", "к": "k", "м": "m",
    "н": "h", "о": "o", "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s", "ԁ": "d", "ԛ": "q",
    "ԝ": "w", "һ": "h", "ӏ": "l", "ɡ": "g", "ь": "b", "п": "n", "г": "r",
    # Cyrillic upper case
    "А": "A", "В": "B", "Е": "E", "Ё": "E", "І": "I", "Ј": "J", "К": "K", "М": "M", "Н": "H", "О": "O",
    "Р": "P", "С": "C", "Т": "T", "У": "Y", "Х": "X", "Ѕ": "S", "Ԁ": "D", "Ԛ": "Q", "Ԝ": "W", "Һ": "H",
    "Ӏ": "I",
    # Greek
    "α": "a", "β": "b", "γ": "y", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p",
    "τ": "t", "υ": "u", "χ": "x", "ω": "w", "ς": "s",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
    "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
    # Latin oddities and typographic apostrophes
    "ı": "i", "ȷ": "j", "ſ": "s", "ℓ": "l", "\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u2032": "'",
}
_FOLD = str.maketrans(_LOOK_ALIKES)
# Variation selectors and the combining grapheme joiner draw nothing (category Mn, not Cf).
_INVISIBLE_MARKS = re.compile("[\u034f\u180b-\u180f\ufe00-\ufe0f\U000e0100-\U000e01ef]")
# Extensions a broken name is mended before (lower case, two letters or more: "haiku. C" is a sentence).
_EXTENSIONS = ("md|markdown|txt|text|rst|py|pyi|ipynb|js|mjs|cjs|ts|tsx|jsx|json|jsonl|yaml|yml|toml|ini|cfg|conf|"
               "csv|tsv|html|htm|css|scss|xml|svg|sh|bash|zsh|ps1|bat|sql|log|tex|rs|go|java|kt|rb|php|swift|"
               "cpp|hpp|cc|cs|lua|pl|env|lock|pdf|docx|odt|rtf|org|adoc|pem|key|png|jpg|gif")
#: A lookahead: what follows is a file extension standing alone ("haiku. md" is one sentence).
EXTENSION_AHEAD = rf"(?:{_EXTENSIONS})(?![\w.-]|\.\w)"
# A stem, then odd separators (quotes/backticks/emphasis around it, spaces around the dot, "dot"), then an
# extension: "haiku. md", "haiku .md", "`haiku`.md", "'haiku'.txt", "**haiku**.md", "haiku dot md".
_BROKEN_NAME = re.compile(
    rf"(?<![\w/.-])((?:[\w-]+/)*[\w-]*\w)[`'\"*_]*(?:[ \t]*\.[ \t]*|[ \t]+dot[ \t]+)[`'\"*_]*({_EXTENSIONS})"
    r"(?![\w-]|\.\w)")
# A Markdown link to a file: the link text, then its target without a file:// scheme or a leading ./
_LINK = re.compile(r"\[([^\]\n]*)\]\(\s*<?(?:file://)?(?:\./)?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t]{0,3}\1[ \t]*(?:\n|\Z)|\Z)",
                    re.MULTILINE | re.DOTALL)


def fold(text: str) -> str:
    """``text`` as the claim check reads it: NFKC, no format (Cf) characters or invisible marks, and
    Cyrillic/Greek look-alikes replaced by the Latin letters they are drawn like."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    text = _INVISIBLE_MARKS.sub("", text)
    return unicodedata.normalize("NFKC", text.translate(_FOLD))


def prose_and_code(answer: str) -> list[tuple[str, bool]]:
    """``answer`` cut into consecutive pieces, each ``(text, is_code)``; code is a fenced block (``` or ~~~,
    an unclosed fence runs to the end). Joining the texts gives ``answer`` back."""
    pieces: list[tuple[str, bool]] = []
    at = 0
    for block in _FENCE.finditer(answer):
        if block.start() > at:
            pieces.append((answer[at:block.start()], False))
        pieces.append((block.group(0), True))
        at = block.end()
    if at < len(answer):
        pieces.append((answer[at:], False))
    return pieces


def mend_names(text: str) -> str:
    """``text`` (already folded) with broken file names written whole: "haiku. md" and "`haiku`.md" become
    ``haiku.md``, a Markdown link ``[the poem](./haiku.md)`` becomes "the poem (haiku.md)". Used only
    to read claims; the answer keeps its own text."""
    text = _LINK.sub(lambda m: f"{m.group(1)} ({m.group(2)})", text)
    return _BROKEN_NAME.sub(lambda m: f"{m.group(1)}.{m.group(2)}", text)
