"""The calculator: exact arithmetic by AST walk, bounded so hostile expressions are refused fast."""

from __future__ import annotations

from pathlib import Path

import pytest

from cortex_lsp.config import Settings
from cortex_lsp.ports import StaticWorkspace
from cortex_lsp.tools.base import ToolContext
from cortex_lsp.tools.calculator import CalcError, CalculatorTool, evaluate, format_number
from cortex_lsp.tools.registry import ToolRegistry


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("2 + 3 * 4", "14"),
        ("(17 * 23) + 2**10", "1415"),
        ("10 / 4", "2.5"),
        ("7 // 2", "3"),
        ("-3 ** 2", "-9"),
        ("sqrt(16)", "4"),
        ("factorial(10)", "3628800"),
        ("5!", "120"),
        ("2^10", "1024"),
        ("3 × 4 ÷ 2", "6"),
        ("1,000 + 1", "1001"),
        ("max(3, 9, 4)", "9"),
        ("round(pi, 3)", "3.142"),
        ("2**100", str(2**100)),
    ],
)
def test_arithmetic(expression: str, expected: str) -> None:
    assert format_number(evaluate(expression)) == expected


@pytest.mark.parametrize(
    "expression",
    [
        "9**9**9",
        "10**100000",
        "factorial(100000)",
        "2**(10**9)",
        "(10**5000)*(10**5000)*(10**5000)",
        "1 << 10**9",
        "__import__('os')",
        "open('x')",
        "x + 1",
        "().__class__",
        "lambda: 1",
        "[1, 2]",
        "1/0",
        "'a' * 3",
        "exp(10000)",
        "2.0 ** 5000",
        "1" + "+1" * 400,
    ],
)
def test_refused(expression: str) -> None:
    with pytest.raises(CalcError):
        evaluate(expression)


async def test_tool_reports_and_refuses(tmp_path: Path) -> None:
    registry = ToolRegistry([CalculatorTool()])
    ctx = ToolContext(workspace=StaticWorkspace([tmp_path]), settings=Settings(data_dir=tmp_path / "d"))
    ok = await registry.execute("calculator", {"expr": "17*23"}, ctx)
    assert (
        ok.success and ok.output.endswith("= 391") and ok.text_for_model().startswith("[calculator result]")
    )
    bad = await registry.execute("calculator", {"expression": "9**9**9"}, ctx)
    assert not bad.success and "too large" in bad.error
