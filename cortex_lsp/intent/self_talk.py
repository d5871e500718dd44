"""What the user says about themselves, for semantic memory.

:func:`self_statements` picks the clauses of a message where the user talks about themselves ("my
name is Roydon", "please always answer me in bullet points") and leaves out material they only asked
to process. :func:`fact_backing` (and its yes/no form :func:`is_grounded`) checks that a fact the
consolidation model proposes is backed by those words: by the same names and numbers, by enough of the
same content words, and with the same polarity: each word of the fact must be backed by a clause of
the user's that says it the same way (affirmed, negated, or as something past), so "I am not a
security engineer" never backs "The user is a security engineer" and "I live in Berlin, not
Atlantis" never backs "The user lives in Atlantis". The polarity comes from a small clause analysis
(:func:`polar_segments`) applied alike to the fact and to the user's words. Only the user's own
assertions count (:mod:`cortex_lsp.intent.self_claims`): a first-person subject matching the fact's
("my brother is…" never backs "The user is…"), no reported belief, wish, doubt or joke, and hedges
or stances of opposition ("hardly", "against") read as "not".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from cortex_lsp.intent import lexicon as lx
from cortex_lsp.intent.handover import HANDOVER_VERBS, cut_handover, cut_material_colon
from cortex_lsp.intent.patterns import split_sentences
from cortex_lsp.intent.quoted_material import instruction, normalize
from cortex_lsp.intent.self_claims import clause_subject, cut_asked_about, harden, own_claim, retracts


def _alternatives(words: Iterable[str]) -> str:
    """A regex alternation of the lexicon's words (and phrases), longest first."""
    return "|".join(r"\s+".join(map(re.escape, w.split())) for w in sorted(set(words), key=len, reverse=True))


#: clause joiners and negators from :mod:`cortex_lsp.intent.lexicon` (one list with the clause analysis)
_JOINERS = _alternatives((*lx.SPLITTERS_EN, *lx.COORDINATORS_EN, *lx.LOOSE_JOINERS_EN))
_NEGATORS = _alternatives((*lx.NEGATORS_EN, *lx.CLAUSE_NEGATORS_EN))
_CONTRAST = _alternatives(" ".join(p) for p in lx.CONTRAST_PHRASES_EN)

_MAX_CLAUSES = 8
_MAX_CLAUSE_CHARS = 300

_PREFIX = re.compile(
    r"^\s*(?:(?:oh\s+)?(?:and|also|plus|btw|by\s+the\s+way|fyi|ps|p\.s\.|note|reminder|just\s+so\s+you\s+know|"
    r"for\s+the\s+record|for\s+your\s+information)\b[,:]?\s*)*"
    r"(?:(?:please\s+)?(?:remember|note|keep\s+in\s+mind|don't\s+forget|do\s+not\s+forget)\s*(?:that\b|:)?\s*)?",
    re.IGNORECASE,
)
_CUT = re.compile(r"(?<!\d):(?!\d)|[{\[<]")
_CLAUSE_SPLIT = re.compile(
    rf"\s*;\s*|,?\s+\b(?:{_JOINERS})\s+(?=(?:i|i'm|i've|i'd|i'll|my|me)\b)"
    r"|,\s+(?=(?:can|could|would|will|please|what|how|why|where|when|who|which)\b)",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(
    r"\b(?:i|i'm|i've|i'd|i'll|my|myself|mine)\b|\bcall\s+me\b|\bgo\s+by\b", re.IGNORECASE
)
_STANDING = re.compile(
    r"\b(?:always|never|from\s+now\s+on|going\s+forward|in\s+(?:the\s+)?future|every\s+time|whenever)\b",
    re.IGNORECASE,
)
_STANDING_OBJECT = re.compile(
    r"\b(?:me|my|i|answer|answers|reply|replies|respond|responses?|write|use|call|address|speak|talk|"
    r"format|give|keep|include|end|start)\b",
    re.IGNORECASE,
)
# A first-person clause about material ("my notes say…") or addressed to the assistant.
_MATERIAL = re.compile(
    r"\b(?:my|the|this|that|a|an|our|his|her|their)\s+(?:[\w'-]+\s+){0,2}?(?:documents?|docs?|notes?|json|yaml|"
    r"xml|csv|files?|profile|data|texts?|e-?mails?|messages?|essays?|articles?|code|script|program|"
    r"reports?|drafts?|lists?|tables?|spreadsheets?|config|logs?|outputs?|homework|assignments?|papers?|"
    r"letters?|posts?|resume|cv|snippets?|transcripts?|pages?|records?|examples?|template|sample|"
    r"story|book|chat|colleague|boss|friend|teacher|manager)\s+(?:says?|said|reads?|contains?|states?|"
    r"claims?|shows?|lists?|mentions?|includes?|tells?|wrote|writes|has|have|is|are|was|were)\b"
    r"|\baccording\s+to\b|\b(?:it|he|she|they)\s+(?:says?|said|wrote|writes|claims?)\b",
    re.IGNORECASE,
)
_NOT_ABOUT_ME = re.compile(
    r"^\s*(?:please\s+)?(?:i\s+(?:want|need|would\s+like|'d\s+like)\s+you\b|i'd\s+like\s+you\b"
    r"|i\s+(?:have|got)\s+(?:a|an|one|some|another|two|few)\s+(?:[\w-]+\s+)?(?:questions?|problems?|requests?|tasks?|"
    r"queries|query|doubts?|issues?)\b"
    r"|my\s+(?:task|job|question|request|problem|query|assignment|goal\s+here)\s+(?:is|was)\b"
    r"|i\s+(?:think|guess|believe|wonder|hope|suppose)\b|i\s*(?:'m|am|was)\s+(?:wondering|asking|trying|"
    r"looking\s+for|not\s+sure|curious)\b|i\s+(?:need|want|would\s+like|'d\s+like)\s+(?:help|to\s+know|to\s+"
    r"understand|a\s+summary|an?\s+answer|you)\b"
    r"|(?:can|could|would|will|do|does|did|is|are|am|should|shall|may|how|what|why|where|when|who|which)\b)",
    re.IGNORECASE,
)

_IMPERATIVE = re.compile(
    rf"^\s*(?:please\s+|kindly\s+|now\s+)?(?:{HANDOVER_VERBS}|write|create|make|save|store|help|tell|show|give|"
    r"list|find|search|open|run|execute|generate|draw|compose|draft|plan|suggest|recommend|calculate|"
    r"compute|count|compare|describe|define|remind|send|add|remove|delete|update|change|put|get|fetch|"
    r"let|use|do|don't|stop|continue|keep|try)\b",
    re.IGNORECASE,
)


def _clauses(sentence: str) -> list[str]:
    sentence = _PREFIX.sub("", sentence, count=1)
    material = _MATERIAL.search(sentence)
    if material is not None:  # "my notes say…": the rest of the sentence is material
        sentence = sentence[: material.start()]
    cut = _CUT.search(sentence)
    if cut is not None:
        sentence = sentence[: cut.start()]
    return [c for c in _CLAUSE_SPLIT.split(sentence) if c and c.strip()]


def self_statements(text: str) -> list[str]:
    """The clauses where the user talks about themselves, for memory consolidation.

    Quoted, fenced and pasted text and anything after a hand-over ("summarize this:") are removed
    first; then each sentence loses a "remember that" prefix and is cut at ':' '{' '[' '<' and at
    "my notes say…"; clauses are split at "and/but/so … I/my". Kept: first-person clauses ("I",
    "my", "call me", "go by") and standing requests ("always/never/from now on … me"). Dropped:
    clauses about material, addressed to the assistant ("I want you to…", "I have a question"),
    and questions; so are clauses that are not the user's own assertion (:func:`own_claim`: "people
    say I…", "I doubt that I…", "… just kidding"), and, when the user asks about pasted text ("Is
    this a scam?"), the lines asked about. The cuts are the write grants' (:func:`request_text`:
    hand-overs, colons before material, reported speech). At most 8 clauses of at most 300
    characters each.
    """
    words = _own_words(text)
    kept: list[str] = []
    previous = 0  # where the clauses of the sentence before start (a "Not." / "Just kidding." takes them back)
    for sentence in split_sentences(words, at_semicolon=False):
        if retracts(sentence):
            del kept[previous:]
            continue
        previous = len(kept)
        for clause in _clauses(sentence):
            c = _PREFIX.sub("", clause.strip(" ,;-")).strip(" ,;-")
            if not c or c.endswith("?") or _NOT_ABOUT_ME.match(c):
                continue
            if _IMPERATIVE.match(c) and not _STANDING.search(c):
                continue
            if not own_claim(c):
                continue
            if _FIRST_PERSON.search(c) or (_STANDING.search(c) and _STANDING_OBJECT.search(c)):
                kept.append(c[:_MAX_CLAUSE_CHARS].rstrip())
            if len(kept) >= _MAX_CLAUSES:
                return kept
    return kept


def _own_words(text: str) -> str:
    """The provenance cuts of ``request_text`` (same order, same fixed point), then the lines the user
    only asked about."""
    words = instruction(text)
    for _ in range(4):
        cut = cut_material_colon(cut_handover(words))
        if cut == words:
            break
        words = cut
    return cut_asked_about(words)


# ------------------------------------------------------------------------------------------------
# polarity: a small clause analysis, applied alike to the user's words and to a proposed fact

Polarity = str  # "pos" | "neg" | "mixed" (two or more negations), with a "former-" prefix for the past

_FORMER = re.compile(
    r"\b(?:no\s+longer|not\s+any\s*more|any\s*more|used\s+to|formerly|previously|former|ex-|"
    r"was|were|lived|worked|studied)\b",
    re.IGNORECASE,
)
# One negation each ("can't stand" is one, not two); "no longer" is taken out first as a FORMER cue.
_NEGATION = re.compile(
    rf"\b(?:can(?:no|')t\s+stand|{_NEGATORS}|\w+n't|{_alternatives(lx.DISLIKE_VERBS_EN)}|{_CONTRAST})\b",
    re.IGNORECASE,
)
# Segment boundaries: sentences, ';', a comma or "but/and/or" before a new subject or a negation,
# and the contrast words (which start a segment of their own: "I use Vim rather than Emacs").
_SEGMENT = re.compile(
    r"[.;!?]+(?=\s|$)\s*|\n+\s*"
    rf"|,?\s*\b(?:{_JOINERS})\b\s*(?=(?:{_NEGATORS}|i|i'm|i've|my|me|"
    r"the\s+user|user|they|he|she|it)\b)"
    rf"|,\s*(?=(?:{_NEGATORS}|i|i'm|i've|my|the\s+user|they|he|she|but)\b)"
    r"|\s*\bbut\b\s*"
    rf"|\s*(?=\b(?:{_CONTRAST})\b)",
    re.IGNORECASE,
)
_SUBJECT = re.compile(r"\b(?:i|i'm|i've|i'd|my|me|user|user's|they|he|she|their|his|her)\b", re.IGNORECASE)


@dataclass(frozen=True)
class PolarSegment:
    """One clause of a text: its polarity and the words, stems and numbers it holds."""

    text: str
    polarity: Polarity
    words: frozenset[str]
    stems: frozenset[str]
    numbers: frozenset[str]


def _polarity(text: str) -> tuple[Polarity, bool]:
    """(polarity, whether the clause carries a cue of its own)."""
    former = bool(_FORMER.search(text))
    rest = _FORMER.sub(" ", text)
    count = len(_NEGATION.findall(rest))
    base = "pos" if count == 0 else "neg" if count == 1 else "mixed"
    return ("former-" + base if former else base), bool(former or count)


def polar_segments(text: str) -> list[PolarSegment]:
    """Split ``text`` into clauses and give each its polarity.

    A clause with a subject ("I", "my", "the user", ...) or a cue of its own (not, never, no,
    n't, without, hate, dislike, avoid, rather than, instead of; no longer, used to, was, former...)
    has its own polarity. A bare continuation ("…, Python or Go") inherits the polarity of the
    clause before it, except after "but", which contrasts ("I am not a tester but a developer").
    """
    text = normalize(text).replace("’", "'")
    out: list[PolarSegment] = []
    previous: Polarity = "pos"
    pos = 0
    pieces: list[tuple[str, str]] = []  # (joiner, piece)
    joiner = ""
    for m in _SEGMENT.finditer(text):
        pieces.append((joiner, text[pos : m.start()]))
        joiner = m.group(0).strip().lower()
        pos = m.end()
    pieces.append((joiner, text[pos:]))
    for join, piece in pieces:
        if not piece.strip():
            continue
        polarity, own = _polarity(piece)
        if not own and not _SUBJECT.search(piece):
            contrast = "but" in join.split() or join.startswith("but")
            polarity = "pos" if contrast and previous.endswith(("neg", "mixed")) else previous
        previous = polarity
        words: set[str] = set()
        for w in _WORD.findall(piece):
            words.add(_bare(w))
            words.update(_bare(part) for part in re.split(r"[-'’]", w) if part)
        out.append(
            PolarSegment(
                text=piece.strip(),
                polarity=polarity,
                words=frozenset(words),
                stems=frozenset(_stem(w) for w in words),
                numbers=frozenset(_NUMBER.findall(piece)),
            )
        )
    return out


# ------------------------------------------------------------------------------------------------
# grounding: one check, used by memory consolidation

_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_FRAME = frozenset(
    """a an the and or but of to in on at for with by from as is are was were be been being am has have
    had do does did this that these those it its it's they them their there here he she his her him
    user user's users users' person people they're who whom whose which what when where why how not no
    yes very also too so than then just only some any all each every more most much many other such own
    same can could would should will shall may might must i i'm me my mine we our you your yours
    name named called likes like liked prefers prefer preferred preference wants want wanted loves love
    loved enjoys enjoy enjoyed hates hate hated dislikes dislike disliked detests detest avoids avoid
    says said mentioned stated told asked lives live living lived works work working worked
    always never usually often currently now really longer anymore used formerly previously former
    without nor neither none nothing don't doesn't didn't isn't aren't wasn't weren't can't cannot won't
    rather instead fan stand""".split()
)


def _bare(word: str) -> str:
    w = word.lower().replace("’", "'")
    for suffix in ("'s", "'"):
        if w.endswith(suffix):
            w = w[: -len(suffix)]
    return w


def _stem(word: str) -> str:
    w = _bare(word)
    for suffix in ("ations", "ation", "ments", "ment", "ences", "ence", "ances", "ance", "ings", "ing",
                   "ies", "ied", "ers", "er", "ed", "es", "ly", "s"):
        if len(w) > len(suffix) + 2 and w.endswith(suffix):
            w = w[: -len(suffix)]
            break
    return w[:-1] if len(w) > 2 and w.endswith("e") else w  # smoke/smokes, live/lives


@dataclass
class _Pool:
    words: set[str]
    stems: set[str]
    numbers: set[str]


def _pools(segments: Iterable[PolarSegment]) -> dict[Polarity, _Pool]:
    pools: dict[Polarity, _Pool] = {}
    for seg in segments:
        pool = pools.setdefault(seg.polarity, _Pool(set(), set(), set()))
        pool.words |= seg.words
        pool.stems |= seg.stems
        pool.numbers |= seg.numbers
    return pools


OPPOSITE = "the user's words say otherwise (negated, or in the past)"
UNBACKED = "not backed by the user's words"


def fact_backing(fact: str, evidence: str | Iterable[str]) -> str | None:
    """``None`` when the user's own words (``evidence``) back ``fact``; otherwise why not.

    Backed means, per clause of the fact and only from the user's clauses of the same polarity:
    every number and every capitalised word (a name, a place) appears, and, over the whole fact, at
    least half of the content-word stems (frame words such as "user", "name", "likes" excluded) do,
    and at least one does. A word found only under the opposite polarity gives :data:`OPPOSITE`.
    """
    ev_text = _claims_about(fact, evidence if isinstance(evidence, str) else "\n".join(evidence))
    fact = harden(fact)
    pools = _pools(polar_segments(ev_text))
    everywhere = _pools(PolarSegment("", "any", s.words, s.stems, s.numbers) for s in polar_segments(ev_text))
    any_pool = everywhere.get("any", _Pool(set(), set(), set()))
    empty = _Pool(set(), set(), set())
    content = matched = 0
    opposite = False
    fact_n = normalize(fact).replace("’", "'")
    for seg in polar_segments(fact_n):
        pool = pools.get(seg.polarity, empty)
        for number in seg.numbers:
            if number not in pool.numbers:
                return OPPOSITE if number in any_pool.numbers else UNBACKED
        for m in _WORD.finditer(seg.text):
            word = m.group(0)
            bare = _bare(word)
            if bare in _FRAME:
                continue
            if word[0].isupper():
                if bare not in pool.words:
                    return OPPOSITE if bare in any_pool.words else UNBACKED
            content += 1
            if _stem(word) in pool.stems:
                matched += 1
            elif _stem(word) in any_pool.stems:
                opposite = True
    if content == 0 or matched == 0 or 2 * matched < content:
        return OPPOSITE if opposite else UNBACKED
    return None


_POSSESSED = re.compile(r"\buser(?:'s|s')\s+([\w'-]+)(?:\s+([\w'-]+))?", re.IGNORECASE)


def _claims_about(fact: str, evidence: str) -> str:
    """The clauses of ``evidence`` that may back ``fact``: the user's own assertions (:func:`own_claim`)
    whose subject is the fact's. "The user …" is backed only by "I …" clauses (and standing requests);
    "The user's N …" also by "my …" clauses, and by "my N …" when N is another person ("my brother")."""
    nouns = {n.lower().removesuffix("'s") for m in _POSSESSED.finditer(normalize(fact)) for n in m.groups() if n}
    kept: list[str] = []
    previous = 0
    for sentence in split_sentences(normalize(evidence).replace("’", "'"), at_semicolon=False):
        if retracts(sentence):
            del kept[previous:]
            continue
        previous = len(kept)
        for clause in _CLAUSE_SPLIT.split(sentence):
            if not clause or not clause.strip() or not own_claim(clause):
                continue
            kind, _, noun = clause_subject(clause).partition(":")
            if kind == "self" or (kind == "my" and nouns) or (kind == "person" and noun.removesuffix("'s") in nouns):
                kept.append(harden(clause.strip()))
    return "\n".join(kept)


def is_grounded(fact: str, evidence: str | Iterable[str]) -> bool:
    """Is ``fact`` backed by the user's own words (``evidence``), with the same polarity?"""
    return fact_backing(fact, evidence) is None
