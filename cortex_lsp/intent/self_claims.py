"""Which of the user's clauses *assert* something about the user, for memory.

A fact about the user is backed only by a clause of the user's own words that has a first-person
subject, assertive mood, the same predicate and the same polarity (:func:`cortex_lsp.intent.self_talk.fact_backing`
checks predicate and polarity). This module supplies the rest, in code:

* :func:`harden` rewrites hedged and opposing words to a plain "not" before the polarity analysis:
  "hardly", "barely", "by no means", "anything but", "far from", "kaum", "à peine", "apenas" … negate,
  and so do stances of opposition ("against", "opposed to", "refuse", "object to", "reject") — so
  "I am against using tabs" never backs "The user prefers using tabs".
* :func:`clause_subject` reads whose clause it is: ``"self"`` ("I …", "call me …", "always answer me …",
  "my name is …"), ``"my:<noun>"`` for a possession ("my llama is called …"), ``"person:<noun>"`` for
  another person ("my brother is a doctor", "my boss thinks …") and ``"other"`` ("people say …").
* :func:`is_assertive` drops reported belief, wishes, doubts, jokes and role play ("I doubt that I am …",
  "I wish I were …", "… just kidding", "a fake doctor in a play").
* :func:`asked_about_material` finds the sentence where the user asks about pasted text ("Is this a
  scam?", "My colleague sent me this, what does it mean?"); the other lines are material, not the
  user's words about themselves.
"""

from __future__ import annotations

import re

#: hedges and stances that negate the clause they stand in (English, German, French, Spanish)
HEDGE_NEGATORS = (
    "hardly", "barely", "scarcely", "not really", "not exactly", "not at all", "far from", "by no means",
    "in no way", "no way", "nowhere near", "anything but", "not remotely", "not in the least",
    "kaum", "keineswegs", "keinesfalls", "überhaupt nicht", "gar nicht", "bei weitem nicht",
    "à peine", "guère", "pas vraiment", "pas du tout", "loin d'être", "nullement",
    "apenas", "para nada", "de ningún modo", "en absoluto", "lejos de ser", "casi no",
)
OPPOSITION = (
    "against", "opposed to", "oppose", "opposes", "opposing", "refuse to", "refuses to", "refused to",
    "object to", "objects to", "reject", "rejects", "no fan of", "not a fan of", "averse to",
    "gegen", "dagegen", "lehne ab", "contre", "opposé à", "opposée à", "refuse de", "en contra de",
    "contra", "me niego a", "rechazo",
)


def _alternatives(words: tuple[str, ...]) -> str:
    return "|".join(r"\s+".join(map(re.escape, w.split())) for w in sorted(set(words), key=len, reverse=True))


_HARDEN = re.compile(rf"(?<![\w'])(?:{_alternatives(HEDGE_NEGATORS + OPPOSITION)})(?![\w'])", re.IGNORECASE)


def harden(text: str) -> str:
    """``text`` with every hedge or stance of opposition replaced by "not" (one negation each)."""
    return _HARDEN.sub("not", text.replace("’", "'"))


# ------------------------------------------------------------------------------------------------
# whose clause it is

PERSONS = frozenset(
    """brother brothers sister sisters sibling siblings mother mom mum mommy mummy father dad daddy parent
    parents wife husband partner spouse boyfriend girlfriend fiance fiancé fiancee fiancée ex son sons daughter
    daughters kid kids child children baby babies friend friends buddy pal colleague colleagues coworker
    coworkers co-worker co-workers boss manager managers team teammate teammates neighbour neighbor
    neighbours neighbors cousin cousins uncle aunt grandma grandpa grandmother grandfather grandparents
    family roommate roommates flatmate flatmates teacher teachers professor tutor mentor client clients
    customer customers landlord landlady nephew niece twin employer employee employees student students
    doctor therapist lawyer coach classmate classmates roomie bf gf hubby
    bruder schwester mutter vater mann frau freund freundin chef kollege kollegin sohn tochter
    frère soeur sœur mère père mari femme ami amie patron collègue fils fille
    hermano hermana madre padre marido esposa esposo amigo amiga jefe jefa colega hijo hija""".split()
)
_LEAD = re.compile(
    r"^\s*(?:(?:honestly|actually|well|so|also|and|oh|yes|yeah|ok|okay|in\s+fact|by\s+the\s+way|btw|fyi|"
    r"currently|now|today|these\s+days|nowadays|personally|frankly|to\s+be\s+honest|tbh|fwiw|ps|"
    r"for\s+the\s+record|just\s+so\s+you\s+know|remember|note)\b[\s,:-]*)+",
    re.IGNORECASE,
)
_ADVERBIAL = re.compile(r"^\s*(?:at|in|on|for|during|since|outside|after|before)\b[^,]{0,40},\s*", re.IGNORECASE)
_SELF = re.compile(
    r"^(?:i|i'm|i've|i'd|i'll|im|me|myself|ich|je|j'|moi|yo|me\s+llamo)(?![\w'])"
    r"|^(?:please\s+)?(?:call|address)\s+me\b|^(?:please\s+)?(?:always|never|from\s+now\s+on|going\s+forward|"
    r"in\s+(?:the\s+)?future|every\s+time|whenever)\b",
    re.IGNORECASE,
)
_MY = re.compile(r"^(?:my|mein|meine|meiner|mon|ma|mes|mi|mis)\s+([\w'-]+)(?:\s+([\w'-]+))?", re.IGNORECASE)
#: a clause that opens with a standing request or a plain imperative about the user ("please answer me…")
_STANDING_IMPERATIVE = re.compile(
    r"^(?:please\s+)?(?:answer|reply|respond|write|use|speak|talk|format|give|keep|include|end|start)\b"
    r"[^.?!]*\b(?:me|my)\b",
    re.IGNORECASE,
)


def _opening(clause: str) -> str:
    text = clause.replace("’", "'").strip(" \t\"'-–—*")
    for _ in range(3):
        before = text
        text = _LEAD.sub("", text)
        text = _ADVERBIAL.sub("", text)
        if text == before:
            break
    return text.strip()


def clause_subject(clause: str) -> str:
    """Whose clause: ``"self"``, ``"my:<noun>"`` (a possession), ``"person:<noun>"`` or ``"other"``."""
    text = _opening(clause)
    if _SELF.match(text) or _STANDING_IMPERATIVE.match(text):
        return "self"
    m = _MY.match(text)
    if m is not None:
        first = m.group(1).lower()
        second = (m.group(2) or "").lower()
        for noun in (first, second):
            if noun.removesuffix("'s") in PERSONS:
                return f"person:{noun}"
        return f"my:{first}"
    return "other"


# ------------------------------------------------------------------------------------------------
# assertive mood

_NOT_ASSERTIVE = re.compile(
    r"\b(?:doubt|doubts|doubted|wish|wished|wishing|pretend|pretends|pretending|imagine|imagining|"
    r"dream(?:s|ed|t|ing)?\s+(?:of|about|that)|kidding|joking|joke|jk|j/k|lol\s+no|"
    r"play(?:s|ed|ing)?\s+(?:a|an)\s+(?:[\w-]+\s+)?(?:doctor|role|part|character|villain|hero|lawyer|"
    r"nurse|cop|police|detective|teacher|king|queen|pirate|vampire|wizard)|"
    r"if\s+i\s+(?:were|was|had|could|would)|i\s+were|as\s+if|fake|role-?play(?:ing)?|"
    r"in\s+(?:a|the|my|this)\s+(?:play|game|movie|film|story|novel|dream|show|skit|simulation|roleplay)|"
    r"hypothetical(?:ly)?|suppos(?:e|ing|edly)|allegedly|apparently|not\s+sure|unsure|"
    r"(?:want|wanted|hope|hoped|hoping|would\s+love|'d\s+love|wanna|aspire|plan|planning)\s+to\s+(?:be|become)|"
    r"(?:am|'m|was|were|been|being|get|got)\s+(?:told|accused|said|considered|thought|believed|rumou?red)|"
    r"ich\s+wünschte|wenn\s+ich|je\s+doute|si\s+j'étais|ojalá|si\s+fuera|dudo\s+que)\b",
    re.IGNORECASE,
)


#: someone else's belief or words about the user ("my boss thinks I…"); the user's own "I said I…" is theirs
_REPORTED = re.compile(
    r"\b(?:think|thinks|thought|believe|believes|believed|say|says|said|claim|claims|claimed|"
    r"consider|considers|reckon|reckons|assume|assumes|suspect|suspects|accuse|accuses|insist|insists|feel|"
    r"feels)\s+(?:that\s+)?(?:i|i'm|me|my)\b",
    re.IGNORECASE,
)
_USER_SPEAKS = re.compile(r"\bi\s+(?:(?:already|just|also|once|always)\s+)?$", re.IGNORECASE)


def is_assertive(clause: str) -> bool:
    """Does the clause assert (not wish, doubt, report, joke or play act) what it says?"""
    text = clause.replace("’", "'")
    if _NOT_ASSERTIVE.search(text) is not None:
        return False
    return all(_USER_SPEAKS.search(text[: m.start()]) for m in _REPORTED.finditer(text))


_RETRACT = re.compile(
    r"^\s*(?:not|nope|nah|kidding|just\s+kidding|only\s+kidding|jk|j/k|joking|just\s+joking|lol,?\s+no|"
    r"not\s+really|psych|april\s+fools?|that\s+was\s+a\s+joke|scratch\s+that|forget\s+(?:that|it)|"
    r"ignore\s+that|that's\s+not\s+true|not\s+true|i\s+lied|nicht|pas\s+vraiment|je\s+rigole|es\s+broma)"
    r"\s*[.!]*\s*$",
    re.IGNORECASE,
)


def retracts(sentence: str) -> bool:
    """A sentence that takes back the one before it ("Not.", "Just kidding.", "Scratch that.")."""
    return _RETRACT.match(sentence.replace("’", "'")) is not None


def own_claim(clause: str) -> bool:
    """A clause of the user's that may back a fact about the user (or their possessions/people)."""
    return clause_subject(clause) != "other" and is_assertive(clause) and _SENT_ME.search(clause) is None


# ------------------------------------------------------------------------------------------------
# questions about pasted text

_SENTENCE = re.compile(r"[^.!?\n]*(?:[.!?]+|\n|$)")
_SENT_ME = re.compile(
    r"\b(?:sent|forwarded|texted|emailed|messaged|showed|gave)\s+(?:me|us)\s+(?:this|these|that|the\s+following)\b"
    r"|\b(?:i\s+)?(?:got|received|found|saw|came\s+across)\s+(?:this|these|the\s+following)\b"
    r"|\bwhat\s+does\s+(?:it|this|that)\s+mean\b"
    r"|\b(?:here\s+is|here's|below\s+is)\b",
    re.IGNORECASE,
)
_ASKS_ABOUT = re.compile(
    r"\b(?:is|are|was|does|do|did|what|which|who|why|how|can|could|should|would)\b[^?\n]*"
    r"\b(?:this|these|that)\b[^?\n]*\?",
    re.IGNORECASE,
)


#: a short question line about "it" next to other lines ("Is it legit?\n<pasted text>")
_SHORT_IT_QUESTION = re.compile(
    r"^\s*(?:[\w'-]+\s+){0,6}?\b(?:it|this|that)\b(?:\s+[\w'-]+){0,4}\s*\?\s*$", re.IGNORECASE
)


def asked_about_material(text: str, *, lines: bool = False) -> bool:
    """Does the user ask about text they pasted ("Is this a scam?", "… sent me this, what does it mean?")?

    With ``lines`` (a line of a multi-line message), a short question about "it" counts too."""
    if _SENT_ME.search(text) or _ASKS_ABOUT.search(text):
        return True
    return lines and _SHORT_IT_QUESTION.match(text) is not None


def cut_asked_about(text: str) -> str:
    """Only the user's question when they ask about pasted material; the text otherwise.

    When a sentence asks about "this/that" (a line: also "it") or says someone "sent me this", every other line of a
    multi-line message, and every sentence after the question on one line, is the material asked
    about: it never speaks for the user.
    """
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) > 1:
        if not any(asked_about_material(ln, lines=True) for ln in lines):
            return text
        return "\n".join(ln for ln in lines if asked_about_material(ln, lines=True))
    if not asked_about_material(text):
        return text
    out: list[str] = []
    for m in _SENTENCE.finditer(text):
        sentence = m.group(0)
        out.append(sentence)
        if asked_about_material(sentence):
            break
    return "".join(out).strip()
