"""What a file defines or holds, listed by code: "what functions are in utils.py", "how many helpers",
"the top-level keys of config.json", "which columns does sales.csv have".

A small model reading a file miscounts and invents names; the parsed file does not. :func:`outline`
answers only a question for all of them (plural words, "how many", "list"); a question about one
definition gets the lines of that definition instead (:mod:`cortex_lsp.agent.evidence`).
"""

from __future__ import annotations

import ast
import json
import re
import tomllib
from pathlib import PurePosixPath

import yaml

from cortex_lsp.agent.evidence import named_definitions, python_units

_DEFINITION_WORDS = {
    "function": ("functions", "funcs", "helpers", "funktionen", "fonctions", "funciones", "funzioni",
                 "funções", "funcoes", "functies", "defs"),
    "class": ("classes", "klassen", "clases", "classi", "klasses"),
    "method": ("methods", "methoden", "méthodes", "métodos", "metodi"),
}
_KEY_WORDS = ("keys", "fields", "settings", "options", "sections", "entries", "properties", "schlüssel", "clés",
              "claves", "chiavi", "chaves", "sleutels")
_COLUMN_WORDS = ("columns", "column", "headers", "header", "fields", "spalten", "colonnes", "columnas", "colonne",
                 "colunas", "kolommen")
_ASKS_ALL = re.compile(r"\b(?:what|which|list|name|how\s+many|all|every|defined?|defines|available|are\s+there|"
                       r"welche|quelles?|quels?|cu[aá]l(?:es)?|quali|quais|welke|wie\s+viele|combien|cu[aá]ntas?|"
                       r"quant[ie]|quantas?|hoeveel)\b", re.IGNORECASE)


def outline(path: str, text: str, question: str) -> str | None:
    """What a file defines or holds, when the question asks for all of it: the functions and classes of
    Python source ("what functions are in utils.py", "how many helpers"), the top-level keys of a JSON,
    YAML or TOML file, a CSV's columns. ``None`` for any other question."""
    words = {w.lower() for w in re.findall(r"[\w-]+", question)}
    if not _ASKS_ALL.search(question):
        return None
    suffix = PurePosixPath(path.lower()).suffix
    name = PurePosixPath(path).name
    if suffix == ".py":
        return _code_outline(name, text, words, question)
    if suffix in (".json", ".yaml", ".yml", ".toml") and words & set(_KEY_WORDS):
        keys = _top_keys(suffix, text)
        if keys:
            return f"{name} has {len(keys)} top-level key{'s' if len(keys) != 1 else ''}: {', '.join(keys)}."
    if suffix in (".csv", ".tsv") and words & set(_COLUMN_WORDS):
        first = next((line for line in text.splitlines() if line.strip()), "")
        columns = [c.strip() for c in first.split("\t" if suffix == ".tsv" else ",") if c.strip()]
        rows = max(0, sum(1 for line in text.splitlines() if line.strip()) - 1)
        if columns:
            return f"{name} has {len(columns)} columns: {', '.join(columns)} ({rows} rows)."
    return None


def _code_outline(name: str, text: str, words: set[str], question: str) -> str | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    kinds = [kind for kind, spellings in _DEFINITION_WORDS.items() if words & set(spellings)]
    if not kinds:
        return None
    units, _ = python_units(text)
    if named_definitions(question, units, name):
        return None  # "what does the chunk function do" asks about one of them
    found: dict[str, list[str]] = {"function": [], "class": [], "method": []}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found["function"].append(f"`{node.name}` (line {node.lineno})")
        elif isinstance(node, ast.ClassDef):
            found["class"].append(f"`{node.name}` (line {node.lineno})")
            found["method"].extend(f"`{node.name}.{m.name}` (line {m.lineno})" for m in node.body
                                   if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef))
    parts = []
    for kind in kinds:
        items = found[kind]
        plural = "es" if kind == "class" else "s"
        noun = kind if len(items) == 1 else kind + plural
        parts.append(f"{len(items)} {noun}" + (f": {', '.join(items)}" if items else ""))
    return f"{name} defines " + "; ".join(parts) + "."


def _top_keys(suffix: str, text: str) -> list[str]:
    try:
        if suffix == ".json":
            data = json.loads(text)
        elif suffix == ".toml":
            data = tomllib.loads(text)
        else:
            data = yaml.safe_load(text)
    except (ValueError, yaml.YAMLError):
        return []
    return [str(k) for k in data] if isinstance(data, dict) else []
