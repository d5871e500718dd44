"""The word-math patterns are compiled on first use: an ask with no number never pays for them, an ask with
numbers reads the same as before, and the warm-up's ``compile_all`` leaves none to compile."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

from cortex_lsp.agent.lazy_re import LazyPattern, compile_all, lazy

FRESH = textwrap.dedent("""
    from cortex_lsp.agent import lazy_re
    from cortex_lsp.agent.wordmath import arithmetic_from_words

    def compiled():
        return sum(p._compiled is not None for p in lazy_re._made)

    made = len(lazy_re._made)
    assert made >= 30, made
    assert compiled() == 0, compiled()
    assert arithmetic_from_words("What is the capital of Japan?") is None
    assert arithmetic_from_words("Explain what this module is for") is None
    assert compiled() == 0, "a question without a number compiled the unit patterns"
    print(arithmetic_from_words("how many minutes are in 3.5 hours"))
    assert compiled() > 0
    before = compiled()
    assert lazy_re.compile_all() == made - before
    assert compiled() == made
""")


def test_a_question_without_numbers_compiles_nothing_and_one_with_numbers_reads_as_before() -> None:
    out = subprocess.run([sys.executable, "-c", FRESH], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    expression = out.stdout.strip()
    assert eval(expression, {"round": round}) == 210


def test_a_lazy_pattern_answers_as_the_compiled_one() -> None:
    source, flags = r"(?P<n>\d+)\s*(km|mi)\b", re.IGNORECASE
    text = "from 5 KM to 10 mi, then 3 km"
    eager, late = re.compile(source, flags), lazy(source, flags)
    assert isinstance(late, LazyPattern) and late.pattern == source
    assert [m.span() for m in late.finditer(text)] == [m.span() for m in eager.finditer(text)]
    assert late.findall(text) == eager.findall(text)
    assert late.sub("N", text) == eager.sub("N", text)
    found, expected = late.search(text, 8), eager.search(text, 8)
    assert found is not None and expected is not None and found.span() == expected.span()
    assert late.match(text) is None and late.fullmatch("3 km") is not None
    compile_all()
    assert compile_all() == 0
