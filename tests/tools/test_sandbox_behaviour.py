# ruff: noqa: E501  (the corpus below is a table of one-line snippets)

"""The sandbox runs everyday snippets like a REPL would: values, prints, classes, ``+=`` on items,
``__main__`` blocks, dataclasses, strptime, reading files in the roots; and reports how it is isolated.

Real worker processes; no wall-clock assertions.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from cortex_lsp.config import Settings
from cortex_lsp.tools.sandbox import SandboxPool, SandboxResult, isolation_status

ASYNC = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("behaviour")
    (folder / "data.csv").write_text("name,count\nada,3\nbob,5\n", encoding="utf-8")
    (folder / "sub").mkdir()
    (folder / "sub" / "words.txt").write_text("a b a c a\n", encoding="utf-8")
    (folder / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    return folder


@pytest_asyncio.fixture(loop_scope="module", scope="module", params=["none", "auto"])
async def pool(request: pytest.FixtureRequest) -> AsyncIterator[SandboxPool]:
    """Benign code works with the in-process layers alone and inside bubblewrap (where available)."""
    sandbox = SandboxPool(Settings(code_exec_timeout_seconds=5, sandbox_isolation=request.param))
    yield sandbox
    await sandbox.aclose()


CASES: list[tuple[str, str, str, str | None]] = [
    # (id, code, expected stdout, expected value)
    ("print", "print(1)", "1\n", None),
    ("expression-value", "2 + 3 * 4", "", "14"),
    ("last-assignment", "x = 6 * 7", "", "42"),
    ("tuple-unpacking", "a, b = 1, 2\nb, a = a, b", "", "(1, 2)"),  # (b, a) in target order
    ("star-unpacking", "first, *rest = [1, 2, 3]\nrest", "", "[2, 3]"),
    ("for-unpacking", "total = 0\nfor k, v in {'a': 1, 'b': 2}.items():\n    total += v\ntotal", "", "3"),
    ("dict-item-augassign", "counts = {}\nfor w in 'a b a'.split():\n    counts[w] = counts.get(w, 0)\n"
     "    counts[w] += 1\ncounts", "", "{'a': 2, 'b': 1}"),
    ("defaultdict-augassign", "from collections import defaultdict\nd = defaultdict(int)\nfor c in 'hello':\n"
     "    d[c] += 1\nd['l']", "", "2"),
    ("list-slice-augassign", "xs = [1, 2, 3]\nxs[0:1] += [9]\nxs", "", "[1, 9, 2, 3]"),
    ("nested-item-augassign", "m = {'a': [0, 0]}\nm['a'][1] += 5\nm", "", "{'a': [0, 5]}"),
    ("print-in-function", "def greet(n):\n    print('hi', n)\ngreet('ada')\ngreet('bob')",
     "hi ada\nhi bob\n", None),
    ("print-sep-end", "print(1, 2, sep='-', end='!')\nprint()", "1-2!\n", None),
    ("main-guard", "def main():\n    print('ran main')\n\nif __name__ == '__main__':\n    main()",
     "ran main\n", None),
    ("main-guard-reversed", "if '__main__' == __name__:\n    print('yes')", "yes\n", None),
    ("class-with-methods", "class Counter:\n    def __init__(self):\n        self.n = 0\n        self._log = []\n"
     "    def add(self, k=1):\n        self.n += k\n        self._log.append(k)\n        return self\n"
     "    def __repr__(self):\n        return f'Counter({self.n})'\nCounter().add().add(2)", "", "Counter(3)"),
    ("class-inheritance-super", "class A:\n    def __init__(self, x):\n        self.x = x\n"
     "class B(A):\n    def __init__(self, x):\n        super().__init__(x * 2)\nB(4).x", "", "8"),
    ("class-dunder-ops", "class V:\n    def __init__(self, a):\n        self.a = a\n"
     "    def __add__(self, o):\n        return V(self.a + o.a)\n    def __eq__(self, o):\n"
     "        return self.a == o.a\n    def __len__(self):\n        return self.a\nlen(V(1) + V(2))", "", "3"),
    ("dataclass", "from dataclasses import dataclass, field\n@dataclass\nclass P:\n    x: int\n"
     "    tags: list = field(default_factory=list)\nP(1)", "", "P(x=1, tags=[])"),
    ("enum", "from enum import Enum\nclass Color(Enum):\n    RED = 1\nColor.RED.name", "", "'RED'"),
    ("namedtuple", "from collections import namedtuple\nPt = namedtuple('Pt', 'x y')\nPt(1, 2)._replace(y=5)",
     "", "Pt(x=1, y=5)"),
    ("strptime", "from datetime import datetime\nd = datetime.strptime('2024-03-05', '%Y-%m-%d')\nd.strftime('%d/%m')",
     "", "'05/03'"),
    ("time-strptime", "import time\ntime.strptime('2024', '%Y').tm_year", "", "2024"),
    ("format-method", "'{:>5}|{name:.2f}'.format('ab', name=3.14159)", "", "'   ab|3.14'"),
    ("format-field-attr", "import fractions\nf = fractions.Fraction(1, 3)\n'{0.numerator}/{0.denominator}'.format(f)",
     "", "'1/3'"),
    ("fstring", "n = 5\nf'{n!r:>3}|{n * 2}'", "", "'  5|10'"),
    ("comprehensions", "sorted({x % 3 for x in range(10)}), [y for y in range(3)]", "", "([0, 1, 2], [0, 1, 2])"),
    ("generator", "def gen():\n    yield 1\n    yield 2\nsum(gen())", "", "3"),
    ("lambda-sorted", "sorted(['bb', 'a', 'ccc'], key=lambda s: -len(s))", "", "['ccc', 'bb', 'a']"),
    ("exceptions", "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    msg = str(e)\nmsg", "", "'division by zero'"),
    ("json-roundtrip", "import json\njson.loads(json.dumps({'a': [1, 2]}))['a']", "", "[1, 2]"),
    ("statistics", "import statistics\nstatistics.mean([1, 2, 3, 4])", "", "2.5"),
    ("decimal", "from decimal import Decimal\nDecimal('0.1') + Decimal('0.2')", "", "Decimal('0.3')"),
    ("regex", "import re\nre.findall(r'\\d+', 'a1b22c333')", "", "['1', '22', '333']"),
    ("hashlib", "import hashlib\nhashlib.sha256(b'abc').hexdigest()[:8]", "", "'ba7816bf'"),
    ("collections-abc", "from collections.abc import Mapping\nisinstance({}, Mapping)", "", "True"),
    ("global-statement", "count = 0\ndef bump():\n    global count\n    count += 1\nbump()\nbump()\ncount", "", "2"),
    ("none-value-hidden", "None", "", None),
    ("read-root-file", "rows = open('data.csv').read().splitlines()\nlen(rows)", "", "3"),
    ("read-root-subfolder", "from collections import Counter\n"
     "with open('sub/words.txt') as f:\n    c = Counter(f.read().split())\nc.most_common(1)", "", "[('a', 3)]"),
    ("read-lines-iter", "n = 0\nfor line in open('crlf.txt'):\n    n += 1\nn", "", "2"),
    ("read-crlf-universal", "open('crlf.txt').read()", "", "'one\\ntwo\\n'"),
    ("private-name", "_cache = {'k': 1}\n_cache['k']", "", "1"),
    # -- benign snippets that must keep working with the round-2 guards and the armed audit hook --
    ("math", "import math\nround(math.sqrt(2) * math.pi, 4), math.gcd(12, 18)", "", "(4.4429, 6)"),
    ("itertools", "import itertools\nlist(itertools.combinations('abc', 2))[:2], list(itertools.accumulate([1, 2, 3]))",
     "", "([('a', 'b'), ('a', 'c')], [1, 3, 6])"),
    ("collections-counter-deque", "from collections import Counter, deque, OrderedDict\nd = deque([1, 2], maxlen=2)\n"
     "d.append(3)\nCounter('abca').most_common(1), list(d), list(OrderedDict(a=1))", "", "([('a', 2)], [2, 3], ['a'])"),
    ("private-attrs-inherited", "class Base:\n    def __init__(self):\n        self._items = []\n"
     "    def _add(self, x):\n        self._items.append(x)\nclass Child(Base):\n    def add2(self, x):\n"
     "        self._add(x)\n        self._add(x)\n        return len(self._items)\nChild().add2(1)", "", "2"),
    ("functools-wraps-decorator", "import functools\ndef twice(f):\n    @functools.wraps(f)\n"
     "    def inner(*a):\n        return 2 * f(*a)\n    return inner\n@twice\ndef inc(x):\n    'Add one.'\n"
     "    return x + 1\ninc(3)", "", "8"),
    ("lru-cache", "from functools import lru_cache\n@lru_cache(maxsize=None)\ndef fib(n):\n"
     "    return n if n < 2 else fib(n - 1) + fib(n - 2)\nfib(40)", "", "102334155"),
    ("dataclass-frozen-order", "from dataclasses import dataclass, asdict\n@dataclass(frozen=True, order=True)\n"
     "class P:\n    x: int\n    y: int = 0\nsorted([P(2), P(1, 5)])[0], asdict(P(3))", "", "(P(x=1, y=5), {'x': 3, 'y': 0})"),
    ("namedtuple-defaults", "from collections import namedtuple\nPt = namedtuple('Pt', 'x y', defaults=[0])\n"
     "Pt(1), Pt._fields", "", "(Pt(x=1, y=0), ('x', 'y'))"),
    ("typing-namedtuple", "from typing import NamedTuple\nclass Row(NamedTuple):\n    name: str\n    n: int = 1\n"
     "Row('a')", "", "Row(name='a', n=1)"),
    ("forward-ref-annotation", "from typing import Optional\nclass Node:\n    def __init__(self, v):\n"
     "        self.v = v\n        self.nxt: Optional['Node'] = None\nn = Node(1)\nn.nxt = Node(2)\nn.nxt.v",
     "", "2"),
    ("enum-functional", "from enum import Enum, auto\nColor = Enum('Color', 'RED GREEN')\nclass S(Enum):\n"
     "    A = auto()\n[c.name for c in Color], S.A.value", "", "(['RED', 'GREEN'], 1)"),
    ("abc-abstract", "from abc import ABC, abstractmethod\nclass Shape(ABC):\n    @abstractmethod\n"
     "    def area(self):\n        pass\nclass Sq(Shape):\n    def area(self):\n        return 4\nSq().area()", "", "4"),
    ("generic-class", "from typing import Generic, TypeVar\nT = TypeVar('T')\nclass Box(Generic[T]):\n"
     "    def __init__(self, v: T):\n        self.v = v\nBox(3).v", "", "3"),
    ("super-str-subclass", "class Loud(str):\n    def shout(self):\n        return self.upper() + '!'\n"
     "Loud('hi').shout(), super(Loud, Loud('a{0}')).format(1)", "", "('HI!', 'a1')"),
    ("encode-latin1", "'é'.encode('latin-1'), 'x'.encode('utf-16')[:2]", "", "(b'\\xe9', b'\\xff\\xfe')"),
    ("statistics-more", "import statistics\nstatistics.median([3, 1, 2]), round(statistics.stdev([1, 2, 3, 4]), 3)",
     "", "(2, 1.291)"),
    ("copy-deepcopy", "import copy\nclass A:\n    def __init__(self):\n        self.xs = [1]\na = A()\n"
     "b = copy.deepcopy(a)\nb.xs.append(2)\na.xs, b.xs", "", "([1], [1, 2])"),
]


@ASYNC
@pytest.mark.parametrize(("code", "stdout", "value"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
async def test_snippet(pool: SandboxPool, root: Path, code: str, stdout: str, value: str | None) -> None:
    result = await pool.run(code, roots=[root])
    assert result.error is None, result.error
    assert not result.refused
    assert result.stdout == stdout
    assert result.value == value
    assert result.backend == "restricted"


@ASYNC
async def test_error_reports_line_and_type_only_for_the_snippet(pool: SandboxPool, root: Path) -> None:
    result = await pool.run("x = 1\ny = [1][5]", roots=[root])
    assert result.error is not None and not result.refused
    assert "IndexError" in result.error and "line 2" in result.error
    assert "restricted.py" not in result.error and "worker.py" not in result.error


@ASYNC
async def test_output_before_error_is_kept(pool: SandboxPool, root: Path) -> None:
    result = await pool.run("print('before')\nraise ValueError('boom')", roots=[root])
    assert result.stdout == "before\n"
    assert result.error is not None and "ValueError: boom" in result.error


@ASYNC
async def test_unencodable_output_is_made_safe(pool: SandboxPool, root: Path) -> None:
    result = await pool.run("print('a\\ud800b')", roots=[root])
    assert result.error is None
    result.stdout.encode("utf-8")  # would raise on a lone surrogate
    assert result.stdout.startswith("a") and result.stdout.endswith("b\n")


@ASYNC
async def test_syntax_error_is_an_error_not_a_refusal(pool: SandboxPool, root: Path) -> None:
    result = await pool.run("def f(:\n    pass", roots=[root])
    assert result.error is not None and "SyntaxError" in result.error
    assert not result.refused


@ASYNC
async def test_missing_file_is_not_found(pool: SandboxPool, root: Path) -> None:
    result = await pool.run("open('nope.txt').read()", roots=[root])
    assert result.error is not None and "FileNotFoundError" in result.error and not result.refused


@ASYNC
async def test_stdout_is_capped_with_a_note(pool: SandboxPool, root: Path) -> None:
    result = await pool.run("for i in range(10**6):\n    print(i)", roots=[root])
    assert result.error is not None and "output limit" in result.error
    assert 0 < len(result.stdout) <= 100_000
    assert result.stdout.startswith("0\n1\n2\n")
    assert any("cut" in note for note in result.notes)


@ASYNC
async def test_roots_change_gets_a_matching_worker(pool: SandboxPool, root: Path, tmp_path: Path) -> None:
    (tmp_path / "other.txt").write_text("other root", encoding="utf-8")
    first = await pool.run("open('other.txt').read()", roots=[tmp_path])
    assert first.value == repr("other root")
    second = await pool.run("open('data.csv').read()[:4]", roots=[root])
    assert second.value == repr("name")
    third = await pool.run("open('other.txt').read()", roots=[root])
    assert third.error is not None and third.value is None


@ASYNC
async def test_no_roots_means_no_files(pool: SandboxPool) -> None:
    result = await pool.run("open('data.csv').read()", roots=[])
    assert result.refused and result.value is None


@ASYNC
async def test_concurrent_runs_are_independent(pool: SandboxPool, root: Path) -> None:
    import asyncio

    results = await asyncio.gather(*(pool.run(f"v = {i}\nprint(v)", roots=[root]) for i in range(4)))
    assert [r.stdout for r in results] == [f"{i}\n" for i in range(4)]


@ASYNC
async def test_isolation_is_reported(pool: SandboxPool, root: Path) -> None:
    result = await pool.run("print(1)", roots=[root])
    plan = await pool.isolation()
    ok, detail = isolation_status(Settings(sandbox_isolation=plan.mode))  # type: ignore[arg-type]
    if plan.bwrap:
        assert ok and result.isolation == "bwrap" and "bubblewrap" in detail
        assert not any("not isolated" in n for n in result.notes)
    elif plan.boundary == "landlock":
        assert ok and result.isolation == "landlock+seccomp" and "Landlock" in detail and "seccomp" in detail
    else:  # no silent downgrade: the result itself says so
        assert result.isolation.startswith("not isolated (")
        assert "not isolated" in detail and "only the in-process layers are guaranteed" in detail
        assert any("not isolated" in n for n in result.notes), result.notes


@ASYNC
async def test_isolation_none_is_labelled(root: Path) -> None:
    sandbox = SandboxPool(Settings(sandbox_isolation="none"))
    try:
        result = await sandbox.run("print(1)", roots=[root])
    finally:
        await sandbox.aclose()
    assert result.stdout == "1\n"
    assert result.isolation.startswith("not isolated (") and "sandbox_isolation" in result.isolation
    assert any("not isolated" in note for note in result.notes), result.notes
    ok, detail = isolation_status(Settings(sandbox_isolation="none"))
    assert ok and "not isolated" in detail


@ASYNC
async def test_required_bwrap_missing_refuses_to_run(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A PATH without bubblewrap: the machine really lacks it as far as the sandbox can tell.
    monkeypatch.setenv("PATH", str(tmp_path))
    marker = tmp_path / "ran.txt"
    sandbox = SandboxPool(Settings(sandbox_isolation="bwrap"))
    try:
        result: SandboxResult = await sandbox.run(f"open({str(marker)!r}, 'w')", roots=[root])
        printed = await sandbox.run("print('should not run')", roots=[root])
    finally:
        await sandbox.aclose()
    assert result.refused and "bubblewrap" in (result.error or "")
    assert printed.refused and printed.stdout == ""
    assert result.isolation == "not isolated (bubblewrap not installed, and sandbox_isolation is 'bwrap')"
    ok, detail = isolation_status(Settings(sandbox_isolation="bwrap"))
    assert not ok and "sudo apt-get install bubblewrap" in detail
    auto_ok, auto_detail = isolation_status(Settings(sandbox_isolation="auto"))
    if auto_ok:  # this host has Landlock and seccomp: that boundary is used instead
        assert "Landlock" in auto_detail and "seccomp" in auto_detail
    else:
        assert "refuses to run code" in auto_detail and "apt-get install" in auto_detail
    assert not marker.exists()


@ASYNC
async def test_pool_after_close_runs_nothing(root: Path) -> None:
    sandbox = SandboxPool(Settings(sandbox_isolation="none"))
    await sandbox.run("print(1)", roots=[root])
    await sandbox.aclose()
    result = await sandbox.run("print(2)", roots=[root])
    assert result.error is not None and result.stdout == ""


def test_doctor_says_plainly_what_runs_without_bubblewrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cortex_lsp.doctor import _sandbox_check, _sandbox_layers_check
    from cortex_lsp.tools.sandbox import landlock, seccomp

    none = _sandbox_check(Settings(sandbox_isolation="none"))
    assert none.warning and not none.ok and "not isolated" in none.detail
    layers = _sandbox_layers_check()
    assert "audit hook" in layers.detail and "seccomp" in layers.detail
    monkeypatch.setenv("PATH", str(tmp_path))  # bubblewrap missing, as far as the sandbox can tell
    auto = _sandbox_check(Settings(sandbox_isolation="auto"))
    if landlock.abi()[0] > 0 and seccomp.available()[0]:
        assert auto.ok and "Landlock" in auto.detail and "libseccomp" in auto.detail, auto
    else:
        assert not auto.ok and "refuses to run code" in auto.detail and "apt-get install" in auto.fix
    required = _sandbox_check(Settings(sandbox_isolation="bwrap"))
    assert not required.ok and not required.warning and "apt-get install bubblewrap" in required.fix
