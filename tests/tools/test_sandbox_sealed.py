"""The guards read nothing from module globals at call time: a sealed copy per worker (sandbox/sealed.py).

No escape payload here: each case is an operation the corpus shows the run-time guards refuse (an
attribute, import, write, ``type``, class-building or ``open`` guard), harmless even if it went
through. The test builds the sealed guards, then rebinds **every** global of every guard module (and
shadows the builtins they use) with ``None`` or a permissive stand-in, as a standard-library function
writing into a module namespace could, and shows the sealed guards still refuse each case and still
run benign code. The control shows the same permissive rebinding does open the unsealed guards.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from cortex_lsp.guards.paths import ResolvedPath
from cortex_lsp.tools.sandbox import allowlist, restricted
from cortex_lsp.tools.sandbox.policy import ALLOWED_MODULES
from cortex_lsp.tools.sandbox.sealed import GUARD_MODULES, SealedGuards, seal

SECRET = "SEALED-SECRET-7d1c"

#: (id, code): refused at run time by a guard (not by the compile-time policy).
RUNTIME_REFUSALS: list[tuple[str, str]] = [
    ("getattr-built-dunder", "getattr(1, '_' + '_class_' + '_')"),
    ("format-attr", "'{0.__class__.__bases__}'.format(())"),
    ("format-map-attr", "'{x.__class__}'.format_map({'x': 1})"),
    ("format-unbound", "str.format('{0.__class__}', 1)"),
    ("super-format", "class S(str):\n    pass\ns = S('{0.__class__}')\nsuper(S, s).format(1)"),
    ("super-dunder", "class A:\n    def f(self):\n        return getattr(super(), '__class__')\nA().f()"),
    ("from-private", "from random import _os"),
    ("private-attr", "import random\nrandom._inst"),
    ("attrgetter", "import operator\noperator.attrgetter('real')"),
    ("from-attrgetter", "from operator import attrgetter"),
    ("get-type-hints", "import typing\ntyping.get_type_hints"),
    ("module-setattr", "import json\nsetattr(json, 'dumps', print)"),
    ("module-write", "import math\nmath.pi = 3"),
    ("type-three-args", "type('X', (), {})"),
    ("metaclass-of", "type(type(1))"),
    ("metaclass-base", "class M(type):\n    pass"),
    ("dataclass-foreign", "import dataclasses, json\ndataclasses.dataclass(json.JSONDecoder)"),
    ("open-system", "open('/etc/passwd').read()"),
    ("open-outside", "open('../outside.txt').read()"),
    ("open-hidden", "open('.env').read()"),
    ("open-write", "open('notes.txt', 'w')"),
    ("open-binary", "open('notes.txt', 'rb')"),
]
BENIGN = (
    "import json, statistics, dataclasses\n@dataclasses.dataclass\nclass P:\n    x: int\n"
    "print(json.dumps([statistics.mean([1, 2])]), P(1), '{0}'.format(2), open('notes.txt').read().strip())"
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    (folder / "notes.txt").write_text("ordinary notes\n")
    (folder / ".env").write_text(SECRET)
    (tmp_path / "outside.txt").write_text(SECRET)
    return folder


def _permissive(monkeypatch: pytest.MonkeyPatch, *, shadow_builtins: bool = True) -> None:
    """Stand-ins that would let each case through if a guard looked them up at call time."""
    def anywhere(file: str, roots: list[Path], **_kw: object) -> ResolvedPath:
        return ResolvedPath(path=(roots[0] / file).resolve(), root=Path("/"))

    monkeypatch.setattr(allowlist, "is_denied", lambda value: False)
    monkeypatch.setattr(allowlist, "_removed_reason", lambda module, name: None)
    monkeypatch.setattr(allowlist, "_namedtuple_api", lambda obj, name: True)
    monkeypatch.setattr(allowlist, "_is_metaclass", lambda value: False)
    monkeypatch.setattr(allowlist, "INSPECT_ATTRIBUTES", frozenset())
    monkeypatch.setattr(allowlist, "ALLOWED_MODULES", ALLOWED_MODULES | {"os", "sys"})
    monkeypatch.setattr(allowlist, "SUPER_DUNDERS", frozenset({"__class__", "format"}))
    monkeypatch.setattr(restricted, "resolve_in_roots", anywhere)
    monkeypatch.setattr(restricted, "plain_str", lambda value, what: value)
    if not shadow_builtins:
        return
    # shadow builtins the guards use, as a namespace write would
    monkeypatch.setattr(allowlist, "isinstance", lambda obj, cls: not isinstance(obj, str), raising=False)
    monkeypatch.setattr(allowlist, "issubclass", lambda cls, base: False, raising=False)


def _rebind_everything(monkeypatch: pytest.MonkeyPatch) -> int:
    count = 0
    for name in GUARD_MODULES:
        module = importlib.import_module(name)
        for attr in list(vars(module)):
            if not (attr.startswith("__") and attr.endswith("__")):
                monkeypatch.setattr(module, attr, None)
                count += 1
    _permissive(monkeypatch)
    return count


@pytest.fixture
def sealed() -> Iterator[SealedGuards]:
    yield seal()


def _assert_refused(outcome: restricted.RunOutcome, name: str) -> None:
    assert outcome.refused, f"{name}: not refused: {outcome}"
    assert outcome.error and outcome.error.startswith("Refused by the sandbox"), (name, outcome.error)
    text = f"{outcome.stdout}{outcome.value}{outcome.error}"
    assert SECRET not in text and "root:x:0:0" not in text, name


@pytest.mark.parametrize(("name", "code"), RUNTIME_REFUSALS, ids=[c[0] for c in RUNTIME_REFUSALS])
def test_the_cases_are_refused_by_the_guards_at_run_time(root: Path, name: str, code: str) -> None:
    _assert_refused(restricted.run_snippet(code, [root]), name)


def test_sealed_guards_ignore_every_module_global_rebound_after_they_were_built(
    monkeypatch: pytest.MonkeyPatch, sealed: SealedGuards, root: Path
) -> None:
    rebound = _rebind_everything(monkeypatch)
    assert rebound > 120  # every helper, constant, class and imported name of the four modules
    for name, code in RUNTIME_REFUSALS:
        _assert_refused(sealed.run_snippet(code, [root]), name)
    benign = sealed.run_snippet(BENIGN, [root])
    assert benign.error is None and benign.stdout == "[1.5] P(x=1) 2 ordinary notes\n", benign


def test_control_the_same_rebinding_opens_the_unsealed_guards(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    """Proves the test above can fail: the live guards read the swapped helpers."""
    _permissive(monkeypatch, shadow_builtins=False)
    through = [name for name, code in RUNTIME_REFUSALS if not restricted.run_snippet(code, [root]).refused]
    assert {"private-attr", "attrgetter", "open-system", "open-outside", "open-hidden"} <= set(through), through
    leaked = restricted.run_snippet("print(open('../outside.txt').read())", [root])
    assert SECRET in leaked.stdout


def test_sealed_copies_share_nothing_mutable_with_the_real_modules(sealed: SealedGuards) -> None:
    guards_cls = sealed.get("cortex_lsp.tools.sandbox.allowlist", "Guards")
    assert guards_cls is not allowlist.Guards
    assert guards_cls.getattr.__globals__ is not vars(allowlist)
    assert sealed.run_snippet.__globals__ is not vars(restricted)
    assert sealed.get("cortex_lsp.tools.sandbox.restricted", "Guards") is guards_cls  # imported names follow
    assert sealed.get("cortex_lsp.tools.sandbox.allowlist", "Refused") is allowlist.Refused  # compared by identity
    frozen_os = sealed.get("cortex_lsp.guards.paths", "os")
    with pytest.raises(AttributeError):
        frozen_os.open = print


def _folder(source: str, name: str = "case") -> dict[str, object]:
    return {"modules": [{"name": name, "path": f"{name}.py", "source": source, "package": False}],
            "unavailable": {}}


def test_folder_modules_are_guarded_by_the_sealed_copy_too(monkeypatch: pytest.MonkeyPatch, sealed: SealedGuards,
                                                          root: Path) -> None:
    """Each run-time refusal, as a module from the folder the snippet imports, after every global of the
    guard modules (the folder loader's included) was rebound; a name of an allowed module is still never
    served from the folder, and a benign folder module still runs."""
    _rebind_everything(monkeypatch)
    for name, code in RUNTIME_REFUSALS:
        _assert_refused(sealed.run_snippet("import case", [root], **_folder(code)), name)
    shadow = sealed.run_snippet("import json\nprint(json.dumps(1))", [root], **_folder("X = 'shadow'", "json"))
    assert shadow.stdout == "1\n", shadow
    benign = sealed.run_snippet("import case\nprint(case.f())", [root],
                                **_folder("def f():\n    return open('notes.txt').read().strip()"))
    assert benign.error is None and benign.stdout == "ordinary notes\n", benign
