"""Lists, operator words, rates, prices each and containers in words, in seven languages; and
numbered things that are no list to add (chapters, lines, issues) or no rate to multiply."""

from __future__ import annotations

import pytest

from cortex_lsp.agent.wordmath import arithmetic_from_words
from cortex_lsp.tools.calculator import evaluate


@pytest.mark.parametrize(("words", "value"), [
    # averages, sums, products
    ("la media de 4, 8 y 15", 9), ("la moyenne de 12, 15 et 18", 15), ("Durchschnitt von 2, 4, 6", 4),
    ("media di 10, 20 e 30", 20), ("a média de 7, 8 e 9", 8), ("het gemiddelde van 3, 5 en 7", 5),
    ("the mean of 2.5, 3.5 and 4", 10 / 3), ("average of 4,8,15", 9),
    ("combine 3, 4 and 5", 12), ("total up 3, 4 and 5", 12), ("the average of 1,500,25", 526 / 3),
    ("somme de 3, 4 et 5", 12), ("Summe von 1,5 und 2,5", 4), ("suma de 10, 20 y 30", 60), ("som van 3, 5 en 7", 15),
    ("what's the product of 3, 4 and 5", 60), ("multiply 6, 7 and 8", 336), ("producto de 2, 3 y 4", 24),
    ("produit de 4, 5 et 6", 120), ("add up 1,200 and 800", 2000),
    # two numbers and an operator word
    ("multiply 6 by 7", 42), ("multipliziere 6 mit 7", 42), ("1000 geteilt durch 8", 125), ("3 fois 4", 12),
    ("cuánto es 7 más 5", 12), ("20 meno 8", 12), ("divide 100 by 8", 12.5), ("17 mal 23", 391),
    # a rate times an amount of what it is per
    ("I earn 18 an hour, how much for 37.5 hours", 675), ("25 dollars per hour for 40 hours", 1000),
    ("Ich verdiene 15 € pro Stunde, wie viel bekomme ich für 20 Stunden?", 300),
    ("Gano 12 euros por hora, ¿cuánto gano en 8 horas?", 96), ("petrol is 1.80 per litre, how much for 45 litres", 81),
    ("a room costs 85 a night, how much for 4 nights", 340), ("I sleep 8 hours a day, how many hours in 30 days", 240),
    ("the plan is 10 GB per month, how much for 12 months", 120),
    # items at a price each
    ("4 tickets for 12.50 each", 50), ("3 cafés à 2,50 € chacun", 7.5), ("5 Brötchen zu je 0,80 €", 4),
    ("7 notebooks at 2.40 each", 16.8), ("3 entradas a 12 euros cada una", 36),
    # containers
    ("how many 12-egg boxes for 100 eggs", 9), ("how many boxes of 12 do I need for 100 eggs", 9),
    ("how many buses of 40 seats for 180 people", 5), ("¿cuántas cajas de 12 necesito para 100 huevos?", 9),
    ("how many full boxes of 12 can I fill for 100 eggs", 8),
])
def test_lists_rates_and_prices(words: str, value: float) -> None:
    expression = arithmetic_from_words(words)
    assert expression is not None, words
    assert abs(float(evaluate(expression).real) - value) < 1e-9, (words, expression)


@pytest.mark.parametrize("words", [
    "list files 1, 2 and 3",
    "read chapters 4, 5 and 6",
    "show lines 10, 20 and 30 of main.py",
    "issues 12, 15 and 18 are duplicates",
    "What is the average of my grades?",
    "the average response time in logs/app.log",
    "what is the sum of the amounts in orders.csv",
    "5 per 100 users",
    "treffen wir uns 2 mal pro woche",
    "I work 8 hours a day, how many hours in a week",     # 5 or 7 working days?
    "I need 2 rooms at 85 a night for 3 nights",          # two products: left to the model
    "how many hours per week should I study",
    "el 5 de mayo de 2024",
    "the sum of 1,500,000",                               # one number with thousands commas: no list
    "add up 3,4,5 then divide by 2",                      # the list is not the answer
    "can you combine the two files",
])
def test_no_list_or_rate(words: str) -> None:
    assert arithmetic_from_words(words) is None


@pytest.mark.parametrize(("words", "expression"), [
    ("what is 12% of 250 plus 250", "(12 / 100 * 250) + 250"),
    ("12 plus 30 minus 5", "12 + 30 - 5"),
    ("cuánto es 7 más 5 menos 2", "7 + 5 - 2"),
    ("3 mal 4 plus 2", "3 * 4 + 2"),
    ("12 plus 30", "(12) + (30)"),          # one operator: the binary form
])
def test_chained_operator_words(words: str, expression: str) -> None:
    assert arithmetic_from_words(words) == expression
