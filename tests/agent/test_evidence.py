"""The evidence under an answer from a file: the lines a question points at."""

from __future__ import annotations

import pytest

from cortex_lsp.agent.evidence import (
    MAX_LINES,
    MAX_RANGES,
    Excerpt,
    Passage,
    relevant_lines,
    relevant_passage_lines,
    render,
    terms,
)

INVENTORY = '''"""Stock keeping for the garden shop."""

import csv
from decimal import Decimal

from shop.prices import price_of

LOW_STOCK = 5
WAREHOUSE_URL = "https://stock.example.org/api"


def restock(item: str, count: int) -> int:
    """Order more of an item; returns the number of crates ordered."""
    crates = max(1, count // 12)
    return crates


class Shelf:
    """One shelf of the shop floor."""

    def load(self, path: str) -> list[str]:
        with open(path) as handle:
            return [row[0] for row in csv.reader(handle)]


def main() -> None:
    restock("tulips", 30)


if __name__ == "__main__":
    main()
'''

GUIDE = """# Operations

How the shop's server is run.

## Backups

The database is copied every night at 02:00 by `backup.sh`; copies are kept
for thirty days in the cold-storage bucket.

## Restoring a backup

Stop the server, then run `restore.sh 2024-05-01` with the date of the copy.
Start the server again and check the order page.
"""

SETTINGS = """{
  "shop": {"name": "green thumb", "currency": "EUR"},
  "mail": {"host": "smtp.example.org", "port": 587},
  "debug": false
}
"""


def _shown(path: str, text: str, question: str) -> str:
    return render(relevant_lines(path, text, question))


@pytest.mark.parametrize(("question", "wanted", "not_wanted"), [
    ("what does the restock function in inventory.py return?", "return crates", "class Shelf"),
    ("what does `restock` do", "Order more of an item", "WAREHOUSE_URL"),
    ("which URL is the warehouse at?", "stock.example.org", "def restock"),
    ("what's the low stock threshold", "LOW_STOCK = 5", "restock"),
    ("which libraries does inventory.py import?", "from decimal import Decimal", "def main"),
    ("what happens when inventory.py is run as a script?", "restock(\"tulips\", 30)", "class Shelf"),
    ("Was macht die Funktion restock?", "Order more of an item", "Shelf"),
    ("is there a helper that orders crates? what's it called", "def restock", "LOW_STOCK"),
    ("how does Shelf.load read the file", "csv.reader", "LOW_STOCK"),
])
def test_a_question_about_code_shows_the_lines_it_is_about(question: str, wanted: str, not_wanted: str) -> None:
    shown = _shown("shop/inventory.py", INVENTORY, question)
    assert wanted in shown and not_wanted not in shown, shown
    assert shown.startswith("From shop/inventory.py, line")


@pytest.mark.parametrize(("question", "wanted"), [
    ("how do I restore a backup?", "restore.sh 2024-05-01"),
    ("how often is the database backed up", "every night at 02:00"),
    ("how long are copies kept?", "thirty days"),
])
def test_a_question_about_prose_shows_its_sentence(question: str, wanted: str) -> None:
    shown = _shown("docs/ops.md", GUIDE, question)
    assert wanted in shown, shown


def test_a_wrapped_sentence_is_shown_whole() -> None:
    excerpts = relevant_lines("docs/ops.md", GUIDE, "how long are the copies kept")
    assert any("for thirty days" in line for e in excerpts for line in e.lines)
    assert any("copied every night" in line for e in excerpts for line in e.lines)


def test_line_numbers_count_from_the_passage_start() -> None:
    [excerpt] = relevant_lines("docs/ops.md", GUIDE.split("\n", 10)[10], "restore.sh", first_line=11)
    assert GUIDE.splitlines()[excerpt.start - 1] == excerpt.lines[0]


@pytest.mark.parametrize("question", [
    "summarise this file", "what do you think of it?", "translate it to French", "",
])
def test_a_question_that_points_at_no_line_shows_nothing(question: str) -> None:
    assert relevant_lines("shop/inventory.py", INVENTORY, question) == []
    assert relevant_lines("docs/ops.md", GUIDE, question) == []


def test_a_data_file_shows_the_key() -> None:
    assert '"port": 587' in _shown("settings.json", SETTINGS, "which port does the mail server use?")


def test_the_excerpt_is_bounded() -> None:
    text = "\n".join(f"alpha beta gamma line {n}" for n in range(200))
    excerpts = relevant_lines("notes.txt", text, "alpha beta gamma")
    assert len(excerpts) <= MAX_RANGES and sum(len(e.lines) for e in excerpts) <= MAX_LINES
    long_line = "needle " + "x" * 5000
    assert len(render(relevant_lines("big.txt", f"a\n{long_line}\nb", "needle"))) < 400


def test_a_fence_in_the_text_does_not_break_the_excerpt() -> None:
    assert "make deploy" in _shown("README.md", "# Use\n\nRun it:\n```sh\nmake deploy\n```\n", "how do I deploy")
    shown = Excerpt("README.md", 3, ("```sh", "make deploy", "```")).render()
    assert shown.splitlines()[1] == "````markdown" and shown.splitlines()[-1] == "````"


def test_terms_split_identifiers_and_stem() -> None:
    assert terms("DATABASE_URL parseDate dates boxes configured configure tagged") == [
        "databas", "url", "pars", "date", "date", "box", "configur", "configur", "tag"]


def test_found_passages_are_weighed_together() -> None:
    passages = [
        Passage("docs/ops.md", 5, "## Backups\n\nThe database is copied every night at 02:00 by `backup.sh`."),
        Passage("docs/ops.md", 10, "## Restoring a backup\n\nStop the server, then run `restore.sh 2024-05-01`."),
        Passage("README.md", 1, "# Shop\n\nThe server is started with `make serve`."),
    ]
    [excerpt] = relevant_passage_lines(passages, "how do I restore a backup?")[:1]
    assert (excerpt.path, excerpt.start) in {("docs/ops.md", 12), ("docs/ops.md", 10)}
    shown = render(relevant_passage_lines(passages, "how is the server started?"))
    assert "From README.md, line 3:" in shown and "make serve" in shown
    assert relevant_passage_lines(passages, "what is the capital of Peru?") == []
    # a passage's last line and the next passage's first are never one place
    assert all(e.lines[-1] != "" for e in relevant_passage_lines(passages, "server"))


def test_a_documents_lead_gives_way_to_the_section_that_says_how() -> None:
    setup = ("# Setup\n\nHow to install the billing service on a new machine.\n\n## Installation steps\n\n"
             "1. Install Python 3.12.\n2. Install the dependencies: `pip install -r requirements.txt`.\n")
    passages = [Passage("docs/setup.md", 1, setup)]
    shown = render(relevant_passage_lines(passages, "how do I install the dependencies on a new machine?"))
    assert "requirements.txt" in shown and "How to install the billing" not in shown
    # the lead is still the evidence when no section line stands out
    lead_only = render(relevant_passage_lines(passages, "what is the billing service?"))
    assert "How to install the billing service" in lead_only
    # a title with no section under it has no lead: its first paragraph is the document
    flat = [Passage("README.md", 1, "# Shop\n\nThe server is started with `make serve`.\n")]
    assert "make serve" in render(relevant_passage_lines(flat, "how is the server started?"))


def test_a_how_to_question_that_only_the_lead_matches_shows_the_steps() -> None:
    release = ("# Releasing\n\nHow to cut a new version and ship it.\n\n## Making a release\n\n"
               "1. Bump the version number and update the changelog.\n"
               "2. Tag the commit (`git tag v1.2.0`) and push the tag.\n3. The CI builds the package.\n")
    passages = [Passage("docs/release.md", 1, release)]
    shown = render(relevant_passage_lines(passages, "what's our process for cutting a new release"))
    assert "git tag v1.2.0" in shown and "How to cut" not in shown
    # not a how-to question: the lead stays
    assert "How to cut" in render(relevant_passage_lines(passages, "what is cut and shipped?"))



@pytest.mark.parametrize("question", ["how do I install this thing on a fresh machine?",
                                      "how do I install this thing on a new machine?"])
def test_passages_of_one_document_are_read_in_its_order(question: str) -> None:
    # doc_search returns the lead's passage first, another document's next, the steps last
    passages = [Passage("docs/setup.md", 1, "# Setup\n\nHow to install the billing service on a new machine."),
                Passage("docs/release.md", 1, "# Releasing\n\nHow to cut a new version and ship it."),
                Passage("docs/setup.md", 5, "## Installation steps\n\n1. Install Python 3.12.\n"
                        "2. Create a virtual environment.\n3. Install the dependencies: "
                        "`pip install -r requirements.txt`.\n")]
    # "new" is in the other document's lead too, and "install" in the first step: the steps, from the first
    shown = render(relevant_passage_lines(passages, question))
    assert "requirements.txt" in shown and "1. Install Python" in shown
    assert "How to install the billing" not in shown and "How to cut" not in shown


@pytest.mark.parametrize("question", ["Hur gör man en ny release här?", "Wie mache ich ein Release?"])
def test_a_how_to_question_in_another_language_shows_the_steps_of_the_heading_it_names(question: str) -> None:
    release = ("# Releasing\n\nHow to cut a new version and ship it.\n\n## Making a release\n\n"
               "1. Bump the version.\n2. Tag the commit (`git tag v1.2.0`).\n\n## Rolling back a release\n\n"
               "Redeploy the previous tag.\n")
    shown = render(relevant_passage_lines([Passage("docs/release.md", 1, release)], question))
    assert "git tag v1.2.0" in shown
    assert relevant_passage_lines([Passage("docs/release.md", 1, release)], "what is a release?") == []



def test_a_how_to_question_shows_no_steps_of_an_unrelated_section_or_document() -> None:
    api = "# Tool\n\nA tool for things.\n\n## Working with the API\n\n1. Create a token.\n2. Call the endpoint.\n"
    assert relevant_passage_lines([Passage("README.md", 1, api)], "How do I bake sourdough bread with rye flour?") == []
    passages = [Passage("README.md", 1, "# Photos\n\nHow to use the photo app."),
                Passage("docs/account.md", 1, "## Account\n\n1. Open settings\n2. Click Delete account")]
    assert "Delete account" not in render(relevant_passage_lines(passages, "how can I sync photos"))


APP = ('from flask import Flask, jsonify\n\napp = Flask(__name__)\n\n\n@app.get("/health")\ndef health():\n'
       '    return jsonify(status="ok")\n\n\n@app.get("/invoices/<day>")\ndef invoices(day: str):\n'
       '    return jsonify(day=day, invoices=[])\n')


@pytest.mark.parametrize(("question", "wanted", "not_wanted"), [
    ("what does the /health endpoint return", 'status="ok"', "invoices"),
    ("what does the health endpoint send back?", 'status="ok"', "invoices"),
    ("what does the invoices route give back?", "invoices=[]", "status"),
])
def test_an_endpoint_named_by_its_route_shows_what_it_returns(question: str, wanted: str, not_wanted: str) -> None:
    shown = _shown("app.py", APP, question)
    assert wanted in shown and not_wanted not in shown
