"""Answers never claim a write that did not happen.

The model writes the answer; the edit sink knows what was written. After a run this module compares
the two: every sentence of the answer that claims a file was saved/written/created/updated is checked
against the edits the editor actually applied. A claim about a file that was not written (declined,
rejected in review, refused by a guard, timed out, or never attempted) is replaced by a plain
statement of what happened, and a short ledger ("Written: …", "Not written: … (why)") is added to the
answer and the result's notes whenever a write failed or a claim was corrected.

An unnamed save ("save this to a file") lets the agent choose the file's name, so the user can only
find the file if the answer names it: when a write happened under an unnamed grant, the ledger is
always added (its "Written:" line names the file), and a claim naming a different file is replaced by
the name of the file actually written (:func:`chosen_names`, :func:`chosen_correction`).

Plain module: it knows nothing of LSP or of the model; it reads the run's ``EditOutcome`` list and its
tool-call records.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlparse

from cortex_lsp.agent.claim_states import instruction, present_files, state_claims
from cortex_lsp.agent.claim_text import EXTENSION_AHEAD, fold, mend_names, prose_and_code
from cortex_lsp.agent.types import RunRecord, ToolCallRecord
from cortex_lsp.guards.grants import WriteGrant
from cortex_lsp.guards.intent import Intent, parse_intent
from cortex_lsp.ports import EditOutcome

WRITE_TOOL = "write_file"
READ_TOOL = "read_file"
_MAKING_VERBS = ("save", "create", "write", "replace", "update", "overwrite", "append")

# Storage verbs: past/perfect forms that claim a file was stored, with or without a file named
# (English, German, French, Spanish, Italian, Dutch).
_STORE = (r"saved|stored|persisted|gespeichert|abgespeichert|enregistr[ée]e?s?|sauvegard[ée]e?s?|"
          r"guardad[oa]s?|guard[ée]|almacenad[oa]s?|salvat[oaie]|opgeslagen|bewaard")
# Other past forms that claim a write only together with a file name or a word for a file.
_MAKE = (r"wrote|written|created|updated|replaced|overwritten|overwrote|appended|exported|put|placed|added|"
         r"recorded|made|generated|committed|geschrieben|erstellt|angelegt|aktualisiert|[ée]crite?s?|"
         r"cr[ée]{2}e?s?|escrit[oa]s?|cread[oa]s?|cre[ée]|escrib[ií]|actualizad[oa]s?|scritt[oa]|creat[oa]|"
         r"geschreven|aangemaakt|dropped|popped|tucked|stashed|pasted|inserted|copied|dumped|uploaded")
_CLAIM = re.compile(rf"\b(?:(?P<store>{_STORE})|{_MAKE})\b|\bedits?\s+(?:was\s+|were\s+|has\s+been\s+)?applied\b",
                    re.IGNORECASE)
# A sentence that says the write did NOT happen, or only might, is not a claim.
_NOT_A_CLAIM = re.compile(
    r"\b(not|n't|never|unable|failed|fail|declined|rejected|refused|cannot|can't|couldn't|didn't|"
    r"wasn't|won't|will|would|could|should|can|may|might|shall|if|once|nicht|pas|no|nunca|be|being|"
    r"nothing|nichts|kein|keine|rien|nada|ningún|ninguna|without|ohne|sans|sin|jamais|niemals)\b",
    re.IGNORECASE,
)
_LOOKBACK_WORDS = 4
_FILE_NAME = re.compile(r"(?<![\w/.-])((?:~?/)?(?:[\w-]+/)*[\w-]+(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w/-])")
_FILE_WORD = re.compile(r"\b(file|files|disk|disc|folder|directory|workspace|datei|dateien|festplatte|ordner|"
                        r"fichier|fichiers|dossier|archivo|archivos|carpeta|disco|documento|bestand)\b", re.IGNORECASE)
# Where the model says the text now is: "you can find it in FILE", "FILE now contains …", "is now in FILE".
# Read only when the user asked for something made (not a question, not only read/explain/search): in the
# answer to "where is parse defined?", "you can find it in parser.py" claims nothing.
_LOCATION = re.compile(
    r"\b(?:find|open)\s+(?:it|them|this|that|everything|the\s+file|your\s+file)\s+(?:in|at|under)\b|"
    r"\b(?:is|are)\s+now\s+(?:in|at|available\s+in)\b|\bnow\s+(?:contains?|holds?|lives?\s+in)\b|"
    r"\blives?\s+in\b.*\bfrom\s+now\s+on\b",
    re.IGNORECASE)
# A file name followed by a check mark: "haiku.md ✅".
_TICKED = re.compile(r"[`*'\"]*\s*(?:[:\-–—]|->|→)?\s*[✅✔✓☑]")
# "you can find it in FILE" is a claim: only a true negation cancels a location.
_NEGATION = re.compile(r"\b(not|never|cannot|nicht|nie|pas|jamais|no|nunca|nothing|nowhere)\b", re.IGNORECASE)
# Storage that is not a file: the agent's memory, saved time.
_NOT_A_FILE = re.compile(r"\b(memory|memories|remember|time|gedächtnis|mémoire|memoria)\b", re.IGNORECASE)
_CLAUSE = re.compile(r"[,;:]\s+|\s+(?:but|and|while|whereas|although|aber|mais|pero)\s+", re.IGNORECASE)
# Sentences end at . ! ? and a line break, but "haiku. md" is one file name, not two sentences.
_BREAK = re.compile(rf"((?<=[!?])[ \t]+|(?<=\.)[ \t]+(?![ \t]|{EXTENSION_AHEAD})|\n)")


@dataclass(frozen=True)
class WriteLedger:
    """What a run wrote: file names (workspace-relative where known) and the ones it did not, with why."""

    written: tuple[str, ...]
    not_written: tuple[tuple[str, str], ...]
    #: sent to the editor, but the run was cancelled before it answered: neither written nor not
    unknown: tuple[str, ...] = ()
    #: files the run read or found in the workspace: "notes.md is ready to read" points at one of them
    existing: tuple[str, ...] = ()

    def exists(self, name: str) -> bool:
        """Whether ``name`` is a file that was there without a write of this run (a file whose write failed
        or is unknown is not: "haiku.md is ready" after a declined overwrite is a false claim)."""
        if any(_same(path, name, whole=False) for path, _ in self.not_written) or self.is_unknown(name):
            return False
        return any(_same(e, name, whole=False) for e in self.existing)

    @property
    def attempted(self) -> bool:
        return bool(self.written or self.not_written or self.unknown)

    def is_unknown(self, name: str) -> bool:
        return any(_same(u, name, whole=False) for u in self.unknown)

    def has_written(self, name: str) -> bool:
        return any(_same(w, name, whole=True) for w in self.written)

    def why_not(self, name: str) -> str:
        for path, why in self.not_written:
            if _same(path, name, whole=False):
                return why
        return "no write of this file happened in this run"

    def lines(self) -> list[str]:
        said = [*self.written, *(unknown_line(n) for n in self.unknown)]
        out = [f"Written: {', '.join(said) if said else 'nothing'}."]
        for path, why in self.not_written:
            out.append(f"Not written: {path} ({_short(why)}).")
        return out


@dataclass(frozen=True)
class HonestAnswer:
    text: str
    corrected: tuple[str, ...]  # the claims that were removed
    notes: tuple[str, ...]      # ledger lines for the result's notes (empty when nothing to say)


def _same(path: str, name: str, *, whole: bool) -> bool:
    """Whether ``name`` (as the answer says it) is the file at ``path``; both read folded. ``whole``: a
    bare file name matches a path only when the name is the whole of what the answer said."""
    path, wanted = fold(path), fold(name).strip().lstrip("./")
    base = PurePosixPath(path).name
    return path == wanted or path.endswith("/" + wanted) or base == (wanted if whole else PurePosixPath(wanted).name)


def unknown_line(name: str) -> str:
    """How a write whose outcome is unknown is reported, wherever it is reported."""
    return f"unknown — check {name}"


def _short(reason: str) -> str:
    text = reason.strip().rstrip(".")
    for prefix in ("Not written: ", "Not written:"):
        while text.startswith(prefix):
            text = text[len(prefix):]
    return text[:200] or "not applied"


def _name_of(uri: str, roots: Sequence[str]) -> str:
    path = unquote(urlparse(uri).path) if uri.startswith("file:") else uri
    for root in roots:
        prefix = root.rstrip("/") + "/"
        if path.startswith(prefix):
            return path[len(prefix):]
    return PurePosixPath(path).name


def ledger(edits: Sequence[EditOutcome], tool_calls: Sequence[ToolCallRecord],
           roots: Sequence[str] = ()) -> WriteLedger:
    """The run's writes: applied edits are written; declined/refused edits and failed write_file calls are not."""
    written: list[str] = []
    missed: list[tuple[str, str]] = []
    unknown: list[str] = []
    for edit in edits:
        name = _name_of(edit.uri, roots)
        if edit.applied is None:
            if name not in unknown:
                unknown.append(name)
        elif edit.applied:
            if name not in written:
                written.append(name)
        else:
            missed.append((name, edit.reason or "the editor did not apply it"))
    covered = ({PurePosixPath(n).name for n in written} | {PurePosixPath(n).name for n, _ in missed}
               | {PurePosixPath(n).name for n in unknown})
    for call in tool_calls:
        if call.tool != WRITE_TOOL or call.success:
            continue
        raw = call.arguments.get("path") if isinstance(call.arguments, dict) else None
        name = str(raw).strip().lstrip("./") if raw else "(unnamed file)"
        if PurePosixPath(name).name in covered:
            continue
        covered.add(PurePosixPath(name).name)
        missed.append((name, call.output.replace("ERROR: ", "", 1).strip() or "the write failed"))
    written_names = {PurePosixPath(n).name for n in written}
    missed = [(n, why) for n, why in missed if PurePosixPath(n).name not in written_names]
    unknown = [n for n in unknown if PurePosixPath(n).name not in written_names]
    read = [str(c.arguments["path"]).strip().lstrip("./") for c in tool_calls
            if c.tool == READ_TOOL and c.success and isinstance(c.arguments, dict) and c.arguments.get("path")]
    return WriteLedger(written=tuple(written), not_written=tuple(missed), unknown=tuple(unknown),
                       existing=tuple(dict.fromkeys(read)))


def _negated(text: str, start: int, words: re.Pattern[str] = _NOT_A_CLAIM) -> bool:
    before = re.findall(r"[\w']+", text[:start])[-_LOOKBACK_WORDS:]
    return any(words.fullmatch(w) or w.lower().endswith("n't") for w in before)


def _clause_claim(clause: str, book: WriteLedger, sentence_names: Sequence[str]) -> list[str] | None:
    store = make = False
    for verb in _CLAIM.finditer(clause):
        if not _negated(clause, verb.start()):
            if verb.group("store"):
                store = True
            else:
                make = True
    if not (store or make):
        return None
    names = list(dict.fromkeys(m.group(1) for m in _FILE_NAME.finditer(clause))) or list(sentence_names)
    if names:
        false = [n for n in names if not book.has_written(n)]
        return false or None
    if book.written or _NOT_A_FILE.search(clause):
        return None
    # nothing was written: a storage verb claims a write by itself, another verb with a word for a file
    return [] if store or _FILE_WORD.search(clause) else None


def _located(sentence: str, names: Sequence[str], book: WriteLedger) -> list[str] | None:
    """Names an unwritten file as where the text now is ("you can find it in haiku.md", "haiku.md ✅")."""
    false = [n for n in names if not book.has_written(n)]
    if not false or instruction(sentence):
        return None
    for where in _LOCATION.finditer(sentence):
        if not _negated(sentence, where.start(), _NEGATION):
            return false
    for name in _FILE_NAME.finditer(sentence):
        if _TICKED.match(sentence, name.end()) and not book.has_written(name.group(1)):
            return false
    return None


def _stated(sentence: str, names: Sequence[str], book: WriteLedger) -> list[str] | None:
    """Says a file is ready, available or in the workspace ("Your file is ready.", "it's in your workspace
    now") when it was not written: the named files neither written nor read in this run, or ``[]`` for
    an unnamed file when nothing was written."""
    if not state_claims(sentence):
        return None
    if names:
        false = [n for n in names if not book.has_written(n) and not book.exists(n)]
        return false or None
    return None if book.written else []


def _false_claim(raw: str, book: WriteLedger, locations: bool = True) -> list[str] | None:
    """The file names a sentence falsely claims were written (``[]`` = an unnamed false claim), or None.

    The sentence is read folded (:func:`fold`): look-alike letters and invisible characters hide nothing."""
    sentence = mend_names(fold(raw))
    if sentence.rstrip().endswith("?"):
        return None
    names = list(dict.fromkeys(m.group(1) for m in _FILE_NAME.finditer(sentence)))
    found: list[str] | None = None
    for clause in _CLAUSE.split(sentence):
        false = _clause_claim(clause, book, names)
        if false is not None:
            found = (found or []) + [n for n in false if n not in (found or [])]
    if found is not None or not locations:
        return found
    located = _located(sentence, names, book)
    return located if located is not None else _stated(sentence, names, book)


def _sentences(answer: str) -> list[tuple[str, bool]]:
    """``answer`` cut into sentences and the breaks between them, each ``(text, checked)``; text inside a
    fenced code block and the breaks are never checked."""
    out: list[tuple[str, bool]] = []
    for text, code in prose_and_code(answer):
        if code:
            out.append((text, False))
            continue
        out.extend((piece, not i % 2 and bool(piece.strip())) for i, piece in enumerate(_BREAK.split(text)))
    return out


def chosen_names(book: WriteLedger, grant: WriteGrant | None) -> tuple[str, ...]:
    """The files written under an unnamed grant: written, and not a name the user gave."""
    if grant is None or not grant.unnamed_create:
        return ()
    return tuple(w for w in book.written if not grant.named(w))


def chosen_correction(false: Sequence[str], chosen: Sequence[str]) -> str:
    """What replaces a claim naming ``false`` files when the agent chose the written file's name."""
    names = ", ".join(chosen)
    if not false:
        return f"The answer was saved to {names}"
    return f"The answer was saved to {names}, not to {', '.join(false)}"


def claims_of_chosen(answer: str, book: WriteLedger, chosen: Sequence[str]) -> str:
    """``answer`` with every claim of a write that names another file than the ``chosen`` ones (the files
    the agent named under an unnamed grant) replaced by the name of the file actually written."""
    pieces: list[str] = []
    for sentence, checked in _sentences(answer):
        false = _false_claim(sentence, book) if checked else None
        lead = sentence[: len(sentence) - len(sentence.lstrip())]
        pieces.append(sentence if false is None else f"{lead}[{chosen_correction(false, chosen)}.]")
    return "".join(pieces)


def with_chosen_ledger(honest: HonestAnswer, book: WriteLedger, chosen: Sequence[str]) -> HonestAnswer:
    """``honest`` with the ledger (its "Written:" line names the chosen file) when it has none yet."""
    if not chosen or honest.notes:
        return honest
    lines = book.lines()
    footer = "\n".join(f"- {line}" for line in lines)
    text = f"{honest.text.rstrip()}\n\n{footer}" if honest.text.strip() else footer
    return HonestAnswer(text=text, corrected=honest.corrected, notes=tuple(lines))


def honest_answer(answer: str, edits: Sequence[EditOutcome], tool_calls: Sequence[ToolCallRecord],
                  roots: Sequence[str] = (), *, grant: WriteGrant | None = None,
                  locations: bool = True, existing: Sequence[str] = ()) -> HonestAnswer:
    """``answer`` with every false write claim replaced, plus the ledger when a write failed or a claim was
    wrong, or when a write under an unnamed ``grant`` happened (the answer must name the chosen file).
    ``existing``: files that were in the workspace before the run (saying one is ready claims no write)."""
    book = ledger(edits, tool_calls, roots)
    if existing:
        book = replace(book, existing=(*book.existing, *existing))
    chosen = chosen_names(book, grant)
    if chosen:
        answer = claims_of_chosen(answer, book, chosen)
    return with_chosen_ledger(_honest(answer, book, locations), book, chosen)


def _honest(answer: str, book: WriteLedger, locations: bool) -> HonestAnswer:
    corrected: list[str] = []
    pieces: list[str] = []
    for sentence, checked in _sentences(answer):
        false = _false_claim(sentence, book, locations) if checked else None
        if false is None:
            pieces.append(sentence)
            continue
        corrected.append(sentence.strip())
        lead = sentence[: len(sentence) - len(sentence.lstrip())]
        if false:
            said = "; ".join(unknown_line(n) if book.is_unknown(n)
                             else f"{n} was not written ({_short(book.why_not(n))})" for n in false)
        else:
            said = "No file was written"
        pieces.append(f"{lead}[{said}.]")
    text = "".join(pieces)
    if not corrected and not book.not_written and not book.unknown:
        return HonestAnswer(text=answer, corrected=(), notes=())
    lines = book.lines()
    footer = "\n".join(f"- {line}" for line in lines)
    text = f"{text.rstrip()}\n\n{footer}" if text.strip() else footer
    return HonestAnswer(text=text, corrected=tuple(corrected), notes=tuple(lines))


def made_something(intent: Intent) -> bool:
    """Whether the user asked for something made (text, a file), so that the answer saying where it is
    claims a write: not a question, and not only a request to read, explain, search or run."""
    if intent.kind == "question":
        return False
    return intent.wants(*_MAKING_VERBS) or not any(a.grants for a in intent.actions)


def honest_for_record(answer: str, record: RunRecord, words: str | None = None,
                      roots: Sequence[Path] = ()) -> str:
    """The kernel's one call: the corrected answer; the ledger lines go into the run's notes.

    ``words`` are the user's own words (their write grant tells whether the agent chose a file's name;
    a question or a read-only request makes "you can find it in FILE" a pointer, not a claim); ``roots``
    are the workspace's: a file named in the answer that is there already may be called ready."""
    intent = parse_intent(words) if words else None
    grant = intent.write_grant if intent else None
    honest = honest_answer(answer, record.edits, record.tool_calls, grant=grant,
                           locations=intent is None or made_something(intent),
                           existing=present_files(answer, roots))
    record.notes.extend(n for n in honest.notes if n not in record.notes)
    return honest.text
