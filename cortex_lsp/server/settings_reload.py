"""Settings changed while the server runs (``workspace/didChangeConfiguration``).

The new editor settings go through the same loader as at start (``config.load_settings``: the same
layers, the same security rules, the data folder kept out of the project), with one difference: a
value that does not validate keeps the value in effect instead of falling back to the default, so a
typo in ``cortex.ollamaBaseUrl`` does not swap a working model server for ``127.0.0.1:11434``. The
user sees one message naming the setting. The model client is rebuilt for the next run when its
endpoint settings change (``CortexServer.model``); a run in progress keeps the client it started with,
and a replaced client is closed once no run is active. Memory, opened once, talks to whichever client
is current (:class:`CurrentModel`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from cortex_lsp.config import SETTING_KEYS, Settings
from cortex_lsp.runtime.models import CurrentModel, close_retired


@dataclass(frozen=True)
class EditorUpdate:
    """The editor layer to load, and what was wrong with the one the editor sent."""

    settings: dict[str, Any]
    messages: list[str] = field(default_factory=list)


def _snake(key: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in key)


def _shown(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= 80 else f"{text[:80]}…"


def screen_editor_settings(sent: Mapping[str, Any], current: Settings) -> EditorUpdate:
    """``sent`` with every value that would not validate replaced by the value in effect (``current``).

    Each top-level key is validated on its own (a nested group such as ``lats`` as a whole). Unknown
    keys pass through: the loader reports them. Never raises."""
    kept: dict[str, Any] = {}
    messages: list[str] = []
    for key, value in sent.items():
        name = _snake(key) if isinstance(key, str) else key
        if name not in SETTING_KEYS:
            kept[key] = value
            continue
        try:
            Settings.model_validate({name: value})
        except ValidationError as exc:
            why = "; ".join(str(err.get("msg", "invalid")) for err in exc.errors()[:2])
            in_effect = current.model_dump(mode="json")[name]
            messages.append(f"Invalid setting {key} ({_shown(value)}): {why}; kept the value in effect "
                            f"({_shown(in_effect)}).")
            kept[name] = in_effect
            continue
        except Exception as exc:  # a value pydantic cannot even look at: treated the same way
            in_effect = current.model_dump(mode="json")[name]
            messages.append(f"Invalid setting {key} ({exc.__class__.__name__}); kept the value in effect "
                            f"({_shown(in_effect)}).")
            kept[name] = in_effect
            continue
        kept[key] = value
    return EditorUpdate(kept, messages)


# the model client plumbing lives below the fronts (runtime/models.py); kept importable from here
__all__ = ["CurrentModel", "EditorUpdate", "close_retired", "screen_editor_settings"]
