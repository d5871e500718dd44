"""The router's word tables and the meaning classifier, combined into one route.

The word tables (:func:`cortex_lsp.agent.router.route`) are precise where they fire: a named file, an
expression, a fenced block, a write the words ask for. Where they find no call (a ``direct`` or
``undecided`` route), the request's meaning (:mod:`cortex_lsp.agent.meaning`) picks the read-only
route, and the slots still come from the parsed intent: the folder named in the words, the code the
user typed, the numbers they gave. A route whose slots are missing is not taken. Meaning never adds a
write: ``write_given`` is taken only where the words' own write grant already made a route.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from cortex_lsp.agent.datavalue import is_data_file
from cortex_lsp.agent.meaning import Meaning
from cortex_lsp.agent.router import (
    DOC_TOP_K,
    IntentLike,
    Route,
    RoutedCall,
    doc_query,
    doc_question,
    folder_named,
)
from cortex_lsp.agent.runnability import inline_code

_DIGIT = re.compile(r"\d")
#: the words must point at a folder or its files for a listing (the folder slot)...
_LISTING = re.compile(
    r"\b(?:files?|folders?|director(?:y|ies)|dirs?|project|repo(?:sitory)?|workspace|here|tree|structure|ls|"
    r"dateien|ordner|verzeichnis|projekt|fichiers?|dossier|r[ée]pertoire|projet|archivos|carpeta|proyecto|"
    r"cartella|progetto|arquivos|pasta|projeto|bestanden|map|mappen?|filer|mapp|projektet|pliki|folderze|katalog)\b",
    re.IGNORECASE,
)
#: ...and at the documents for a document search (the corpus slot)
_DOCUMENTS = re.compile(
    r"\b(?:docs?|document\w*|dokument\w*|documenta\w*|doku\w*|guides?|handbook|manual|readme|wiki|notes|"
    r"knowledge\s+base|instructions|how-?tos?)\b",
    re.IGNORECASE,
)
_FENCED = re.compile(r"^[ \t]*(?:`{3,}|~{3,})[^\n]*\n(.*?)^[ \t]*(?:`{3,}|~{3,})[ \t]*$", re.MULTILINE | re.DOTALL)


def _list(intent: IntentLike, offered: set[str]) -> Route | None:
    if "list_dir" not in offered or not (_LISTING.search(intent.words) or folder_named(intent.words) != "."):
        return None
    call = RoutedCall("list_dir", {"path": folder_named(intent.words)})
    return Route("tools", (call,), tools=("list_dir",), prose=False, reason="the request means a folder listing")


#: a reading this clear is a document search even without a word for the documents ("how do we deploy
#: this service?"): the classifier's score and its lead over the runner-up
DOCS_WITHOUT_WORD = (0.35, 0.06)


def _docs(intent: IntentLike, offered: set[str], meaning: Meaning | None = None) -> Route | None:
    clear = meaning is not None and meaning.score >= DOCS_WITHOUT_WORD[0] and meaning.margin >= DOCS_WITHOUT_WORD[1]
    if "doc_search" not in offered or not (_DOCUMENTS.search(intent.words) or clear):
        return None
    query = doc_query(intent.words)
    call = RoutedCall("doc_search", {"action": "search", "query": query, "top_k": DOC_TOP_K})
    return Route("tools", (call,), tools=("doc_search",), question=doc_question(query),
                 reason="the request means a search of the documents")


def _run(intent: IntentLike, offered: set[str], message: str) -> Route | None:
    """Run code the user typed in this message (fenced or inline); a selection is never run on meaning
    alone ("find the bug in the selected function" is no request to run it), nor code to be fixed."""
    code = _FENCED.search(message)
    typed = code.group(1) if code else inline_code(message)
    if not typed or not typed.strip() or "python_exec" not in offered or intent.cues.code_writing:
        return None
    code_text = typed
    call = RoutedCall("python_exec", {"code": code_text})
    return Route("tools", (call,), tools=("python_exec",), prose=False, run_meant=True,
                 reason="the request means running the given code")


def _compute(intent: IntentLike, offered: set[str]) -> Route | None:
    """Arithmetic the word tables could not read: first a data file whose column the words name ("the
    total for the South region"), then, if the words hold numbers, code the model writes and code runs."""
    if intent.cues.code_writing:
        return None
    numbers = bool(_DIGIT.search(intent.words)) and "python_exec" in offered
    found = _find(intent, offered, also=("python_exec",) if numbers else ())
    if found is not None:
        return Route(found.kind, tools=found.tools, find_data=True, run_written=numbers, run_meant=numbers,
                     reason="the request means arithmetic over a data file, or over the numbers it gives")
    if not numbers:
        return None
    return Route("tools", tools=("python_exec",), run_written=True, run_meant=True,
                 reason="the request means arithmetic the word tables could not read")


def _find(intent: IntentLike, offered: set[str], also: tuple[str, ...] = ()) -> Route | None:
    """No file named: code looks for a data file in the open folder that answers the words (if none
    does, no tool runs for it)."""
    if intent.files or "read_file" not in offered:
        return None
    return Route("tools", tools=("read_file", *also), find_data=True,
                 reason="the request means a value in a data file it did not name")


def _read(intent: IntentLike, offered: set[str]) -> Route | None:
    if "read_file" not in offered or not intent.files:
        return None
    files = intent.files[:3]
    calls = tuple(RoutedCall("read_file", {"path": f}) for f in files)
    return Route("tools", calls, tools=("read_file",), compute_data=len(files) == 1 and is_data_file(files[0]),
                 reason="the request means reading the named file")


def combine(
    ruled: Route,
    meaning: Meaning | None,
    intent: IntentLike,
    *,
    message: str,
    available: Sequence[str],
) -> Route:
    """The route to take: the word tables' where they made calls (or a write), else the meaning's."""
    if meaning is None or not meaning.sure:
        return ruled
    if meaning.route == "run_code" and ruled.calls and all(c.tool == "calculator" for c in ruled.calls):
        # "run print(3 ** 4)": the code the user typed runs, its arithmetic is not lifted out of it
        return _run(intent, set(available), message) or ruled
    if ruled.kind == "tools" or ruled.save_to:
        return ruled
    offered = set(available)
    kind = meaning.route
    chosen: Route | None = None
    if kind == "list":
        chosen = _list(intent, offered)
    elif kind == "doc_search":
        chosen = _docs(intent, offered, meaning)
    elif kind == "run_code":
        chosen = _run(intent, offered, message)
    elif kind == "compute":
        chosen = _compute(intent, offered)
    elif kind == "read":
        chosen = _read(intent, offered)
    elif kind == "data_value":
        chosen = _read(intent, offered) or _find(intent, offered)
    return chosen or ruled
