"""A crude English stem, shared by document search and the evidence under answers.

"releases" / "release", "tagged" / "tag", "boxes" / "box", "restoring" / "restore" meet at one stem
("releas", "tag", "box", "restor"): a plural, -ed, -ing and a final -e are cut, and a doubled last
consonant before -ed / -ing is undoubled. Not a real stemmer (no dictionary, English only): a word's
start matching, where it is used, does the rest.
"""

from __future__ import annotations

import re


def stem(word: str) -> str:
    """``word`` lower-cased and cut to its stem (see the module docstring)."""
    w = word.lower().removesuffix("'s")
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 4 and re.search(r"(?:ss|x|z|ch|sh)es$", w):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    if len(w) > 5 and w.endswith("ing"):
        return _undouble(w[:-3])
    if len(w) > 4 and w.endswith("ed"):
        return _undouble(w[:-2])
    if len(w) > 4 and w.endswith("e") and not w.endswith("ee"):
        return w[:-1]
    return w


def _undouble(base: str) -> str:
    """"tagg" → "tag", "stopp" → "stop" (a doubled last consonant before -ed / -ing); "install" stays."""
    if len(base) >= 3 and base[-1] == base[-2] and base[-1] not in "aeiouylsz":
        return base[:-1]
    return base
