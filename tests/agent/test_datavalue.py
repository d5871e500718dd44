"""Answers computed from a data file: a key's value, a cell, a column's count, total, average, extremes,
filtered rows and bounds; and no answer (the model's turn) when the question names nothing in the file."""

from __future__ import annotations

import pytest

from cortex_lsp.agent.datavalue import answer_from_data, is_data_file

SALES = "region,month,amount\nNorth,Jan,120\nSouth,Jan,340\nEast,Jan,95\nWest,Jan,410\nNorth,Feb,230\nSouth,Feb,180\n"
CONFIG = '{"service": {"name": "billing", "port": 8042}, "debug": false, "retries": 3}'
SCORES = "name,score\nana,91\nben,78\ncleo,85\n"


@pytest.mark.parametrize(("question", "wanted"), [
    ("What's the total amount in sales.csv?", ["1375", "120 + 340 + 95 + 410 + 230 + 180"]),
    ("how many rows does sales.csv have", ["6 rows"]),
    ("avg amount across all sales pls", ["229.17", "/ 6"]),
    ("what's the biggest single sale", ["410", "West"]),
    ("smallest amount in the sales file", ["95", "East"]),
    ("how many regions are in sales.csv?", ["4 different region", "North, South, East, West"]),
    ("sum of North's amounts", ["350", "120 + 230"]),
    ("total for the South region?", ["520"]),
    ("jan total in sales.csv", ["965"]),
    ("how many sales are above 200", ["3 of the 6", "South 340", "West 410", "North 230"]),
    ("how many sales are under 100", ["1 of the 6", "East 95"]),
    ("Wie hoch ist die Gesamtsumme der Spalte amount?", ["1375"]),
    ("I wonder how much South sold overall across both months", ["520", "340 + 180"]),
    ("North and South combined, amount?", ["870"]),
])
def test_csv_questions_are_computed_with_the_numbers_shown(question: str, wanted: list[str]) -> None:
    answer = answer_from_data("sales.csv", SALES, question)
    assert answer is not None
    for text in wanted:
        assert text in answer, answer


@pytest.mark.parametrize(("question", "wanted"), [
    ("Can you open config.json and tell me which port the service uses?", "`service.port` is 8042"),
    ("what name is nested under service?", "`service.name` is billing"),
    ("is debug on or off?", "`debug` is false"),
    ("retries value in the config?", "`retries` is 3"),
])
def test_a_key_is_found_at_any_depth(question: str, wanted: str) -> None:
    assert wanted in (answer_from_data("config.json", CONFIG, question) or "")


def test_a_cell_is_found_by_its_row_and_column() -> None:
    assert answer_from_data("data.csv", SCORES, "Read data.csv and tell me ben's score.") == \
        "In data.csv, ben has score 78."
    assert "91 (ana)" in (answer_from_data("data.csv", SCORES, "who has the best score?") or "")


def test_yaml_and_toml_keys() -> None:
    assert "`db.host` is localhost" in (answer_from_data("c.yaml", "db:\n  host: localhost\n", "the db host?") or "")
    assert "`tool.name` is cortex" in (answer_from_data("p.toml", "[tool]\nname = 'cortex'\n", "tool name?") or "")


@pytest.mark.parametrize(("path", "text", "question"), [
    ("config.json", CONFIG, "summarise config.json"),
    ("config.json", "{not json", "what is the port?"),
    ("config.json", "[1, 2]", "what is the port?"),
    ("sales.csv", SALES, "who made the sales?"),
    ("sales.csv", "", "total amount?"),
    ("notes.md", "port: 1", "what is the port?"),
    ("c.yaml", "a: [unclosed", "what is a?"),
    ("data.csv", SCORES + "ben,12\n", "what is ben's score?"),  # two rows match: no guess
])
def test_nothing_named_or_nothing_parsed_leaves_it_to_the_model(path: str, text: str, question: str) -> None:
    assert answer_from_data(path, text, question) is None


def test_data_files_by_suffix() -> None:
    assert all(is_data_file(p) for p in ("a.json", "B.CSV", "x/y.yaml", "c.yml", "d.toml", "e.tsv"))
    assert not any(is_data_file(p) for p in ("a.md", "b.py", "json", "csv.txt"))


BY_MONTH = "region,month,amount\nNorth,Jan,120\nSouth,Jan,340\nNorth,Feb,230\nSouth,Feb,180\n"


@pytest.mark.parametrize(("question", "answer"), [
    ("how much more did South sell than North?",
     "The total amount for region South in s.csv is 520 (340 + 180), for North 350 (120 + 230): a difference of 170."),
    ("average for february", "The average amount for month Feb in s.csv is 205 ((230 + 180) / 2)."),
    ("what did North sell in Feb", "In s.csv, the amount for region North and month Feb is 230."),
    ("Summe für Januar?", "The total amount for month Jan in s.csv is 460 (120 + 340)."),
])
def test_groups_named_in_other_words_and_compared(question: str, answer: str) -> None:
    assert answer_from_data("s.csv", BY_MONTH, question) == answer


@pytest.mark.parametrize(("question", "answer"), [
    ("add up every amount over 200",
     "The total amount of the rows in s.csv with amount above 200 is 570 (340 + 230)."),
    ("average amount below 300", "The average amount of the rows in s.csv with amount below 300 is 176.67 "
                                 "((120 + 230 + 180) / 3)."),
    ("what does the South region add up to?", "The total amount for region South in s.csv is 520 (340 + 180)."),
])
def test_totals_of_rows_past_a_bound(question: str, answer: str) -> None:
    assert answer_from_data("s.csv", BY_MONTH, question) == answer


@pytest.mark.parametrize("question", [
    "Op welke poort draait de service volgens config.json?",
    "¿En qué puerto corre el servicio según config.json?",
    "Em que porta roda o serviço segundo config.json?",
])
def test_a_key_asked_for_in_another_language(question: str) -> None:
    config = '{"service": {"name": "billing", "port": 8042}, "debug": false}'
    assert "8042" in (answer_from_data("config.json", config, question) or "")


@pytest.mark.parametrize("question", ["Qual è il totale degli importi in sales.csv?",
                                      "Wat is het totale bedrag in sales.csv?"])
def test_a_column_total_asked_for_in_another_language(question: str) -> None:
    assert "1375" in (answer_from_data("sales.csv", SALES, question) or "")


@pytest.mark.parametrize("question", ["¿cuánto suman las ventas de febrero en sales.csv?",
                                      "quanto somam as vendas de fevereiro?", "quanto sommano le vendite di febbraio?",
                                      "additionne les montants de février", "hur mycket blir summan för februari",
                                      "Summe der Beträge im Februar"])
def test_a_month_and_a_total_asked_for_in_another_language(question: str) -> None:
    assert "410 (230 + 180)" in (answer_from_data("sales.csv", SALES, question) or "")


@pytest.mark.parametrize("question", ["what is the total for March", "total sales for mayo",
                                      "What was sold in May?", "la media de ventas en diciembre"])
def test_a_month_no_row_holds_is_said_not_totalled(question: str) -> None:
    answer = answer_from_data("sales.csv", SALES, question) or ""
    assert "has no row for" in answer and "Jan, Feb" in answer and "1375" not in answer


def test_may_the_verb_is_no_month() -> None:
    assert "1375" in (answer_from_data("sales.csv", SALES, "may I have the total of sales.csv?") or "")
