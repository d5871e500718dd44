"""Run this on a block: the block gets the definitions it uses from its own file, nothing more."""

from __future__ import annotations

from cortex_lsp.tools.block_definitions import with_definitions

SOURCE = '''import math
from statistics import mean as average

LIMIT = 10


def helper(x):
    return math.sqrt(x)


def unused():
    return 1


@staticmethod
def decorated(y):
    return helper(y) + LIMIT


class Box:
    size = 3


if __name__ == "__main__":
    print(decorated(4), average([1, 2]), Box.size)
'''


def _block(first: int, last: int) -> tuple[str, int, int]:
    lines = SOURCE.split("\n")
    return "\n".join(lines[first:last + 1]), first, last


def test_bottom_block_gets_what_it_uses_transitively() -> None:
    lines = SOURCE.split("\n")
    first = next(i for i, line in enumerate(lines) if line.startswith("if __name__"))
    block, a, b = _block(first, first + 1)
    result = with_definitions(SOURCE, a, b, block)
    assert result.included == ("Box", "LIMIT", "average", "decorated", "helper", "math")
    assert "def unused" not in result.code
    assert result.code.index("import math") < result.code.index("def helper") < result.code.index("@staticmethod")
    assert result.code.endswith(block)
    namespace: dict[str, object] = {}
    exec(compile(result.code.replace("@staticmethod\n", ""), "<block>", "exec"), namespace)  # runs: no NameError


def test_self_contained_block_runs_as_selected() -> None:
    block = "x = 2\nprint(x * 3)"
    assert with_definitions("x = 1\n" + block, 1, 2, block).code == block


def test_indented_selection_and_unparsable_file() -> None:
    lines = SOURCE.split("\n")
    body = next(i for i, line in enumerate(lines) if "return math.sqrt" in line)
    result = with_definitions(SOURCE, body, body, lines[body].replace("return ", ""))
    assert result.code.startswith("import math") and result.code.endswith("math.sqrt(x)")
    assert with_definitions("def broken(:\n", 0, 0, "broken()").code == "broken()"


def test_definitions_after_the_block_are_not_pulled_in() -> None:
    source = "print(later())\n\n\ndef later():\n    return 1\n"
    assert with_definitions(source, 0, 0, "print(later())").code == "print(later())"
