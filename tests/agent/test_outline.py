"""What a file defines or holds, listed by code."""

from __future__ import annotations

import pytest

from cortex_lsp.agent.outline import outline
from tests.agent.test_evidence import INVENTORY, SETTINGS


@pytest.mark.parametrize(("path", "text", "question", "answer"), [
    ("shop/inventory.py", INVENTORY, "what functions are defined in inventory.py?",
     "inventory.py defines 2 functions: `restock` (line 12), `main` (line 26)."),
    ("shop/inventory.py", INVENTORY, "how many classes does it have",
     "inventory.py defines 1 class: `Shelf` (line 18)."),
    ("shop/inventory.py", INVENTORY, "Welche Funktionen gibt es in inventory.py?",
     "inventory.py defines 2 functions: `restock` (line 12), `main` (line 26)."),
    ("settings.json", SETTINGS, "list the top-level keys of settings.json",
     "settings.json has 3 top-level keys: shop, mail, debug."),
    ("sales.csv", "region,amount\nnorth,3\nsouth,4\n", "which columns does sales.csv have?",
     "sales.csv has 2 columns: region, amount (2 rows)."),
])
def test_an_outline_answers_what_a_file_defines(path: str, text: str, question: str, answer: str) -> None:
    assert outline(path, text, question) == answer


@pytest.mark.parametrize("question", [
    "which function orders crates?",            # one of them, by what it does
    "what does the restock function do",        # one of them, by name
    "summarise inventory.py",
    "does it use functions from other modules",  # no question for all of them
])
def test_no_outline_for_a_question_about_one_thing(question: str) -> None:
    assert outline("shop/inventory.py", INVENTORY, question) is None


def test_an_outline_of_source_that_does_not_parse_is_none() -> None:
    assert outline("broken.py", "def (:\n", "what functions are defined?") is None
