"""scripts/mutate.py: every mutation still applies to the current source (a renamed guard fails here)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutate", REPO / "scripts" / "mutate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutate"] = module
    spec.loader.exec_module(module)
    return module


mutate = _load()


@pytest.mark.parametrize("mutation", mutate.MUTATIONS, ids=[m.name for m in mutate.MUTATIONS])
def test_mutation_applies_and_compiles(mutation: object) -> None:
    source = (REPO / mutation.file).read_text(encoding="utf-8")  # type: ignore[attr-defined]
    changed = mutate.mutated_source(source, mutation)
    assert changed != source
    compile(changed, mutation.file, "exec")  # type: ignore[attr-defined]
    for test in mutation.tests:  # type: ignore[attr-defined]
        assert (REPO / test).is_file(), test


def test_a_missing_guard_stops_the_script() -> None:
    gone = mutate.Mutation("gone", "nothing", "x.py", (), function="no_such_function", body="return None")
    with pytest.raises(SystemExit, match="not found"):
        mutate.mutated_source("def other():\n    pass\n", gone)


def test_the_early_return_comes_after_the_docstring() -> None:
    m = mutate.Mutation("m", "w", "x.py", (), function="C.f", body="return 1")
    source = 'class C:\n    def f(self):\n        """Doc."""\n        return 2\n'
    changed = mutate.mutated_source(source, m)
    namespace: dict[str, object] = {}
    exec(compile(changed, "x.py", "exec"), namespace)
    assert namespace["C"]().f() == 1  # type: ignore[operator]
    assert changed.index('"""Doc."""') < changed.index("return 1")
