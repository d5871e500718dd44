"""The compile-time half of the restricted backend: RestrictedPython's policy plus our AST rewrites.

Runs inside the sandbox worker. On top of RestrictedPython's ``RestrictingNodeTransformer`` it adds what
everyday snippets need, without widening what code can reach:

- ``if __name__ == "__main__":`` bodies run (the test is replaced by ``True``);
- ``d[k] += v`` and ``obj.attr += v`` become one guarded read-update-write call;
- annotated assignments (``x: int = 1``, dataclass fields) are allowed;
- more magic methods may be defined in classes (``__str__``, ``__len__``, ...), and ``super().__init__``
  and friends are reachable through a guard that only accepts a ``super`` object and a fixed name list;
- single-underscore names (``_cache``, ``self._items``) are allowed; dunder names stay refused, and names
  ending in ``_`` stay reserved for the guards;
- the trailing expression's value is kept in ``_repl_value_`` so it can be reported like a REPL.

Imports, ``eval``/``exec``/``compile`` and other names the sandbox never provides are refused before the
code runs, with a reason (:func:`static_refusals`). Besides the allow-list, code may import modules from
the open folder that the server read and sent with it (an :class:`ImportScope`); each of those is
compiled by :func:`compile_module`, under the same policy as the snippet, with three differences that
only ever run *less* code: its ``if __name__ == "__main__":`` body never runs, its ``if TYPE_CHECKING:``
body is dropped, and module metadata assignments (``__all__ = [...]``, ``__version__ = ...``) are
evaluated and dropped.
"""

from __future__ import annotations

import ast
import io
import keyword
import re
import sys
import tokenize
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import CodeType
from typing import Any

from RestrictedPython import compile_restricted_exec
from RestrictedPython.transformer import IOPERATOR_TO_STR, RestrictingNodeTransformer

SANDBOX_FILENAME = "<sandbox>"
#: The largest snippet the sandbox takes, checked before any parse (server and worker side).
MAX_CODE_CHARS = 200_000
REPL_VALUE_NAME = "_repl_value_"

#: Pure-computation modules code may import (and submodules listed explicitly).
ALLOWED_MODULES = frozenset(
    {
        "math", "cmath", "statistics", "random", "decimal", "fractions", "numbers", "json", "datetime",
        "itertools", "functools", "operator", "re", "string", "textwrap", "collections", "collections.abc",
        "heapq", "bisect", "calendar", "uuid", "hashlib", "base64", "unicodedata", "typing", "enum",
        "dataclasses", "time", "_strptime", "copy", "pprint", "abc", "__future__",
    }
)
#: Top-level names a module from the folder can never take, besides the standard library's: the
#: sandbox's own packages (the worker also refuses any name already in its ``sys.modules``).
SANDBOX_INTERNAL_MODULES = frozenset({"cortex_lsp", "RestrictedPython", "pyseccomp"})
#: At most this many modules from the folder per run, each at most ``MAX_MODULE_BYTES``, together at most
#: ``MAX_FOLDER_BYTES`` (the server reads them; the worker checks the count and sizes again).
MAX_FOLDER_MODULES = 32
MAX_MODULE_BYTES = 200_000
MAX_FOLDER_BYTES = 600_000
#: The longest module name the folder is asked for: more parts or characters than this and the name is
#: never looked up (refused as not a plain module name), so the work per name is bounded whatever the
#: code holds (a name part past 255 bytes is past what a file name can be anyway).
MAX_MODULE_NAME_PARTS = 32
MAX_MODULE_NAME_CHARS = 255
#: Module-level names a module from the folder may assign (evaluated, then dropped: never stored).
MODULE_METADATA = frozenset({
    "__all__", "__version__", "__author__", "__email__", "__license__", "__copyright__", "__credits__",
    "__maintainer__", "__status__", "__date__",
})
_MODULE_PART = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: The most parts a dotted name (``a.b.c``) may have in code the sandbox parses. Python's parser builds
#: an import's dotted name one part at a time (time and memory quadratic in the parts: 40 000 parts hold
#: gigabytes), so code with a longer one is refused before any parse (:func:`parse_code`).
MAX_DOTTED_PARTS = 100
#: A maximal run ``word . word . word`` (spaces and line continuations between), matched in linear time:
#: possessive quantifiers never backtrack, and a run only starts at the beginning of a word.
_DOTTED_RUN = re.compile(
    r"(?<![\w.])\w++(?:[ \t\f]*+(?:\\\r?\n[ \t\f]*+)*+\.[ \t\f]*+(?:\\\r?\n[ \t\f]*+)*+\w++)++"
)

#: Names the sandbox never provides; using them is refused up front with a reason.
UNAVAILABLE_NAMES = {
    "eval": "eval() runs unchecked code",
    "exec": "exec() runs unchecked code",
    "compile": "compile() makes unchecked code",
    "globals": "globals() exposes the interpreter's internals",
    "locals": "locals() exposes the interpreter's internals",
    "vars": "vars() exposes the interpreter's internals",
    "breakpoint": "there is no debugger in the sandbox",
    "input": "input() needs a keyboard and the sandbox has none",
    "exit": "exit() would stop the sandbox worker",
    "quit": "quit() would stop the sandbox worker",
}

#: Magic methods a class defined in the sandbox may implement (Python calls them implicitly).
EXTRA_MAGIC_METHODS = frozenset(
    {
        "__init__", "__post_init__", "__str__", "__repr__", "__format__", "__len__", "__iter__", "__next__",
        "__reversed__", "__contains__", "__getitem__", "__setitem__", "__delitem__", "__missing__",
        "__bool__", "__hash__", "__call__", "__enter__", "__exit__",
        "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
        "__add__", "__sub__", "__mul__", "__matmul__", "__truediv__", "__floordiv__", "__mod__", "__divmod__",
        "__pow__", "__lshift__", "__rshift__", "__and__", "__or__", "__xor__",
        "__radd__", "__rsub__", "__rmul__", "__rtruediv__", "__rfloordiv__", "__rmod__", "__rpow__",
        "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__imod__",
        "__neg__", "__pos__", "__abs__", "__invert__", "__int__", "__float__", "__index__", "__round__",
    }
)

#: Dunder attributes reachable on a ``super()`` object (``super().__init__(...)``).
SUPER_DUNDERS = EXTRA_MAGIC_METHODS


def is_private_name(name: str) -> bool:
    """A single-underscore name user code may use: not dunder, not a guard name (those end in ``_``)."""
    return (
        len(name) > 1
        and name.startswith("_")
        and not name.startswith("__")
        and not name.endswith("_")
        and name != "_print"
    )


def _is_main_guard(test: ast.expr) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    left, right = test.left, test.comparators[0]
    pair = {type(left), type(right)}
    if pair != {ast.Name, ast.Constant}:
        return False
    name = left if isinstance(left, ast.Name) else right
    const = right if isinstance(right, ast.Constant) else left
    return (
        isinstance(name, ast.Name)
        and name.id == "__name__"
        and isinstance(const, ast.Constant)
        and const.value == "__main__"
    )


_N = typing.TypeVar("_N", bound=ast.AST)


def _located(new: _N, old: ast.AST) -> _N:
    """``new`` with ``old``'s source position (on every node that lacks one)."""
    ast.copy_location(new, old)
    return ast.fix_missing_locations(new)


def _call(func: str, args: list[ast.expr], like: ast.AST) -> ast.Call:
    return _located(ast.Call(func=ast.Name(func, ast.Load()), args=args, keywords=[]), like)


class SandboxPolicy(RestrictingNodeTransformer):
    """RestrictedPython's policy with the rewrites listed in the module docstring."""

    def check_name(self, node: Any, name: str | None, allow_magic_methods: bool = False) -> None:
        if name is not None and is_private_name(name):
            return
        if (
            name is not None
            and allow_magic_methods
            and name in EXTRA_MAGIC_METHODS
            and getattr(node, "col_offset", 0) != 0
        ):
            return
        super().check_name(node, name, allow_magic_methods)

    def visit_If(self, node: ast.If) -> Any:
        if _is_main_guard(node.test):
            node.test = _located(ast.Constant(True), node.test)
        return super().visit_If(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> Any:
        return self.node_contents_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        value = node.value
        if (
            isinstance(node.ctx, ast.Load)
            and node.attr in SUPER_DUNDERS
            and isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id == "super"
        ):
            return _call("_super_attr_", [self.visit(value), ast.Constant(node.attr)], node)
        if is_private_name(node.attr):
            node = self.node_contents_visit(node)
            if isinstance(node.ctx, ast.Load):
                return _call("_getattr_", [node.value, ast.Constant(node.attr)], node)
            node.value = _call("_write_private_", [node.value], node.value)  # checks the name too
            return node
        return super().visit_Attribute(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> Any:
        target = node.target
        op = ast.Constant(IOPERATOR_TO_STR[type(node.op)])
        if isinstance(target, ast.Subscript):
            obj = self.visit(target.value)
            key = self.visit(target.slice)
            rhs = self.visit(node.value)
            return _located(ast.Expr(_call("_augitem_", [obj, key, op, rhs], node)), node)
        if isinstance(target, ast.Attribute):
            if target.attr.startswith("_") and not is_private_name(target.attr):
                self.error(node, f'"{target.attr}" is an invalid attribute name because it starts with "_"')
                return node
            obj = self.visit(target.value)
            rhs = self.visit(node.value)
            call = _call("_augattr_", [obj, ast.Constant(target.attr), op, rhs], node)
            return _located(ast.Expr(call), node)
        return super().visit_AugAssign(node)

    #: keep the trailing expression's value (a snippet); a module from the folder keeps none
    keeps_value = True

    def visit_Module(self, node: ast.Module) -> Any:
        visited = super().visit_Module(node)
        assert isinstance(visited, ast.Module)
        node = visited
        if self.keeps_value and node.body and isinstance(node.body[-1], ast.Expr):
            last = node.body[-1]
            assign = ast.Assign(targets=[ast.Name(REPL_VALUE_NAME, ast.Store())], value=last.value)
            node.body[-1] = _located(assign, last)
        return node


class ModulePolicy(SandboxPolicy):
    """The snippet's policy for a module from the folder: no REPL value (its ``__main__`` block is
    dropped before, by :func:`prepare_module_tree`)."""

    keeps_value = False


@dataclass
class Compiled:
    """The outcome of compiling a snippet: code to run, or why it was refused / is not Python."""

    code: CodeType | None = None
    refused: bool = False
    error: str | None = None
    value_names: list[str] = field(default_factory=list)


def _assigned_names(stmt: ast.stmt) -> list[str]:
    targets: list[ast.expr] = []
    if isinstance(stmt, ast.Assign):
        targets = list(stmt.targets[-1:])
    elif isinstance(stmt, ast.AnnAssign | ast.AugAssign):
        targets = [stmt.target]
    names: list[str] = []
    for target in targets:
        if isinstance(target, ast.Name):
            names.append(target.id)
        elif isinstance(target, ast.Tuple | ast.List):
            names += [e.id for e in target.elts if isinstance(e, ast.Name)]
    return names


def module_name_too_long(name: str) -> bool:
    """Is ``name`` past :data:`MAX_MODULE_NAME_CHARS` / :data:`MAX_MODULE_NAME_PARTS`? (Constant work:
    the length is checked before the dots are counted.)"""
    return len(name) > MAX_MODULE_NAME_CHARS or name.count(".") >= MAX_MODULE_NAME_PARTS


def shown_name(name: str, limit: int = 60) -> str:
    """``name`` quoted for a message, cut to ``limit`` characters."""
    return repr(name) if len(name) <= limit else repr(name[:limit]) + f" (... {len(name)} characters)"


def workspace_name_refusal(name: str) -> str | None:
    """Why ``name`` can't be served from the folder (``None``: it can): every part a plain ASCII
    identifier, not a dunder; the top-level name not a standard module's (``json.py`` in the folder
    never replaces the sandbox's view of ``json``) and not one of the sandbox's own packages."""
    if module_name_too_long(name):
        return (f"{shown_name(name)} is too long a module name (more than {MAX_MODULE_NAME_CHARS} characters "
                f"or {MAX_MODULE_NAME_PARTS} parts)")
    parts = name.split(".")
    if not all(_MODULE_PART.match(p) and not keyword.iskeyword(p) and not p.startswith("__") for p in parts):
        return f"{name!r} is not a plain module name"
    top = parts[0]
    if top in sys.stdlib_module_names or top in ALLOWED_MODULES:
        return f"{top} is a standard module, and a file in the folder can't take its name"
    if top in SANDBOX_INTERNAL_MODULES:
        return f"{top} is a module the sandbox itself uses"
    return None


def resolve_relative(package: str, level: int, name: str) -> str | None:
    """The absolute name of ``from <level dots><name> import ...`` in ``package`` (``None``: it climbs
    above the top-level package, or there is no package)."""
    if not package or level < 1:
        return None
    bits = package.split(".")
    if level > len(bits):
        return None
    base = ".".join(bits[: len(bits) - level + 1])
    return f"{base}.{name}" if name else base


@dataclass(frozen=True)
class ImportScope:
    """What code may import besides the allow-list: the top-level names of the folder's modules the
    server sent (``folder``), the modules it found but could not use (``unavailable``: name -> why),
    and the package relative imports resolve against (``None``/``""``: no relative import)."""

    folder: frozenset[str] = frozenset()
    unavailable: Mapping[str, str] = field(default_factory=dict)
    package: str | None = None

    def refusal(self, name: str) -> str | None:
        """``None`` when the folder serves ``name`` (absolute; a missing submodule of a served package
        fails at run time, as in Python), the reason when the folder has it but can't use it, ``""``
        when the folder does not have it. A name past the length bounds is never served (constant work)."""
        if module_name_too_long(name):
            top = name[: MAX_MODULE_NAME_CHARS + 1].partition(".")[0]
            if top in self.folder or top in self.unavailable:
                return f"{shown_name(name)} is too long a module name for the folder"
            return ""
        parts = name.split(".")
        for i in range(1, len(parts) + 1):
            why = self.unavailable.get(".".join(parts[:i]))
            if why is not None:
                return why
        return None if parts[0] in self.folder else ""


class UnreadableCode(SyntaxError):
    """Code the sandbox does not parse or compile: a dotted name past :data:`MAX_DOTTED_PARTS`, or
    nesting deeper than Python's parser or compiler go (``RecursionError``). ``msg`` reads as a reason
    ("a dotted name of more than 100 parts"); ``lineno`` is where, when known."""


#: The reason for code nested deeper than Python's parser or compiler go.
TOO_DEEP = "the code is nested too deeply for the sandbox (RecursionError)"


def long_dotted_name(source: str) -> int | None:
    """The line of the first dotted name of more than :data:`MAX_DOTTED_PARTS` parts (``None``: none)."""
    for match in _DOTTED_RUN.finditer(source):
        if source.count(".", match.start(), match.end()) >= MAX_DOTTED_PARTS:
            return source.count("\n", 0, match.start()) + 1
    return None


def parse_code(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse`` for code from outside (a snippet, a folder module, a message): raises
    :class:`UnreadableCode` (a ``SyntaxError``) instead of parsing a dotted name past the bound or
    letting a ``RecursionError``/``MemoryError`` of the parser through."""
    line = long_dotted_name(source)
    if line is not None:
        raise UnreadableCode(f"a dotted name of more than {MAX_DOTTED_PARTS} parts", (filename, line, 1, None))
    try:
        return ast.parse(source, filename, "exec")
    except (RecursionError, MemoryError):
        raise UnreadableCode(TOO_DEEP, (filename, _busiest_line(source), None, None)) from None


def _busiest_line(source: str) -> int | None:
    """The line with the most operator tokens: where a parse too deep for Python most likely is (there
    is no tree to ask; tokenizing is linear and does not nest)."""
    counts: dict[int, int] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.OP:
                counts[token.start[0]] = counts.get(token.start[0], 0) + 1
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass
    return max(counts, key=lambda line: counts[line]) if counts else None


def deepest_line(tree: ast.AST) -> int | None:
    """The line of the most deeply nested node of ``tree`` (walked without recursion)."""
    best, best_depth = None, -1
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > best_depth and getattr(node, "lineno", None) is not None:
            best, best_depth = node.lineno, depth  # type: ignore[attr-defined]
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return best


def _unreadable(exc: UnreadableCode) -> str:
    return f"line {exc.lineno}: {exc.msg}" if exc.lineno else str(exc.msg)


def _restricted(tree: ast.Module, filename: str, policy: type[SandboxPolicy]) -> Any:
    """RestrictedPython's compile of ``tree``; a ``RecursionError``/``MemoryError`` of its (recursive)
    transformer or of ``compile`` becomes :class:`UnreadableCode` with the deepest line."""
    try:
        return compile_restricted_exec(tree, filename=filename, policy=policy)
    except (RecursionError, MemoryError):
        raise UnreadableCode(TOO_DEEP,
                             (filename, deepest_line(tree), None, None)) from None


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
        and isinstance(test.value, ast.Name) and test.value.id == "typing")


def _metadata_target(stmt: ast.stmt) -> ast.expr | None:
    """The value of ``__all__ = ...`` (and the other :data:`MODULE_METADATA` names) at module level."""
    if isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) and t.id in MODULE_METADATA
                                            for t in stmt.targets):
        return stmt.value
    if isinstance(stmt, ast.AugAssign | ast.AnnAssign) and isinstance(stmt.target, ast.Name) \
            and stmt.target.id in MODULE_METADATA:
        return stmt.value or ast.Constant(None)
    return None


def prepare_module_tree(tree: ast.Module) -> ast.Module:
    """A folder module's tree as the sandbox runs it: the ``if __name__ == "__main__":`` and
    ``if TYPE_CHECKING:`` bodies dropped (their ``else`` kept), metadata assignments evaluated and
    dropped. Only ever removes code."""
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and (_is_main_guard(node.test) or _is_type_checking(node.test)):
            node.test = _located(ast.Constant(False), node.test)
            node.body = [_located(ast.Pass(), node.body[0])]
    for i, stmt in enumerate(tree.body):
        value = _metadata_target(stmt)
        if value is not None:
            tree.body[i] = _located(ast.Expr(value), stmt)
    return tree


def _import_refusal(module: str, scope: ImportScope | None) -> str | None:
    if module in ALLOWED_MODULES:
        return None
    why = scope.refusal(module) if scope is not None else ""
    if why is None:
        return None
    if why:
        return f"{module} from the folder can't be imported: {why}"
    return (f"import of {shown_name(module)} is not allowed in the sandbox "
            "(only pure-computation modules such as math, json, re, datetime, collections)")


def static_refusals(tree: ast.Module, scope: ImportScope | None = None) -> list[str]:
    """Reasons to refuse before running: imports outside the allow-list and the folder's modules,
    names the sandbox lacks."""
    reasons: list[str] = []
    for node in ast.walk(tree):
        modules: list[str] = []
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                absolute = resolve_relative(scope.package or "", node.level, node.module or "") if scope else None
                if absolute is None:
                    reasons.append(f"line {line}: relative imports are not allowed in the sandbox "
                                   "(only inside a package in the folder)")
                    continue
                modules = [absolute]
            else:
                modules = [node.module or ""]
        for module in modules:
            why = _import_refusal(module, scope)
            if why:
                reasons.append(f"line {line}: {why}")
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in UNAVAILABLE_NAMES:
            reasons.append(f"line {line}: {node.id} is not available: {UNAVAILABLE_NAMES[node.id]}")
    return list(dict.fromkeys(reasons))


def compile_snippet(source: str, scope: ImportScope | None = None) -> Compiled:
    """Parse, check and restricted-compile ``source`` for the sandbox (size first: no parse over it)."""
    if len(source) > MAX_CODE_CHARS:
        return Compiled(refused=True, error=f"Refused by the sandbox: the code is over {MAX_CODE_CHARS} characters")
    try:
        tree = parse_code(source, SANDBOX_FILENAME)
        reasons = static_refusals(tree, scope)
        if reasons:
            return Compiled(refused=True, error="Refused by the sandbox: " + "; ".join(reasons))
        value_names = _assigned_names(tree.body[-1]) if tree.body else []
        result = _restricted(tree, SANDBOX_FILENAME, SandboxPolicy)
    except UnreadableCode as exc:
        return Compiled(refused=True, error=f"Refused by the sandbox: {_unreadable(exc)}")
    except SyntaxError as exc:
        where = f"line {exc.lineno}: " if exc.lineno else ""
        return Compiled(error=f"SyntaxError: {where}{exc.msg}")
    if result.errors or result.code is None:
        return Compiled(refused=True, error="Refused by the sandbox: " + "; ".join(result.errors))
    return Compiled(code=result.code, value_names=value_names)


def compile_module(source: str, filename: str, scope: ImportScope) -> Compiled:
    """Compile a module from the folder exactly like a snippet (the same policy, the same static
    refusals, relative imports resolved against ``scope.package``), after :func:`prepare_module_tree`,
    and without keeping a last value. ``error`` says why it can't be imported (no ``Refused by the
    sandbox`` prefix: the importer adds where it was imported)."""
    if len(source) > MAX_CODE_CHARS:
        return Compiled(refused=True, error=f"it is over {MAX_CODE_CHARS} characters")
    try:
        tree = parse_code(source, filename)
        try:
            tree = prepare_module_tree(tree)
        except (RecursionError, MemoryError):
            raise UnreadableCode(TOO_DEEP, (filename, deepest_line(tree), None, None)) from None
        reasons = static_refusals(tree, scope)
        if reasons:
            return Compiled(refused=True, error="; ".join(reasons))
        result = _restricted(tree, filename, ModulePolicy)
    except UnreadableCode as exc:
        return Compiled(refused=True, error=_unreadable(exc))
    except SyntaxError as exc:
        where = f"line {exc.lineno}: " if exc.lineno else ""
        return Compiled(error=f"SyntaxError: {where}{exc.msg}")
    if result.errors or result.code is None:
        return Compiled(refused=True, error="; ".join(result.errors))
    return Compiled(code=result.code)
