"""The clause analysis behind :func:`cortex_lsp.intent.intent.parse_intent`.

The user's own words (already cut by the provenance filters) are tokenised (file names, words,
punctuation; contractions and French elisions undone), split into sentences and clauses
(:mod:`cortex_lsp.intent.segments`: at ``, ; :``, "but", and before a conditional, reason or
embedded-question word such as if/when/because/how/whether, in four languages), and each clause's
verbs are looked up in the lemma tables of :mod:`cortex_lsp.intent.lexicon`. Every verb gets a
polarity (a negator before it, or a clause-wide one such as "nicht", "pas", "nothing"; "don't forget
to" is a request), a mood (imperative, request, question, past, conditional, statement) and its
targets (the file names of its clause, with sources such as "from x.csv" left out; "update it" takes
the file named before). The result is a list of
:class:`Action` s.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

from cortex_lsp.intent import lexicon as lx
from cortex_lsp.intent.segments import Clause, clauses, line_starts, sentences, starts
from cortex_lsp.intent.tokens import Tok, phrase_words, tokens

__all__ = [
    "CREATE_VERBS", "GRANTING_MOODS", "REPLACE_VERBS", "SAVE_VERBS", "Action", "Analysis", "analyse", "lemma",
]

CREATE_VERBS = lx.CREATE_VERBS
REPLACE_VERBS = lx.REPLACE_VERBS
SAVE_VERBS = lx.SAVE_VERBS
GRANTING_MOODS = ("imperative", "request")


@dataclass(frozen=True)
class Action:
    """One verb of the user's words with its polarity, mood and targets."""

    verb: str
    negated: bool
    mood: str
    targets: tuple[str, ...]
    clause: str
    #: which sentence of the words the verb stands in (see :attr:`Analysis.sentences`)
    sentence: int = field(default=-1, compare=False, repr=False)

    @property
    def grants(self) -> bool:
        """Does this action ask for something to be done (not negated, imperative or request)?"""
        return not self.negated and self.mood in GRANTING_MOODS


_REQUEST = tuple(phrase_words(p) for p in lx.REQUEST_MARKERS)
_PHRASES = tuple((phrase_words(p), lemma, tense) for p, lemma, tense in lx.PHRASES)
_NEG_PHRASES = tuple(phrase_words(p) for p in lx.NEGATING_PHRASES)
_ENCLITIC = re.compile(r"(?:melo|mela|selo|sela|los|las|nos|lo|la|le|les|me|te|se)$")
_GENERIC_PAST = re.compile(r"^[a-z]{3,}ed$")
_INTERJECTIONS = frozenset("no nein non nope".split())
#: a verb right after one of these takes the mood of the verb before it ("remember to save")
_LINKS = frozenset(("to", "zu", "de", "à"))
#: a base-form verb right after one of these is a second imperative ("generate a list and save it"),
#: unless a personal pronoun is its subject ("I read it and save copies")
_AND = frozenset("and then or und dann oder et puis ou y luego o".split())
_PERSONAL = frozenset("i we he she they ich wir er ihr je nous il elle ils elles yo él ella nosotros ellos".split())


def _lookup(word: str) -> tuple[str, str] | None:
    """(lemma, tense) of a verb form of the lexicon (accents and Spanish enclitics undone), else ``None``."""
    if word in lx.DETERMINERS:
        return None
    hit = lx.VERBS.get(word) or lx.VERBS.get(lx.strip_accents(word))
    if hit is None:
        bare = _ENCLITIC.sub("", lx.strip_accents(word))
        if len(bare) >= 4 and bare != word:
            hit = lx.VERBS.get(bare)
            if hit is not None and hit[1] != "base":
                hit = None
    return hit


def lemma(word: str) -> str | None:
    """The canonical lemma of a verb form ("saving" → "save", "speichere" → "save"), else ``None``."""
    hit = _lookup(word)
    return hit[0] if hit is not None else None


# ------------------------------------------------------------------------------------------------
# verbs in a clause


@dataclass
class _Verb:
    lemma: str
    tense: str
    index: int  # position in the clause's word list
    negated: bool = False
    mood: str = "statement"
    files: list[str] = field(default_factory=list)


def _clitic(words: list[str], i: int) -> bool:
    """Is ``words[i]`` a French object pronoun ("ne l'enregistre pas", "sans l'enregistrer"), not an article?"""
    if words[i] not in ("le", "la", "les") or i == 0:
        return False
    return words[i - 1] == "ne" or (words[i - 1] == "sans" and words[i + 1].endswith(("er", "ir", "re")))


def _find_verbs(words: list[str]) -> list[_Verb]:
    verbs: list[_Verb] = []
    i = 0
    while i < len(words):
        matched = False
        for phrase, lemma, tense in _PHRASES:
            if starts(words, i, phrase):
                verbs.append(_Verb(lemma, "ask" if lemma == "run" else tense, i))
                i += len(phrase)
                matched = True
                break
        if matched:
            continue
        hit = _lookup(words[i])
        if hit is not None and not (i > 0 and words[i - 1] in lx.DETERMINERS and not _clitic(words, i - 1)):
            verbs.append(_Verb(hit[0], hit[1], i))
        i += 1
    return verbs


def _negations(words: list[str]) -> tuple[list[int], bool, bool]:
    """(positions of preceding negators, a clause-wide negator present, "don't forget" present)."""
    positions: list[int] = []
    clause_wide = False
    forget = any(w in lx.FORGET for w in words)
    for i, w in enumerate(words):
        if forget and (w in lx.PRECEDING_NEGATORS or w in lx.CLAUSE_NEGATORS or w == "do"):
            nxt = words[i + 1 : i + 3]
            if any(n in lx.FORGET for n in nxt) or (i > 0 and words[i - 1] in lx.FORGET):
                continue
        phrase = next((p for p in _NEG_PHRASES if starts(words, i, p)), None)
        if w in lx.CLAUSE_NEGATORS or (phrase is not None and phrase[0] == "no"):
            clause_wide = True
        elif w in lx.PRECEDING_NEGATORS or phrase is not None:
            positions.append(i)
    return positions, clause_wide, forget


_REQUEST_BY_FIRST: dict[str, tuple[tuple[str, ...], ...]] = {}
for _p in _REQUEST:
    _REQUEST_BY_FIRST[_p[0]] = (*_REQUEST_BY_FIRST.get(_p[0], ()), _p)
_INITIAL_SKIP = frozenset(("do", "go", "ahead", "to", "zu", "de", "à", "a", "ne", "be", "sure", "make"))


@dataclass
class _Scan:
    """Facts about one clause's words, computed once (every check below is then O(1) per verb)."""

    words: list[str]
    negators: list[int]
    req_start: int = -1
    req_cover: set[int] = field(default_factory=set)
    first_past_aux: int = -1
    past_time: bool = False
    past_forms: set[int] = field(default_factory=set)
    first_personal: int = -1
    first_subject: int = -1
    first_real: int = -1

    @classmethod
    def of(cls, words: list[str], negators: list[int]) -> _Scan:
        scan = cls(words, negators)
        for i, w in enumerate(words):
            for phrase in _REQUEST_BY_FIRST.get(w, ()):
                if starts(words, i, phrase):
                    scan.req_start = i if scan.req_start < 0 else scan.req_start
                    scan.req_cover.update(range(i, i + len(phrase)))
            if w in lx.PAST_AUX and scan.first_past_aux < 0:
                scan.first_past_aux = i
            if w in lx.PAST_TIME:
                scan.past_time = True
            if _GENERIC_PAST.match(w) or lx.VERBS.get(w, ("", ""))[1] == "past":
                scan.past_forms.add(i)
            if w in _PERSONAL and scan.first_personal < 0:
                scan.first_personal = i
            if w in lx.SUBJECT_PRONOUNS and scan.first_subject < 0:
                scan.first_subject = i
        return scan

    def before(self, first: int, index: int) -> bool:
        return 0 <= first < index

    def requested_before(self, index: int) -> bool:
        return self.before(self.req_start, index)

    def initial(self, index: int) -> bool:
        """Is the verb at ``index`` the first real word of its clause (an imperative position)?"""
        if self.first_real < 0:
            negators = set(self.negators)
            self.first_real = next(
                (j for j, w in enumerate(self.words) if not (
                    w in lx.FILLERS
                    or w in lx.COORDINATORS
                    or w in lx.FORGET
                    or j in negators
                    or w in lx.PRECEDING_NEGATORS
                    or w in lx.CLAUSE_NEGATORS
                    or w in _INITIAL_SKIP
                    or j in self.req_cover
                )),
                len(self.words),
            )
        return index <= self.first_real


def _mood(clause: Clause, verb: _Verb, scan: _Scan, earlier: list[_Verb]) -> str:
    words = scan.words
    if verb.tense == "ask":
        return "request"
    if clause.start == "cond":
        return "conditional"
    if clause.start == "embedded":
        return "question"
    if clause.question and not clause.polite:
        return "question"
    requested = clause.carried_request or scan.requested_before(verb.index)
    if verb.tense == "past" and not requested:
        return "past"
    if clause.start == "reason":
        return "statement"
    if verb.tense == "gerund":
        return "request" if clause.polite else "statement"  # "would you mind saving it to x.md?"
    if scan.before(scan.first_past_aux, verb.index):
        return "past"
    if requested or clause.polite:
        return "request"
    if scan.initial(verb.index):
        if scan.past_time and scan.past_forms - {verb.index}:
            return "past"  # "export to report.csv failed yesterday"
        return "imperative"
    prev = earlier[-1] if earlier else None
    before = words[verb.index - 1] if verb.index > 0 else ""
    if prev is not None and before in _LINKS:
        return prev.mood  # "remember to save …"
    if before in _AND and verb.tense == "base":
        if prev is not None and prev.mood in GRANTING_MOODS:
            return prev.mood
        if not scan.before(scan.first_personal, verb.index):
            return "imperative"  # "generate a todo list and save it to out.txt"
    if verb.index == len(words) - 1 and not scan.before(scan.first_subject, verb.index):
        return "imperative"  # German verb-final infinitive: "die Zusammenfassung in x.md speichern"
    if scan.past_time:
        return "past"
    return "statement"


def _word_index(toks: list[Tok]) -> list[int]:
    """For each token, the index of the next word (files and punctuation sit between words)."""
    out: list[int] = []
    n = 0
    for t in toks:
        out.append(n)
        if t.kind == "word":
            n += 1
    return out


def _is_source(words: list[str], before: int) -> bool:
    """Does the file whose next word index is ``before`` follow a source preposition ("from x.csv")?"""
    j = before - 1
    while j >= 0 and words[j] in lx.DETERMINERS:
        j -= 1
    if j < 0 or words[j] not in lx.SOURCE_PREPS:
        return False
    return not (words[j] in ("of", "de", "von") and j > 0 and words[j - 1] in lx.CONTENT_NOUNS)


def _analyse(clause: Clause, earlier_files: list[str]) -> tuple[list[_Verb], bool]:
    """The clause's verbs with polarity, mood and targets; and whether its negation carries on."""
    words = clause.words
    verbs = _find_verbs(words)
    negators, clause_wide, forget = _negations(words)
    scan = _Scan.of(words, negators)
    first_negator = negators[0] if negators else -1
    done: list[_Verb] = []
    for verb in verbs:
        verb.negated = clause.carried_negation or clause_wide or scan.before(first_negator, verb.index)
        remembered = max((i for i, w in enumerate(words[: verb.index]) if w in lx.FORGET), default=-1)
        if forget and not clause_wide and not any(
            n < verb.index and (words[n] not in ("not", "nicht", "ne", "no", "pas") or n > remembered)
            for n in negators
        ):  # "don't forget to save" asks; "don't forget to NOT save" does not
            verb.negated = clause.carried_negation
        verb.mood = _mood(clause, verb, scan, done)
        done.append(verb)
    index = _word_index(clause.toks)
    starts = [v.index for v in verbs]
    named: list[tuple[int, str]] = []  # (word index, file) for the files of this clause
    for pos, tok in enumerate(clause.toks):
        if tok.kind != "file":
            continue
        at = index[pos]
        named.append((at, _normal_target(tok.text)))
        if not verbs:
            continue
        k = bisect_left(starts, at) - 1
        owner = verbs[k] if k >= 0 else verbs[0]
        if owner.lemma in CREATE_VERBS | REPLACE_VERBS and _is_source(words, at):
            continue  # "from data.csv", "the output of main.py": read, not written
        owner.files.append(tok.text)
    for verb in verbs:  # "read notes.md and update it": the pronoun is the file named before
        if verb.lemma not in REPLACE_VERBS or verb.files:
            continue
        after = words[verb.index + 1 : verb.index + 4]
        if not any(w in lx.FILE_PRONOUNS or w in lx.FILE_NOUNS for w in after):
            continue
        k = bisect_right([at for at, _ in named], verb.index) - 1
        if k >= 0:
            verb.files.append(named[k][1])
        elif earlier_files:
            verb.files.append(earlier_files[-1])
    carries = not verbs and bool(negators or clause_wide or clause.carried_negation) and not forget and not (
        set(words) <= _INTERJECTIONS
    )
    return verbs, carries


def _normal_target(name: str) -> str:
    text = name.strip().replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    return text.lstrip("/")


@dataclass(frozen=True)
class Analysis:
    """What the clause analysis found in the user's words."""

    actions: tuple[Action, ...]
    #: a granting save (or "write it to a file") that named no file
    unnamed_save: bool
    #: file names the user typed, in order
    files: tuple[str, ...]
    #: some sentence is a question (not a polite request)
    any_question: bool
    #: the sentences' words, lower-cased, as the tokens read them (files as typed)
    sentences: tuple[str, ...] = ()
    #: the line each sentence starts on
    lines: tuple[int, ...] = ()


_RETRACT_WORDS = frozenset(
    "do not dont t no nope wait actually never mind just kidding forget it that scratch cancel please on "
    "second thought thoughts nicht doch lieber vergiss es egal ne pas le fais laisse tomber non lo hagas "
    "olvídalo olvidalo mejor nada nowhere nirgends nirgendwo".split()
)
_RETRACT_CUES = frozenset("not dont no nope never kidding forget scratch cancel nicht vergiss pas tomber hagas "
                          "olvídalo olvidalo nowhere nirgends nirgendwo".split())


def _retracts(words: list[str]) -> bool:
    """Is this verbless clause a retraction of what came before ("don't", "never mind", "no wait")?"""
    return bool(words) and set(words) <= _RETRACT_WORDS and bool(set(words) & _RETRACT_CUES)


def analyse(words: str) -> Analysis:
    """The actions of ``words`` (the user's own words, after the provenance cuts)."""
    actions: list[Action] = []
    files: list[str] = []
    seen_files: set[str] = set()
    unnamed = False
    any_question = False
    texts: list[str] = []
    toks = tokens(words)
    for number, sent in enumerate(sentences(toks)):
        texts.append(" ".join(t.text for t in sent))
        carried_neg = False
        carried_req = False
        last: Action | None = None
        for clause in clauses(sent):
            clause.carried_negation = carried_neg
            clause.carried_request = carried_req
            any_question = any_question or (clause.question and not clause.polite)
            verbs, carried_neg = _analyse(clause, files)
            cwords = clause.words
            carried_req = not verbs and any(w in lx.FORGET for w in cwords) and bool(
                set(cwords) & (lx.PRECEDING_NEGATORS | lx.CLAUSE_NEGATORS)
            )
            clause_files = [_normal_target(t.text) for t in clause.toks if t.kind == "file"]
            if not verbs and actions and _retracts(cwords):  # "Save it to x.md. Actually, don't."
                actions = [Action(a.verb, True, a.mood, a.targets, a.clause, a.sentence) for a in actions]
                unnamed = False
                last = None
                carried_neg = False  # the retraction negates what came before, not what follows
                continue
            # "Save it to a.md, b.md" names a second target; "create out.md, don't touch notes.md" does not
            if not verbs and clause_files and last is not None and actions and actions[-1] is last and not carried_neg:
                extra = tuple(f for f in clause_files if f not in last.targets)
                actions[-1] = last = Action(
                    last.verb, last.negated, last.mood, last.targets + extra, last.clause, last.sentence
                )
            text = clause.text()
            for verb in verbs:
                targets = tuple(dict.fromkeys(_normal_target(f) for f in verb.files))
                action = Action(verb.lemma, verb.negated, verb.mood, targets, text, number)
                actions.append(action)
                last = action
                if action.grants and not targets and (
                    verb.lemma in SAVE_VERBS
                    or (verb.lemma in CREATE_VERBS and any(w in lx.FILE_NOUNS for w in cwords))
                ):
                    unnamed = True
            for f in clause_files:
                if f not in seen_files:
                    seen_files.add(f)
                    files.append(f)
    return Analysis(tuple(actions), unnamed, tuple(files), any_question, tuple(texts), tuple(line_starts(toks)))
