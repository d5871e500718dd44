"""Unit conversions in words: the formula shown, the value, and words that only look like a
conversion (a rate, a range, a time in a length, a unit with two sizes)."""

from __future__ import annotations

import pytest

from cortex_lsp.agent.numtext import number
from cortex_lsp.agent.wordmath import arithmetic_from_words
from cortex_lsp.tools.calculator import evaluate


@pytest.mark.parametrize(("words", "expression"), [
    ("how many minutes are in 3.5 hours", "3.5 * 60"),
    ("wie viele Minuten sind 3,5 Stunden", "3.5 * 60"),
    ("how many seconds are in a day", "86400"),
    ("quantos segundos tem uma hora", "3600"),
    ("how many minutes in half an hour", "0.5 * 60"),
    ("convert 5 miles to km", "5 * 1.609344"),
    ("72 kg in pounds", "round(72 / 0.45359237, 4)"),
    ("2 hours 30 minutes in minutes", "2 * 60 + 30"),
    ("5 feet 2 inches in cm", "round(5 * 30.48 + 2 * 2.54, 4)"),
    ("-40 °C in Fahrenheit", "(-40) * 9 / 5 + 32"),
    ("0 °C in Kelvin", "0 + 273.15"),
    ("4 GiB in MiB", "4 * 1024"),
    ("2.5 GB in MB", "2.5 * 1000"),
])
def test_the_formula_shows_the_factor(words: str, expression: str) -> None:
    assert arithmetic_from_words(words) == expression


@pytest.mark.parametrize(("words", "value"), [
    # time
    ("How many hours in a week?", 168), ("90 minutes in hours", 1.5), ("3.5 hours is how many minutes?", 210),
    ("2 hours = how many seconds", 7200), ("cuántas horas son 90 minutos", 1.5), ("3 Stunden in Minuten", 180),
    ("combien de minutes dans 0,75 heure", 45), ("quanti secondi in un'ora", 3600), ("2 semanas en días", 14),
    ("hoeveel seconden in een uur", 3600), ("how many minutes are in three hours", 180),
    ("wie viele Minuten sind drei Stunden", 180), ("combien de minutes dans deux heures", 120),
    ("cuántos minutos hay en dos horas", 120), ("quanti minuti in due ore", 120), ("hoeveel minuten in drie uur", 180),
    # length, mass, volume, area
    ("How many centimetres is 1.75 metres?", 175), ("combien de centimètres dans 1,75 mètre", 175),
    ("Convierte 10 millas a kilómetros", 16.09344), ("Rechne 5 Meilen in Kilometer um", 8.04672),
    ("how many ounces in 2 kg", 70.54792), ("Quanti grammi sono 2,5 chili", 2500), ("500 ml in litres", 0.5),
    ("converter 2 litros para ml", 2000), ("2 hectares in square metres", 20000), ("3 m² in square feet", 32.29173),
    # data, speed, temperature
    ("How many MB is 3.2 GB", 3200), ("2,5 Go en Mo", 2500), ("what is 100 km/h in m/s", 27.77778),
    ("convert 60 mph to km/h", 96.56064), ("10 metres per second in km/h", 36), ("100 km/h in knots", 53.99568),
    ("300 kelvin to celsius", 26.85), ("convertir 25 degrés Celsius en Fahrenheit", 77), ("98.6 F to C", 37),
])
def test_conversions_in_several_languages(words: str, value: float) -> None:
    expression = arithmetic_from_words(words)
    assert expression is not None, words
    assert abs(float(evaluate(expression).real) - value) < 1e-5, (words, expression)


@pytest.mark.parametrize("words", [
    "I work 8 hours a day, how many hours per week",   # a rate, not hours into days
    "I ran 5 km in 30 minutes yesterday, was that good?",  # a length and a time
    "set the timeout from 30 s to 60 s",                # a range
    "convert 3 cups to ml",                            # US, metric and legal cups differ
    "how many litres in 5 gallons",                    # US or imperial gallons
    "how many days in 2 months",                       # months have no one length
    "how many hours did I log in timesheet.csv",
    "how many regions are in sales.csv",
    "convert this file to UTF-8",
    "Allocate 2 GB to the container",
    "the build takes 10 minutes in CI",
    "translate \"5 minutes\" to German",
    "8 horas al día",
    "I download 100 MB a second",
])
def test_no_conversion(words: str) -> None:
    assert arithmetic_from_words(words) is None


@pytest.mark.parametrize(("written", "continental", "value"), [
    ("3,5", True, "3.5"), ("3,5", False, "3.5"), ("1,200", False, "1200"), ("1,200", True, "1.2"),
    ("1.200", True, "1200"), ("1.200", False, "1.2"), ("1.234,56", True, "1234.56"), ("1,234.56", False, "1234.56"),
    ("3.12.1", False, None), ("0.750", True, "0.75"),
])
def test_numbers_as_written(written: str, continental: bool, value: str | None) -> None:
    assert number(written, continental) == value
