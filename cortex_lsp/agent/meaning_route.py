"""The router's word tables and the request's meaning, combined into one route.

The word tables (:func:`cortex_lsp.agent.router.route`) are precise where they fire: a named file, an
expression, a fenced block, a write the words ask for. Where they find no call (a ``direct`` or
``undecided`` route), the request's meaning (:mod:`cortex_lsp.agent.meaning`) picks the route, and the
slots still come from the request and the open folder: the folder named in the words (one that
exists), the code the user typed, the numbers they gave, the document section that covers the
question. A route whose slots are missing is not taken. A few readings of the meaning also correct the
tables where they read a word too narrowly: a folder written as a path is listed, not searched as
documents; code typed after "run" runs even when a name in it looks like a file.

Writes: meaning may *propose* writing text the user gave into a new file ("new file scratch.py,
content: …"). It grants nothing: the write goes to the user's review in the editor (labelled asked or
not by the words' own reading), and where nobody can review, only the words' grant lets it through.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from cortex_lsp.agent.datavalue import is_data_file
from cortex_lsp.agent.given import given_write
from cortex_lsp.agent.meaning import Meaning
from cortex_lsp.agent.numtext import fold
from cortex_lsp.agent.project_view import ProjectView
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
#: ...and the files in it: "which files", "quels fichiers", "welche Dateien"
_FILES_NOUN = re.compile(
    r"\b(?:files|dateien|fichiers|archivos|ficheros|file|arquivos|bestanden|filer|pliki|plików|documenti|"
    r"contents?|inhalt|contenu|contenido)\b", re.IGNORECASE)
#: ...and at the documents for a document search (the corpus slot)
_DOCUMENTS = re.compile(
    r"\b(?:docs?|document\w*|dokument\w*|documenta\w*|doku\w*|guides?|handbook|manual|readme|wiki|notes|"
    r"knowledge\s+base|instructions|how-?tos?)\b",
    re.IGNORECASE,
)
_FENCED = re.compile(r"^[ \t]*(?:`{3,}|~{3,})[^\n]*\n(.*?)^[ \t]*(?:`{3,}|~{3,})[ \t]*$", re.MULTILINE | re.DOTALL)
_WORD = re.compile(r"`?([\w][\w.-]*(?:/[\w.-]+)*)/?`?")

#: the nearest document section covers the request at this cosine: a document search, whatever the
#: classifier's route (questions the documents answer score 0.40-0.70, general knowledge below 0.36)
DOCS_MATCH = 0.40
#: the classifier reads a document search and the nearest section is at least this close
DOCS_MEANT = 0.30
#: a direct reading this clear is kept whatever the documents hold: "What is my favourite food?" asks
#: the user's memory, even when a file in the folder says something about "the user"
DIRECT_KEPT = 0.50


_LONG_WORD = re.compile(r"[^\W\d_]{5,}")
_ENGLISH_WORDS = frozenset("""
the a an is are was were be been do does did how what which who where when why can could should would will
i you we they it this that these those my our your their of in on at to for from with by and or not there
""".split())
_HOW_DO_I = re.compile(r"\bhow\s+(?:do|can|should|would|shall)\s+(?:i|we)\b|\bhow\s+to\b", re.IGNORECASE)
#: heading words that name no topic
_PLAIN_HEADING_WORDS = frozenset({"about", "using", "steps", "notes", "overview", "introduction", "other",
                                  "general", "section", "chapter", "details", "service", "project"})
#: the shared start that makes two words one (install/installiere/installation, release/releasing)
SHARED_START = 6


def looks_english(message: str) -> bool:
    """Are a fifth or more of the words English function words ("how", "the", "were", …)?"""
    words = re.findall(r"[^\W\d_]+", message.casefold())
    return bool(words) and sum(w in _ENGLISH_WORDS for w in words) * 5 >= len(words)


def heading_named(message: str, project: ProjectView | None) -> bool:
    """Does the message name a document heading's topic, in any language the words share a start with
    ("Wie installiere ich …" and "Installation steps", "Hur gör man en ny release?" and "Making a
    release")? The sentence encoder reads English; a word's start is read in every language."""
    if project is None or not project.sections or (looks_english(message) and not _HOW_DO_I.search(message)):
        return False  # in English, only "how do I/we …" asks how this project does it
    asked = {w[:SHARED_START] for w in _LONG_WORD.findall(fold(message).casefold()) if len(w) >= SHARED_START}
    for section in project.sections:
        for word in _LONG_WORD.findall(fold(section.title).casefold()):
            if len(word) >= SHARED_START and word not in _PLAIN_HEADING_WORDS and word[:SHARED_START] in asked:
                return True
    return False


_DATA_NOUNS = r"(?:files?|numbers|data|figures|settings|sheet|table|values|spreadsheet|csv|json|yaml)"


def stem_named(message: str, project: ProjectView | None) -> str | None:
    """A data file at the top of the folder that the words name by its stem: "our sales numbers" →
    sales.csv, "the config file" → config.json (one file only; two with that stem name neither)."""
    if project is None:
        return None
    found: list[str] = []
    for name in project.data_files:
        stem = name.rsplit(".", 1)[0]
        if len(stem) < 3:
            continue
        word = re.escape(stem) + r"s?"
        # "our sales", "the config file", "my sales numbers"; not "the sales tax", "a config file"
        pattern = rf"\b(?:our|my|this|your)\s+{word}\b" \
                  rf"|\b(?:the|our|my|this|your)\s+{word}\s+{_DATA_NOUNS}\b"
        if re.search(pattern, message, re.IGNORECASE):
            found.append(name)
    return found[0] if len(found) == 1 else None


def project_folder(message: str, project: ProjectView | None) -> str | None:
    """A folder of the open project the request names ("ls src", "in `docs/`", "the src folder")."""
    if project is None:
        return None
    for match in _WORD.finditer(message):
        token = match.group(1).rstrip(".,;:?!")
        found = project.folder(token)
        if found is not None and not re.search(r"\.\w{1,5}$", token):
            return found
    return None


def _path_written(message: str, folder: str) -> bool:
    """The folder is written as a path ("docs/", "`docs`", "./docs") or with a word for a folder."""
    name = re.escape(folder)
    return bool(re.search(rf"(?:\./)?{name}/(?![\w.])|`{name}/?`|\b{name}\s+(?:folder|directory|dir)\b|"
                          rf"\b(?:folder|directory|dir|ordner|dossier|r[ée]pertoire|carpeta|cartella|pasta|map|mapp|mappen|mappe|"
                          rf"katalog(?:u|en)?|folderze|verzeichnis)\s+{name}\b",
                          message, re.IGNORECASE))


def _list(intent: IntentLike, offered: set[str], message: str, project: ProjectView | None) -> Route | None:
    if "list_dir" not in offered:
        return None
    folder = project_folder(message, project)
    if folder is None and not _LISTING.search(intent.words):
        named = folder_named(intent.words)
        if named == ".":
            return None
        folder = named
    if folder is None and _GENERIC.search(message):
        return None  # "what goes in the top-level directory of a Python package?": not this folder
    path = folder or folder_named(intent.words)
    if path.strip("/").lower() in ROOT_WORDS and (project is None or project.folder(path) is None):
        path = "."  # "what's in the top folder?": the open folder itself
    call = RoutedCall("list_dir", {"path": path})
    return Route("tools", (call,), tools=("list_dir",), prose=False, reason="the request means a folder listing")


def _docs(intent: IntentLike, offered: set[str], meaning: Meaning, message: str, *, meant: bool = True) -> Route | None:
    """A document search, when the documents cover the request (or, when the classifier read a document
    search: ``meant``, when the words name them)."""
    if "doc_search" not in offered:
        return None
    near = meaning.docs.score if meaning.docs is not None else 0.0
    # the encoder reads English: in another language a near section alone ("git" in "wat is het verschil
    # tussen git pull en git fetch?") is no sign the documents are asked; a heading's word or "docs" is
    covered = near >= DOCS_MATCH or (meant and (_DOCUMENTS.search(message)
                                                or (near >= DOCS_MEANT and looks_english(message))
                                                or heading_named(message, meaning.project)))
    if not covered:
        return None
    query = doc_query(intent.words if len(intent.words) > 12 else message)
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
    call = RoutedCall("python_exec", {"code": typed})
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


Exists = Callable[[str], bool]


#: the verbs of a write the user may have declined ("don't create notes.md with …")
_WRITE_VERBS = ("create", "write", "save", "make", "put", "add", "append", "overwrite", "replace")


def _write(offered: set[str], intent: IntentLike, message: str, project: ProjectView | None,
           exists: Exists) -> Route | None:
    """Text the user gave, for a new file: proposed for the user's review (the consent rules decide).
    The file must be named by the request's own words (not by an email or a page it hands over), and
    not in a write the user declined."""
    if "write_file" not in offered or intent.refuses(*_WRITE_VERBS):
        return None
    folders = {f.lower() for f in project.folders} if project else set()
    given = given_write(message, lambda name: name.lower().strip("/") in folders or exists(name))
    if given is None or given.target.casefold() not in intent.words.casefold():
        return None
    return Route("tools", save_to=given.target, save_text=given.text, tools=("write_file",), prose=False,
                 reason="the request means writing the text it gives to a new file")


#: words that make a question about projects in general, not about the one open
_GENERIC = re.compile(r"\b(?:of|in|for)\s+(?:a|an|any|every|most)\b|\btypical(?:ly)?\b|\busually\b|"
                      r"\bin\s+general\b|\bgenerally\b|\bprojects\b|\bpackages\b|\brepos\b", re.IGNORECASE)

#: a word before "folder" or "directory" that means the open folder itself ("the main folder", "the
#: top-level directory"), unless the project has a folder of that name
ROOT_WORDS = frozenset({"main", "top", "top-level", "toplevel", "base", "repo", "repository", "outermost",
                        "root-level", "highest", "uppermost"})


def _root_word_listing(ruled: Route, project: ProjectView | None) -> Route | None:
    """"list the contents of the main folder": the open folder, not a folder called ``main``."""
    folders = {f.lower() for f in project.folders} if project is not None else None
    if folders is None or not ruled.calls or any(c.tool != "list_dir" for c in ruled.calls):
        return None
    paths = [str(c.arguments.get("path") or ".").strip("/").lower() for c in ruled.calls]
    if not any(p in ROOT_WORDS and p not in folders for p in paths):
        return None
    calls = tuple(replace(c, arguments={**c.arguments, "path": "."}) if p in ROOT_WORDS and p not in folders
                  else c for c, p in zip(ruled.calls, paths, strict=True))
    return replace(ruled, calls=calls, reason="the words name the open folder itself")


def _corrected(ruled: Route, meaning: Meaning, intent: IntentLike, offered: set[str], message: str,
               project: ProjectView | None) -> Route | None:
    """Where the meaning corrects a call the word tables made from one word read too narrowly."""
    tools = {c.tool for c in ruled.calls}
    if tools == {"list_dir"} and project is not None and _GENERIC.search(message) and all(
            project.folder(str(c.arguments.get("path") or ".")) is None for c in ruled.calls):
        # "what files does a typical top-level folder contain in a React app?": no folder of this project
        return Route("direct", reason="a question about projects in general, not a folder of this one")
    root_listing = _root_word_listing(ruled, project)
    if root_listing is not None:
        return root_listing
    if meaning.nearest == "run_code" and tools and tools <= {"calculator", "read_file"}:
        # "run print(3 ** 4)": the code runs, its arithmetic is not lifted out of it, and a name inside
        # it ("w.capitalize") is no file to read
        code = inline_code(message) or ""
        reads = [str(c.arguments.get("path")) for c in ruled.calls if c.tool == "read_file"]
        if all(r in code for r in reads):
            return _run(intent, offered, message)
    if "doc_search" in tools and tools <= {"doc_search", "list_dir"}:
        return _folder_files(intent, offered, meaning, message, project)
    if tools == {"list_dir"} and all(c.arguments.get("path") in (".", "") for c in ruled.calls):
        folder = project_folder(message, project)  # "ls src": the folder the tables did not see
        if folder is not None:
            return _list(intent, offered, message, project)
    return None


def _folder_files(intent: IntentLike, offered: set[str], meaning: Meaning, message: str,
                  project: ProjectView | None) -> Route | None:
    """"which files live in docs/", "is there anything in `docs/` besides the guide", "Vad finns i mappen
    docs?": a folder of the project, written as a folder, asked about: its listing (not a search of the
    documents that share its name)."""
    if intent.files or meaning.nearest not in ("list", "doc_search", "read", "direct"):
        return None
    folder = project_folder(message, project)
    if folder is None:
        return None
    written = _path_written(message, folder)
    if (meaning.nearest == "list" and (written or _FILES_NOUN.search(message))) or \
            (written and (_FILES_NOUN.search(message) or meaning.nearest in ("list", "doc_search"))):
        return _list(intent, offered, message, project)
    return None


def combine(
    ruled: Route,
    meaning: Meaning | None,
    intent: IntentLike,
    *,
    message: str,
    available: Sequence[str],
    exists: Exists | None = None,
) -> Route:
    """The route to take: the word tables' where they made calls (or a write), else the meaning's.
    ``exists`` says whether a path in the open folder exists (a write of given text goes to a new file
    only; without it, meaning proposes no write)."""
    if meaning is None:
        return ruled
    offered = set(available)
    project = meaning.project
    corrected = _corrected(ruled, meaning, intent, offered, message, project)
    if corrected is not None:
        return corrected
    if ruled.kind == "tools" or ruled.save_to:
        reads_only = bool(ruled.calls) and all(c.tool == "read_file" for c in ruled.calls) and exists is not None
        missing = [c for c in ruled.calls if exists is not None and not exists(str(c.arguments.get("path")))]
        # none of the files named is there to read; or one is not, and the request means writing given text
        # ("save a script scripts/run.sh with python app.py in it": app.py is text, not a file to read)
        reads_missing = reads_only and (len(missing) == len(ruled.calls)
                                        or (bool(missing) and meaning.nearest == "write_given"))
        asks = message.rstrip().endswith("?")
        if not (reads_missing and exists is not None and not asks
                and meaning.nearest in ("write_given", "read", "direct", "data_value")):
            return ruled
        # "new file scratch.py, content: …": the file named is not there to read; the text is given
        return _write(offered, intent, message, project, exists) or ruled
    kind = meaning.route if meaning.sure else meaning.nearest
    chosen: Route | None = _folder_files(intent, offered, meaning, message, project)
    if chosen is not None:
        return chosen
    stem_file = stem_named(message, project) if not intent.files and not intent.code else None
    if stem_file is not None and kind in ("data_value", "read", "doc_search", "compute") and "read_file" in offered:
        return Route("tools", (RoutedCall("read_file", {"path": stem_file}),), tools=("read_file",),
                     compute_data=True, reason="the request names a data file of the folder by its stem")
    if kind == "write_given":
        chosen = _write(offered, intent, message, project, exists) if exists is not None else None
    elif not meaning.sure and kind not in ("list", "doc_search"):
        chosen = None  # an unsure reading picks no tool, except the two a slot in the folder confirms
    elif kind == "list":
        confirmed = meaning.sure or project_folder(message, project) is not None
        chosen = _list(intent, offered, message, project) if confirmed else None
    elif kind == "doc_search":
        chosen = _docs(intent, offered, meaning, message)
    elif kind == "run_code":
        chosen = _run(intent, offered, message)
    elif kind == "compute":
        chosen = _compute(intent, offered)
    elif kind == "read":
        chosen = _read(intent, offered)
    elif kind == "data_value":
        chosen = _read(intent, offered) or _find(intent, offered)
    if chosen is None and not intent.files and not intent.code and kind not in ("compute", "run_code") \
            and not (kind == "direct" and meaning.sure and meaning.margin >= DIRECT_KEPT):
        chosen = _docs(intent, offered, meaning, message, meant=False) or _code_file(offered, meaning, message)
    return chosen or ruled


def _code_file(offered: set[str], meaning: Meaning, message: str) -> Route | None:
    """"what does the /health endpoint return?": the one source file that defines what the request names
    (not for a question about such things in general)."""
    if meaning.code_file is None or "read_file" not in offered or _GENERIC.search(message):
        return None
    return Route("tools", (RoutedCall("read_file", {"path": meaning.code_file}),), tools=("read_file",),
                 reason="the request names what one source file of the folder defines")
