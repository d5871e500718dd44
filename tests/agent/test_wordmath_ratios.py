"""Fractions of amounts, shares as percentages, roots and powers, and distance/time/speed in words,
in several languages; and look-alikes that ask nothing to compute."""

from __future__ import annotations

import pytest

from cortex_lsp.agent.wordmath import arithmetic_from_words
from cortex_lsp.tools.calculator import evaluate


@pytest.mark.parametrize(("words", "value"), [
    # a fraction of an amount
    ("half of 80", 40), ("two thirds of 90", 60), ("3/4 of 200", 150), ("la mitad de 80", 40),
    ("die Hälfte von 80", 40), ("trois quarts de 200", 150), ("un tercio de 90", 30), ("de helft van 30", 15),
    # a share as a percentage
    ("qué porcentaje es 20 de 80", 25), ("wie viel Prozent sind 20 von 80", 25), ("20 sur 80 en pourcentage", 25),
    ("20 is what percentage of 80", 25), ("hoeveel procent is 20 van 80", 25), ("che percentuale è 20 di 80", 25),
    ("I got 20 out of 25, what percentage is that", 80), ("what percentage is 45 out of 60", 75),
    # roots and powers
    ("raíz cuadrada de 144", 12), ("Quadratwurzel aus 144", 12), ("cube root of 27", 3), ("5 al cuadrado", 25),
    ("2 hoch 10", 1024), ("3 elevado a 4", 81), ("racine carrée de 81", 9),
    # distance, time, speed
    ("how far do I get at 60 km/h in 2.5 hours", 150), ("how long to drive 300 km at 100 km/h", 3),
    ("how many minutes to walk 3 km at 5 km/h", 36), ("5 km in 25 minutes, what is my average speed", 12),
    ("Un tren recorre 180 km en 2 horas, ¿cuál es su velocidad?", 90),
    ("Wie lange brauche ich für 150 km bei 100 km/h?", 1.5), ("combien de temps pour 42 km à 12 km/h", 3.5),
    ("100 m in 9.58 s, what speed in km/h", 37.57829),
])
def test_ratios_and_motion(words: str, value: float) -> None:
    expression = arithmetic_from_words(words)
    assert expression is not None, words
    assert abs(float(evaluate(expression).real) - value) < 1e-5, (words, expression)


@pytest.mark.parametrize("words", [
    "the first half of 2024",              # a year, not an amount
    "a quarter of 2024",
    "half of the 10 tests failed",
    "I fixed 3 out of 10 bugs, what percentage is left?",   # the rest, not the share
    "the limit is 50 km/h within 2 km of the school",       # no question
    "I ran 5 km in 30 minutes yesterday, was that good?",
    "what percentage of the tests pass",
])
def test_no_ratio_or_motion(words: str) -> None:
    assert arithmetic_from_words(words) is None
