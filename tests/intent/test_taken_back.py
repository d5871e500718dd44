"""A write the request's own later clause takes back (:mod:`cortex_lsp.intent.taken_back`).

"Create out.md with the text hi, but don't save it" used to grant a write of out.md: the clause analysis
read "but don't save it" as a negated save of nothing. Both directions, in the four languages: a later
bare negated write of the same (or an unnamed "it"/"the file") target grants nothing; a negation inside
the text to write, or about another verb or another object, keeps exactly the grant it had.
"""

from __future__ import annotations

import pytest

from cortex_lsp.intent.intent import describe_actions, parse_intent

#: (the user's words, the files still granted to be created, to be replaced)
TAKEN_BACK: list[tuple[str, set[str], set[str]]] = [
    ("Create out.md with the text hi, but don't save it", set(), set()),
    ("Create out.md with the text hi, but do not write it to disk", set(), set()),
    ("Create out.md with the text hi, without saving it", set(), set()),
    ("Write hi to out.md, don't save it yet", set(), set()),
    ("Write hi to out.md but never write the file", set(), set()),
    ("Write hi to out.md but never write the file to disk", set(), set()),
    ("Create out.md with the text hi. Don't save it.", set(), set()),
    ("Write hi to out.md. Don't save it yet, I want to review it first.", set(), set()),
    ("Create out.md with the text hi, but I don't want you to save it", set(), set()),
    ("Create out.md with the text hi, but please don't save it for now", set(), set()),
    ("Save the report to out.md, but avoid saving it anywhere", set(), set()),
    ("Create out.md with the text hi, but don't save out.md", set(), set()),
    ("Create out.md and notes.md, but don't save notes.md", {"out.md"}, set()),
    ("Create a file named sign.txt with the text do not disturb, but don't save it", set(), set()),
    ("Overwrite notes.md with hi, but don't replace it yet", set(), set()),
    ("Erstelle out.md mit dem Text hallo, aber speichere sie nicht", set(), set()),
    ("Erstelle out.md mit dem Text hallo, aber nicht speichern", set(), set()),
    ("Erstelle out.md mit dem Text hallo, ohne sie zu speichern", set(), set()),
    ("Erstelle out.md mit dem Text hallo, aber speichere die Datei noch nicht", set(), set()),
    ("Crée out.md avec le texte salut, mais ne l'enregistre pas", set(), set()),
    ("Crée out.md avec le texte salut, mais ne l'enregistre pas encore", set(), set()),
    ("Crée out.md avec le texte salut, sans l'enregistrer", set(), set()),
    ("Crée out.md avec le texte salut, mais ne sauvegarde pas le fichier", set(), set()),
    ("Crea out.md con el texto hola, pero no lo guardes", set(), set()),
    ("Crea out.md con el texto hola, pero no lo guardes todavía", set(), set()),
    ("Crea out.md con el texto hola, sin guardarlo", set(), set()),
    # second thoughts and "anything to disk"
    ("Create out.md with the text hi but don't actually save it", set(), set()),
    ("Create out.md with the text hi, but don't write anything to disk", set(), set()),
    ("Create out.md with the text hi... on second thought, don't save it", set(), set()),
    ("Erstelle out.md mit dem Text hallo, aber speichere sie doch nicht", set(), set()),
    ("Crea out.md con el texto hola, pero mejor no lo guardes", set(), set()),
    ("Crée out.md avec le texte salut, mais finalement ne l'enregistre pas", set(), set()),
    ("Create out.md with the text hi, but do NOT save the file yet.", set(), set()),
    ("Write hi to out.md — but don't save", set(), set()),
]

#: (the user's words, the files granted to be created, to be replaced): as before the rule, except that
#: a negated clause no longer adds its file to the write before it (marked "no longer")
STILL_GRANTS: list[tuple[str, set[str], set[str]]] = [
    # a negation inside the text to write
    ("Create out.md with the text do not disturb", {"out.md"}, set()),
    ("Create a file named sign.txt with the text do not disturb.", {"sign.txt"}, set()),
    ("Write 'never give up' to motto.txt", {"motto.txt"}, set()),
    ("Create out.md with the text never again", {"out.md"}, set()),
    ("Create out.md with the text: do not save it", {"out.md"}, set()),
    ('Create out.md with the text "do not save it"', {"out.md"}, set()),
    ("Create out.md but don't write anything in it", {"out.md"}, set()),
    # a negation about another verb
    ("Save it to out.md but don't open it", {"out.md"}, set()),
    ("Save it to out.md, but don't print it", {"out.md"}, set()),
    ("Write the summary to out.md but do not include the intro", {"out.md"}, set()),
    ("Create out.md with the text hi, but don't make it long", {"out.md"}, set()),
    # a negation about another object or another place
    ("Create out.md, don't touch notes.md", {"out.md"}, set()),  # no longer also notes.md
    ("Create out.md with the text hi, but don't save notes.md", {"out.md"}, set()),
    ("Create out.md with the text hi, but don't save it to notes.md", {"out.md"}, set()),
    ("Create out.md, but never write it to notes.md", {"out.md"}, set()),
    ("Save the summary to out.md but don't save the log", {"out.md"}, set()),
    ("Write the report to out.md but don't write it in French", {"out.md"}, set()),
    ("Save notes to out.md. Never write the file anywhere else.", {"out.md"}, set()),
    ("Save the summary to out.md; don't save it twice", {"out.md"}, set()),
    # a negated replace keeps a create and an append
    ("Save the summary to out.md, but don't overwrite it", {"out.md"}, set()),
    ("Append hi to log.md but never overwrite it", {"log.md"}, {"log.md"}),
    ("Update notes.md with a summary, but don't overwrite it", set(), {"notes.md"}),
    # a negation before the write is no take-back
    ("Don't save it to notes.md, save it to out.md", {"out.md"}, set()),
    ("Ne l'enregistre pas dans notes.md, enregistre-le dans out.md", {"out.md"}, set()),  # no longer notes.md
    ("Enregistre le résumé dans resume.md, sans la sauvegarde", {"resume.md"}, set()),
    ("Guarda el resumen en out.md, pero no lo abras", {"out.md"}, set()),
    ("Speichere die Zusammenfassung in out.md, aber öffne sie nicht", {"out.md"}, set()),
]


def _show(message: str) -> str:
    return f"{message!r}: {describe_actions(parse_intent(message))}"


def test_tables_are_big_enough() -> None:
    assert len(TAKEN_BACK) >= 20
    assert len(STILL_GRANTS) >= 20


@pytest.mark.parametrize(("message", "create", "replace"), TAKEN_BACK + STILL_GRANTS)
def test_the_grant_is_what_the_whole_request_allows(message: str, create: set[str], replace: set[str]) -> None:
    grant = parse_intent(message).write_grant
    assert set(grant.create) == create, _show(message)
    assert set(grant.replace) == replace, _show(message)
    assert not grant.unnamed_create, _show(message)


@pytest.mark.parametrize("message", [m for m, c, r in TAKEN_BACK if not c and not r])
def test_a_taken_back_write_refuses_the_file(message: str) -> None:
    grant = parse_intent(message).write_grant
    assert grant.empty, _show(message)
    assert grant.check("out.md", exists=False) is not None


def test_an_unnamed_save_taken_back_grants_no_file() -> None:
    assert parse_intent("Save a summary").write_grant.unnamed_create
    assert parse_intent("Save a summary, but don't write it to a file").write_grant.empty
    assert parse_intent("Save a summary, but don't open it").write_grant.unnamed_create
    assert parse_intent("Save a summary, but don't save it to notes.md").write_grant.unnamed_create
