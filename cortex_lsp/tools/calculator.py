"""The ``calculator`` tool: arithmetic by walking the expression's AST (never ``eval``), with bounds.

Numbers, + - * / // % **, unary signs, parentheses, a few math functions and constants. Exponents,
factorials and the size of integer results are bounded before they are computed, so ``9**9**9`` or
``factorial(10**6)`` is refused at once instead of stalling the server.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from typing import Any

from cortex_lsp.tools.base import BaseTool, ToolContext, ToolResult
from cortex_lsp.tools.details import Calculation

MAX_EXPRESSION_CHARS = 500
MAX_EXPONENT = 10_000
MAX_RESULT_BITS = 20_000  # about 6,000 decimal digits
MAX_FACTORIAL = 1_000
MAX_NODES = 200

Number = int | float | complex


class CalcError(ValueError):
    pass


def _bits(value: Number) -> int:
    if isinstance(value, bool):
        return 1
    if isinstance(value, int):
        return value.bit_length()
    return 0


def _check_int(value: Number) -> Number:
    if isinstance(value, int) and _bits(value) > MAX_RESULT_BITS:
        raise CalcError("the result is too large to compute")
    return value


def _pow(a: Number, b: Number) -> Number:
    if isinstance(b, complex) or isinstance(a, complex):
        raise CalcError("complex powers are not supported")
    if abs(b) > MAX_EXPONENT:
        raise CalcError(f"the exponent {b!r} is too large (limit {MAX_EXPONENT})")
    if isinstance(a, int) and isinstance(b, int) and b > 0 and _bits(a) * b > MAX_RESULT_BITS:
        raise CalcError("the result is too large to compute")
    try:
        return _check_int(operator.pow(a, b))
    except OverflowError:
        raise CalcError("the result is too large to compute") from None


def _mul(a: Number, b: Number) -> Number:
    if isinstance(a, int) and isinstance(b, int) and _bits(a) + _bits(b) > MAX_RESULT_BITS:
        raise CalcError("the result is too large to compute")
    return operator.mul(a, b)


def _lshift(a: Number, b: Number) -> Number:
    if not isinstance(a, int) or not isinstance(b, int) or b > MAX_RESULT_BITS:
        raise CalcError("the shift is too large")
    return _check_int(a << b)


def _factorial(n: Number) -> Number:
    if isinstance(n, float) and n.is_integer():
        n = int(n)
    if not isinstance(n, int) or n < 0:
        raise CalcError("factorial needs a whole number ≥ 0")
    if n > MAX_FACTORIAL:
        raise CalcError(f"factorial of {n} is too large (limit {MAX_FACTORIAL})")
    return math.factorial(n)


def _div(a: Number, b: Number) -> Number:
    if b == 0:
        raise CalcError("division by zero")
    return operator.truediv(a, b)


def _floordiv(a: Number, b: Number) -> Number:
    if b == 0:
        raise CalcError("division by zero")
    return operator.floordiv(a, b)  # type: ignore[operator]


def _mod(a: Number, b: Number) -> Number:
    if b == 0:
        raise CalcError("division by zero")
    return operator.mod(a, b)  # type: ignore[operator]


_BINOPS: dict[type[ast.operator], Callable[[Any, Any], Number]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: _mul,
    ast.Div: _div,
    ast.FloorDiv: _floordiv,
    ast.Mod: _mod,
    ast.Pow: _pow,
    ast.LShift: _lshift,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Number]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCS: dict[str, Callable[..., Number]] = {
    "sqrt": math.sqrt,
    "abs": abs,
    "round": round,
    "floor": math.floor,
    "ceil": math.ceil,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "asin": math.asin,
    "acos": math.acos,
    "atan": math.atan,
    "log": math.log,
    "log10": math.log10,
    "log2": math.log2,
    "exp": math.exp,
    "factorial": _factorial,
    "radians": math.radians,
    "degrees": math.degrees,
    "min": min,
    "max": max,
    "gcd": math.gcd,
}
_CONSTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau}


def _normalise(expression: str) -> str:
    text = expression.strip().rstrip("=").strip()
    for a, b in (("×", "*"), ("÷", "/"), ("−", "-"), ("^", "**"), ("√", "sqrt"), (",", ""), ("math.", "")):
        if a == "," and ("(" in text and any(f + "(" in text for f in ("min", "max", "gcd", "round", "log"))):
            continue
        text = text.replace(a, b)
    return text


def evaluate(expression: str) -> Number:
    """Evaluate ``expression``; raises :class:`CalcError` with a clear reason."""
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise CalcError(f"the expression is longer than {MAX_EXPRESSION_CHARS} characters")
    text = _normalise(expression)
    if text.endswith("!") and text[:-1].strip().isdigit():
        text = f"factorial({text[:-1]})"
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise CalcError(f"not an arithmetic expression: {expression!r}") from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise CalcError("the expression is too long")
    return _eval(tree.body)


def _eval(node: ast.AST) -> Number:
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, (int, float, complex))
        and not isinstance(node.value, bool)
    ):
        return _check_int(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_eval(node.left), _eval(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.Name) and node.id in _CONSTS:
        return _CONSTS[node.id]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCS
        and not node.keywords
        and len(node.args) <= 3
    ):
        args = [_eval(a) for a in node.args]
        try:
            return _check_int(_FUNCS[node.func.id](*args))
        except (ValueError, TypeError, OverflowError) as exc:
            raise CalcError(f"{node.func.id}: {exc}") from None
    raise CalcError(f"unsupported element in the expression: {ast.dump(node)[:60]}")


def format_number(value: Number) -> str:
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e16:
            return str(int(value))
        return repr(value)
    return str(value)


class CalculatorTool(BaseTool):
    name = "calculator"
    description = (
        "Evaluate an arithmetic expression exactly (+ - * / // % **, parentheses, sqrt, log, sin, "
        "factorial, pi, e). For numbers only; not for writing code."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {"expression": {"type": "string", "description": "e.g. (17 * 23) + 2**10"}},
        "required": ["expression"],
        "additionalProperties": False,
    }
    timeout = 5.0

    def repair_arguments(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        args = dict(arguments)
        if "expression" not in args:
            for alias in ("expr", "input", "query", "formula", "calculation", "math"):
                if alias in args:
                    args["expression"] = args.pop(alias)
                    break
        if isinstance(args.get("expression"), (int, float)):
            args["expression"] = str(args["expression"])
        return {k: v for k, v in args.items() if k == "expression"}

    async def execute(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        expression = str(arguments["expression"])
        try:
            value = evaluate(expression)
        except CalcError as exc:
            return self.fail(f"Not calculated: {exc}.")
        except (ZeroDivisionError, OverflowError, ValueError) as exc:
            return self.fail(f"Not calculated: {exc}.")
        return self.ok(f"{expression.strip()} = {format_number(value)}", detail=Calculation(format_number(value)))
