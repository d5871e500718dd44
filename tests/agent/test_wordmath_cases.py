"""Arithmetic in words against the case tables (tests/agent/data/wordmath_*.tsv): every dev phrasing
gives its value or ``None``; precision and recall over the table are printed by running this file."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from cortex_lsp.agent.wordmath import arithmetic_from_words
from cortex_lsp.tools.calculator import CalcError, evaluate

DATA = Path(__file__).parent / "data"


class Case(NamedTuple):
    expected: str | None
    words: str


def load(name: str) -> list[Case]:
    cases = []
    for line in (DATA / name).read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            expected, words = line.split("\t", 1)
            cases.append(Case(None if expected == "-" else expected, words))
    return cases


def matches(value: float, expected: str) -> bool:
    """``value`` written to the decimals of ``expected``; a whole number must be exact."""
    decimals = len(expected.split(".")[1]) if "." in expected else 0
    if decimals == 0:
        return math.isclose(value, float(expected), rel_tol=0, abs_tol=1e-9)
    return abs(value - float(expected)) <= 0.5 * 10 ** -decimals + 1e-12


def outcome(case: Case) -> tuple[str, str | None]:
    """("ok" | "missed" | "wrong" | "spurious", the expression)."""
    expression = arithmetic_from_words(case.words)
    if expression is None:
        return ("ok" if case.expected is None else "missed"), None
    if case.expected is None:
        return "spurious", expression
    try:
        value = evaluate(expression)
    except (CalcError, ZeroDivisionError, OverflowError, ValueError):
        return "wrong", expression
    if isinstance(value, complex):
        return "wrong", expression
    return ("ok" if matches(float(value), case.expected) else "wrong"), expression


def score(cases: list[Case]) -> dict[str, float]:
    results = [outcome(c)[0] for c in cases]
    returned = sum(1 for c, r in zip(cases, results, strict=True) if r != "missed" and not (
        c.expected is None and r == "ok"))
    correct = sum(1 for c, r in zip(cases, results, strict=True) if r == "ok" and c.expected is not None)
    expected = sum(1 for c in cases if c.expected is not None)
    return {"cases": len(cases), "values": expected, "returned": returned, "correct": correct,
            "precision": correct / returned if returned else 1.0, "recall": correct / expected if expected else 1.0,
            "spurious": results.count("spurious"), "wrong": results.count("wrong"), "missed": results.count("missed")}


DEV = load("wordmath_cases.tsv")


@pytest.mark.parametrize("case", DEV, ids=[c.words[:40] for c in DEV])
def test_case_table(case: Case) -> None:
    result, expression = outcome(case)
    assert result == "ok", f"{case.words!r} -> {expression!r} ({result}, expected {case.expected})"


def test_every_value_is_a_formula_the_calculator_reads() -> None:
    for case in DEV:
        expression = arithmetic_from_words(case.words)
        if expression is not None:
            assert len(expression) < 200 and "\n" not in expression


if __name__ == "__main__":
    for name in sys.argv[1:] or ["wordmath_cases.tsv"]:
        table = load(name)
        print(name, score(table))
        for case in table:
            result, expression = outcome(case)
            if result != "ok":
                print(f"  {result:8} {case.expected!s:>9}  {case.words!r} -> {expression!r}")
