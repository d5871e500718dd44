"""A write the request's own later clause takes back: "Create out.md with the text hi, but don't save it".

The clause analysis (:mod:`cortex_lsp.intent.clauses`) reads each clause on its own, so "create out.md"
grants and the later "but don't save it" is a negated save of nothing. :func:`take_back` reads them
together: a negated create/replace verb in a *later* clause whose object is bare — a pronoun ("it",
"that", "es", "le", "lo"), a file noun ("the file", "a file", "die Datei"), the named file itself or
nothing at all ("without saving", "nicht speichern") — with only time and place words around it ("yet",
"to disk", "anywhere", "noch", "sur le disque") takes the grant of the earlier write back:

* a named file ("but don't save out.md") takes back only that file;
* otherwise every earlier granting write loses its grant (when unsure, nothing is written);
* a negated save/write/create takes back every earlier write; a negated replace/update/overwrite or
  append only an earlier write with the same verb or a whole replace/overwrite ("save it to out.md but
  don't overwrite it" still creates out.md when it does not exist, "append to log.md but never
  overwrite it" still appends).

A negation about something else keeps the grant: another verb ("but don't open it"), another object
("but don't save the log", "don't write it in French"), a negation inside the text to write ("with the
text do not disturb": no write verb is negated there). Pure; a few passes over the (few) actions.
"""

from __future__ import annotations

from dataclasses import replace

from cortex_lsp.intent import lexicon as lx
from cortex_lsp.intent.clauses import CREATE_VERBS, REPLACE_VERBS, Action, Analysis, lemma
from cortex_lsp.intent.grants import path_key
from cortex_lsp.intent.tokens import tokens

__all__ = ["take_back"]

_WRITES = CREATE_VERBS | REPLACE_VERBS
#: a negated one of these takes back every earlier write; the others only the same verb and these
_WRITES_ANEW = CREATE_VERBS - REPLACE_VERBS
_WHOLE = ("replace", "overwrite")

#: what may stand around the negated verb of a bare take-back (besides negators, joiners, fillers,
#: determiners, file nouns and the write verbs themselves)
_BARE = frozenset(
    # pronouns for the file or the text
    "it that this them those these ihn sie es das dies le la les lo los las eso esto ello ça cela ceci "
    # who says it, and the modal frame: "I don't want you to save it", "you should not write it"
    "i you we should must shall will would can could need needs want to be from zu bitte por favor "
    # time: "yet", "for now", "right now", "noch nicht", "pas encore", "todavía no"
    "yet now anymore again at all right for moment today either still until later noch jetzt sofort gleich "
    "erst encore maintenant pour instant tout de suite todavía todavia aún aun ahora ya momento "
    # place: "to disk", "anywhere", "auf die Festplatte", "sur le disque", "en el disco"
    "in into on onto anywhere somewhere there here disk drive folder directory workspace repo repository "
    "auf in festplatte platte ordner irgendwo sur dans disque dossier nulle part en al disco carpeta "
    "ningún ninguna lado parte "
    # second thoughts: "don't actually save it", "no wait", "speichere sie doch nicht", "mejor no lo guardes"
    "actually really even ever wait second thought thoughts mind doch lieber besser finalement plutôt "
    "mejor".split()
)
#: "don't write anything to disk" takes back; "don't write anything in it" asks for an empty file
_ANYTHING = frozenset("anything etwas algo".split())
_STORAGE = frozenset("disk drive disque disco festplatte platte".split())
_CLITICS = frozenset(("le", "la", "les"))
_NEGATION_WORDS = lx.PRECEDING_NEGATORS | lx.CLAUSE_NEGATORS | {"do", "does", "ne", "pas", "no"}
_FRAME = _NEGATION_WORDS | lx.SPLITTERS | lx.COORDINATORS | lx.FILLERS | lx.DETERMINERS | lx.FILE_NOUNS | _BARE


def _bare_object(action: Action) -> tuple[str, ...] | None:
    """The files a bare negated write names (``()`` for a pronoun, a file noun or no object), or
    ``None`` when its clause says more than "don't write it (yet, to disk)"."""
    named: list[str] = []
    before = ""
    toks = tokens(action.clause)
    frame = _FRAME | _ANYTHING if any(t.text in _STORAGE for t in toks) else _FRAME
    for tok in toks:
        if tok.kind == "file":
            named.append(tok.text)
        elif tok.kind == "word":
            # "the log", "my save" are nouns; "(ne) l'enregistre", "(sans) l'enregistrer" are verbs
            verb = lemma(tok.text) in _WRITES and (before not in lx.DETERMINERS or before in _CLITICS)
            if tok.text not in frame and not verb:
                return None
            before = tok.text
    return tuple(named)


def _takes_back(negated: Action, earlier: Action) -> bool:
    return negated.verb in _WRITES_ANEW or earlier.verb in (negated.verb, *_WHOLE)


def take_back(found: Analysis) -> Analysis:
    """``found`` with the grants of earlier writes taken back by a later bare negated write."""
    actions = list(found.actions)
    for j, negated in enumerate(found.actions):
        if not negated.negated or negated.verb not in _WRITES or negated.mood in ("question", "conditional"):
            continue
        earlier = [
            i for i in range(j)
            if actions[i].grants and actions[i].verb in _WRITES
            and (actions[i].sentence, actions[i].clause) != (negated.sentence, negated.clause)
            and _takes_back(negated, actions[i])
        ]
        if not earlier:
            continue
        named = _bare_object(negated)
        if named is None:
            continue
        gone = {path_key(n) for n in named}
        for i in earlier:
            a = actions[i]
            if gone and not a.targets:
                continue  # "save a summary, but don't save it to notes.md": the unnamed save stays
            kept = tuple(t for t in a.targets if path_key(t) not in gone) if gone else ()
            if not kept:
                actions[i] = replace(a, negated=True)  # "not create -> out.md": the whole write is taken back
            elif kept != a.targets:
                actions[i] = replace(a, targets=kept)  # "but don't save notes.md": the other files stay
    if actions == list(found.actions):
        return found
    unnamed = found.unnamed_save and any(a.grants and not a.targets and a.verb in CREATE_VERBS for a in actions)
    return replace(found, actions=tuple(actions), unnamed_save=unnamed)
