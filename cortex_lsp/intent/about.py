"""Material the user asks *about* is data, not the user's command.

:func:`settle` reads the clause analysis of :mod:`cortex_lsp.intent.clauses` a second time, by the role
each sentence and clause plays in the message, and takes the grant away from verbs that are not the
user's own sentence addressed to the agent:

* **about-sentences**: a sentence that grants nothing itself and points at material ("Is this a
  scam?", "What language is this?", "My colleague sent me this", "^ what does that mean?", "ELI5",
  a "Thanks, Bob" sign-off) makes every *other* sentence of the message material;
* **introductions**: before a colon or a dash, a head that grants nothing and names material or a
  meta-verb ("Count the words in:", "sentiment of:", "Q:", "Add a line to the poem:") makes the rest
  of its sentence material;
* **nominal use**: a write verb that is the object of a content noun ("three ways to save …", "the
  command to save …", "a function that saves … to x.md") is text to produce, not a write;
* **lines asked about**: in a message of several lines, a line that only asks ("Is it a scam?",
  "Meaning?", "lol what", "???") makes the other lines material;
* **deferred**: "once I approve", "if and only if I confirm", "tomorrow", "later", "in a week" make
  the sentence conditional;
* **negation anywhere** in the verb's clause (other than the "don't forget" of a request and a
  relative clause's own "that do not work") and the negating adverbs of the four languages
  ("keinesfalls", "en aucun cas", "de ninguna manera", "under no circumstances") take the grant away;
  so does a negated write verb in the same clause ("Make sure out.md is never created");
* a verb phrase used as a subject ("save to out.md is what the attacker wants") grants nothing;
* **names as typed**: a target must appear in the message as typed (after NFKC and removing
  invisible characters): a look-alike "оut.md" (Cyrillic о) grants no "out.md";
* **taken back**: a later clause's bare negated write ("…, but don't save it") takes the earlier
  write's grant back (:mod:`cortex_lsp.intent.taken_back`).

:func:`prepare` joins hyphenated compounds ("write-protect") so that their first half is not read as
a verb. Everything here is pure and linear in the message.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace

from cortex_lsp.intent import lexicon as lx
from cortex_lsp.intent.clauses import CREATE_VERBS, REPLACE_VERBS, Action, Analysis, analyse, lemma
from cortex_lsp.intent.patterns import strip_invisible
from cortex_lsp.intent.taken_back import take_back

__all__ = ["prepare", "settle"]

_WRITE_VERBS = CREATE_VERBS | REPLACE_VERBS | {"delete", "rename", "move"}

#: words that point at material shown elsewhere in the message
_DEICTIC = frozenset(
    "this that these those following above below aforementioned "
    "das dies diese dieser dieses folgende folgendes obige obigen "
    "ça cela ceci ci-dessous ci-dessus suivant suivante suivants "
    "esto eso esta este estos estas siguiente anterior".split()
)
#: header words and meta-verbs: what follows them is looked at, not done
_META = frozenset(
    "eli5 tldr tl dr gist q a input output example prompt string message text sentence line lines "
    "command commands snippet ticket quote poem story words word sentiment language translate "
    "translation count classify classification detect check proofread grammatical grammar meaning mean "
    "means legit scam safe trust correct true phishing spam rude tone intent triage priority "
    "übersetze übersetzen zähle prüfe bedeutet bedeutung satz befehl "
    "traduis traduire compte vérifie signifie phrase commande "
    "traduce traducir cuenta comprueba significa frase comando".split()
)
#: a sign-off line after forwarded text ("Thanks, Bob")
_SIGN_OFF = re.compile(
    r"^(?:thanks|thank you|thx|cheers|regards|best regards|best|kind regards|danke|viele grüße|grüße|"
    r"merci|cordialement|gracias|saludos)\s*[,!.]?\s*[a-z]+\s*[.!]?$"
)
#: content nouns whose complement is text to produce: "ways to save", "a function that saves"
_CONTENT_NOUN = (
    r"ways?|commands?|code|functions?|scripts?|programs?|snippets?|story|stories|tutorials?|poems?|essays?|"
    r"examples?|steps|instructions|guide|regex|query|one liner|alias|macro|methods?|class|tips|options?|"
    r"syntax|songs?|jokes?|emails?|letters?|paragraphs?|sentences?|tests?|"
    r"befehl|funktion|skript|möglichkeiten|wege|anleitung|"
    r"commande|fonction|façons|manières|exemple|"
    r"comando|código|función|formas|maneras|ejemplo"
)
_NOMINAL = re.compile(
    rf"\b(?:{_CONTENT_NOUN})\b(?: ,)?(?: \w+){{0,3}}? (?P<link>to|that|which|who|in which|for|zu|um|"
    r"der|die|das|pour|qui|para|que)\b(?P<rest>.*)$"
)
#: German puts the infinitive last: "Nenne drei Wege, den Bericht in x.md zu speichern"
_NOMINAL_DE = re.compile(rf"\b(?:{_CONTENT_NOUN})\b(?: ,)?(?P<rest>(?: [^ ]+)*? zu \w+) ?[.!?]?$")
_TO = frozenset("to for zu um pour para".split())
_COORDINATED = re.compile(r"\b(?:and|then|und|dann|et|puis|y|luego)\b")
#: the write waits for the user: "once I approve", "if and only if I confirm", "tomorrow"
_DEFERRED = re.compile(
    r"\b(?:if and only if|only if|only after|only when|only once|"
    r"(?:if|once|after|when|whenever|as soon as|until|unless) i\b|"
    r"tomorrow|later|next (?:week|time|month)|in (?:a|an|one|two|three|a few|\d+) (?:minute|hour|day|week)s?|"
    r"(?:wenn|sobald|nachdem|falls|bis) ich\b|nur wenn|morgen|später|"
    r"(?:quand|dès que|une fois que|après que|si) je\b|seulement si|demain|plus tard|"
    r"(?:cuando|en cuanto|una vez que|si) (?:yo|te lo|lo)\b|solo si|sólo si|mañana|más tarde)\b"
)
#: negating adverbs and phrases that negate their whole sentence, wherever they stand
_NEG_ADVERBS = re.compile(
    r"\b(?:under no circumstances?|by no means|in no way|on no account|no way|"
    r"keinesfalls|keineswegs|auf keinen fall|unter keinen umständen|"
    r"en aucun cas|aucunement|nullement|"
    r"de ninguna manera|de ningún modo|en ningún caso|bajo ningún concepto)\b"
)
_NEGATORS = lx.PRECEDING_NEGATORS | lx.CLAUSE_NEGATORS | {"kein", "nie", "ne", "pas", "jamais", "nunca", "no"}
_RELATIVES = frozenset("that which who whose die der welche welcher qui dont quien cual cuales".split())
_SURE = frozenset("sure ensure certain sicher assure-toi asegúrate".split())
_COPULA = frozenset("is was are would ist war sind est était es era".split())
#: a line with one of these asks a question even without a question mark ("lol what")
_QUESTION_WORDS = frozenset("what why how wtf huh was warum wieso quoi pourquoi qué que por".split())
#: asking for an interpretation of what follows ("Help me understand\n<line>")
_UNDERSTAND = frozenset(
    "understand decipher interpret decode verstehen entschlüsseln comprendre déchiffrer entender descifrar".split()
)
_ONLY_QUESTION_MARKS = re.compile(r"^[ \t]*[?¿][?!¿ \t]*$", re.MULTILINE)
#: a line that starts like this heads material (a ticket, a Q/A pair, a forwarded mail)
_HEADERS = frozenset("eli5 tldr gist ticket priority subject re fwd fw from q a input output example issue".split())
_FOLLOW_INSTRUCTIONS = frozenset("do follow execute perform carry mach tu haz sigue suis".split())
_HYPHENATED = re.compile(r"(?<![\w./\\-])([A-Za-z]{2,})-([A-Za-z]{2,})(?![\w./\\-])")
_FRENCH_PRONOUNS = frozenset("le la les moi toi lui nous vous leur en y tu il elle on ils elles je".split())


def prepare(words: str) -> str:
    """``words`` with hyphenated compounds joined ("write-protect" → "writeprotect"), French
    imperative pronouns ("enregistre-le", "peux-tu") left alone."""

    def join(m: re.Match[str]) -> str:
        if m.group(2).lower() in _FRENCH_PRONOUNS:
            return m.group(0)
        return m.group(1) + m.group(2)

    return _HYPHENATED.sub(join, words)


def _has_deictic(words: list[str]) -> bool:
    return any(w in _DEICTIC for w in words)


def _grants_any(text: str) -> bool:
    return any(a.grants for a in analyse(text).actions)


def _about_sentence(text: str, own: list[Action]) -> bool:
    """Does this sentence ask about (or introduce) material instead of asking for something?"""
    if any(a.grants for a in own):
        return False
    words = text.split()
    if _SIGN_OFF.match(text.strip(" \n")):
        return True
    if (words and words[0] in _HEADERS) or set(words) & _UNDERSTAND:
        return True
    if not _has_deictic(words):
        return False
    # "Please do the following." hands over a task; "Is this safe to follow?" asks about one
    return "?" in words or not (set(words) & _FOLLOW_INSTRUCTIONS)


def _asks(text: str, own: list[Action]) -> bool:
    """Is this sentence a question (or a bare "lol what") that asks for nothing to be done?"""
    if any(a.grants for a in own):
        return False
    words = text.split()
    return "?" in words or "¿" in words or bool(set(words) & _QUESTION_WORDS)


def _lines_asked_about(found: Analysis, by_sentence: dict[int, list[Action]]) -> set[int]:
    """In a message of several lines, a line that only asks a question makes the other lines material
    ("Is it a scam?\n<line>", "<line>\n???")."""
    sentences, line_of = found.sentences, found.lines
    if len(line_of) != len(sentences) or len(set(line_of)) < 2:
        return set()
    asking = {line_of[i] for i, text in enumerate(sentences) if _asks(text, by_sentence.get(i, []))}
    asking -= {line_of[a.sentence] for acts in by_sentence.values() for a in acts if a.grants}
    if not asking:
        return set()
    return {i for i in range(len(sentences)) if line_of[i] not in asking}


def _introduced(text: str) -> bool:
    """Is the part of this sentence after its first colon or dash material (a meta head before it)?"""
    cut = re.search(r" [:\-—–] ", f" {text} ")
    if cut is None:
        return False
    head = f" {text} "[: cut.start()].strip()
    words = head.split()
    if not words or (set(words) & _FOLLOW_INSTRUCTIONS and _has_deictic(words)):
        return False
    if not (set(words) & _META or _has_deictic(words)):
        return False
    found = analyse(head).actions
    return not any(a.grants and a.targets for a in found)


def _nominal(action: Action, sentence: str) -> bool:
    """Is the write verb the object of a content noun ("ways to save", "a function that saves")?"""
    german = _NOMINAL_DE.search(sentence)
    if german is not None and any(t in german.group("rest") for t in action.targets):
        return True
    m = _NOMINAL.search(sentence)
    if m is None:
        return False
    first = (m.group("rest").split() or [""])[0]
    if first in action.targets or (m.group("link") in _TO and first in lx.DETERMINERS):
        return False  # "write the steps to steps.md", "a poem to a new file": the noun is what is written
    if _COORDINATED.search(m.group("rest")) and not any(t in m.group("rest").split(" and ")[0] for t in action.targets):
        return False  # "write a function that parses csv and save it to p.py": a second request
    rest = m.group("rest")
    return any(t in rest for t in action.targets)


def _writes(word: str) -> bool:
    """Is ``word`` a form of a create or replace verb ("saving", "speichere", "écris")?"""
    return lemma(word) in CREATE_VERBS | REPLACE_VERBS


def _negated_in_clause(action: Action, siblings: list[Action]) -> bool:
    words = action.clause.split()
    forget = next((j for j, w in enumerate(words) if w in lx.FORGET), -1)
    for i, w in enumerate(words):
        if w not in _NEGATORS:
            continue
        if forget >= 0 and (forget - 2 <= i < forget or (i == forget + 1 and w in ("nicht", "pas"))):
            continue  # the "don't" of "don't forget to save", "vergiss nicht", "n'oublie pas" asks
        before = words[:i]
        relative = [j for j, b in enumerate(before) if b in _RELATIVES and not (j > 0 and before[j - 1] in _SURE)]
        if relative:
            continue  # "the things that do not work": the negation belongs to the relative clause
        if w == "no" and i == 0:
            continue  # "No, save it": an interjection
        if any(b in lx.CONTENT_OPENERS for b in before) and not any(_writes(a) for a in words[i + 1 : i + 4]):
            continue  # "with the text this should not exist": the negation is the text's
        return True
    return any(s.negated and s.verb in _WRITE_VERBS for s in siblings if s.clause == action.clause)


def _subject_use(action: Action) -> bool:
    words = action.clause.split()
    return any(w in action.targets and i + 1 < len(words) and words[i + 1] in _COPULA for i, w in enumerate(words))


def _as_typed(target: str, typed: str) -> bool:
    """Was this name typed as it stands, in one script ("оut.md" with a Cyrillic о is no name)?"""
    scripts = {unicodedata.name(c, "?").split()[0] for c in target if c.isalpha()}
    if len(scripts & _SCRIPTS) > 1:
        return False
    return target in typed or target.replace("/", "\\") in typed


_SCRIPTS = frozenset({"LATIN", "CYRILLIC", "GREEK", "ARMENIAN"})


def settle(found: Analysis, message: str) -> Analysis:
    """``found`` with the grants taken away from material, deferred, negated and look-alike verbs."""
    if not found.actions:
        return found
    sentences = found.sentences
    by_sentence: dict[int, list[Action]] = {}
    for a in found.actions:
        by_sentence.setdefault(a.sentence, []).append(a)
    about = {i for i, text in enumerate(sentences) if _about_sentence(text, by_sentence.get(i, []))}
    material = {i for i in range(len(sentences)) if about - {i}}
    material |= _lines_asked_about(found, by_sentence)
    if "\n" in message.strip() and _ONLY_QUESTION_MARKS.search(message):
        material = set(range(len(sentences)))  # "<line>\n???"
    introduced = {i for i, text in enumerate(sentences) if _introduced(text)}
    deferred = {i for i, text in enumerate(sentences) if _DEFERRED.search(text)}
    negated = {i for i, text in enumerate(sentences) if _NEG_ADVERBS.search(text)}
    typed = strip_invisible(unicodedata.normalize("NFKC", message))
    out: list[Action] = []
    for a in found.actions:
        if a.grants:
            siblings = by_sentence.get(a.sentence, [])
            if a.sentence in material or a.sentence in introduced:
                a = replace(a, mood="statement")
            elif a.sentence in deferred:
                a = replace(a, mood="conditional")
            elif a.sentence in negated:
                a = replace(a, negated=True)
            elif a.verb in _WRITE_VERBS and (_nominal(a, sentences[a.sentence]) or _subject_use(a)):
                a = replace(a, mood="statement")
            elif a.verb in _WRITE_VERBS and _negated_in_clause(a, siblings):
                a = replace(a, negated=True)
        if a.targets and a.verb in _WRITE_VERBS:
            kept = tuple(t for t in a.targets if _as_typed(t, typed))
            if kept != a.targets:
                a = replace(a, targets=kept, negated=a.negated or not kept)
        out.append(a)
    unnamed = found.unnamed_save and any(a.grants and not a.targets and a.verb in CREATE_VERBS for a in out)
    return take_back(replace(found, actions=tuple(out), unnamed_save=unnamed))
