"""Tolerant parsing of model output: ``<think>`` blocks, fenced or wrapped JSON, string lists.

Small models wrap JSON in prose or code fences, prefix it with reasoning, or return a bare list where
an object was asked for. These helpers find the JSON value anyway, or return ``None``; they never raise.
"""

from __future__ import annotations

import json
import re
from typing import Any

_THINK_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.IGNORECASE | re.DOTALL)
_THINK_OPEN = re.compile(r"<(think|thinking|reasoning)>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</(think|thinking|reasoning)>", re.IGNORECASE)
_FENCE = re.compile(r"```[ \t]*([\w+-]*)[ \t]*\n(.*?)```", re.DOTALL)


def strip_reasoning(text: str) -> str:
    """``text`` without ``<think>…</think>`` blocks (an unclosed one hides everything after it)."""
    out = _THINK_BLOCK.sub("", text or "")
    close = list(_THINK_CLOSE.finditer(out))
    if close:  # "...reasoning</think> answer": the opening tag was in the prompt template
        out = out[close[-1].end() :]
    opened = _THINK_OPEN.search(out)
    if opened:
        out = out[: opened.start()]
    return out.strip()


def _balanced_candidates(text: str) -> list[str]:
    """Every balanced ``{...}`` or ``[...]`` span, outermost first, respecting JSON strings."""
    spans: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        if text[i] not in "{[":
            i += 1
            continue
        depth = 0
        in_str = False
        escape = False
        for j in range(i, n):
            ch = text[j]
            if in_str:
                if escape:
                    escape = False
                elif ch == "\\":
                    escape = True
                elif ch == '"':
                    in_str = False
                continue
            if ch == '"':
                in_str = True
            elif ch in "{[":
                depth += 1
            elif ch in "}]":
                depth -= 1
                if depth == 0:
                    spans.append(text[i : j + 1])
                    break
        i += 1
        if len(spans) > 50:
            break
    return spans


def extract_json(text: str) -> Any | None:
    """The first JSON object or array in ``text`` (whole text, then fences, then embedded spans)."""
    body = strip_reasoning(text)
    if not body:
        return None
    try:
        return json.loads(body)
    except (json.JSONDecodeError, ValueError):
        pass
    for match in _FENCE.finditer(body):
        try:
            return json.loads(match.group(2).strip())
        except (json.JSONDecodeError, ValueError):
            continue
    for span in _balanced_candidates(body):
        try:
            return json.loads(span)
        except (json.JSONDecodeError, ValueError):
            continue
    return None


def extract_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text``; a one-element list holding an object counts too."""
    value = extract_json(text)
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
        value = value[0]
    return value if isinstance(value, dict) else None


_LIST_LINE = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+(.+?)\s*$")


def extract_string_list(
    text: str, *, keys: tuple[str, ...] = ("steps", "subtasks", "items")
) -> list[str] | None:
    """A list of strings from JSON (a list, or an object holding one under ``keys``) or a bullet list."""
    value = extract_json(text)
    if isinstance(value, dict):
        for key in keys:
            if isinstance(value.get(key), list):
                value = value[key]
                break
    if isinstance(value, list):
        out = []
        for item in value:
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, dict):
                for key in ("description", "step", "task", "text", "subtask"):
                    if isinstance(item.get(key), str):
                        out.append(item[key])
                        break
        return out
    lines = [m.group(1) for m in map(_LIST_LINE.match, strip_reasoning(text).splitlines()) if m]
    return lines or None


def as_bool(value: Any) -> bool | None:
    """A JSON-ish boolean: true/false, "yes"/"no", 1/0; ``None`` when it is none of those."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return bool(value)
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ("true", "yes", "y", "1"):
            return True
        if low in ("false", "no", "n", "0"):
            return False
    return None
