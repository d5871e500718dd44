"""The hand-over cuts of ``request_text`` (:mod:`cortex_lsp.intent.provenance`): everything after
"summarize this:" / "translate the following", after a colon that introduces material ("the email:",
"here is the text:", a colon before a pasted block), and reported speech to the end of its sentence
("the page says to …") is material, not the user's request.

Pure and linear-time: precompiled regexes without nested quantifiers.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from cortex_lsp.intent.patterns import URL_SOURCE

HANDOVER_VERBS = (
    r"summari[sz]e|summari[sz]ing|sum\s+up|tl;?\s?dr|translate|translating|analy[sz]e|analy[sz]ing|"
    r"proofread|proof-read|rewrite|re-write|rephrase|reword|paraphrase|parse|classify|categori[sz]e|"
    r"review|explain|check|extract|convert|format|reformat|read|critique|simplify|shorten|condense|"
    r"evaluate|assess|grade|rate|score|process|answer|respond\s+to|reply\s+to|comment\s+on|"
    r"look\s+at|go\s+through|fix|correct|edit|improve|polish|interpret|decode|debug|"
    # German, French, Spanish, Italian, Dutch, Swedish, Portuguese: translate, summarize
    r"übersetze|übersetzen|zusammenfassen|traduis|traduisez|traduire|résume|résumez|résumer|traduce|traduzca|"
    r"traducir|resumir|resuma|resume\s+(?:este|esta|esto)|traduci|traduca|tradurre|riassumi|riassumere|vertaal|"
    r"vertalen|samenvatten|översätt|sammanfatta|traduza|traduzir"
)
#: "this" in the other languages a hand-over is read in
_FOREIGN_THIS = r"das|dies|diesen|diese|ceci|cela|ça|esto|este|esta|eso|questo|questa|dit|deze|detta|denna|isto|isso"
_HANDOVER = re.compile(
    rf"\b(?:{HANDOVER_VERBS})\b(?:\s+(?:me|us|for\s+me|please))?"
    rf"(?:\s*:|\s+(?:this|these|the\s+following|following|below|{_FOREIGN_THIS})\b"
    r"|\s+(?:the|my|this|a|an|that)\s+(?:[\w'-]+\s+){0,3}?(?:below|following|attached|pasted|here)\b)"
    r"|\bthe\s+(?:[\w'-]+\s+){0,3}?(?:below|following|attached|pasted)\b|\bas\s+follows\b",
    re.IGNORECASE,
)
_HANDOVER_VERB = re.compile(rf"\b(?:{HANDOVER_VERBS})\b", re.IGNORECASE)
_HANDOVER_HINT = re.compile(rf"this|these|follow|below|:|attached|pasted|here|\b(?:{_FOREIGN_THIS})\b", re.IGNORECASE)
_HERE_IS = re.compile(
    r"\b(?:here\s+is|here's|here\s+are|below\s+is|below\s+are|attached\s+is|the\s+following\s+is|"
    r"i\s+pasted|pasted\s+below|as\s+follows)\b",
    re.IGNORECASE,
)
_JOINED = re.compile(
    r"\s*(?:[\w'.-]+,?\s+){0,3}?(?:and|then|to|into|in|as|for|so|but|using|with|from|on|before|after|"
    r"within|without|like|by|"
    # the same joins in the languages whose hand-over verbs are read: "Übersetze das Dokument ins
    # Englische und speichere es als en.md" keeps its second request
    r"und|dann|ins|in|nach|als|mit|et|puis|en|dans|vers|y|luego|al|e|poi|nel|dan|naar|och|sedan|till|"
    r"depois|para)\b",
    re.IGNORECASE,
)
_SEGMENT_END = re.compile(r":|\n|[.!?](?=\s|$)")
_LEADING_URL = re.compile(
    r"\s*(?:(?:[\w'-]+\s+){0,2}[\w'-]+\s*:)?\s*(" + URL_SOURCE + r")\s*$", re.IGNORECASE
)


#: material that is only a list of plain numbers ("add these up: 3.5, 4.25 and 10"): operands, which
#: carry no request. No operator signs ("Bob wrote: 2 + 2" asks for no sum), ASCII digits only, and a
#: comma, "and" or a space between numbers (no two ways to split digits: the match stays linear)
_NUMBER = r"[0-9]+(?:\.[0-9]+)?%?"
_NUMBER_LIST = re.compile(
    rf"\s*{_NUMBER}(?:(?:\s*[,;]\s*|\s+(?:and|und|et|y|e|och|en)\s+|\s+){_NUMBER})*\s*[.?!]?\s*",
    re.IGNORECASE,
)


def _with_url(kept: str, rest: str) -> str:
    """``kept``, with the rest's own address when the rest is one, or the rest when it is only numbers."""
    material = rest.lstrip(" :\n")
    if len(material) <= 400 and _NUMBER_LIST.fullmatch(material):
        return f"{kept}: {material.strip()}"
    m = _LEADING_URL.match(material)
    return f"{kept} {m.group(1)}" if m else kept


def cut_handover(text: str) -> str:
    """Cut everything after the first hand-over ("summarize this:", "translate the following")."""
    if _HANDOVER_HINT.search(text) is None:
        return text
    m = _HANDOVER.search(text)
    if m is None:
        return text
    rest = text[m.end() :]
    stripped = rest.lstrip(" \t")
    if m.group(0).rstrip().endswith(":") or stripped.startswith((":", "\n")) or not stripped:
        return _with_url(text[: m.end()].rstrip(" :"), rest)
    end = _SEGMENT_END.search(rest)
    segment = rest if end is None else rest[: end.start()]
    if _JOINED.match(segment):
        return _with_url((text[: m.end()] + segment).rstrip(), rest[len(segment) :])
    return _with_url(text[: m.end()].rstrip(), rest)


_COLON = re.compile(r"(?<!\d):(?!\d)(?!//)")
_LABEL = re.compile(
    r"\s*(?:note|ps|p\.s\.|also|update|edit|btw|fyi|important|reminder|task|question|q|"
    r"request|todo|goal|context|please)\s*$",
    re.IGNORECASE,
)
_MATERIAL_NOUN = re.compile(
    r"\b(?:e-?mails?|mails?|notes?|messages?|texts?|documents?|docs?|articles?|letters?|pastes?|"
    r"logs?|outputs?|posts?|comments?|tweets?|replies|reply|transcripts?|snippets?|passages?|"
    r"paragraphs?|stor(?:y|ies)|essays?|excerpts?|quotes?|data|json|yaml|xml|html|csv|reports?|"
    r"reviews?|contents?|pages?|chats?|conversations?|thread|memo|announcement|instructions?|"
    r"sa(?:id|ys?)|wr(?:ote|ites?)|sent|repl(?:ied|ies)|posted|told|asked|reads|goes|following|"
    r"below|this|these|that)\b",
    re.IGNORECASE,
)


def cut_material_colon(text: str) -> str:
    """Cut at a colon that introduces material: one after "email/note/he wrote/this/here is…", or
    one that starts a pasted block on the next line. A leading label ("Note:") is not material."""
    if ":" not in text:
        return _cut_here_is(text)
    breaks = [m.end() for m in _SENTENCE_BREAK.finditer(text)]
    cue_ends = sorted(
        [m.end() for m in _MATERIAL_NOUN.finditer(text)]
        + [m.end() for m in _HERE_IS.finditer(text)]
        + [m.end() for m in _HANDOVER_VERB.finditer(text)]
    )
    for m in _COLON.finditer(text):
        c = m.start()
        i = bisect_right(breaks, c) - 1
        sentence_start = breaks[i] if i >= 0 else 0
        j = bisect_right(cue_ends, c) - 1
        has_cue = j >= 0 and cue_ends[j] > sentence_start
        starts_block = text[m.end() : m.end() + 200].lstrip(" \t").startswith("\n")
        line_start = text.rfind("\n", max(0, c - 31), c) + 1
        if (line_start or c <= 30) and c - line_start <= 30 and not starts_block:
            if _LABEL.fullmatch(text, line_start, c):
                continue
        if starts_block or has_cue:
            return _with_url(text[:c].rstrip(), text[m.end() :])
    return _cut_here_is(text)


def _cut_here_is(text: str) -> str:
    here = _HERE_IS.search(text)
    if here is not None:
        nl = text.find("\n", here.end())
        if nl >= 0:
            text = text[:nl].rstrip()
    return cut_reported_speech(text)


_SENTENCE_BREAK = re.compile(r"[.!?](?:\s|$)|\n")
_REPORTED = re.compile(
    r"\b(?:says?|said|saying|tells?\s+(?:me|you|us)|told\s+(?:me|you|us)|"
    r"asks?\s+(?:me|you|us)|asked\s+(?:me|you|us)|wants?\s+(?:me|you|us)|wanted\s+(?:me|you|us)|claims?|"
    r"claimed|states?|stated|instructs?|instructed)\b",
    re.IGNORECASE,
)
_SPEAKER_IS_USER = re.compile(
    r"(?:\b(?:i|we|you)(?:\s+(?:don't|do\s+not|really|just|also|would|still|only|never))?|\bi've|\bwe've|"
    r"\bi'd|\bwe'd|\bas\s+i)\s*$",
    re.IGNORECASE,
)
#: "Tell me …" / "Ask me …" opening a clause is the user's own imperative, not reported speech
_IMPERATIVE_LEAD = re.compile(
    r"(?:^|[.!?\n,;:])\s*(?:(?:please|and|then|also|just|now|so|ok|okay|first|next)\s+)*$", re.IGNORECASE
)
_IMPERATIVE_VERB = re.compile(r"(?:tell|ask)\s", re.IGNORECASE)


def cut_reported_speech(text: str) -> str:
    """Remove reported speech to the end of its sentence ("the page says to save…", "Bob told me
    to…"): what someone else said is material. The user's own "I said…" / "as I wrote…" is not."""
    out: list[str] = []
    pos = 0
    for m in _REPORTED.finditer(text):
        lead = text[max(0, m.start() - 40) : m.start()]
        if m.start() < pos or _SPEAKER_IS_USER.search(lead[-20:]):
            continue
        if _IMPERATIVE_VERB.match(m.group(0) + " ") and _IMPERATIVE_LEAD.search(lead):
            continue
        end = _SENTENCE_END.search(text, m.end())
        out.append(text[pos : m.end()])
        pos = len(text) if end is None else end.start()
    out.append(text[pos:])
    return "".join(out).strip()


_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")
