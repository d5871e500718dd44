"""Money in words: discounts, savings, tax/VAT and tips, increases and decreases by a percentage, the
percent change between two amounts, and interest; and percentages that are no sum to compute."""

from __future__ import annotations

import pytest

from cortex_lsp.agent.wordmath import arithmetic_from_words
from cortex_lsp.tools.calculator import evaluate


def value_of(words: str) -> float:
    expression = arithmetic_from_words(words)
    assert expression is not None, words
    return float(evaluate(expression).real)


@pytest.mark.parametrize(("words", "value"), [
    # the price after a discount, and the saving
    ("A jacket costs 360 euros and it's 15% off. What's the sale price?", 306),
    ("20% discount on 80", 64), ("The shoes are 70 dollars with 20% off, how much do I pay?", 56),
    ("What's the price of a 45 dollar shirt after a 30% discount?", 31.5),
    ("How much do I save with 25% off 120?", 30),
    ("Ein Mantel kostet 120 € mit 25 % Rabatt. Wie viel kostet er?", 90),
    ("Une veste coûte 80 € avec une remise de 20 %, quel est le prix final ?", 64),
    ("Unos zapatos cuestan 60 euros con un 10% de descuento, ¿cuánto pago?", 54),
    ("Una giacca costa 200 euro con lo sconto del 30%, quanto pago?", 140),
    ("Um casaco custa 150 reais com 20% de desconto. Qual o preço final?", 120),
    ("Een jas kost 90 euro met 10% korting, wat is de prijs?", 81),
    # tax, VAT, tips: the total when a total is asked, else the amount added
    ("80 plus 20% VAT", 96), ("What's 250 with 19% VAT added?", 297.5),
    ("a laptop is 899 and sales tax is 8%, what's the total", 970.92),
    ("a 15% tip on 60", 9), ("how much tip is 20% on 95", 19),
    ("what's the total with an 18% tip on a 45 dollar bill", 53.1),
    ("¿cuánto es 50 euros más el 21% de IVA?", 60.5), ("what's the tax on 250 at 8%", 20),
    # an amount increased or decreased
    ("what's 250 increased by 12%", 280), ("decrease 80 by 25%", 60), ("increase 200 by 20 percent", 240),
    ("50 minus 15%", 42.5), ("what is 20% more than 50", 60),
    ("what's my new salary if I earn 3000 and get a 4% raise", 3120),
    # percent change
    ("percent change from 80 to 100", 25), ("percentage change from 50 to 40", -20),
    ("by what percentage did the price drop from 200 to 150", 25),
    ("rent went up from 1200 to 1350, what's the percentage increase", 12.5),
    ("Um wie viel Prozent ist der Preis von 40 auf 50 gestiegen?", 25),
])
def test_percentages_of_amounts(words: str, value: float) -> None:
    assert abs(value_of(words) - value) < 1e-9


def test_the_formula_is_shown_and_money_rounded_to_cents() -> None:
    assert arithmetic_from_words("a 25% discount on 80 dollars") == "(80) * (100 - (25)) / 100"
    assert arithmetic_from_words("tip 15% on $42.50") == "round((42.5) * (15) / 100, 2)"


@pytest.mark.parametrize("words", [
    "we got a 10% discount last year, was it worth it?",   # no amount
    "Our rent increased by 5% this year",
    "the 3 servers got a 20% discount",                    # a count, not a price
    "set discount to 15% for user 42",
    "our sales grew 12% in 2023",                          # a year
    "the price rose 10% to 55",                            # the result, not the base
    "What's a good tip percentage, 15 or 20%?",
    "CPU usage went up 20% after upgrading to 3.12",
    "battery at 15% after 3 hours",
    "The 2 GB plan has 20% off",
    "increase the coverage from 80% to 90%",
    "what percentage of sales grew from 2019 to 2023",
    "is 5% a good interest rate?",
])
def test_percentages_that_are_no_sum(words: str) -> None:
    assert arithmetic_from_words(words) is None


@pytest.mark.parametrize(("words", "value"), [
    ("Calcula el interés simple de 1200 al 4% anual durante 3 años", 144),
    ("simple interest on 5000 at 3% for 2 years", 300),
    ("simple interest 1500 at 2.5% over 4 years, total amount?", 1650),
    ("simple interest on 1000 at 1% per month for 6 months", 60),
    ("Calculez les intérêts simples sur 1000 € à 5 % pendant 3 ans", 150),
    ("interesse semplice su 1000 euro al 2% per 5 anni", 100),
    ("Einfache Zinsen auf 2000 Euro zu 2,5 % für 4 Jahre", 200),
    ("If I put 800 dollars in an account at 5% interest compounded yearly for 2 years, how much will I have?", 882),
    ("1000 at 6% compounded monthly for 1 year", 1061.68),
    ("compound interest on 2000 at 4% for 3 years", 249.73),
    ("5000 at 4% interest compounded quarterly for 2 years, how much will I have", 5414.28),
    ("Zinseszins: 1000 Euro zu 3 % für 2 Jahre, wie viel habe ich am Ende?", 1060.9),
    ("juros compostos de 1000 a 10% ao ano durante 2 anos, qual o montante final?", 1210),
    ("samengestelde rente op 1000 euro tegen 2% per jaar gedurende 3 jaar, wat is het eindbedrag?", 1061.21),
])
def test_interest(words: str, value: float) -> None:
    assert abs(value_of(words) - value) < 1e-9


def test_interest_shows_its_formula() -> None:
    assert arithmetic_from_words("If I put 800 dollars in an account at 5% interest compounded yearly for 2 years, "
                                 "how much will I have?") == "800 * (1 + 5 / 100) ** 2"


@pytest.mark.parametrize("words", [
    "interest on 1000 at 5% for 3 years",              # simple or compound? the values differ
    "compare 2 loans at 5% simple interest for 3 years",
    "what's the interest rate on a 30 year mortgage",
    "compound interest explained in 3 sentences",
])
def test_interest_left_alone(words: str) -> None:
    assert arithmetic_from_words(words) is None


def test_float_noise_is_rounded_off_but_not_a_repeating_decimal() -> None:
    assert arithmetic_from_words("what is 7 percent of 1,250") == "round((7) / 100 * (1250), 1)"
    assert arithmetic_from_words("10 divided by 3") == "(10) / (3)"
    assert arithmetic_from_words("what is 0.1 + 0.2") == "0.1 + 0.2"  # the user's own expression, as typed


def test_auf_is_the_base_for_tax_and_the_result_for_a_change() -> None:
    assert value_of("what's 19% MwSt auf 100 Euro") == 19
    assert arithmetic_from_words("der Preis ist um 10 % auf 55 Euro gestiegen") is None


@pytest.mark.parametrize(("words", "value"), [
    ("how much is the 15% discount on 80", 12),                     # the discount, not the price
    ("cuánto es el 15% de descuento de 80 euros", 12),
    ("wie viel sind 15 % Rabatt von 80 Euro", 12),
    ("Ich bekomme 2500 brutto und 3% Gehaltserhöhung, was bekomme ich dann?", 2575),
    ("mi sueldo es 1500 y me suben un 10%", 1650),
    ("add 10% to 250", 275), ("apply a 10% discount to 250", 225),
    ("How much is 1500 after 3 years at 2% compound interest?", 1591.81),
    ("what will 1000 grow to at 5% compounded annually over 10 years", 1628.89),
    ("if I invest 2000 at 3% simple interest for 4 years what is the interest", 240),
])
def test_what_is_asked_decides_the_formula(words: str, value: float) -> None:
    assert abs(value_of(words) - value) < 1e-9
