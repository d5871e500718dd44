"""The one line a "Run this" answers with: a block that only defines things says so and names them;
otherwise what ran and what came out."""

from __future__ import annotations

from cortex_lsp.tools.run_summary import bare_definitions, summarize


def test_a_bare_definition_says_what_was_defined() -> None:
    code = "def restock(item, n):\n    print('restocking')\n    return item + n\n"
    assert summarize(code, ran=True, duration_ms=20) == "defined `restock`; nothing calls it"
    two = '"""Doc."""\nimport os\n\n\ndef a():\n    pass\n\n\nasync def b():\n    pass\n'
    assert summarize(two, ran=True) == "defined `a` and `b`; nothing calls them"
    assert summarize("class Stock:\n    n = 1\n", ran=True) == "defined `Stock`; nothing uses it"


def test_a_block_that_does_something_says_what_ran() -> None:
    assert bare_definitions("def f():\n    pass\n\nf()\n") is None
    assert bare_definitions("x = 1\n") is None and bare_definitions("def (:\n") is None
    assert summarize("f()", ran=True, duration_ms=20) == "ran in 0.02 s; no output"
    assert summarize("print(1)\nprint(2)", ran=True, stdout="1\n2\n", duration_ms=1500) == \
        "ran in 1.50 s; printed 2 lines"
    assert summarize("1 + 1", ran=True, value="2") == "ran in 0.00 s; value: 2"
    # a definition that prints at import time (a decorator, a class body) is not "nothing"
    assert summarize("class A:\n    print('hi')\n", ran=True, stdout="hi\n") == "ran in 0.00 s; printed 1 line"
    assert summarize("1/0", ran=True, error="Traceback...\nZeroDivisionError: division by zero",
                     duration_ms=10) == "failed after 0.01 s: ZeroDivisionError: division by zero"
    assert summarize("import socket", ran=False, reason="Not run: socket is not allowed") == \
        "not run: socket is not allowed"
