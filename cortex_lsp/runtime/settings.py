"""Settings as a front loads them: every layer for its roots, and the data folder kept outside them."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cortex_lsp.config import LoadedSettings, Settings, load_settings

log = logging.getLogger("cortex.settings")


def load_front_settings(roots: list[Path], editor: Mapping[str, Any] | None = None,
                        notes: list[str] | None = None) -> tuple[LoadedSettings, list[str]]:
    """The settings for ``roots`` and the editor's layer, and every problem to show the user in one message.

    Never raises: a failure to load means the defaults and one message. A ``data_dir`` inside an opened
    folder is replaced by the default one (Cortex keeps its data outside projects)."""
    try:
        loaded = load_settings(workspace_roots=roots, editor=editor or {})
    except Exception as exc:  # load_settings never raises by design; if it ever does, defaults + one message
        log.exception("settings could not be loaded")
        loaded = LoadedSettings(Settings(), [f"settings could not be loaded ({exc.__class__.__name__}); "
                                             "using the defaults."])
    messages = [*(notes or []), *loaded.messages]
    data_dir = loaded.settings.data_dir.expanduser().resolve()
    if any(_within(data_dir, root) for root in roots):
        messages.append(
            f"data_dir {data_dir} is inside the opened folder; Cortex keeps its data outside projects, "
            "so the default data folder is used."
        )
        loaded.settings = loaded.settings.model_copy(update={"data_dir": Settings().data_dir})
    logging.getLogger("cortex").setLevel(loaded.settings.log_level)
    return loaded, messages


def model_key(s: Settings) -> tuple[Any, ...]:
    """The settings a model client is built from: a change in any of them means a new client."""
    return (s.model_backend, s.ollama_base_url, s.openai_base_url, s.openai_api_key, s.ollama_timeout_seconds,
            s.ollama_num_ctx, s.local_model_path, s.max_answer_bytes, s.max_tool_args_bytes, s.max_tool_calls)


def _within(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder.resolve())
        return True
    except ValueError:
        return False
