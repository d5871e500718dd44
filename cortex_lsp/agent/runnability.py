"""Can the sandbox run this code? A deterministic answer, with no model call.

:func:`cannot_run_reply` reads the code (the AST, or the text when it does not parse) and, when the
sandbox cannot run it (GUI or terminal libraries, ``input()``, modules outside the sandbox's allow-list,
``eval``/``exec``/``compile``, dunder attributes), returns the reason and the command to run it locally,
with a ``pip install`` line only for third-party packages whose distribution name is known.
:func:`extract_code` finds the last Python code block in a message or in history text.

Given the open folders (``roots``, or the run's :data:`FOLDER_ROOTS`), a module the folder has (``utils.py``,
a package with ``__init__.py``) is not "a package the sandbox does not have": the sandbox imports it
(:mod:`cortex_lsp.tools.sandbox.folder_modules` finds the same modules the sandbox will), and what
*that* module can't do is the reason instead ("it imports app (app.py in the folder), which imports
flask, ..."). A folder module that can't be used (too large, a link out of the folder) says why.
"""

from __future__ import annotations

import ast
import bisect
import re
import sys
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from cortex_lsp.tools.sandbox.folder_modules import FolderImports, gather, parse_module
from cortex_lsp.tools.sandbox.policy import (
    ALLOWED_MODULES,
    MAX_CODE_CHARS,
    SUPER_DUNDERS,
    ImportScope,
    UnreadableCode,
    parse_code,
    resolve_relative,
)

#: The open folders of the run in progress (the agent kernel sets them), for callers that don't pass
#: ``roots`` to :func:`cannot_run_reply`.
FOLDER_ROOTS: ContextVar[tuple[Path, ...]] = ContextVar("cortex_folder_roots", default=())

#: Import name -> PyPI distribution name, for packages whose names differ or are commonly needed.
PIP_NAMES: dict[str, str] = {
    "cv2": "opencv-python",
    "PIL": "pillow",
    "sklearn": "scikit-learn",
    "yaml": "pyyaml",
    "bs4": "beautifulsoup4",
    "skimage": "scikit-image",
    "dateutil": "python-dateutil",
    "dotenv": "python-dotenv",
    "serial": "pyserial",
    "usb": "pyusb",
    "Crypto": "pycryptodome",
    "OpenGL": "PyOpenGL",
    "wx": "wxPython",
    "gi": "PyGObject",
    "attr": "attrs",
    "jwt": "PyJWT",
    "magic": "python-magic",
    "docx": "python-docx",
    "pptx": "python-pptx",
    "fitz": "pymupdf",
    "MySQLdb": "mysqlclient",
    "psycopg2": "psycopg2-binary",
    "zmq": "pyzmq",
    "telegram": "python-telegram-bot",
    "discord": "discord.py",
}
#: Third-party packages installed under their import name.
SAME_NAME_PACKAGES = frozenset(
    {
        "numpy", "pandas", "scipy", "matplotlib", "seaborn", "requests", "httpx", "aiohttp", "flask",
        "django", "fastapi", "uvicorn", "pygame", "torch", "tensorflow", "keras", "sympy", "networkx",
        "plotly", "bokeh", "tqdm", "rich", "click", "typer", "pydantic", "openpyxl", "xlrd", "lxml",
        "selenium", "pytest", "numba", "polars", "pyarrow", "nltk", "spacy", "transformers", "boto3",
        "redis", "pymongo", "sqlalchemy", "jinja2", "markdown", "emoji", "colorama", "termcolor",
        "pyautogui", "pynput", "keyboard", "mouse", "arcade", "pyglet", "kivy", "streamlit", "dash",
        "tabulate", "faker", "pendulum", "arrow", "websockets", "paramiko", "psutil", "schedule",
    }
)
GUI_MODULES = {
    "pygame": "pygame opens a game window",
    "tkinter": "tkinter opens a GUI window",
    "turtle": "turtle draws in a GUI window",
    "curses": "curses needs an interactive terminal",
    "pyglet": "pyglet opens a window",
    "arcade": "arcade opens a game window",
    "kivy": "kivy opens a GUI window",
    "wx": "wxPython opens a GUI window",
    "PyQt5": "PyQt opens a GUI window",
    "PyQt6": "PyQt opens a GUI window",
    "PySide6": "PySide opens a GUI window",
    "pyautogui": "pyautogui controls the real mouse and keyboard",
}
_UNCHECKED = {"eval": "eval()", "exec": "exec()", "compile": "compile()"}
#: A fence's opening line: its run of backticks or tildes, then the language word.
_FENCE_OPEN = re.compile(r"(`{3,}|~{3,})[ \t]*+([\w+.-]*+)")
_PY_LANGS = {"python", "py", "python3", "py3", "pycon", "ipython"}


@dataclass
class _Findings:
    reasons: list[str] = field(default_factory=list)
    packages: list[str] = field(default_factory=list)  # pip distribution names
    uses_input: bool = False
    #: what the folder serves (``None``: no folder given)
    folder: ImportScope | None = None


def _pip_name(module: str) -> str | None:
    if module in PIP_NAMES:
        return PIP_NAMES[module]
    if module in SAME_NAME_PACKAGES:
        return module
    return None


def _is_stdlib(module: str) -> bool:
    return module in sys.stdlib_module_names


def _check_module(module: str, findings: _Findings) -> None:
    top = module.partition(".")[0]
    if module in ALLOWED_MODULES:
        return
    why = findings.folder.refusal(module) if findings.folder is not None else ""
    if why is None:
        return  # a module of the folder: what it does is checked by itself
    if why:
        findings.reasons.append(f"it imports {module} from the folder, which the sandbox can't use ({why})")
        return
    if top in GUI_MODULES:
        findings.reasons.append(
            f"it uses {top} ({GUI_MODULES[top]}), and the sandbox has no display or terminal"
        )
    elif _is_stdlib(top):
        findings.reasons.append(
            f"it imports {module}, which the sandbox does not allow (only pure-computation modules such as "
            "math, json, re, datetime and collections; no files, processes or network)"
        )
    else:
        findings.reasons.append(f"it imports {module}, a package the sandbox does not have")
    pip = None if _is_stdlib(top) else _pip_name(top)
    if pip and pip not in findings.packages:
        findings.packages.append(pip)


def _is_super_call(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def _scan_tree(tree: ast.AST, findings: _Findings, package: str | None = None) -> None:
    """``package``: a folder module's package (its relative imports resolve against it)."""
    dunders: set[str] = set()
    # packages with an unavailable submodule (``from X import a`` looks ``X.a`` up only for those)
    parents = {n.rpartition(".")[0] for n in findings.folder.unavailable} if findings.folder is not None else set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                _check_module(alias.name, findings)
        elif isinstance(node, ast.ImportFrom):
            absolute = resolve_relative(package or "", node.level, node.module or "") if node.level else node.module
            if node.level and absolute is None:
                findings.reasons.append("it imports from a local package (relative import)")
            elif absolute:
                _check_module(absolute, findings)
                for alias in node.names if absolute in parents else ():  # a submodule the sandbox can't use
                    if findings.folder is not None and f"{absolute}.{alias.name}" in findings.folder.unavailable:
                        _check_module(f"{absolute}.{alias.name}", findings)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            name = node.func.id
            if name == "input":
                findings.uses_input = True
            elif name in _UNCHECKED:
                findings.reasons.append(f"it calls {_UNCHECKED[name]}, which runs unchecked code")
            elif name == "__import__":
                findings.reasons.append("it calls __import__()")
        elif isinstance(node, ast.Attribute) and node.attr.startswith("__") and node.attr.endswith("__"):
            if not (_is_super_call(node.value) and node.attr in SUPER_DUNDERS):
                dunders.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if re.fullmatch(r"__\w+__", node.value) and node.value not in ("__main__", "__init__"):
                dunders.add(node.value)
        elif package is not None and isinstance(node, ast.Name) and node.id.startswith("__"):
            dunders.add(node.id)  # a folder module's __file__, __name__ (its __main__ block is dropped)
    if dunders:
        names = ", ".join(sorted(dunders))
        findings.reasons.append(f"it uses special (dunder) attributes ({names}), which the sandbox blocks")


#: An import line (the text scan of code that does not parse). Only spaces and tabs around the words:
#: ``^\s*`` with MULTILINE would run over every following blank line from every line start, and back
#: (quadratic in a run of blank lines); possessive quantifiers never backtrack.
_IMPORT_LINE = re.compile(
    r"^[ \t]*+(?:from[ \t]++([\w.]++)[ \t]++import|import[ \t]++([\w.]++(?:[ \t]*+,[ \t]*+[\w.]++)*+))",
    re.MULTILINE,
)


def _scan_text(code: str, findings: _Findings) -> None:
    """Fallback for code that does not parse (e.g. a fragment): look at import lines and calls."""
    for match in _IMPORT_LINE.finditer(code):
        modules = [match.group(1)] if match.group(1) else [m.strip() for m in match.group(2).split(",")]
        for module in modules:
            _check_module(module, findings)
    if re.search(r"(?<![\w.])input\s*\(", code):
        findings.uses_input = True
    for name, label in _UNCHECKED.items():
        if re.search(rf"(?<![\w.]){name}\s*\(", code):
            findings.reasons.append(f"it calls {label}, which runs unchecked code")
    dunders = set(re.findall(r"\.(__\w+__)", code)) - {"__init__"}
    if dunders:
        names = ", ".join(sorted(dunders))
        findings.reasons.append(f"it uses special (dunder) attributes ({names}), which the sandbox blocks")


def _folder_findings(code: str, roots: Sequence[Path]) -> _Findings:
    """The folder modules ``code`` imports, and the findings of each module's own code, as reasons of
    the snippet ("it imports app (app.py in the folder), which imports flask, ...")."""
    try:
        folder = gather(code, roots)
    except (OSError, RuntimeError):  # a file system error past the finder's own: as if the folder had none
        folder = FolderImports()
    scope = ImportScope(folder=frozenset(n.partition(".")[0] for n in folder.modules),
                        unavailable=folder.unavailable)
    found = _Findings(folder=scope)
    for module in folder.modules.values():
        tree = parse_module(module.source, module.path)
        if tree is None:
            continue
        inner = _Findings(folder=scope)
        _scan_tree(tree, inner, package=module.name if module.is_package else module.name.rpartition(".")[0])
        if inner.uses_input:
            inner.reasons.insert(0, "it reads keyboard input with input(), and the sandbox has no keyboard")
        for reason in inner.reasons:
            found.reasons.append(f"it imports {module.name} ({module.path} in the folder), which "
                                 + reason.removeprefix("it "))
        found.packages += [p for p in inner.packages if p not in found.packages]
        found.uses_input = found.uses_input or inner.uses_input
    return found


def cannot_run_reply(code: str, roots: Sequence[Path] | None = None) -> str | None:
    """Why the sandbox can't run ``code`` and how to run it locally; ``None`` if the sandbox can run it.

    ``roots``: the open folders (default: the run's :data:`FOLDER_ROOTS`), whose modules the sandbox
    imports. The size limit is checked first: code over it is never parsed (a 50 MB selection costs
    nothing)."""
    if len(code) > MAX_CODE_CHARS:
        return (
            f"The sandbox can't run this code: it is over {MAX_CODE_CHARS} characters. "
            "Run it on your computer instead (save it as script.py, then: python script.py)."
        )
    if not code or not code.strip():
        return None
    findings = _Findings()
    folder_roots = list(FOLDER_ROOTS.get() if roots is None else roots)
    if folder_roots:
        findings = _folder_findings(code, folder_roots)
    module_reasons, findings.reasons = findings.reasons, []
    module_input, findings.uses_input = findings.uses_input, False
    try:
        tree = parse_code(code)
    except UnreadableCode as exc:  # a dotted name past the bound, nesting past the parser's
        findings.reasons.append(f"it has {exc.msg}" + (f" (line {exc.lineno})" if exc.lineno else "")
                                + ", which the sandbox does not read")
    except (SyntaxError, ValueError):
        _scan_text(code, findings)
    else:
        _scan_tree(tree, findings)
    findings.reasons += module_reasons
    if findings.uses_input:
        findings.reasons.insert(0, "it reads keyboard input with input(), and the sandbox has no keyboard")
    if not findings.reasons:
        return None
    reasons = list(dict.fromkeys(findings.reasons))
    lines = ["The sandbox can't run this code: " + "; ".join(reasons) + "."]
    lines.append("")
    lines.append("Run it on your computer instead: save it as script.py, then:")
    lines.append("")
    lines.append("```")
    if findings.packages:
        lines.append("pip install " + " ".join(findings.packages))
    lines.append("python script.py")
    lines.append("```")
    if findings.uses_input or module_input:
        lines.append("It will ask for its input in the terminal.")
    return "\n".join(lines)


def _looks_like_python(body: str) -> bool:
    try:
        parse_code(body)
    except (SyntaxError, ValueError):
        return False
    return bool(re.search(r"\b(def|import|print|for|while|if|class|return)\b|=", body))


def fenced_blocks(text: str) -> Iterator[tuple[str, str]]:
    """``(language, body)`` of each fenced block, in order: an opening line of three or more backticks
    (or tildes) and a language word, closed by the first later line that is the same fence alone (a
    longer opening run may close on a shorter fence, then with no language). Linear in the text: the
    closing lines are indexed once, so an opening fence that is never closed costs no scan of the rest."""
    lines = text.split("\n")
    closers: dict[str, list[int]] = {}
    for number, line in enumerate(lines):
        key = line.rstrip(" \t")
        if len(key) >= 3 and key[0] in "`~" and key.count(key[0]) == len(key):
            closers.setdefault(key, []).append(number)
    lengths = {mark: sorted(len(k) for k in closers if k[0] == mark) for mark in "`~"}
    number = 0
    while number < len(lines) - 1:  # the last line has no newline: it opens nothing
        opening = _FENCE_OPEN.match(lines[number])
        if opening is None:
            number += 1
            continue
        run = opening.group(1)
        closed: tuple[int, int] | None = None
        sizes = lengths[run[0]]
        for size in reversed(sizes[: bisect.bisect_right(sizes, len(run))]):  # the longest fence first
            at = closers[run[0] * size]
            later = bisect.bisect_right(at, number)
            if later < len(at):
                closed = size, at[later]
                break
        if closed is None:
            number += 1
            continue
        size, end = closed
        yield (opening.group(2) if size == len(run) else ""), "\n".join(lines[number + 1:end])
        number = end + 1


def extract_code(text: str) -> str | None:
    """The last Python code block in ``text``: fenced ```python / ```py, or unlabelled but parsing.

    Unlabelled blocks over the sandbox's size limit are not parsed (they could not run anyway)."""
    if not text:
        return None
    chosen: str | None = None
    for lang, block in fenced_blocks(text):
        lang = lang.lower()
        body = block.strip("\n")
        if not body.strip() or (lang == "" and len(body) > MAX_CODE_CHARS):
            continue
        if lang in _PY_LANGS or (lang == "" and _looks_like_python(body)):
            chosen = body
    return chosen


_INLINE_LEAD = re.compile(
    r"(?:\b(?:run(?:ning)?|execute|exec|eval(?:uate)?|output\s+of(?:\s+running)?|führe|exécute|ejecuta)\b"
    r"(?:\s+(?:this|the|following|below|python|code|snippet|script|line|for\s+me|please|aus|ce|este|"
    r"código|diesen|code))*\s*:?|[:?])\s*`?",
    re.IGNORECASE,
)
_CODE_SIGNS = re.compile(r"\w\(|\bimport\b|\bprint\b|[=\[\]{}]|\blambda\b")
_FOR, _IN = re.compile(r"\bfor\b"), re.compile(r"\bin\b")
#: Words after the code ("..., then tell me"). A match starts only where no space is before it and its
#: spaces are possessive: the engine never tries each position of a run of spaces against each shorter
#: run (that was cubic in the run).
_TRAILING_WORDS = re.compile(
    r"(?<!\s)\s*+(?:[,;.]?\s*+(?:and|then)\s++(?:tell|show|give|paste|print|report|display|send)\b.*|"
    r"[,;.]?\s*+(?:for\s++me|please|thanks?)\b.*|"
    r"\?\s*+(?:run|execute)\s++it.*|(?<=\s)(?:and|then)\s++(?:run|execute)\s++it.*)$",
    re.IGNORECASE | re.DOTALL,
)


def _has_code_signs(text: str) -> bool:
    """A call, ``import``, ``print``, an ``=`` or a bracket, ``lambda``, or ``for ... in`` on one line
    (each line searched once: no scan from every ``for`` to the line's end and back)."""
    if _CODE_SIGNS.search(text):
        return True
    for line in text.split("\n"):
        loop = _FOR.search(line)
        if loop is not None and _IN.search(line, loop.end() + 1):
            return True
    return False


def _is_code(candidate: str) -> bool:
    if not candidate or not _has_code_signs(candidate):
        return False
    try:
        tree = parse_code(candidate)
    except (SyntaxError, ValueError):
        return False
    if not tree.body:
        return False
    first = tree.body[0]
    # "python: sorted(x)" parses as an annotation, "hello" as a name and a quoted sentence as a string
    return not ((isinstance(first, ast.AnnAssign) and first.value is None) or
                (len(tree.body) == 1 and isinstance(first, ast.Expr)
                 and isinstance(first.value, ast.Name | ast.Constant)))


#: Run verbs (or colons) whose code :func:`inline_code` tries, and the longest text after one whose
#: every word end is tried as the end of the code (each try parses it: the work stays linear in the message).
MAX_INLINE_LEADS = 8
MAX_INLINE_WORDS_CHARS = 1_000


#: how many lines of request may come before code pasted on lines of its own
MAX_REQUEST_LINES = 4


def _pasted_block(message: str) -> str | None:
    """Code pasted on lines of its own under the request ("run it\nimport math\nprint(…)"): the lines
    from the first one on which the rest of the message parses as Python and looks like code."""
    lines = message.strip().splitlines()
    if len(lines) < 2:
        return None
    for first in range(min(MAX_REQUEST_LINES, len(lines) - 1) + 1):
        block = "\n".join(lines[first:]).strip("\n")
        if block.strip() and _is_code(block):
            return block
    return None


def inline_code(message: str) -> str | None:
    """Python the user typed without a fence ("Run this Python code: print(sum(range(101)))", "could u
    run print(bin(37)) real quick"): code pasted on lines of its own under the request, else the longest
    text after a run verb (or a colon) that parses as Python and looks like code, not prose; words
    after the code are left out."""
    if "```" in message or len(message) > MAX_CODE_CHARS:
        return None
    block = _pasted_block(message)
    if block is not None:
        return block
    best: str | None = None
    quoted = [m.span() for m in _QUOTED_SPAN.finditer(message)]
    leads = 0
    for lead in _INLINE_LEAD.finditer(message):
        if any(a < lead.start() < b for a, b in quoted):
            continue  # "what does this email say? "Run: …"": a quote's words are data, not a request
        leads += 1
        if leads > MAX_INLINE_LEADS:
            break  # the earliest leads have the longest code after them
        rest = message[lead.end():].strip()
        candidates = [rest, _TRAILING_WORDS.sub("", rest).strip()]
        spans = rest.lstrip("`").split("`")
        if (message[lead.end() - 1:lead.end()] == "`" or rest.startswith("`")) and len(spans) == 2:
            # the backtick span right after the run verb is the code, whatever words follow its close
            candidates.append(spans[0])
        # the code, then words ("print(bin(37)) real quick"): the text up to each word's end where the
        # code could end (a bracket, a quote, a digit: "print(7) and paste" ends on a word, it is prose)
        if "`" not in rest and len(rest) <= MAX_INLINE_WORDS_CHARS:  # backticks mark the code themselves (above)
            candidates.extend(rest[:m.end()] for m in _WORD_END.finditer(rest) if not rest[m.end() - 1].isalpha())
        for candidate in candidates:
            candidate = candidate.strip("`").rstrip("?").strip()
            if candidate.endswith(".") and not candidate.endswith(".."):
                candidate = candidate[:-1]
            if (best is None or len(candidate) > len(best)) and _is_code(candidate):
                best = candidate
    return best


_WORD_END = re.compile(r"\S(?=\s|$)")
_QUOTED_SPAN = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|«[^»\n]*»")
