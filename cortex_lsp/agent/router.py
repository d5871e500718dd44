"""The intent router: the plan, and where the words are explicit the tool calls, decided in code.

It reads the typed :class:`~cortex_lsp.intent.intent.Intent` (the user's own words after provenance
cuts: a selection, a quote or a pasted block is data and asks for nothing) and decides:

* ``direct``: no tool intent at all → one model call, no planner (the fast path);
* ``tools``: explicit calls with their arguments — a named file → ``read_file(path)``; "what files /
  list" → ``list_dir(folder)``; arithmetic → ``calculator(expr)``; code given + run → ``python_exec``;
  a typed URL → ``web_fetch(url)``; the project's documents → ``doc_search(query)``; "which file
  mentions X" → ``search_files``; the time → ``current_time``; "save … to NAME" → ``write_file(NAME,
  <the produced text>)`` after the content is produced;
* ``undecided``: some tool intent without usable arguments → the model planner (full profile) or one
  constrained tool call among :attr:`Route.tools` (small profile).

The router grants nothing: every call it proposes still passes the plan guards, the per-call guards
(the write grant, the path guard, the URL rule) and the edit sink.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from cortex_lsp.agent.datavalue import is_data_file
from cortex_lsp.agent.given import given_text
from cortex_lsp.agent.runnability import inline_code
from cortex_lsp.agent.types import Plan
from cortex_lsp.agent.wordmath import arithmetic_from_words
from cortex_lsp.intent.cues import DOC_PLACES, Cues
from cortex_lsp.intent.intent import parse_intent

RouteKind = Literal["direct", "tools", "undecided"]
#: tools whose result is the answer: shown as it is, no model call needed to word it
SELF_EXPLAINING = frozenset({"calculator", "list_dir", "current_time", "python_exec", "search_files"})
MAX_READS = 3
#: passages a routed document search asks for (each is prompt the model must read)
DOC_TOP_K = 3


class WriteGrantLike(Protocol):
    @property
    def create(self) -> frozenset[str]: ...
    @property
    def replace(self) -> frozenset[str]: ...
    @property
    def unnamed_create(self) -> bool: ...


class IntentLike(Protocol):
    """The parts of the shared ``Intent`` the router reads."""

    @property
    def words(self) -> str: ...
    @property
    def files(self) -> tuple[str, ...]: ...
    @property
    def urls(self) -> tuple[str, ...]: ...
    @property
    def run_code(self) -> bool: ...
    @property
    def code(self) -> str | None: ...
    @property
    def arithmetic(self) -> str | None: ...
    @property
    def cues(self) -> Cues: ...
    @property
    def tools(self) -> frozenset[str]: ...
    @property
    def hinted_tools(self) -> frozenset[str]: ...
    @property
    def write_grant(self) -> WriteGrantLike: ...
    @property
    def wide_reading(self) -> IntentLike: ...
    def wants(self, *verbs: str) -> bool: ...
    def refuses(self, *verbs: str) -> bool: ...


def read_intent(message: str, *, selection: str | None = None) -> IntentLike:
    """The user's intent, parsed once (and cached) by :func:`cortex_lsp.intent.intent.parse_intent`."""
    return parse_intent(message, selection=selection)


@dataclass(frozen=True)
class RoutedCall:
    tool: str
    arguments: dict[str, Any] = field(hash=False)

    def step(self) -> str:
        arg = next((str(v) for v in self.arguments.values() if isinstance(v, str)), "")
        arg = " ".join(arg.split())
        if len(arg) > 60:
            arg = arg[:57] + "…"
        return f"{self.tool}({arg})" if arg else f"{self.tool}()"


@dataclass(frozen=True)
class Route:
    kind: RouteKind
    calls: tuple[RoutedCall, ...] = ()
    #: the file to save the produced text to (after the calls and the prose), if the user asked
    save_to: str | None = None
    #: text the user gave for that file (quoted, fenced, "containing …"): saved as it is
    save_text: str | None = None
    #: every tool the route needs, in order (the calls', then write_file)
    tools: tuple[str, ...] = ()
    #: does the answer need the model's words (a question about the results, content to produce)?
    prose: bool = True
    #: the model writes Python code and code runs it with python_exec (no code was given)
    run_written: bool = False
    #: "open the file you find there": read the files a listing or a search turned up (≤ 3)
    read_found: bool = False
    #: "save that to NAME" with nothing else to save: the previous answer is the text
    save_previous: bool = False
    #: the question the prose answers, when it is not the request as typed (a document search)
    question: str | None = None
    #: one data file is read: code answers a question about a key or a column in it, if it can
    compute_data: bool = False
    #: no file named: code looks for the data file whose keys or columns the question names
    find_data: bool = False
    #: the meaning classifier read the user's words as "run this" or "compute this": python_exec may run
    run_meant: bool = False
    reason: str = ""

    def plan(self) -> Plan:
        if self.kind == "direct" or not self.tools:
            return Plan(kind="direct", steps=["Answer directly"])
        steps = [f"Call {c.step()}" for c in self.calls][:3]
        if self.find_data:
            steps = ["Find the data file in the open folder and compute the answer"]
        if self.run_written:
            steps = [*steps[:1], "Write the Python code", "Run it with python_exec"] if self.find_data \
                else ["Write the Python code", "Run it with python_exec"]
        if self.kind == "undecided":
            steps.append(f"Use one of: {', '.join(self.tools)}")
        if self.prose and not self.run_written:
            steps.append("Write the answer from the results")
        if self.save_to:
            steps.append(f"Save the result to {self.save_to} with write_file")
        return Plan(kind="tools", steps=steps[:5], tools=list(self.tools))


_FOLDER_WORDS = (r"(?:folder|directory|dir|ordner|verzeichnis|dossier|r[ée]pertoire|carpeta|directorio|cartella|pasta|"
                 r"map|mappen|mapp|folderze|katalogu?)")
_FOLDER = re.compile(
    rf"\b(?:in|under|inside|of)\s+(?:the\s+|my\s+|this\s+)?(?:{_FOLDER_WORDS}\s+)?"
    rf"([\w][\w./-]*)/?\s+{_FOLDER_WORDS}\b|\b{_FOLDER_WORDS}\s+([\w][\w./-]*/?)"
    rf"|\b(?:the|my|this|our)\s+([\w][\w./-]*)/?\s+{_FOLDER_WORDS}\b",
    re.IGNORECASE,
)
_NOT_FOLDERS = frozenset({"open", "this", "current", "project", "workspace", "root", "my", "the", "whole", "same",
                          "please", "here", "and", "contents", "content", "structure", "tree", "now",
                          "is", "are", "has", "have", "of", "in", "with"})
_SEARCH_WORDS = re.compile(
    r"\b(?:which|what)\s+files?\s+(?:mentions?|contains?|has|have|includes?|refers?\s+to|uses?)\s+(.+?)[?.!]*$"
    r"|\bsearch\s+(?:the\s+|my\s+|all\s+)?(?:files?|code|project|workspace|folder|sources?)\s+for\s+(.+?)[?.!]*$"
    r"|\b(?:find|grep)\s+(.+?)\s+in\s+(?:the\s+|my\s+|all\s+)?(?:files?|code|project|workspace|folder)\b"
    r"|\bfind\s+(?:the\s+|a\s+)?files?\s+(?:that|which)\s+(?:mentions?|contains?|has|have|includes?)\s+"
    r"(.+?)(?:\s+and\s+|\s*[?.!]|$)",
    re.IGNORECASE,
)
_DOC_PREFIX = re.compile(
    r"^\s*(?:please\s+)?(?:search|check|look\s+(?:in|through))\s+(?:the\s+|my\s+|our\s+)?"
    rf"{DOC_PLACES}\s*(?:for\s+|about\s+|[-–—:,]\s*)?",
    re.IGNORECASE,
)
_SCOPED_SEARCH = re.compile(
    r"^\s*(?:please\s+)?(?:search|look\s+in|look\s+through|check)\s+(?:the\s+file\s+)?(\S+\.\w+)\s+for\s+(.+)$",
    re.IGNORECASE,
)
#: "which files live under src": the place a sentence ends on (a name with no suffix)
_LAST_PLACE = re.compile(r"\b(?:under|inside|within|in)\s+(?:the\s+)?([A-Za-z_][\w-]*)\s*[?.!]*\s*$")
_SLASHED = re.compile(r"(?<![\w./:-])((?:[\w.-]+/)*[\w-]+)/(?![\w])")


def folder_named(words: str) -> str:
    """The folder the words name ("the src folder", "in docs/"), else the open folder ``.``."""
    for match in _FOLDER.finditer(words):
        name = (match.group(1) or match.group(2) or match.group(3) or "").strip("/")
        if name and name.lower() not in _NOT_FOLDERS:
            return name
    slashed = _SLASHED.search(words)
    if slashed and slashed.group(1).lower() not in _NOT_FOLDERS:
        return slashed.group(1)
    last = _LAST_PLACE.search(words)
    if last and last.group(1).lower() not in _NOT_FOLDERS:
        return last.group(1)
    return "."


def _search_query(words: str) -> str | None:
    match = _SEARCH_WORDS.search(words.strip())
    if match is None:
        return None
    query = next(g for g in match.groups() if g).strip().strip("\"'`")
    query = re.sub(r"\s+(?:comments?|mentions?|in\s+(?:the\s+)?files?)$", "", query, flags=re.IGNORECASE)
    query = re.sub(r"^(?:the\s+(?:word|text|string)\s+|the\s+|a\s+)", "", query, flags=re.IGNORECASE)
    return query or None


def doc_query(words: str) -> str:
    query = _DOC_PREFIX.sub("", words).strip(" -–—:,")
    return query or words.strip()


_WH = re.compile(r"^(?:what|who|whom|whose|when|where|why|how|which|is|are|was|were|do|does|did|can|should)\b",
                 re.IGNORECASE)


def doc_question(query: str, where: str = "the documents") -> str:
    """A search query as the question the answer is to give ("the beta deadline" → "What do …")."""
    query = query.strip().rstrip(".!")
    if _WH.match(query):
        return query if query.endswith("?") else query + "?"
    verb = "say" if where == "the documents" else "says"
    return f"What {'do' if where == 'the documents' else 'does'} {where} {verb} about {query}?"


_TARGET_BEFORE = r"\b(?:to|into|as|called|named|file)\s+(?:a\s+|the\s+)?(?:new\s+)?(?:file\s+)?(?:called\s+|named\s+)?"


def _save_target(intent: IntentLike) -> str | None:
    """The file to write: a granted target the words put after "to / into / as / called / file"."""
    grant = intent.write_grant
    named = [f for f in intent.files if f in grant.create | grant.replace]
    named += sorted((grant.create | grant.replace) - set(named))
    for name in named:
        if re.search(_TARGET_BEFORE + re.escape(name), intent.words, re.IGNORECASE):
            return name
    return named[0] if len(named) == 1 else None


def _wanted(intent: IntentLike, available: Sequence[str], *, runs: bool) -> set[str]:
    """Tools the words call for (the guards' readings); "a closure in Python" is not a run, "a list of
    dicts" is no listing and "show the result" reads no file unless a file is named."""
    loose = intent.hinted_tools - {"list_dir", "read_file", "doc_search"}
    wanted = (set(intent.tools) | loose) & set(available)
    if intent.files and "read_file" in available:
        wanted.add("read_file")
    if not runs and not intent.cues.use_python:
        wanted.discard("python_exec")
    return wanted


def route(
    intent: IntentLike,
    *,
    message: str,
    available: Sequence[str],
    code_at_hand: str | None = None,
) -> Route:
    """The route for one request (see the module docstring). Pure: no model, no I/O."""
    words = intent.words
    offered = set(available)
    calls: list[RoutedCall] = []
    cues = intent.cues
    code_writing = cues.code_writing

    if "web_fetch" in offered:
        for url in cues.fetch[:2]:
            calls.append(RoutedCall("web_fetch", {"url": url}))

    code = intent.code or code_at_hand or (inline_code(message) if intent.run_code else None)
    runs = intent.run_code and bool(code)
    # "write code that … and run it", "use Python to …": the model writes the code, code runs it
    run_asked = cues.run or cues.use_python
    if runs and code and "python_exec" in offered:
        calls.append(RoutedCall("python_exec", {"code": code}))

    expression = None
    if not code_writing and not runs and not intent.urls:
        expression = (arithmetic_from_words(words) or intent.arithmetic or "").strip().rstrip(".").strip() or None
    if expression and "calculator" in offered and not cues.python:
        calls.append(RoutedCall("calculator", {"expression": expression}))

    save_to = _save_target(intent) if "write_file" in offered else None
    # "execute print('abc'.upper())": a name inside the code to run is no file to read
    reads = [f for f in intent.files if f != save_to and not (runs and code and f in code)][:MAX_READS]
    question: str | None = None
    scoped = _SCOPED_SEARCH.match(words)
    if scoped and scoped.group(1) in reads and "doc_search" in offered:
        # "search faq.md for the office address": the passages of that file that match
        reads.remove(scoped.group(1))
        calls.append(RoutedCall("doc_search", {"action": "search", "query": scoped.group(2).strip(" ?.!"),
                                               "path": scoped.group(1), "top_k": DOC_TOP_K}))
        question = doc_question(scoped.group(2), scoped.group(1))
    if "read_file" in offered:
        calls.extend(RoutedCall("read_file", {"path": f}) for f in reads)

    if "list_dir" in offered and cues.list_files and not code_writing:
        calls.append(RoutedCall("list_dir", {"path": folder_named(words)}))

    query = _search_query(words)
    if query and "search_files" in offered and not reads:
        calls.append(RoutedCall("search_files", {"query": query}))

    if "doc_search" in offered and cues.documents and not reads and not scoped:
        calls.append(RoutedCall("doc_search", {"action": "search", "query": doc_query(words), "top_k": DOC_TOP_K}))
        question = doc_question(doc_query(words))

    if "current_time" in offered and cues.time:
        calls.append(RoutedCall("current_time", {}))

    tools = list(dict.fromkeys(c.tool for c in calls))
    if save_to:
        tools.append("write_file")
    if calls or save_to:
        # the fenced code of "run this and save its output" is what runs, not what is saved
        save_text = given_text(message, save_to, words=words) if save_to and not runs else None
        read_found = "read_file" in offered and any(c.tool in ("list_dir", "search_files") for c in calls) \
            and cues.read_found
        if read_found:
            tools.insert(len(tools) - (1 if save_to else 0), "read_file")
        shown_only = all(c.tool in SELF_EXPLAINING for c in calls) or (
            bool(calls) and all(c.tool == "read_file" for c in calls) and cues.show_only
        )
        if read_found:
            shown_only = not cues.asks  # "read it to me" shows it; "tell me the number" asks
        computed = bool(calls) and all(c.tool in SELF_EXPLAINING for c in calls)
        data_read = [c for c in calls if c.tool == "read_file"]
        compute_data = (len(data_read) == 1 and len(calls) == 1 and not save_to and not cues.show_only
                        and is_data_file(str(data_read[0].arguments["path"])))
        needs_prose = (save_to is not None and save_text is None and not computed) or not shown_only
        return Route(
            "tools", tuple(calls), save_to=save_to, save_text=save_text, tools=tuple(dict.fromkeys(tools)),
            prose=needs_prose, read_found=read_found, question=question, compute_data=compute_data,
            save_previous=bool(save_to) and not calls and save_text is None
            and cues.save_previous,
            reason="the user's words name the tools and their arguments",
        )
    if run_asked and not runs and "python_exec" in offered:
        return Route("tools", tools=("python_exec",), run_written=True,
                     reason="the user asked to run code the model is to write")
    if code_writing:
        return Route("direct", reason="the user asked for code: the model writes it")
    wanted = _wanted(intent, available, runs=run_asked)
    if not wanted:
        # the hand-over and reported-speech cuts guard side effects; whether a request is plain
        # chat is read more widely ("tell me what notes.md says" is not), quotes and pastes still out
        wanted = _wanted(intent.wide_reading, available, runs=run_asked)
    named = {t for t in available if re.search(rf"\b{re.escape(t)}\b", words, re.IGNORECASE)}
    if named or cues.tool_word:
        wanted |= named or set(available)  # "use the probe tool": a tool (a plugin, maybe) the router can't fill
    if wanted or intent.files or cues.fetch or runs:
        ordered = tuple(t for t in available if t in wanted)
        return Route("undecided", tools=ordered, reason="tool intent without usable arguments")
    return Route("direct", reason="no tool intent in the user's words")
