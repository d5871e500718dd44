"""``Enum('E', names)``: the functional API's member names checked like a class body's.

``EnumType._create_`` puts every name it is given into the new class's namespace, so
``Enum('E', [('A', 1), ('__reduce_ex__', f)])`` would define a dunder no class statement may define
(and ``copy``'s ``_reconstruct`` would then call it). :func:`install_enum_check` wraps ``_create_`` (which
a snippet can't reach: it is private, on a metaclass) so every name is checked first: no dunder outside
the magic methods a class body may define, no ``_sunder_`` name. The worker calls it once, through the
sealed copy of this module (:mod:`.sealed`), before any snippet.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

from cortex_lsp.tools.sandbox.allowlist import Refused, plain_str
from cortex_lsp.tools.sandbox.policy import EXTRA_MAGIC_METHODS, is_private_name


def enum_member_name(name: object) -> str:
    """An ``Enum('E', names)`` member name, checked like a name defined in a class body: no dunder
    outside the allowed magic methods, no ``_sunder_`` name."""
    text = plain_str(name, "an Enum member name")
    if text.startswith("_") and not is_private_name(text) and text not in EXTRA_MAGIC_METHODS:
        raise Refused(f"Enum member name {text!r} is not allowed in the sandbox (checked like a class body)")
    return text


def enum_members(names: Any) -> list[Any]:
    """The functional API's ``names`` (a string, names, pairs or a mapping) as a plain list, every name
    checked by :func:`enum_member_name`; read once, so it can't change between the check and the use."""
    if isinstance(names, str):
        return [enum_member_name(n) for n in str.__str__(names).replace(",", " ").split()]
    if isinstance(names, Mapping):
        return [(enum_member_name(key), names[key]) for key in list(names)]
    items = list(names)
    if items and all(isinstance(item, str) for item in items):
        return [enum_member_name(item) for item in items]
    pairs: list[tuple[str, Any]] = []
    for item in items:
        member, value = item
        pairs.append((enum_member_name(member), value))
    return pairs


def install_enum_check() -> None:
    """Make ``Enum('E', names)`` (``EnumType._create_``, which the snippet can't reach: a metaclass
    and a private name) check its member names like a class body, with the module set to the snippet's.
    Called once by the worker (through the sealed copy of this module), before any snippet."""
    original = vars(enum.EnumType)["_create_"]
    if getattr(original, "__wrapped__", None) is not None:
        return
    members = enum_members

    def _create_(cls: Any, class_name: Any, names: Any, **options: Any) -> Any:
        options["module"] = "__main__"
        return original(cls, class_name, members(names), **options)

    _create_.__wrapped__ = original  # type: ignore[attr-defined]
    type.__setattr__(enum.EnumType, "_create_", _create_)
