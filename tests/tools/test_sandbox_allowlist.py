"""The allow-list tables and the module views (the first layer's "what is allowed and why")."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pytest

from cortex_lsp.tools.sandbox.allowlist import (
    GUARDED_BUILTINS,
    MODULE_REASONS,
    PLAIN_BUILTINS,
    REMOVED,
    Guards,
    Refused,
    RefusedAttribute,
    RefusedImport,
    is_denied,
)
from cortex_lsp.tools.sandbox.policy import ALLOWED_MODULES
from cortex_lsp.tools.sandbox.restricted import OutputCollector, make_builtins

DOC = Path(__file__).resolve().parents[2] / "docs" / "sandbox.md"


def test_every_allowed_module_has_a_reason_and_nothing_else_does() -> None:
    assert set(MODULE_REASONS) == set(ALLOWED_MODULES)
    assert set(REMOVED) <= set(ALLOWED_MODULES)


def test_the_doc_lists_every_module_and_builtin_with_its_reason() -> None:
    doc = DOC.read_text(encoding="utf-8")
    for module, reason in MODULE_REASONS.items():
        assert f"| `{module}` | {reason} |" in doc, module
    for name in [*PLAIN_BUILTINS, *GUARDED_BUILTINS]:
        assert f"`{name}`" in doc, name


def test_the_builtins_are_exactly_the_table() -> None:
    names = make_builtins(OutputCollector(10), [], Guards())
    exceptions = {n for n, v in names.items() if isinstance(v, type) and issubclass(v, BaseException)}
    assert set(names) - exceptions == set(PLAIN_BUILTINS) | set(GUARDED_BUILTINS)
    assert not {"eval", "exec", "compile", "globals", "locals", "vars", "breakpoint", "input"} & set(names)
    assert names["open"] is not open and names["getattr"] is not getattr and names["type"] is not type


@pytest.mark.parametrize("name", sorted(ALLOWED_MODULES))
def test_module_views_hold_no_private_name_no_removed_name_no_metaclass_no_foreign_module(name: str) -> None:
    guards = Guards()
    real = importlib.import_module(name)
    view = guards.view(real)
    assert view is not real
    for key, value in vars(view).items():
        if key in ("__name__", "__doc__", "__package__", "__loader__", "__spec__"):
            continue
        assert not key.startswith("_"), (name, key)
        assert key not in REMOVED.get(name, {}), (name, key)
        assert not is_denied(value), (name, key)
        if isinstance(value, ModuleType):
            assert value.__name__ in ALLOWED_MODULES and value is not importlib.import_module(value.__name__)


def test_guards_refuse_the_class_building_and_name_picking_tricks() -> None:
    guards = Guards()
    with pytest.raises(Refused):
        guards.type(1, (), {})
    with pytest.raises(Refused):
        guards.type(int)  # the metaclass
    functools = guards.import_("functools", fromlist=("wraps",))
    with pytest.raises(Refused):
        functools.update_wrapper(lambda: 0, len, assigned=("__globals__",))
    with pytest.raises(RefusedImport):
        guards.import_("operator", fromlist=("attrgetter",))
    with pytest.raises(RefusedAttribute):
        guards.getattr(guards.import_("typing"), "get_type_hints")
    with pytest.raises(RefusedAttribute):
        guards.getattr(str, "format")


def test_super_on_a_str_subclass_formats_through_the_guard() -> None:
    guards = Guards()

    class S(str):
        pass

    guards.classes.add(S)
    fmt = guards.getattr(super(S, S("{0.__class__}")), "format")
    with pytest.raises(RefusedAttribute):
        fmt(1)
    assert guards.getattr(super(S, S("<{0}>")), "format")(1) == "<1>"
