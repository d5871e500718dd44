"""Settings: typed, defaulted, parsed once.

Precedence (later wins): defaults < user config file (``cortex.yaml`` in the user's config folder, or
``CORTEX_CONFIG``) < ``cortex.yaml`` in an opened folder (models and budgets only) < ``CORTEX_*``
environment < editor settings (``initializationOptions.cortex``, ``workspace/configuration``).

Bad values never crash: each offending key falls back to its default and a message says which.
A config file inside the opened folder is untrusted: it may change models and budgets, never a
security setting (roots, write extensions, plugins, sandbox, web, debug, endpoints, telemetry).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from cortex_lsp.guards.workspace_files import UnsafeFile, read_untrusted_text

ENV_PREFIX = "CORTEX_"
CONFIG_FILE_NAME = "cortex.yaml"
MAX_CONFIG_BYTES = 64 * 1024  # a settings file is a few hundred bytes; anything near this is not one


def default_data_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir("cortex-lsp", appauthor=False))


def default_config_file() -> Path:
    import platformdirs

    return Path(platformdirs.user_config_dir("cortex-lsp", appauthor=False)) / CONFIG_FILE_NAME


class LatsSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    enabled: bool = False
    max_depth: int = Field(5, ge=1, le=10)
    n_branches: int = Field(3, ge=1, le=5)
    budget: int = Field(10, ge=1, le=50)
    evaluator: Literal["model", "heuristic"] = "model"
    escalate_on_stall: bool = True
    escalation_timeout_seconds: float = Field(60, gt=0, le=600)


class SupervisorSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_workers: int = Field(3, ge=1, le=8)


class Settings(BaseModel):
    """Every setting, with its default. Each is also ``CORTEX_<KEY>`` (nested: ``CORTEX_LATS__ENABLED``)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    # Models
    model_backend: Literal["auto", "ollama", "openai"] = "auto"
    ollama_base_url: str = "http://127.0.0.1:11434"
    openai_base_url: str = "http://127.0.0.1:8080/v1"
    openai_api_key: str | None = None
    ollama_model: str = "qwen2.5:7b"
    reasoning_model: str = "qwen2.5:7b"
    code_model: str = "qwen2.5:7b"
    embed_model: str = "nomic-embed-text"
    ollama_timeout_seconds: float = Field(300, gt=0, le=3600)
    ollama_num_ctx: int = Field(8192, ge=512, le=262144)
    ollama_keep_alive: str = "30m"
    local_model_path: str | None = None
    model_profile: Literal["auto", "small", "full"] = Field(
        "auto", description="small: the router plans and the model writes prose only; full: planner, "
        "ReAct and reflection; auto: small for the embedded default and models that fail a JSON probe")

    # Data and memory
    data_dir: Path = Field(default_factory=default_data_dir)
    chroma_host: str | None = None
    chroma_port: int = Field(8000, ge=1, le=65535)
    history_turns: int = Field(6, ge=0, le=50)
    memory_consolidation: bool = True
    semantic_min_relevance: float = Field(0.0, ge=0.0, le=1.0)
    procedural_memory_enabled: bool = True
    procedural_min_relevance: float = Field(0.6, ge=0.0, le=1.0)

    # Budgets
    max_agent_steps: int = Field(10, ge=1, le=100)
    max_run_seconds: float = Field(120, gt=0, le=3600)
    tool_timeout_seconds: float = Field(30, gt=0, le=600)
    code_exec_timeout_seconds: float = Field(10, gt=0, le=120)
    stream_tokens: bool = True
    #: bounds on what a model sends, enforced while it streams (models/limits.py)
    max_answer_bytes: int = Field(256 * 1024, ge=1024, le=64 * 1024 * 1024)
    max_tool_args_bytes: int = Field(1024 * 1024, ge=1024, le=64 * 1024 * 1024)
    max_tool_calls: int = Field(20, ge=1, le=1000)
    lats: LatsSettings = Field(default_factory=LatsSettings)
    supervisor: SupervisorSettings = Field(default_factory=SupervisorSettings)

    # Security
    allowed_write_extensions: list[str] = Field(default_factory=lambda: [".txt", ".md", ".json", ".csv", ".py"])
    max_write_bytes: int = Field(512 * 1024, ge=1, le=16 * 1024 * 1024)
    plugins_dir: Path | None = None
    code_sandbox: Literal["restricted", "container"] = "restricted"
    sandbox_isolation: Literal["auto", "bwrap", "none"] = "auto"
    web_fetch_enabled: bool = True
    confirm_edits: bool = False
    debug: bool = False

    # Logging and telemetry (telemetry_* and otel_endpoint are security settings: where run data goes)
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    log_format: Literal["console", "json"] = Field(
        "console", description="stderr log lines: console (one readable line each) or json (JSON lines)")
    telemetry_enabled: bool = Field(
        False, description="export OpenTelemetry traces and metrics of each run over OTLP to otel_endpoint")
    telemetry_include_content: bool = Field(
        False, description="also put the user's text, prompts, replies and tool arguments on spans")
    otel_endpoint: str = Field("http://127.0.0.1:4318", description="OTLP/HTTP collector (e.g. Jaeger)")

    @field_validator("allowed_write_extensions")
    @classmethod
    def _dotted(cls, value: list[str]) -> list[str]:
        return [v if v.startswith(".") else f".{v}" for v in (x.strip().lower() for x in value) if v]

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @field_validator("log_format", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.lower() if isinstance(value, str) else value

    @field_validator("ollama_base_url", "openai_base_url", "otel_endpoint")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value.rstrip("/")


# Keys an untrusted folder's cortex.yaml may set: models and budgets, nothing that widens access or
# sends data elsewhere (endpoints are security keys: a repository must not redirect your prompts).
WORKSPACE_SAFE_KEYS = frozenset(
    {
        "ollama_model",
        "reasoning_model",
        "code_model",
        "embed_model",
        "ollama_num_ctx",
        "history_turns",
        "max_agent_steps",
        "max_run_seconds",
        "tool_timeout_seconds",
        "code_exec_timeout_seconds",
        "stream_tokens",
        "lats",
        "supervisor",
    }
)

SETTING_KEYS = frozenset(Settings.model_fields)


@dataclass
class LoadedSettings:
    settings: Settings
    messages: list[str] = field(default_factory=list)


def _coerce_env_value(raw: str) -> Any:
    text = raw.strip()
    if text[:1] in "[{":
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return raw
    return raw


def env_layer(environ: Mapping[str, str]) -> dict[str, Any]:
    """``CORTEX_<KEY>`` variables as a settings layer (``__`` separates nested keys)."""
    layer: dict[str, Any] = {}
    for name, raw in environ.items():
        if not name.startswith(ENV_PREFIX) or name == "CORTEX_CONFIG":
            continue
        path = name[len(ENV_PREFIX) :].lower().split("__")
        if path[0] not in SETTING_KEYS:
            continue
        value: Any = _coerce_env_value(raw)
        if path[0] == "allowed_write_extensions" and isinstance(value, str):
            value = [part for part in value.split(",") if part.strip()]
        target = layer
        for part in path[:-1]:
            target = target.setdefault(part, {})
        target[path[-1]] = value
    return layer


class _NoAliasLoader(yaml.SafeLoader):
    """YAML without aliases: a settings file never needs them, and they make billion-laughs bombs and
    self-referencing (recursive) structures possible."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(None, None, "YAML aliases (*name) are not allowed in settings",
                                              event.start_mark)
        return super().compose_node(parent, index)


def read_yaml_file(path: Path, *, trusted: bool = True) -> tuple[dict[str, Any], list[str]]:
    """A YAML mapping from ``path``; a missing file is empty, anything else wrong is empty plus one message.

    Regular files only, opened non-blocking, at most 64 KB, UTF-8, no aliases; ``trusted=False`` (a file in
    an opened folder) also refuses a symbolic link. Never raises and never blocks."""
    try:
        try:
            text = read_untrusted_text(path, max_bytes=MAX_CONFIG_BYTES, follow_symlinks=trusted)
        except FileNotFoundError:
            return {}, []
        except UnsafeFile as exc:
            return {}, [f"{path} was ignored: {exc}."]
        data = yaml.load(text, Loader=_NoAliasLoader) or {}
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or exc.__class__.__name__
        return {}, [f"{path} is not valid YAML ({problem}); its settings were ignored."]
    except Exception as exc:  # RecursionError on deep nesting, MemoryError, anything: never out of initialize
        return {}, [f"{path} could not be read ({exc.__class__.__name__}); its settings were ignored."]
    if not isinstance(data, dict):
        return {}, [f"{path} must hold a mapping of settings; it was ignored."]
    return data, []


def workspace_layer(data: Mapping[str, Any], source: str) -> tuple[dict[str, Any], list[str]]:
    """Keep only the keys an untrusted folder may set; say which were ignored."""
    kept = {k: v for k, v in data.items() if k in WORKSPACE_SAFE_KEYS}
    ignored = sorted(k for k in data if k not in WORKSPACE_SAFE_KEYS)
    messages = []
    if ignored:
        messages.append(
            f"{source}: ignored {', '.join(ignored)} — a config file inside the opened folder may set "
            "models and budgets only; set security options in your user config or editor settings."
        )
    return kept, messages


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merge(dict(out[key]), value)
        else:
            out[key] = value
    return out


def _normalise_keys(layer: Mapping[str, Any]) -> dict[str, Any]:
    """Editors send camelCase (``maxAgentSteps``); accept it next to snake_case."""
    out: dict[str, Any] = {}
    for key, value in layer.items():
        snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in key) if isinstance(key, str) else key
        out[snake] = _normalise_keys(value) if isinstance(value, Mapping) else value
    return out


def build_settings(layers: list[tuple[str, Mapping[str, Any]]]) -> LoadedSettings:
    """Merge named layers in order and validate; every bad key degrades to its default with a message."""
    merged: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for name, layer in layers:
        norm = _normalise_keys(layer)
        merged = _merge(merged, norm)
        for key in norm:
            origin[key] = name
    messages: list[str] = []
    unknown = sorted(k for k in merged if k not in SETTING_KEYS)
    for key in unknown:
        messages.append(f"Unknown setting {key!r} (from {origin.get(key, '?')}) was ignored.")
        merged.pop(key)
    for _ in range(len(merged) + 1):
        try:
            return LoadedSettings(Settings(**merged), messages)
        except ValidationError as exc:
            bad: set[str] = set()
            for err in exc.errors():
                loc = err.get("loc") or ("?",)
                key = str(loc[0])
                bad.add(key)
                dotted = ".".join(str(p) for p in loc)
                messages.append(
                    f"Invalid setting {dotted} (from {origin.get(key, '?')}): {err.get('msg')}; "
                    "using the default."
                )
            for key in bad:
                merged.pop(key, None)
    return LoadedSettings(Settings(), messages)


def load_settings(
    *,
    environ: Mapping[str, str] | None = None,
    user_file: Path | None = None,
    workspace_roots: list[Path] | None = None,
    editor: Mapping[str, Any] | None = None,
) -> LoadedSettings:
    """Load settings from every layer. Never raises for bad input."""
    env = os.environ if environ is None else environ
    messages: list[str] = []
    layers: list[tuple[str, Mapping[str, Any]]] = []
    cfg_path = user_file or (Path(env["CORTEX_CONFIG"]) if env.get("CORTEX_CONFIG") else default_config_file())
    data, msgs = read_yaml_file(cfg_path)
    messages += msgs
    layers.append((str(cfg_path), data))
    for root in workspace_roots or []:
        folder_file = root / CONFIG_FILE_NAME
        try:
            data, msgs = read_yaml_file(folder_file, trusted=False)
            kept, more = workspace_layer(_normalise_keys(data), str(folder_file))
        except Exception as exc:  # e.g. nesting too deep to normalise: the file is ignored, never fatal
            data, msgs, kept, more = {}, [f"{folder_file} was ignored ({exc.__class__.__name__})."], {}, []
        messages += msgs + more
        layers.append((str(folder_file), kept))
    layers.append(("environment", env_layer(env)))
    if editor:
        layers.append(("editor settings", editor))
    loaded = build_settings(layers)
    loaded.messages[:0] = messages
    return loaded


def settings_json_schema() -> dict[str, Any]:
    """The settings schema (the VS Code extension's ``contributes.configuration`` is checked against it)."""
    return Settings.model_json_schema()
