"""What the model in use can be trusted with: a capability profile per model.

``small`` (the embedded default, any model whose name says ≤ 2B parameters, any model that fails a quick
structured-output probe at first use): planning by the router in code, tool arguments from the router,
short prompts, JSON only under a grammar, and the model used for prose only. ``full``: the planner →
ReAct → reflect path. The ``model_profile`` setting (``auto`` | ``small`` | ``full``) overrides the
detection. Probe results are cached per backend and model in ``<data_dir>/model-profiles.json``, so
the probe costs one short model call per model, once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from cortex_lsp.agent.parsing import extract_json
from cortex_lsp.config import Settings
from cortex_lsp.models.base import (
    ChatOptions,
    Message,
    ModelClient,
    ModelError,
    ModelMissing,
    ModelUnavailable,
    collect,
)

log = logging.getLogger("cortex.agent")

ProfileKind = Literal["small", "full"]
CACHE_FILE = "model-profiles.json"
PROBE_SECONDS = 20.0
#: models at or under this many billion parameters are small without a probe
SMALL_MAX_BILLIONS = 2.0

_SIZE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*([bm])\b", re.IGNORECASE)

PROBE_SCHEMA = {
    "type": "object",
    "properties": {"tool": {"type": "string"}, "path": {"type": "string"}},
    "required": ["tool", "path"],
}
PROBE_MESSAGES = (
    Message(
        "system",
        'Reply with JSON only: {"tool": "<one of read_file, list_dir, calculator>", "path": "<file>"}.',
    ),
    Message("user", "Open the file notes.md and show it to me."),
)


@dataclass(frozen=True)
class ModelProfile:
    kind: ProfileKind
    #: why: "setting", "embedded", "name", "probe", "cache"
    source: str
    model: str = ""

    @property
    def small(self) -> bool:
        return self.kind == "small"

    def describe(self) -> str:
        return f"model profile: {self.kind} ({self.source})"


def size_in_billions(model: str) -> float | None:
    """The parameter count a model name states (``qwen2.5:7b`` → 7, ``smollm2-135m`` → 0.135)."""
    match = _SIZE.search(model.rsplit("/", 1)[-1])
    if match is None:
        return None
    value = float(match.group(1))
    return value / 1000 if match.group(2).lower() == "m" else value


def judge_probe(reply: str) -> bool:
    """Did the probe reply pass: a JSON object naming ``read_file`` and ``notes.md``?"""
    value = extract_json(reply)
    if not isinstance(value, dict):
        return False
    return str(value.get("tool", "")).strip() == "read_file" and "notes.md" in str(value.get("path", ""))


class ProfileCache:
    """The probe verdicts, one JSON file in the data folder; a broken file is a cache miss."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir.expanduser() / CACHE_FILE

    def get(self, key: str) -> ProfileKind | None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        value = data.get(key) if isinstance(data, dict) else None
        return value if value in ("small", "full") else None

    def put(self, key: str, kind: ProfileKind) -> None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                data = {}
        except (OSError, ValueError):
            data = {}
        data[key] = kind
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
            tmp.replace(self.path)
        except OSError as exc:
            log.warning("could not cache the model profile: %s", exc)


async def probe(model: ModelClient, name: str) -> bool:
    """One short structured-output request: does the model follow a JSON instruction?"""
    try:
        async with asyncio.timeout(PROBE_SECONDS):
            reply = await collect(
                model.chat_stream(
                    list(PROBE_MESSAGES), model=name, format=PROBE_SCHEMA,
                    options=ChatOptions(temperature=0.0, max_tokens=60),
                )
            )
    except (ModelUnavailable, ModelMissing):
        raise  # no verdict: the run reports the model problem, nothing is cached
    except (TimeoutError, ModelError):
        return False
    return judge_probe(reply.content)


def known_profile(settings: Settings, *, backend: str, name: str) -> ModelProfile | None:
    """The profile when it is known without asking anything (the setting, the embedded default, a size in
    the name), else ``None``."""
    chosen = settings.model_profile
    if chosen in ("small", "full"):
        return ModelProfile(chosen, "setting", name)
    if backend == "embedded":
        return ModelProfile("small", "embedded", name)
    size = size_in_billions(name)
    if size is not None:
        return ModelProfile("small" if size <= SMALL_MAX_BILLIONS else "full", "name", name)
    return None


async def detect_profile(settings: Settings, model: ModelClient, *, backend: str, name: str) -> ModelProfile:
    """The profile for ``name`` on ``backend``: the setting, else what is known, else a cached probe."""
    known = known_profile(settings, backend=backend, name=name)
    if known is not None:
        return known
    cache = ProfileCache(settings.data_dir)
    key = f"{backend}:{name}"
    cached = cache.get(key)
    if cached is not None:
        return ModelProfile(cached, "cache", name)
    kind: ProfileKind = "full" if await probe(model, name) else "small"
    cache.put(key, kind)
    return ModelProfile(kind, "probe", name)
