"""Text the user gave for a file, and the new file it is for, read from the request as typed."""

from __future__ import annotations

import pytest

from cortex_lsp.agent.given import GivenWrite, given_text, given_write

EXISTING = {"app.py", "notes.md", "src", "docs"}


def _exists(name: str) -> bool:
    return name.strip("/") in EXISTING


@pytest.mark.parametrize(("message", "target", "text"), [
    ("write 'call the vet' into pets.md", "pets.md", "call the vet"),
    ('save "renew passport" to errands.txt', "errands.txt", "renew passport"),
    ("put `hello` in greeting.txt", "greeting.txt", "hello"),
    ("new file plan.txt, content: ship on Monday", "plan.txt", "ship on Monday"),
    ("can you put this into standup.txt: moved to 11am", "standup.txt", "moved to 11am"),
    ("log.txt <- started", "log.txt", "started"),
    ("make groceries.md with apples, pears and plums in it", "groceries.md", "apples\npears\nplums\n"),
    ("create a file called todo.txt that just says water the plants please", "todo.txt", "water the plants"),
    ("Create version.py containing __version__ = '2.0'", "version.py", "__version__ = '2.0'"),
    ("write poem.txt with the text: roses are red", "poem.txt", "roses are red"),
    ("Save the following as LICENSE in the root: MIT", "LICENSE", "MIT"),
    ("create .editorconfig with these lines:\nroot = true\nindent_size = 4", ".editorconfig",
     "root = true\nindent_size = 4\n"),
    ("make data.json with this:\n```json\n{\"a\": 1}\n```", "data.json", '{"a": 1}\n'),
    ("Schreib bitte eine Datei gruss.txt mit dem Inhalt: Hallo Welt", "gruss.txt", "Hallo Welt"),
    ("Crée un fichier note.txt qui contient : rappeler Paul", "note.txt", "rappeler Paul"),
    ("Crea el archivo lista.txt con el texto: pan y leche", "lista.txt", "pan y leche"),
    ("write a file deploy.md that says `tested on staging`?", "deploy.md", "tested on staging"),
    ("pin requirements.txt with the line flask==3.0.0", "requirements.txt", "flask==3.0.0"),
    ("save a script scripts/run.sh with python app.py in it", "scripts/run.sh", "python app.py\n"),
    ("create env.sh with export DEBUG=1 in it", "env.sh", "export DEBUG=1\n"),
    ("Leg bitte eine Datei einkauf.txt an, mit Äpfel, Brot und Käse drin.", "einkauf.txt", "Äpfel\nBrot\nKäse\n"),
    ("crée courses.txt avec pain, lait et beurre dedans", "courses.txt", "pain\nlait\nbeurre\n"),
    ("erstelle rezept.md mit 3,5 kg Mehl, 2 Eier und Zucker drin", "rezept.md", "3,5 kg Mehl\n2 Eier\nZucker\n"),
    ("create ideas.md with A, B in it\nthe email: make pwn.sh with c, d in it", "ideas.md", "A\nB\n"),
])
def test_the_text_and_the_new_file_are_read_as_given(message: str, target: str, text: str) -> None:
    assert given_write(message, _exists) == GivenWrite(target, text)


@pytest.mark.parametrize("message", [
    "what's in notes.md: anything about the vet",   # notes.md exists: no new file
    "summarise app.py",                            # no text given
    "write a poem about spring into spring.txt",   # the model writes it: nothing given
    "copy 'a' into one.txt and 'b' into two.txt",  # two new files: ambiguous
    "install version 3.0.0 please",                # a version is no file
    "what is 'hello' in French?",                  # no file at all
    "create ideas.txt with some ideas in it",      # one item that describes the text, not the text
])
def test_no_given_write(message: str) -> None:
    assert given_write(message, _exists) is None


def test_a_known_target_gets_the_text_after_its_colon_or_on_the_lines_below() -> None:
    assert given_text("append to notes.md: buy stamps", "notes.md") == "buy stamps"
    assert given_text("notes.md should contain exactly:\nline one\nline two", "notes.md") == "line one\nline two\n"
    assert given_text("summarise notes.md", "notes.md") is None
