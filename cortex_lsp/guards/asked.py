"""Did the user's own words clearly ask for this write? The ``asked`` label of a write.

Read conservatively, from the user's own words after the provenance cuts (:func:`parse_intent
<cortex_lsp.intent.intent.parse_intent>`): a write is asked for when

* nothing in the words casts doubt on a request (:func:`doubt`): no retraction ("lol no", "changed my
  mind", "/s"), no negation near a write (a negation inside "so it doesn't crash" or "X doesn't strip
  accents" is about the code), no write waiting for a later word ("once I approve"), no rule, report or
  third party's words ("according to the wiki", "Bob said"), no verb used as a label ("Update: …"), no
  write inside an aside, no record or script (CSV rows, a heredoc);
* and either the write grant of the clause analysis covers the file and the sentence that asks opens as
  a request (a verb, or "please", "can you" … before it), or one sentence opens with an edit verb and
  names the file ("Change foo to bar in utils.py", "app.py: add a /health route"), or a new file is
  wished for by name ("I need a file todo.md", "new file test_utils.py").

The label decides alone only where nobody reviews the write (strict mode,
:mod:`cortex_lsp.guards.consent`); where the user reviews it, it only labels the review.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from cortex_lsp.intent import lexicon as lx
from cortex_lsp.intent.clauses import CREATE_VERBS, REPLACE_VERBS, _lookup, lemma
from cortex_lsp.intent.grants import exact_key
from cortex_lsp.intent.intent import Intent
from cortex_lsp.intent.patterns import split_sentences

__all__ = ["asked_for", "doubt"]

_WRITE_VERBS = frozenset(CREATE_VERBS | REPLACE_VERBS)

# Retractions, jokes and sarcasm anywhere in the words: the request is not clear.
_RETRACTION = re.compile(
    r"(?:^|[\s,.;:!?(])(?:lol|lmao|rofl|jk|j/k|/s|/j|haha\w*|just\s+kidding|kidding|not\s+really|"
    r"changed\s+my\s+mind|change\s+of\s+plans?|never\s*mind|nvm|scratch\s+that|forget\s+(?:it|that|about\s+it)|"
    r"ignore\s+(?:that|this|it|the\s+(?:last|previous|above|first))|leave\s+it(?:\s+as\s+(?:it\s+)?is|\s+alone|\s+be)?|"
    r"nah|nope|no\s+thanks|(?:obviously|just|only|it'?s|that'?s|was|is)\s+(?:a\s+)?joke|joking|sarcas\w*|on\s+second\s+thought|actually,?\s+(?:no|don't|do\s+not|leave|wait|skip)|no\s+wait|wait,?\s+no|psych|"
    r"as\s+if|yeah\s+right|sure\s+thing,?\s+not|"
    r"laat\s+maar|laat\s+(?:het\s+)?(?:zo|maar|staan)|laat\s+zitten|toch\s+niet|"
    r"deixa\s+(?:pra|para)\s+l[áa]|deixa\s+(?:assim|quieto|estar)|esquece|esque[çc]a|"
    r"lascia\s+(?:stare|perdere|cos[ìi])|lasciamo\s+perdere|"
    r"lass\s+(?:es|das|mal)|vergiss\s+(?:es|das)|doch\s+nicht|"
    r"laisse\s+tomber|oublie\s+(?:ça|ca|ce)|tant\s+pis|"
    r"olv[íi]dalo|d[ée]jalo|mejor\s+no|"
    r"gl[öo]m\s+det|strunt\s+i\s+det|"
    r"niewa[żz]ne|zostaw|nie\s+r[óo]b)(?=$|[\s,.;:!?)])",
    re.IGNORECASE,
)
# Negations, in the languages the words are read in; "don't forget to" is a request.
_NEGATION = re.compile(
    r"n't\b|\b(?:"
    + "|".join(sorted(map(re.escape, lx.NEGATION_WORDS), key=lambda w: (-len(w), w)))
    + "|"
    + "|".join(rf"{re.escape(stem)}\w*" for stem in lx.NEGATION_STEMS)
    + r"|n')\b",
    re.IGNORECASE,
)
_FORGET_NOT = re.compile(
    r"\b(?:do\s+not|don't|dont)\s+forget\b|\bvergiss\s+nicht\b|\bn'oublie\s+pas\b|\bno\s+olvides\b|"
    r"\bn[ãa]o\s+(?:se\s+)?esque[çc]a\b|\bnon\s+dimenticare\b|\bvergeet\s+niet\b|\bgl[öo]m\s+inte\b|"
    r"\bnie\s+zapomnij\b",
    re.IGNORECASE,
)
# A subordinate clause after the request: "so it doesn't crash", "that never returns None".
_SUBORDINATE = re.compile(
    r"\b(?:so|that|which|who|where|when|whose|because|since|until|unless|while|"
    r"damit|dass|weil|wenn|die|der|welche\w*|"
    r"pour|qui|que|quand|afin|"
    r"para|porque|cuando|donde|"
    r"zodat|dat|omdat|wanneer|"
    r"per|che|perch[ée]|affinch[ée]|quando|"
    r"att|s[åa]|som|eftersom|"
    r"[żz]eby|aby|kt[óo]r\w*|gdy)\b",
    re.IGNORECASE,
)
# A write told as a rule, a report or a statement, not asked for now.
_STATEMENT = re.compile(
    r"\b(?:according\s+to|as\s+per|per\s+the|whenever|every\s+time|each\s+time|always|usually|normally|"
    r"typically|generally|in\s+general|gets?\s+harder|is\s+(?:hard|easy)|"
    r"(?-i:TODO|FIXME|XXX|HACK)(?![.\w])|(?:todo|fixme)\s*:|note\s+to\s+self|"
    r"laut|gem[äa]ss|selon|d'apr[èe]s|seg[úu]n|volgens|segundo|secondo|enligt|wed[łl]ug)\b",
    re.IGNORECASE,
)
# The write waits for the user's own later word: "once I approve", "if I confirm", "wenn ich …"
_DEFERRED = re.compile(
    r"\b(?:if|once|after|when|unless|until|as\s+soon\s+as|wenn|falls|sobald|nachdem|si|quand|lorsque|cuando|"
    r"se|quando|als|zodra|om|n[äa]r|je[śs]li|gdy|kiedy)\s+(?:i|we|ich|wir|je|nous|yo|ik|wij|we|eu|n[óo]s|io|"
    r"jag|vi|ja|my)\b",
    re.IGNORECASE,
)
# Someone else's words: a write after "Bob says", "the ticket insists", "my boss wants me to"
_REPORTED = re.compile(
    r"\b(?:said|says|say|told|tells|wrote|writes|suggested|suggests|mentioned|claims|claimed|recommended|"
    r"recommends|insists|insisted|wants|wanted|asked|meinte|meint|sagt|sagte|schreibt|dit|disait|dijo|dice|"
    r"zei|zegt|disse|diz|ha\s+detto|sa|sade|powiedział|mówi)\b",
    re.IGNORECASE,
)
_ASIDE = re.compile(r"[(\[{][^)\]}]*[)\]}]")
_HEREDOC = re.compile(r"<<-?\s*['\"]?\w+|^\s*(?:cat|echo|tee|printf)\b", re.IGNORECASE | re.MULTILINE)
_CSV_LINE = re.compile(r"^[^,\n]*,\S[^,\n]*,\S[^\n]*$", re.MULTILINE)
_LABEL = re.compile(r"^\W*(?P<word>[^\W\d_]+):", re.UNICODE)
# The words a request may open with before its verb.
_OPENERS = frozenset(
    "please pls plz kindly just now then also and so ok okay first next finally quickly simply go ahead hey hi "
    "hello cortex you mind let s lets make sure be to yo ya alright right cool great thanks thx mi me "
    "bitte jetzt dann und auch einfach mal nun noch zuerst kannst könntest kannst du sie ich möchte will brauche "
    "würdest magst hätte gern gerne "
    "s il te vous plaît plait et puis ensuite aussi maintenant alors peux pouvez pourrais pourriez tu je veux "
    "voudrais veuillez merci de "
    "por favor y luego ahora también tambien puedes podrías podrias quiero quisiera necesito que "
    "alsjeblieft graag kun kan je jij wil wilt ook nu dan en "
    "pode podes poderia você voce também agora e "
    "per favore puoi potresti ora anche poi "
    "snälla kan du vill också nu sedan "
    "proszę prosze czy możesz mozesz teraz też i "
    "a an the new file called named".split()
)
_NAME = r"[\w./-]+\.[A-Za-z][A-Za-z0-9]{0,9}"
# "I need a file todo.md with …", "give me a new file notes.md": a new file asked for without a write verb
_WISH = re.compile(
    rf"^\W*(?:(?:i|we)(?:\s+(?:need|want|would\s+like)|'d\s+like)|give\s+me|make\s+me|"
    rf"ich\s+(?:brauche|möchte|will)|je\s+(?:veux|voudrais)|quiero|necesito|ik\s+wil|preciso\s+de|"
    rf"voglio|potrzebuję)\s+(?:a|an|une?|eine?n?|un[ao]?|een|um|uma|jag)?\s*(?:new\s+|neue\w*\s+|nouveau\s+)?"
    rf"(?:(?:file|datei|fichier|archivo|bestand|arquivo|ficheiro|plik)\s+(?:called\s+|named\s+|namens\s+)?)?"
    rf"[`'\"]?(?P<name>{_NAME})",
    re.IGNORECASE,
)
# "…, new file test_utils.py", "todo.md → new file": a new file named as such
_NEW_FILE = re.compile(
    rf"\b(?:new|neue|nouveau|nuevo|nieuw|novo|nuovo|nowy|ny)\s+(?:file|datei|fichier|archivo|bestand|arquivo|plik|fil)"
    rf"\s*:?\s*[`'\"]?(?P<after>{_NAME})|(?P<before>{_NAME})[`'\"]?\s*(?:→|->|=>|:|—|-)\s*(?:a\s+)?new\s+file\b",
    re.IGNORECASE,
)


def _sentences(words: str) -> list[str]:
    return split_sentences(words, at_semicolon=False)


# "X doesn't / isn't / won't …" after a subject that is not the user
_ABOUT_CODE = re.compile(r"(?<!\bi)(?<!\bwe)(?<!\byou)\s+(?:does|is|are|was|were|has|have|did|will|can|should)\s*$",
                         re.IGNORECASE)
_WRITE_NOUN = re.compile(r"\s+(?:new\s+)?(?:changes?|edits?|writes?|files?|saving|touching|wait|way|need)\b",
                         re.IGNORECASE)


_CONTENT_BEFORE = re.compile(
    r"\b(?:the\s+text|the\s+words?|saying|containing|that\s+says|den\s+text|le\s+texte|el\s+texto)\s*"
    r"[:\"'`]?\s*(?:do\s+|does\s+)?$", re.IGNORECASE)
_PRONOUNS = frozenset("it them this that lo la los las le les me te se es sie ihn".split())


def _negated_near_write(sentence: str) -> bool:
    """A negation in ``sentence`` that is not inside a subordinate clause after the request
    ("fix it so it doesn't crash") and not "don't forget to"."""
    text = _FORGET_NOT.sub(" ", sentence)
    for neg in _NEGATION.finditer(text):
        before = text[: neg.start()]
        if neg.group(0).lower() == "pas" and not before.strip():
            continue  # Dutch "Pas … aan" (adjust), not French "pas"
        after = re.findall(r"[^\W\d_]+", text[neg.end():].lower())[:2]
        if (_ABOUT_CODE.search(before) and not _ABOUT_CODE.match(before)
                and not any(lemma(w) in _WRITE_VERBS for w in after)):
            continue  # "slugify in utils.py doesn't strip accents": a fact about the code
        if _CONTENT_BEFORE.search(before):
            continue  # "with the text do not disturb": the words are the file's content
        nxt = next((w for w in re.findall(r"[^\W\d_]+", text[neg.end():].lower()) if w not in ("to", "be", "ever")), "")
        if lemma(nxt) is not None and lemma(nxt) not in _WRITE_VERBS | {"delete", "rename", "move"}:
            continue  # "but don't open it": another verb is negated, not the write
        following = re.findall(r"[^\W\d_]+", text[neg.end():].lower())[:1]
        if (neg.group(0).lower() in ("no", "without") and _edit_verb(before) and not _WRITE_NOUN.match(text, neg.end())
                and following and following[0] not in _PRONOUNS and lemma(following[0]) is None):
            continue  # "sort the functions, no behaviour change": how, not whether
        sub = list(_SUBORDINATE.finditer(before))
        if sub and any(lemma(w.lower()) is not None for w in re.findall(r"[^\W\d_]+", before[: sub[-1].start()])):
            continue  # inside "… so it does not …" after a verb
        return True
    return False


def doubt(words: str) -> str | None:
    """Why the words do not clearly ask for a write (a retraction, a negation, an aside, a rule or a
    record instead of a request), else ``None``."""
    if _RETRACTION.search(words):
        return "the words take the request back or do not mean it"
    if _HEREDOC.search(words) or _CSV_LINE.search(words):
        return "the words hold a record or a script, not a request"
    for sentence in _sentences(words):
        if _negated_near_write(sentence):
            return "the words hold a negation"
        if _DEFERRED.search(sentence):
            return "the write waits for something the user will say later"
        reported = _REPORTED.search(sentence)
        if reported and any(_lookup(w) and _lookup(w)[0] in _WRITE_VERBS  # type: ignore[index]
                            for w in re.findall(r"[^\W\d_]+", sentence[reported.end():].lower())):
            return "the write is someone else's words"
        if _STATEMENT.search(sentence):
            return "the words state a rule or a report, not a request"
        label = _LABEL.match(sentence)
        if label and (lemma(label.group("word").lower()) is not None):
            return "a write verb is a label before a colon"
    for aside in _ASIDE.finditer(words):
        if any(lemma(w.lower()) in _WRITE_VERBS for w in re.findall(r"[^\W\d_]+", aside.group(0))):
            return "the write is in an aside"
    return None


# Verbs whose imperative is split from its particle ("Mets à jour", "Werk … bij", "Füge … hinzu")
_SPLIT_VERBS = {
    "mets": "update", "mettez": "update", "werk": "update", "pas": "update", "voeg": "append",
    "füge": "append", "füg": "append", "fuege": "append", "trage": "append", "lägg": "append", "schreib": "write",
}
# Imperatives that edit a file without a write verb of the lexicon ("bump retries in config.json",
# "turn off debug mode in app.py", "patch utils.py")
_EDIT_WORDS = frozenset(
    "bump set patch restructure convert sort turn start tidy reformat format clean split implement insert rework "
    "adjust tweak rearrange reorganize reorganise enable disable increase decrease raise lower document comment "
    "annotate draft compose prepare build merge combine introduce initialize initialise rename swap "
    "crei crea créer создай создайте сохрани сохраните измени исправь обнови добавь".split()
)
# Imperatives that do something else first ("count the rows in sales.csv and write the result to out.txt")
_OTHER_IMPERATIVES = frozenset(
    "count take give look check compare collect gather pull compile sum extract parse analyze analyse "
    "review go use read summarize list".split()
)
# A polite question that asks for something: "Kannst du … speichern?", "Can you …?": a modal in the
# second person, or one followed by "you"
_ASK_STARTS = frozenset(
    "kannst könntest würdest magst peux pouvez pourrais pourriez puedes podrías podrias podéis podeis "
    "kunt wilt podes puoi potresti potete możesz mozesz".split()
)
_MODALS = frozenset("can could would will können könnten würden kun kan wil pode poderia puede podría podria".split())
_YOU = frozenset("you u sie je jij você voce usted".split())
_WANT = re.compile(r"^\W*(?:i|we)\s+(?:need|want|would\s+like|'d\s+like)\s+(?:you\s+to\s+)?", re.IGNORECASE)


def _first_verb(sentence: str) -> str | None:
    """The lemma of the verb a sentence opens with (after fillers such as "please", "can you"), or
    ``"ask"`` for a polite question, else ``None`` (the sentence is a statement, not a request)."""
    text = _FORGET_NOT.sub(" ", _WANT.sub("", sentence.lower()))
    # "write-protect" is one word, not "write" ("peux-tu", "enregistre-le" keep their pronoun)
    text = re.sub(r"(?<=[^\W\d_])-(?!(?:tu|vous|le|la|les|moi|nous|il|elle|je|on|lui|leur)\b)(?=[^\W\d_])", "", text)
    words = re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)?", text)
    for i, word in enumerate(words):
        if word in _SPLIT_VERBS:
            return _SPLIT_VERBS[word]
        if word in _EDIT_WORDS:
            return "update"
        found = _lookup(word)
        if found is not None:
            # "mind adding …": a gerund after "mind" is the request
            return found[0] if found[1] == "base" or (i and words[i - 1] == "mind") else None
        if word in _OTHER_IMPERATIVES:
            return "other"
        if word in _ASK_STARTS or (word in _MODALS and i + 1 < len(words) and words[i + 1] in _YOU):
            return "ask"
        if word not in _OPENERS:
            return None
    return None


def _opens_as_request(sentence: str) -> bool:
    """Does the sentence open with a verb or a request (after fillers such as "please", "can you"), or
    does a later clause of it, marked as a request ("…, go ahead and change it")?"""
    clauses = _CLAUSE_BREAK.split(sentence)
    return _first_verb(clauses[0]) is not None or any(_MARKED.search(c) and _first_verb(c) for c in clauses[1:])


_SOURCE_BEFORE = re.compile(
    r"\b(?:for|from|of|like|using|with|für|von|aus|pour|de|du|para|desde|voor|van|per|da|dla|z|från|för)\s+[`'\"]?$",
    re.IGNORECASE)


def _plain_reading(sentences: Sequence[str], key: str, exists: bool) -> bool:
    """An edit asked in one sentence that opens with a write verb (or a polite request holding one) and
    names the file, not as a source when another file is named: "Change foo to bar in utils.py"."""
    for sentence in sentences:
        if any(s is not sentence and s.rstrip().endswith("?") for s in sentences):
            return False
        folded = sentence.casefold()
        at = folded.find(key)
        if at < 0:
            continue
        others = [m for m in re.finditer(_NAME, sentence) if exact_key(m.group(0)).casefold() != key]
        if others and _SOURCE_BEFORE.search(sentence[:at]):
            continue
        labelled = _FILE_LABEL.match(sentence)
        if labelled and exact_key(labelled.group("name")).casefold() == key:
            sentence = sentence[labelled.end():]  # "app.py: add a /health route"
        # "put a main guard at the bottom of app.py", "log the decisions in notes.md": an edit of the file
        into = bool(_INTO_FILE.search(sentence[:at])) if exists else False
        clauses = _CLAUSE_BREAK.split(sentence)
        # a later clause asks only when the sentence opens as a request or the clause is marked as one
        edit = exists and not into
        if _edit_verb(clauses[0], edit) or any(
                _edit_verb(c, edit) and (_first_verb(clauses[0]) or _MARKED.search(c)) for c in clauses[1:]):
            return True
    return False


_FILE_LABEL = re.compile(rf"^\W*(?P<name>{_NAME})[`'\"]?\s*(?::|→|->|—|–)\s*")
_CLAUSE_BREAK = re.compile(r"\s*(?:[,;—–]|\band\s+then\b|\bthen\b)\s*", re.IGNORECASE)
_MARKED = re.compile(r"\b(?:please|pls|plz|go\s+ahead|kindly|bitte|por\s+favor|s'il\s+te\s+pla[îi]t)\b", re.IGNORECASE)


def _edit_verb(clause: str, exists: bool = False) -> bool:
    """Does the clause open with a write or edit verb (or a polite request holding one)? For an existing
    file only a verb that changes a file counts ("save it to notes.md" asks for a new file)."""
    wanted = _CHANGE_VERBS if exists else _WRITE_VERBS | {"update", "rename"}
    verb = _first_verb(clause)
    if verb == "ask":
        words = re.findall(r"[^\W\d_]+", clause.lower())
        return any(lemma(w) in wanted or _SPLIT_VERBS.get(w) in wanted or w in _EDIT_WORDS for w in words)
    return verb in wanted


_CHANGE_VERBS = frozenset(REPLACE_VERBS | {"update", "rename"})
_INTO_FILE = re.compile(
    r"\b(?:in|into|inside|at\s+the\s+(?:very\s+)?(?:top|bottom|end|start|beginning)\s+of|"
    r"to\s+the\s+(?:very\s+)?(?:top|bottom|end)\s+of)"
    r"\s+(?:the\s+file\s+)?[`'\"]?$",
    re.IGNORECASE)


def _wished(intent: Intent, key: str) -> bool:
    """A new file asked for by name without a write verb ("I need a file todo.md", "new file x.py")."""
    for sentence in _sentences(intent.words):
        wish = _WISH.match(sentence)
        if wish and exact_key(wish.group("name")).casefold() == key:
            return True
        for new in _NEW_FILE.finditer(sentence):
            if exact_key(new.group("after") or new.group("before")).casefold() == key:
                return True
    return False


def asked_for(intent: Intent, relative: str, *, exists: bool, written: Collection[str] = ()) -> bool:
    """Did the user's own words (``intent``, their one reading) clearly ask for writing ``relative``
    (see the module docstring)?"""
    if doubt(intent.words) is not None:
        return False
    key = exact_key(relative).casefold()
    if not exists and _wished(intent, key):
        return True
    sentences = _sentences(intent.words)
    if intent.write_grant.check(relative, exists=exists, written=written) is not None:
        return "\n" not in intent.words.strip() and _plain_reading(sentences, key, exists)
    asking = [a for a in intent.actions if a.grants and a.verb in _WRITE_VERBS
              and (any(exact_key(t).casefold() == key for t in a.targets) or not a.targets)]
    for action in asking:
        own = [s for s in sentences if any(exact_key(t).casefold() in s.casefold() for t in action.targets)]
        if action.targets and own and not any(_opens_as_request(s) for s in own):
            return False
    return bool(asking)


