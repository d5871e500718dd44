"""What the user says about themselves, for semantic memory.

:func:`self_statements` picks the clauses of a message where the user talks about themselves ("my
name is Roydon", "please always answer me in bullet points") and leaves out material they only asked
to process. :func:`is_grounded` checks that a fact extracted by the model is backed by those words.
"""

from __future__ import annotations

import re

from cortex_lsp.guards.material import HANDOVER_VERBS, cut_handover, instruction, normalize

_MAX_CLAUSES = 8
_MAX_CLAUSE_CHARS = 300

_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
_PREFIX = re.compile(
    r"^\s*(?:(?:oh\s+)?(?:and|also|plus|btw|by\s+the\s+way|fyi|ps|p\.s\.|note|reminder|just\s+so\s+you\s+know|"
    r"for\s+the\s+record|for\s+your\s+information)\b[,:]?\s*)*"
    r"(?:(?:please\s+)?(?:remember|note|keep\s+in\s+mind|don't\s+forget|do\s+not\s+forget)\s*(?:that\b|:)?\s*)?",
    re.IGNORECASE,
)
_CUT = re.compile(r"(?<!\d):(?!\d)|[{\[<]")
_CLAUSE_SPLIT = re.compile(
    r"\s*;\s*|,?\s+\b(?:and|but|so|also|plus|while|although|though|because)\s+(?=(?:i|i'm|i've|i'd|i'll|my|me)\b)"
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
    and questions. At most 8 clauses of at most 300 characters each.
    """
    words = cut_handover(instruction(text))
    kept: list[str] = []
    for sentence in _SENTENCES.split(words):
        for clause in _clauses(sentence):
            c = _PREFIX.sub("", clause.strip(" ,;-")).strip(" ,;-")
            if not c or c.endswith("?") or _NOT_ABOUT_ME.match(c):
                continue
            if _IMPERATIVE.match(c) and not _STANDING.search(c):
                continue
            if _FIRST_PERSON.search(c) or (_STANDING.search(c) and _STANDING_OBJECT.search(c)):
                kept.append(c[:_MAX_CLAUSE_CHARS].rstrip())
            if len(kept) >= _MAX_CLAUSES:
                return kept
    return kept


# ------------------------------------------------------------------------------------------------
# grounding

_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_FRAME = frozenset(
    """a an the and or but of to in on at for with by from as is are was were be been being am has have
    had do does did this that these those it its it's they them their there here he she his her him
    user user's users users' person people they're who whom whose which what when where why how not no
    yes very also too so than then just only some any all each every more most much many other such own
    same can could would should will shall may might must i i'm me my mine we our you your yours
    name named called likes like prefers prefer wants want says said mentioned stated told asked
    always never usually often currently now""".split()
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
            return w[: -len(suffix)]
    return w


def is_grounded(fact: str, evidence: str) -> bool:
    """Is a fact extracted by the model backed by the user's own words (``evidence``)?

    Every capitalised word of the fact (other than a sentence-initial common word such as "The")
    and every number must appear in the evidence. A fact with none of those needs at least half of
    its content-word stems (frame words such as "user", "name", "prefers" excluded) in the evidence.
    """
    fact_n, evidence_n = normalize(fact), normalize(evidence)
    ev_words: set[str] = set()
    for w in _WORD.findall(evidence_n):
        ev_words.add(_bare(w))
        ev_words.update(_bare(part) for part in re.split(r"[-'’]", w) if part)
    ev_numbers = set(_NUMBER.findall(evidence_n))
    for number in _NUMBER.findall(fact_n):
        if number not in ev_numbers:
            return False
    specific = 0
    for m in _WORD.finditer(fact_n):
        word = m.group(0)
        if not word[0].isupper() or _bare(word) in _FRAME:
            continue
        specific += 1
        if _bare(word) not in ev_words:
            return False
    if specific or _NUMBER.search(fact_n):
        return True
    stems = {_stem(w) for w in _WORD.findall(fact_n) if _bare(w) not in _FRAME}
    if not stems:
        return False
    ev_stems = {_stem(w) for w in ev_words}
    return 2 * len(stems & ev_stems) >= len(stems)
