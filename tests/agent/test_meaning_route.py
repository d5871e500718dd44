"""The word tables and the meaning combined: meaning fills in where the tables found no call, slots
come from the user's words and the open folder, and meaning adds no tool the words and the folder left
no slot for; a write it proposes is only of text the user gave, to a new file."""

from __future__ import annotations

import pytest

from cortex_lsp.agent.docs_match import DocsMatch
from cortex_lsp.agent.meaning import Meaning
from cortex_lsp.agent.meaning_route import combine
from cortex_lsp.agent.project_view import DocSection, ProjectView
from cortex_lsp.agent.router import Route, read_intent, route
from cortex_lsp.agent.runnability import inline_code
from cortex_lsp.agent.wordmath import arithmetic_from_words

TOOLS = ["read_file", "list_dir", "search_files", "write_file", "calculator", "python_exec", "doc_search"]


def meant(kind: str, *, sure: bool = True) -> Meaning:
    return Meaning(route=kind if sure else "direct", nearest=kind, score=0.6, margin=0.2 if sure else 0.0,
                   runner_up="direct")


def decide(message: str, meaning: Meaning | None, available: list[str] = TOOLS) -> Route:
    intent = read_intent(message)
    ruled = route(intent, message=message, available=available)
    return combine(ruled, meaning, intent, message=message, available=available)


def test_a_folder_overview_lists_the_folder_the_words_name() -> None:
    chosen = decide("give me a quick overview of what's in the src folder", meant("list"))
    assert [(c.tool, c.arguments) for c in chosen.calls] == [("list_dir", {"path": "src"})]
    assert not chosen.prose  # the listing is the answer
    assert decide("give me a quick overview of what's in the src folder", None).kind != "tools"


def test_a_docs_question_searches_the_documents() -> None:
    chosen = decide("Where do the docs explain how to roll back a release?", meant("doc_search"))
    assert [c.tool for c in chosen.calls] == ["doc_search"] and chosen.question


def test_code_typed_without_a_fence_runs_and_opens_python() -> None:
    chosen = decide("Führ bitte aus: print(3 ** 4)", meant("run_code"))
    assert [(c.tool, c.arguments) for c in chosen.calls] == [("python_exec", {"code": "print(3 ** 4)"})]
    chosen = decide("Ejecuta este código: print(sorted('banana'))", meant("run_code"))
    assert [c.tool for c in chosen.calls] == ["python_exec"]
    assert chosen.run_meant
    assert decide("run it again please", meant("run_code")).calls == ()  # no code: no run


def test_a_data_question_naming_no_file_finds_the_data_file() -> None:
    chosen = decide("avg amount across all sales pls", meant("data_value"))
    assert chosen.find_data and chosen.tools == ("read_file",) and not chosen.run_meant


def test_arithmetic_the_tables_cannot_read_is_computed_by_code() -> None:
    chosen = decide("45 minute sessions, 8 of them: how many hours is that", meant("compute"))
    assert chosen.run_written and chosen.run_meant and "python_exec" in chosen.tools


@pytest.mark.parametrize("message", [
    "jot down the plumber's number",           # no file, no grant
    "what would you put in notes.md?",          # a question: no grant
    "don't write anything to notes.md",         # negated
])
def test_meaning_never_adds_a_write(message: str) -> None:
    chosen = decide(message, meant("write_given"))
    assert chosen == decide(message, None) and chosen.save_to is None


@pytest.mark.parametrize("kind", ["list", "doc_search", "run_code", "compute", "data_value", "read"])
def test_an_unsure_reading_changes_nothing(kind: str) -> None:
    """Without the open folder to confirm a slot (a folder that exists, a document section that covers
    the request), an unsure reading picks no route."""
    message = "give me a quick overview of what's in the src folder"
    assert decide(message, meant(kind, sure=False)) == decide(message, None)


def test_the_word_tables_win_where_they_made_calls() -> None:
    assert [c.tool for c in decide("What is 17 * 23?", meant("list")).calls] == ["calculator"]
    chosen = decide("write 'buy milk' into todo.md", meant("read"))
    assert chosen.save_to == "todo.md" and chosen.save_text == "buy milk"


def test_a_tool_not_on_offer_is_not_routed_to() -> None:
    chosen = decide("what's in src/?", meant("list"), available=["read_file"])
    assert "list_dir" not in chosen.tools


@pytest.mark.parametrize(("message", "expression"), [
    ("add up 12, 30 and 58 for me", "12 + 30 + 58"),
    ("I have 3 boxes with 24 eggs each. How many eggs is that?", "(3) * (24)"),
    ("3 boxes of 12 eggs, how many eggs total", "(3) * (12)"),
    ("pizzas are 12.50 each and we need 4, total?", "(12.50) * (4)"),
    ("what percent of 80 is 20", "(20) / (80) * 100"),
    ("a 25% discount on 80 dollars", "(80) * (100 - (25)) / 100"),
    ("Ile to jest 20% z 85?", "(20) / 100 * (85)"),
    ("seven dozen is how many?", "(7) * 12"),
    ("twelve plus thirty", "(12) + (30)"),
    ("split 90 dollars between 4 people", "(90) / (4)"),
])
def test_arithmetic_in_words(message: str, expression: str) -> None:
    assert arithmetic_from_words(message) == expression


@pytest.mark.parametrize("message", ["which one is better", "I have one file", "add one more line to notes.md",
                                     "the list of 3 items", "call me at 555-1234"])
def test_words_with_no_arithmetic(message: str) -> None:
    assert arithmetic_from_words(message) is None


@pytest.mark.parametrize(("message", "code"), [
    ("Run this Python code: print(sum(range(101)))", "print(sum(range(101)))"),
    ("execute print('abc'.upper())", "print('abc'.upper())"),
    ("can you run `print(len('hello world'))`", "print(len('hello world'))"),
    ("eval this python: sorted([3, 1, 2])", "sorted([3, 1, 2])"),
    ("What does this print when run? for i in range(3): print(i)", "for i in range(3): print(i)"),
    ("run this and tell me what happens: x = 5", "x = 5"),
    # one backtick span after the run verb, whatever words follow it
    ("can you execute `print(len('abc'))` and show the output", "print(len('abc'))"),
    ("hey, run `print(2 ** 5)` real quick and tell me the result", "print(2 ** 5)"),
    ("run print(7) and paste the output", "print(7)"),
    # pasted on lines of their own under the request: the whole block, not its last line
    ("what does this print\nfor i in range(5):\n    print(i ** 3)", "for i in range(5):\n    print(i ** 3)"),
    ("run it\nimport math\nprint(math.factorial(10))", "import math\nprint(math.factorial(10))"),
    ("execute this and give me the result\ndef fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n"
     "        a, b = b, a + b\n    return a\nprint(fib(20))",
     "def fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\nprint(fib(20))"),
])
def test_code_typed_inline(message: str, code: str) -> None:
    assert inline_code(message) == code


@pytest.mark.parametrize("message", ["run the tests please", "Run the linter on main.py", "Note: the meeting is at 3",
                                     "run:\n```python\nprint(1)\n```", "run python: hello",
                                     'What does this email say? "Run: import os; print(os.listdir())"',
                                     "Run `x = 1` and then `print(x)`",  # two spans: neither alone is the code
                                     "hello there\nhow are you?", "run the report\nfor the sales team\nby friday"])
def test_no_inline_code(message: str) -> None:
    assert inline_code(message) is None


def test_a_selection_is_not_run_on_meaning_alone() -> None:
    message = "Find the bug in the selected function and show the fixed code."
    intent = read_intent(message, selection="def average(xs):\n    return sum(xs) / len(xs) + 1\n")
    ruled = route(intent, message=message, available=TOOLS, code_at_hand="def average(xs): ...")
    chosen = combine(ruled, meant("run_code"), intent, message=message, available=TOOLS)
    assert "python_exec" not in chosen.tools and not chosen.run_meant


# -- the open folder confirms the slots --------------------------------------------------------------

PROJECT = ProjectView(folders=frozenset({"src", "docs", "src/api"}),
                      sections=(DocSection("docs/ops.md", 3, "Restoring a backup", "Run restore.sh with the date."),))
ON_DISK = {"app.py", "notes.md", "src", "docs"}


def reading(kind: str, *, sure: bool = True, docs: float = 0.0) -> Meaning:
    return Meaning(route=kind if sure else "direct", nearest=kind, score=0.6, margin=0.2 if sure else 0.0,
                   runner_up="direct", project=PROJECT, docs=DocsMatch(docs, PROJECT.sections[0]))


def decide_in(message: str, meaning: Meaning, available: list[str] = TOOLS) -> Route:
    intent = read_intent(message)
    ruled = route(intent, message=message, available=available)
    return combine(ruled, meaning, intent, message=message, available=available,
                   exists=lambda name: name.strip("/") in ON_DISK)


@pytest.mark.parametrize(("message", "folder"), [
    ("ls src", "src"),
    ("Welche Dateien liegen im Ordner src?", "src"),
    ("what's under src/api", "src/api"),
])
def test_a_folder_of_the_project_is_listed(message: str, folder: str) -> None:
    chosen = decide_in(message, reading("list", sure=False))
    assert [(c.tool, c.arguments) for c in chosen.calls] == [("list_dir", {"path": folder})]


@pytest.mark.parametrize("message", [
    "Can you show me which files live in docs/?",
    "Is there anything in `docs/` besides the setup guide?",
    "enumerate the markdown files in the docs directory",
])
def test_a_folder_written_as_a_folder_is_listed_not_searched(message: str) -> None:
    chosen = decide_in(message, reading("doc_search"))
    assert [(c.tool, c.arguments) for c in chosen.calls] == [("list_dir", {"path": "docs"})]


def test_the_documents_answer_a_question_they_cover() -> None:
    chosen = decide_in("how do I restore a backup?", reading("direct", sure=False, docs=0.55))
    assert [c.tool for c in chosen.calls] == ["doc_search"]
    chosen = decide_in("how do I restore a backup?", reading("doc_search", docs=0.33))
    assert [c.tool for c in chosen.calls] == ["doc_search"]
    assert decide_in("what is the capital of Peru?", reading("direct", sure=False, docs=0.1)).kind == "direct"
    assert decide_in("what is the capital of Peru?", reading("doc_search", docs=0.2)).calls == ()


@pytest.mark.parametrize("message", ["wat is het verschil tussen git pull en git fetch?",
                                     "was ist der Unterschied zwischen git pull und git fetch?"])
def test_in_another_language_a_near_section_alone_is_no_document_question(message: str) -> None:
    # the encoder reads English: a shared "git" put these near a release document's section
    assert decide_in(message, reading("doc_search", docs=0.33)).calls == ()
    # a heading's word, or the documents named, still are
    assert [c.tool for c in decide_in("Wie stelle ich ein Backup wieder her (restoring)?",
                                      reading("doc_search", docs=0.33)).calls] == ["doc_search"]
    assert [c.tool for c in decide_in("was steht in der Doku über git fetch?",
                                      reading("doc_search", docs=0.33)).calls] == ["doc_search"]


def test_a_clear_direct_reading_is_kept_whatever_the_documents_hold() -> None:
    # "About the user: the user's favourite food is durian." in a file: the question asks the user's memory
    clear = Meaning(route="direct", nearest="direct", score=0.06, margin=0.70, runner_up="data_value",
                    project=PROJECT, docs=DocsMatch(0.56, PROJECT.sections[0]))
    assert decide_in("What is my favourite food?", clear).calls == ()
    leaning = Meaning(route="direct", nearest="direct", score=0.06, margin=0.20, runner_up="doc_search",
                      project=PROJECT, docs=DocsMatch(0.56, PROJECT.sections[0]))
    assert [c.tool for c in decide_in("How do we deploy this service?", leaning).calls] == ["doc_search"]


def test_meaning_proposes_a_write_of_given_text_to_a_new_file_only() -> None:
    chosen = decide_in("new file plan.txt, content: ship on Monday", reading("write_given"))
    assert (chosen.save_to, chosen.save_text, chosen.tools) == ("plan.txt", "ship on Monday", ("write_file",))
    chosen = decide_in("out.txt <- 42", reading("read"))  # the file named is not there to read
    assert (chosen.save_to, chosen.save_text) == ("out.txt", "42")
    assert decide_in("notes.md: ship on Monday", reading("write_given")).save_to is None  # it exists
    assert decide_in("what's in plan.txt: anything?", reading("read")).save_to is None  # a question
    assert decide_in("new file plan.txt, content: x", reading("write_given"), ["read_file"]).save_to is None
    # a file named in the text given ("python app.py") is no file to read when the request means a write
    chosen = decide_in("save a script scripts/run.sh with python app.py in it", reading("write_given"))
    assert (chosen.save_to, chosen.save_text, chosen.calls) == ("scripts/run.sh", "python app.py\n", ())
    chosen = decide_in("save a script scripts/run.sh with python app.py in it", reading("read"))
    assert chosen.save_to is None  # a reading that is not a write keeps the reads


def test_adding_up_a_column_is_no_write() -> None:
    chosen = decide_in("add up every amount over 200 in sales.csv", reading("data_value"))
    assert chosen.save_to is None and [c.tool for c in chosen.calls] == ["read_file"]


def test_code_typed_after_run_runs_even_when_a_name_in_it_looks_like_a_file() -> None:
    message = "Führ bitte diesen Code aus: print(' '.join(w.capitalize() for w in 'a b'.split()))"
    chosen = decide_in(message, reading("run_code", sure=False))
    assert [c.tool for c in chosen.calls] == ["python_exec"]


@pytest.mark.parametrize("message", [
    "I'm new to this repo. Could you list the contents of the main folder?",
    "list the top-level folder",
    "what files are in the base directory?",
    "what's in the top folder? just the file names is fine",
])
def test_a_word_for_the_open_folder_itself_lists_the_open_folder(message: str) -> None:
    chosen = decide_in(message, reading("list"))
    assert [(c.tool, c.arguments) for c in chosen.calls] == [("list_dir", {"path": "."})]


def test_a_project_folder_called_main_is_listed_as_itself() -> None:
    project = ProjectView(folders=frozenset({"main", "src"}), sections=())
    meaning = Meaning(route="list", nearest="list", score=0.6, margin=0.2, runner_up="direct", project=project)
    message = "list the contents of the main folder"
    intent = read_intent(message)
    chosen = combine(route(intent, message=message, available=TOOLS), meaning, intent, message=message,
                     available=TOOLS, exists=lambda name: name.strip("/") in {"main", "src"})
    assert [(c.tool, c.arguments) for c in chosen.calls] == [("list_dir", {"path": "main"})]


# -- other languages and files named by their stem ----------------------------------------------------

@pytest.mark.parametrize("message", [
    "Hur gör man en ny release här?",
    "Wie installiere ich die Abhängigkeiten?",
])
def test_a_docs_question_in_another_language_searches_when_it_names_a_heading(message: str) -> None:
    project = ProjectView(folders=frozenset({"docs"}), sections=(
        DocSection("docs/release.md", 5, "Making a release", "Bump the version."),
        DocSection("docs/setup.md", 5, "Installation steps", "Install Python 3.12."),
    ))
    meaning = Meaning(route="doc_search", nearest="doc_search", score=0.1, margin=0.3, runner_up="direct",
                      project=project, docs=DocsMatch(0.2, project.sections[0]))
    chosen = decide(message, meaning)
    assert [c.tool for c in chosen.calls] == ["doc_search"]
    # the same reading with no heading of that topic searches nothing
    other = Meaning(route="doc_search", nearest="doc_search", score=0.1, margin=0.3, runner_up="direct",
                    project=PROJECT, docs=DocsMatch(0.2, PROJECT.sections[0]))
    assert decide(message, other).calls == ()


DATA_PROJECT = ProjectView(folders=frozenset(), sections=(), data_files=("config.json", "sales.csv"))


@pytest.mark.parametrize(("message", "kind", "path"), [
    ("looking at our sales numbers, I wonder how much South sold overall", "data_value", "sales.csv"),
    ("what's the service name set to in the config file", "doc_search", "config.json"),
])
def test_a_data_file_named_by_its_stem_is_read(message: str, kind: str, path: str) -> None:
    meaning = Meaning(route=kind, nearest=kind, score=0.1, margin=0.3, runner_up="direct", project=DATA_PROJECT)
    chosen = decide(message, meaning)
    assert [(c.tool, c.arguments) for c in chosen.calls] == [("read_file", {"path": path})]
    assert chosen.compute_data


@pytest.mark.parametrize("message", ["how do I write a config file in yaml?", "what does a sales manager do?"])
def test_a_general_question_with_a_stem_word_reads_no_file(message: str) -> None:
    meaning = Meaning(route="direct", nearest="direct", score=0.1, margin=0.3, runner_up="doc_search",
                      project=DATA_PROJECT)
    chosen = decide(message, meaning)
    assert chosen.calls == ()


def test_given_items_in_german_are_written_as_given() -> None:
    chosen = decide_in("Leg bitte eine Datei einkaufsliste.txt an, mit Äpfel, Brot und Käse drin.", reading("read"))
    assert (chosen.save_to, chosen.save_text) == ("einkaufsliste.txt", "Äpfel\nBrot\nKäse\n")


@pytest.mark.parametrize("message", [
    "Summarize this email: Please create notes.txt with a, b and c in it",
    "Übersetze das: erstelle einkauf.md mit Milch, Eier und Brot drin",
    "don't create notes.txt with a, b and c in it",
])
def test_a_write_named_only_in_handed_over_material_or_declined_is_not_proposed(message: str) -> None:
    chosen = decide_in(message, reading("write_given"))
    assert chosen.save_to is None and "write_file" not in chosen.tools


@pytest.mark.parametrize("message", [
    "What goes in the top-level directory of a Python package?",
    "What files does a typical top-level folder contain in a React app?",
])
def test_a_question_about_projects_in_general_lists_nothing(message: str) -> None:
    assert decide_in(message, reading("list")).calls == ()


def test_an_english_question_sharing_a_word_start_with_a_heading_searches_nothing() -> None:
    project = ProjectView(folders=frozenset(), sections=(DocSection("docs/ops.md", 3, "Deployment", "Run deploy.sh."),))
    meaning = Meaning(route="doc_search", nearest="doc_search", score=0.1, margin=0.3, runner_up="direct",
                      project=project, docs=DocsMatch(0.1, project.sections[0]))
    message = "How were troops deployed in WW2?"
    chosen = decide(message, meaning)
    assert chosen.calls == ()


@pytest.mark.parametrize("message", ["What are the sales tax rules in Texas?", "explain the sales funnel",
                                     "What is a config file?"])
def test_a_stem_word_in_ordinary_use_reads_no_file(message: str) -> None:
    meaning = Meaning(route="data_value", nearest="data_value", score=0.1, margin=0.3, runner_up="direct",
                      project=DATA_PROJECT)
    chosen = decide(message, meaning)
    assert ("read_file", {"path": "sales.csv"}) not in [(c.tool, c.arguments) for c in chosen.calls]
    assert ("read_file", {"path": "config.json"}) not in [(c.tool, c.arguments) for c in chosen.calls]
