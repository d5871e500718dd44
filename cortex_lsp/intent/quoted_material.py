"""The material cuts behind :mod:`cortex_lsp.intent.provenance`: normalising a message and cutting out
quoted, fenced and pasted material (line classes in :mod:`cortex_lsp.intent.pasted`). The hand-over,
colon and reported-speech cuts of ``request_text`` are in :mod:`cortex_lsp.intent.handover`.

Everything is pure and linear-time (hand-written scanners and precompiled regexes without nested
quantifiers), so hostile 8 KB messages are cheap.
"""

from __future__ import annotations

import html
import json
import re
import unicodedata
from functools import lru_cache

from cortex_lsp.intent.pasted import cut_pasted_spans, looks_pasted, starts_pasted_block
from cortex_lsp.intent.patterns import URL, strip_invisible

# ------------------------------------------------------------------------------------------------
# normalisation

# Text inside a bidi override (LRO/RLO ... PDF) is shown reordered: the user did not read it as typed.
_BIDI_OVERRIDE = re.compile("[\u202d\u202e][^\u202c\n]*(?:\u202c|$)", re.MULTILINE)

_QUOTE_FOLD = str.maketrans(
    {
        "\u2033": '"', "\u2036": '"', "\uff02": '"', "\u3003": '"', "\u02ba": '"', "\u02dd": '"',
        "\u05f4": '"', "\u275d": "\u201c", "\u275e": "\u201d", "\u301d": "\u201c", "\u301e": "\u201d",
        "\u301f": "\u201d", "\u201f": "\u201c", "\u201b": "\u2018", "\u2032": "'", "\u2035": "'",
        "\u02b9": "'", "\u02bc": "'", "\u02bb": "\u2018", "\u02bd": "\u2018", "\uff07": "'",
        "\u2028": "\n", "\u2029": "\n", "\u0085": "\n", "\r": "",
    }
)

# Latin look-alikes from Cyrillic, Greek and Armenian (and a few IPA letters).
_CONFUSABLE_PAIRS = (
    "а a|е e|о o|р p|с c|у y|х x|ѕ s|і i|ї i|ј j|ԁ d|һ h|ӏ l|ԛ q|ԝ w|ү y|ɡ g|ɑ a|ı i|ȷ j|ɩ i|"
    "α a|ο o|ρ p|ν v|ι i|κ k|τ t|υ u|χ x|ϲ c|ϳ j|օ o|ս u|"
    "А A|В B|Е E|К K|М M|Н H|О O|Р P|С C|Т T|Х X|У Y|Ѕ S|І I|Ј J|Ԁ D|Ԛ Q|Ԝ W|Һ H|Ӏ I|"
    "Α A|Β B|Ε E|Ζ Z|Η H|Ι I|Κ K|Μ M|Ν N|Ο O|Ρ P|Τ T|Υ Y|Χ X"
)
_CONFUSABLE = str.maketrans(dict(pair.split(" ") for pair in _CONFUSABLE_PAIRS.split("|")))
_CONFUSABLE_CHARS = frozenset(pair[0] for pair in _CONFUSABLE_PAIRS.split("|"))
_LETTERS = re.compile(r"[^\W\d_]+")


def _fold_word(m: re.Match[str]) -> str:
    word = m.group(0)
    if word.isascii():
        return word
    mixed = any("a" <= c.lower() <= "z" for c in word)
    if mixed or all(c in _CONFUSABLE_CHARS for c in word):
        return word.translate(_CONFUSABLE)
    return word


_ENTITY = re.compile(r"&(?:#\d{1,7}|#x[0-9a-f]{1,6}|[a-z]{2,8});", re.IGNORECASE)


def normalize(text: str) -> str:
    """Text as a guard should read it: NFKC (full-width and styled letters become plain), hidden
    characters dropped, HTML entities decoded, bidi-overridden runs removed, look-alike quote marks
    folded to real ones, and words that mix Latin with Cyrillic/Greek look-alikes (``sаve``) folded
    to Latin."""
    if _ENTITY.search(text):  # &quot; &lt;note&gt; are quote marks and tags too
        text = html.unescape(text)
    text = _BIDI_OVERRIDE.sub(" ", text.translate(_QUOTE_FOLD))
    text = unicodedata.normalize("NFKC", strip_invisible(text))
    if text.isascii():
        return text
    return _LETTERS.sub(_fold_unless_name, strip_invisible(text))


def _fold_unless_name(m: re.Match[str]) -> str:
    """:func:`_fold_word`, except inside a file name ("оut.md" stays as typed: a grant names exactly
    what the user typed, and a name that mixes scripts is refused later)."""
    text, start, end = m.string, m.start(), m.end()
    if end + 1 < len(text) and text[end] in "./\\-" and text[end + 1].isalnum():
        return m.group(0)
    if start >= 2 and text[start - 1] in "./\\-_" and text[start - 2].isalnum():
        return m.group(0)
    return _fold_word(m)


# ------------------------------------------------------------------------------------------------
# what is kept inside quotes

#: a file name in running text, e.g. ``notes.txt`` or ``docs/todo.md`` (file intent)
FILE_NAME_RE = re.compile(
    r"(?<![\w/\\.-])(?:[\w-]+[/\\])*[\w-]+(?:\.[\w-]+)*\.(?:txt|md|json|csv|py|yaml|yml|log|tsv|toml|rst|ini)"
    r"(?![\w-])",
    re.IGNORECASE,
)
_BARE_NAME = re.compile(r"[\w][\w-]*(?:[/\\][\w][\w-]*)*(?:\.[\w-]+)*\.[A-Za-z0-9]{1,8}")


def _keepable(inner: str) -> bool:
    """A quoted bare file name or URL is the user's own word (``save it as "notes.txt"``)."""
    s = inner.strip()
    if ".." in s or len(s) > 200:
        return False
    return _BARE_NAME.fullmatch(s) is not None or URL.fullmatch(s) is not None


# ------------------------------------------------------------------------------------------------
# block-level material

_FENCE_OPEN = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[^\n]*$", re.MULTILINE)
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_CDATA = re.compile(r"<!\[CDATA\[.*?(?:\]\]>|\Z)", re.DOTALL)
_DECL = re.compile(r"<[?!][^<>]*>?")
_RAW_ELEMENT = re.compile(r"<(script|style|textarea|xmp|pre|code|blockquote)\b[^>]*>.*?(?:</\1\s*>|\Z)",
                          re.DOTALL | re.IGNORECASE)
_TAG = re.compile(r"<(/?)([A-Za-z][\w:.-]*)((?:\s[^<>]*)?)>")
_VOID = frozenset("br hr img input meta link wbr area base col embed source track param".split())


def _cut_fences(text: str) -> str:
    out: list[str] = []
    pos = 0
    while True:
        m = _FENCE_OPEN.search(text, pos)
        if m is None:
            out.append(text[pos:])
            return "".join(out)
        out.append(text[pos : m.start()])
        mark = m.group(1)
        close = re.compile(rf"^[ \t]{{0,3}}{re.escape(mark[0])}{{{len(mark)},}}[ \t]*$", re.MULTILINE)
        c = close.search(text, m.end())
        if c is None:  # an unclosed fence runs to the end
            return "".join(out)
        out.append("\n")
        pos = c.end()


def _cut_elements(text: str) -> str:
    """Remove HTML/XML elements with their bodies (one pass, a stack of open tags). An unclosed
    element that starts a line (or follows a colon) runs to the end; an unclosed inline tag and a
    stray closing or void tag are dropped on their own."""
    spans: list[tuple[int, int]] = []
    stack: list[tuple[str, int]] = []
    open_names: dict[str, int] = {}
    for m in _TAG.finditer(text):
        closing, name, attrs = m.group(1), m.group(2).lower(), m.group(3)
        if closing:
            if open_names.get(name):
                while stack:
                    top, top_start = stack.pop()
                    open_names[top] -= 1
                    if top == name:
                        spans.append((top_start, m.end()))
                        break
            else:
                spans.append((m.start(), m.end()))
        elif name in _VOID or attrs.rstrip().endswith("/"):
            spans.append((m.start(), m.end()))
        else:
            stack.append((name, m.start()))
            open_names[name] = open_names.get(name, 0) + 1
    cut_at = len(text)
    for _name, start in stack:
        before = text[:start].rstrip(" \t")
        if before == "" or before.endswith(("\n", ":")):
            cut_at = min(cut_at, start)
        else:
            spans.append((start, text.index(">", start) + 1))
    out: list[str] = []
    pos = 0
    for start, end in sorted(spans):
        if start >= cut_at:
            break
        if end <= pos:
            continue
        out.append(text[pos : max(pos, start)])
        out.append(" ")
        pos = end
    if pos < cut_at:
        out.append(text[pos:cut_at])
    return "".join(out)


_BLOCKQUOTE = re.compile(r"^[ \t]{0,3}>")
_INDENTED = re.compile(r"^(?: {4,}|\t)\S")
_TABLE_ROW = re.compile(r"^\s*\|.*\||^[^|\n]*\|[^|\n]*\|")
_YAML_BLOCK = re.compile(r"^([ \t]*)(?:-[ \t]+)?[\w.\"'-][\w.\"' -]*:[ \t]*[|>][+-]?\d*[ \t]*(?:#.*)?$")
_TRANSCRIPT = re.compile(
    r"^\s*(?:\[|\*\*)?(?:user|assistant|system|human|ai|bot|model|chatgpt|gpt|claude|llama|developer|tool)"
    r"(?:\]|\*\*)?\s*:",
    re.IGNORECASE,
)
_CHAT_TOKEN = re.compile(r"<\|[\w-]+\|>|\[/?INST\]|<</?SYS>>|<start_of_turn>|<end_of_turn>", re.IGNORECASE)
_EMAIL_HEADER = re.compile(r"^\s*(?:from|to|cc|bcc|subject|date|sent|reply-to)\s*:\s*\S", re.IGNORECASE)
_CODE_LINE = re.compile(
    r"^\s*(?:def\s+\w+\s*\(|class\s+\w+[(:]|import\s+[\w.]+|from\s+[\w.]+\s+import\b|return\b|"
    r"(?:el)?if\s.*:$|else\s*:$|for\s+\w+[^\n]*:$|while\s.*:$|try\s*:$|except\b.*:$|with\s.*:$|"
    r"@\w+|#include\b|#!|function\s+\w+\s*\(|(?:const|let|var)\s+\w+\s*=|public\s|private\s|"
    r"[\w.\[\]'\"]+\s*(?:[-+*/%]?=|\+\+|--)\s*\S.*$|[\w.]+\([^()]*\)\s*;?\s*$|[{}\[\]();]+\s*$|"
    r"print\s*\(|echo\s|sudo\s|curl\s|wget\s|os\.\w+\(|open\s*\()"
)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _request_head(line: str) -> str:
    """A one-line message that ends in a JSON value ("new file a.json, content: {"a": 1}"): the words
    before the value, which say whether the line is the user's request or pasted code (the value itself
    is cut later, as all JSON is). Only a value that parses as JSON and holds something: a shell brace
    group (``{a,b}``), a template (``${data}``, ``{{payload}}``) or a script block (``{ $_.Delete() }``)
    keeps the line judged whole; so does a line with backticks. Any other line as it is."""
    if "`" in line:
        return line
    stripped = line.rstrip().rstrip(".!?").rstrip()
    for opening in _JSON_OPEN.finditer(stripped):
        start = opening.start()
        if opening.group(0) == "[" and not _JSON_ARRAY_START.match(stripped, start):
            continue
        if _balanced_end(stripped, start) != len(stripped):
            return line
        head = stripped[:start]
        try:
            value = json.loads(stripped[start:])
        except ValueError:
            return line
        return head if value and re.search(r"[^\W\d_]{2,}", head) else line
    return line


def _cut_lines(text: str) -> str:
    kept: list[str] = []
    yaml_indent = -1
    first = True
    one_line = text.strip().count("\n") == 0
    for line in text.split("\n"):
        if yaml_indent >= 0:
            if not line.strip() or _indent(line) > yaml_indent:
                continue
            yaml_indent = -1
        if _EMAIL_HEADER.match(line) or _TRANSCRIPT.match(line) or starts_pasted_block(line, first=first):
            break  # a pasted e-mail, chat log, stack trace or document: material to the end
        if _YAML_BLOCK.match(line):
            yaml_indent = _indent(line)
            continue
        probe = _request_head(line) if one_line else line
        if (
            looks_pasted(probe, first=first)  # comments, headings, logs, traces, chat and document lines
            or _BLOCKQUOTE.match(line)
            or _INDENTED.match(line)
            or _TABLE_ROW.match(line)
            or _CODE_LINE.match(probe)
        ):
            kept.append("")
            continue
        kept.append(line)
        first = first and not line.strip()
    return "\n".join(kept)


# ------------------------------------------------------------------------------------------------
# inline material: JSON, backticks, quotes

_JSON_ARRAY_START = re.compile(r"\[\s*(?:[{\[\"\d-]|\]|true|false|null|$)")


_JSON_TOKEN = re.compile(r'[{}\[\]"\\]')
_JSON_OPEN = re.compile(r"[{\[]")


def _balanced_end(text: str, i: int) -> int:
    """Index just past the bracket group opening at ``i`` (string-aware), or -1 if unclosed."""
    depth = 0
    in_str = False
    escaped_until = -1
    for m in _JSON_TOKEN.finditer(text, i):
        j = m.start()
        if j < escaped_until:
            continue
        c = m.group(0)
        if c == "\\":
            escaped_until = j + 2
        elif in_str:
            if c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "{[":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return j + 1
    return -1


def _cut_json(text: str) -> str:
    out: list[str] = []
    pos = 0
    m = _JSON_OPEN.search(text)
    while m is not None:
        i = m.start()
        if m.group(0) == "{" or _JSON_ARRAY_START.match(text, i):
            end = _balanced_end(text, i)
            out.append(text[pos:i])
            if end < 0:
                return "".join(out)
            out.append(" ")
            pos = end
            m = _JSON_OPEN.search(text, end)
        else:
            m = _JSON_OPEN.search(text, i + 1)
    out.append(text[pos:])
    return "".join(out)


_BACKTICKS = re.compile(r"(`+)(.*?)(?:\1(?!`)|\Z)", re.DOTALL)


def _cut_backticks(text: str) -> str:
    def repl(m: re.Match[str]) -> str:
        return f" {m.group(2).strip()} " if _keepable(m.group(2)) else " "

    return _BACKTICKS.sub(repl, text)


_PAIRS: dict[str, str] = {
    '"': '"', "\u201c": "\u201d", "\u201d": "\u201d", "\u201e": "\u201c\u201d", "\u201a": "\u2018\u2019",
    "\u2018": "\u2019", "'": "'", "\u00ab": "\u00bb", "\u00bb": "\u00ab", "\u2039": "\u203a",
    "\u203a": "\u2039", "\u300c": "\u300d", "\u300e": "\u300f", "\u300a": "\u300b", "\u3008": "\u3009",
    "\u3010": "\u3011", "\uff62": "\uff63",
}
_APOSTROPHES = frozenset("'\u2019\u2018")
_CONTRACTION_AFTER = re.compile(r"(?:\d0s|n'|em|tis|twas|cause|til)\b", re.IGNORECASE)


def _can_open(text: str, i: int) -> bool:
    c = text[i]
    if c not in _APOSTROPHES:
        return True
    prev = text[i - 1] if i else " "
    nxt = text[i + 1] if i + 1 < len(text) else " "
    if prev.isalnum() or nxt.isspace():
        return False
    return _CONTRACTION_AFTER.match(text, i + 1) is None


def _can_close(text: str, j: int) -> bool:
    if text[j] not in _APOSTROPHES:
        return True
    nxt = text[j + 1] if j + 1 < len(text) else " "
    prev = text[j - 1] if j else " "
    return not nxt.isalnum() and not prev.isspace()


_OPENER = re.compile("[" + re.escape("".join(_PAIRS)) + "]")
_CLOSER = {opener: re.compile("[" + re.escape(closers) + "]") for opener, closers in _PAIRS.items()}


def _cut_quotes(text: str) -> str:
    out: list[str] = []
    pos = 0
    m = _OPENER.search(text)
    while m is not None:
        i = m.start()
        if not _can_open(text, i):
            m = _OPENER.search(text, i + 1)
            continue
        j = -1
        for c in _CLOSER[m.group(0)].finditer(text, i + 1):
            if _can_close(text, c.start()):
                j = c.start()
                break
        out.append(text[pos:i])
        if j < 0:  # an unclosed quote runs to the end
            return "".join(out)
        inner = text[i + 1 : j]
        out.append(f" {inner.strip()} " if _keepable(inner) else " ")
        pos = j + 1
        m = _OPENER.search(text, pos)
    out.append(text[pos:])
    return "".join(out)


_SPACES = re.compile(r"[ \t]+")
_BLANKS = re.compile(r"\n\s*\n+")


def strip_material(text: str) -> str:
    """Remove quoted, fenced and pasted material from already-normalised text."""
    token = _CHAT_TOKEN.search(text)  # a pasted chat template: everything from it on is material
    if token is not None:
        text = text[: token.start()]
    text = _HTML_COMMENT.sub(" ", text)
    text = _cut_fences(text)
    text = _CDATA.sub(" ", text)
    text = _RAW_ELEMENT.sub(" ", text)
    text = _DECL.sub(" ", text)
    text = cut_pasted_spans(text)
    text = _cut_elements(text)
    text = _cut_lines(text)
    text = _cut_backticks(text)
    text = _cut_json(text)
    text = _cut_quotes(text)
    text = _SPACES.sub(" ", text)
    return _BLANKS.sub("\n", text).strip()


def instruction(text: str) -> str:
    """``strip_material(normalize(text))``, memoised for messages up to 32 KB (it is pure, and one
    run asks several questions about the same message)."""
    if len(text) > 32_768:
        return strip_material(normalize(text))
    return _instruction_cached(text)


@lru_cache(maxsize=256)
def _instruction_cached(text: str) -> str:
    return strip_material(normalize(text))
