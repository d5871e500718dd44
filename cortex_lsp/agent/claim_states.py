"""Claims that a file exists without a verb of saving: "Your file is ready.", "haiku.md is now
available.", "Done — it's in your workspace now.", "You can find it in the folder.", "Check your workspace."

A small model that wrote nothing often says where the file is, or that it is ready, instead of saying it
saved it. :func:`state_claim` finds such a sentence (already folded and mended by
:mod:`cortex_lsp.agent.claim_text`); :mod:`cortex_lsp.agent.write_claims` decides whether it is false
(no such write in the run) and reads it only when the user asked for something made, so that "the
parser is in the src folder" answering a question stays a pointer. A file named as ready is a pointer
too when the run read that file (it exists): "notes.md is ready to read".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from cortex_lsp.agent.claim_text import fold, mend_names

# Words for a stored file (not "poem", "script" or "note": "Your poem is ready:" shows the poem).
_FILE = r"(?:files?|documents?|datei(?:en)?|fichiers?|archivos?|bestand(?:en)?)"
_NAME = r"(?:[\w-]+/)*[\w-]+(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,7}"
_PLACE = (r"(?:(?:your|the|this|my|our)\s+(?:\w+\s+)?(?:workspace|folder|directory|project|repo|repository|"
          r"root|explorer|sidebar|disk|drive)|disk|your\s+files)"
          # "the workspace settings", "your project's requirements": a part of the place, not the place
          r"(?!['\w]|\s+(?:settings|configuration|config|view|panel|menu|tab|toolbar|search|trust)\b)")
_BE = r"(?:'s|'re|\s+is|\s+are|\s+was|\s+were|\s+has\s+been|\s+have\s+been|\s+should\s+be|\s+now)"
_READY = (r"(?:ready|available|accessible|in\s+place|there|on\s+(?:the\s+|your\s+)?dis[kc]|all\s+set|"
          r"good\s+to\s+go|waiting\s+for\s+you|up\s+and\s+ready|prepared|set\s+up|done)"
          # "ready to be saved", "ready for you to copy": what the user can do, not what was done
          r"(?!\s+(?:to\s+(?:be|save|copy|paste|create|download)|for\s+you\s+to)\b)"
          # "The file is available on GitHub": somewhere else, not written here
          r"(?!\s+(?:on|at|from|via)\s+(?:github|gitlab|pypi|npm|crates|the\s+(?:web|internet)|online|https?:))")
# The same in German, French, Spanish, Italian: "Die Datei ist fertig.", "Le fichier est prêt."
_READY_ELSEWHERE = (r"\s+(?:ist|sind|est|sont|está|esta|están|è|sono)\s+(?:jetzt\s+|maintenant\s+|ahora\s+|ora\s+)?"
                    r"(?:fertig|bereit|verfügbar|prête?s?|disponibles?|list[oa]s?|pront[oa]|disponibili)\b")
_SUBJECT = rf"(?:\b{_FILE}\b|(?<![\w/.-]){_NAME}\b)[`'\"*]*"   # "the file", "`haiku.md`"

_STATES = re.compile(
    "|".join((
        # "Your file is ready.", "The file has been made available.", "`haiku.md` is now there."
        rf"{_SUBJECT}[^.!?;]{{0,30}}?{_BE}(?:\s+now)?(?:\s+(?:made|fully|all))?\s+{_READY}\b",
        rf"{_SUBJECT}{_READY_ELSEWHERE}",
        # "Done — it's in your workspace now.", "It's all set in haiku.md.", "haiku.md is in the project folder."
        rf"(?:\b(?:it|they|everything|all)\b|{_SUBJECT}){_BE}(?:\s+now)?(?:\s+(?:saved|stored|sitting|waiting|located|"
        rf"available|placed|ready|all\s+set))?\s+(?:in|inside|under|at|on|to)\s+(?:{_PLACE}\b|[`'\"*]*{_NAME}\b)",
        # "You can find it in the folder.", "You should now see haiku.md in your workspace."
        rf"\b(?:find|see|spot|locate|access)\s+(?:it|them|this|that|everything|[`'\"*]*{_NAME}[`'\"*]*|"
        rf"(?:the|your|a|new)\s+(?:new\s+)?{_FILE})\s+(?:(?:right|now)\s+)?(?:in|inside|under|at|on)\s+{_PLACE}\b",
        # "A new file now exists.", "haiku.md now exists in your workspace."
        rf"{_SUBJECT}\s+(?:now\s+)?exists\b",
    )),
    re.IGNORECASE,
)


# The sentence tells the user what to do ("To keep it, save it as haiku.md; you will find it in the folder").
_INSTRUCTION = re.compile(
    r"^\W*(?:to|in\s+order\s+to|first|then|next|step\s+\d+|\d+[.)]|save|copy|paste|create|press|click|run|"
    r"choose|select|use|go)\b", re.IGNORECASE)
# Words that make a state a hedge or a negation: "It would be in your workspace", "The file is not ready".
_HEDGE = re.compile(r"\b(not|never|no|nothing|nowhere|cannot|would|could|might|may|nicht|nie|pas|jamais|nunca)\b",
                    re.IGNORECASE)
_CONDITIONAL = re.compile(r"\b(if|once|after|when|unless|until|before|wenn|falls|si|cuando)\b", re.IGNORECASE)
_LOOKBACK_WORDS = 4


def instruction(sentence: str) -> bool:
    """Whether ``sentence`` tells the user what to do or what happens on a condition (then where a file
    is, or will be, is no claim that it was written)."""
    return bool(_INSTRUCTION.match(sentence) or _CONDITIONAL.search(sentence))


def state_claims(sentence: str) -> list[int]:
    """Where in ``sentence`` (folded, names mended) it says a file is ready, available or somewhere, and
    not as a hedge, a negation, a condition or an instruction to the user."""
    if instruction(sentence):
        return []
    found = []
    for claim in _STATES.finditer(sentence):
        before = re.findall(r"[\w']+", sentence[:claim.start()])[-_LOOKBACK_WORDS:]
        if not any(_HEDGE.fullmatch(w) or w.lower().endswith("n't") for w in before):
            inside = re.findall(r"[\w']+", claim.group(0))
            if not any(_HEDGE.fullmatch(w) or w.lower().endswith("n't") for w in inside):
                found.append(claim.start())
    return found


_NAMED = re.compile(rf"(?<![\w/.-])({_NAME})(?![\w/-])")


def present_files(answer: str, roots: Sequence[Path]) -> tuple[str, ...]:
    """The file names in ``answer`` that are files inside one of the workspace ``roots`` now (only looked
    up, never read; a name that leaves its root, through ``..`` or a link, is not one)."""
    found: list[str] = []
    if not roots:
        return ()
    for name in dict.fromkeys(m.group(1) for m in _NAMED.finditer(mend_names(fold(answer)))):
        relative = name.lstrip("/")
        for root in roots:
            try:
                base = root.resolve()
                path = (base / relative).resolve()
                if path.is_relative_to(base) and path.is_file():
                    found.append(name)
                    break
            except (OSError, ValueError):
                continue
    return tuple(found)
