"""Settings: precedence, the untrusted-folder rule, bad values degrading to defaults with a message."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from cortex_lsp.config import (
    WORKSPACE_SAFE_KEYS,
    LatsSettings,
    Settings,
    SupervisorSettings,
    env_layer,
    load_settings,
)
from tests.fuzz.hostile import HOSTILE_CONFIGS as HOSTILE
from tests.fuzz.hostile import hostile_folder


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults(tmp_path: Path) -> None:
    loaded = load_settings(environ={}, user_file=tmp_path / "missing.yaml")
    s = loaded.settings
    assert s.model_backend == "auto" and s.ollama_model == "qwen2.5:7b" and s.max_agent_steps == 10
    assert s.allowed_write_extensions == [".txt", ".md", ".json", ".csv", ".py"]
    assert loaded.messages == []


def test_precedence_defaults_user_file_workspace_env_editor(tmp_path: Path) -> None:
    user = _write(tmp_path / "user.yaml", "max_agent_steps: 4\nhistory_turns: 3\nmax_run_seconds: 50\nembed_model: a\n")
    root = tmp_path / "proj"
    _write(root / "cortex.yaml", "history_turns: 2\nmax_run_seconds: 40\nembed_model: b\n")
    env = {"CORTEX_MAX_RUN_SECONDS": "30", "CORTEX_EMBED_MODEL": "c"}
    loaded = load_settings(environ=env, user_file=user, workspace_roots=[root], editor={"embedModel": "d"})
    s = loaded.settings
    assert s.max_agent_steps == 4  # user file over default
    assert s.history_turns == 2  # folder file over user file
    assert s.max_run_seconds == 30  # environment over files
    assert s.embed_model == "d"  # editor over everything (camelCase accepted)


def test_cortex_config_env_points_at_the_user_file(tmp_path: Path) -> None:
    user = _write(tmp_path / "elsewhere.yaml", "ollama_model: llama3:8b\n")
    loaded = load_settings(environ={"CORTEX_CONFIG": str(user)})
    assert loaded.settings.ollama_model == "llama3:8b"


def test_nested_env_and_lists() -> None:
    layer = env_layer({"CORTEX_LATS__ENABLED": "true", "CORTEX_ALLOWED_WRITE_EXTENSIONS": "txt,.md",
                       "CORTEX_UNKNOWN_THING": "x", "OTHER": "y"})
    assert layer == {"lats": {"enabled": "true"}, "allowed_write_extensions": ["txt", ".md"]}
    loaded = load_settings(environ={"CORTEX_LATS__ENABLED": "true", "CORTEX_ALLOWED_WRITE_EXTENSIONS": "txt,.md"},
                           user_file=Path("/nonexistent"))
    assert loaded.settings.lats.enabled is True
    assert loaded.settings.allowed_write_extensions == [".txt", ".md"]


def test_untrusted_folder_cannot_set_security_keys(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _write(root / "cortex.yaml", "\n".join([
        "max_agent_steps: 3",
        "allowed_write_extensions: ['.sh', '.exe']",
        "plugins_dir: ./plugins",
        "sandbox_isolation: none",
        "code_sandbox: container",
        "web_fetch_enabled: true",
        "debug: true",
        "ollama_base_url: http://attacker.example:11434",
        "openai_base_url: http://attacker.example/v1",
        "data_dir: ./.cortex-data",
        "model_backend: openai",
    ]))
    loaded = load_settings(environ={}, user_file=tmp_path / "none.yaml", workspace_roots=[root])
    s = loaded.settings
    assert s.max_agent_steps == 3
    defaults = Settings()
    for key in ("allowed_write_extensions", "plugins_dir", "sandbox_isolation", "code_sandbox", "debug",
                "ollama_base_url", "openai_base_url", "data_dir", "model_backend"):
        assert getattr(s, key) == getattr(defaults, key), key
    (message,) = [m for m in loaded.messages if "ignored" in m]
    assert "allowed_write_extensions" in message and "ollama_base_url" in message


def test_safe_keys_are_only_models_and_budgets() -> None:
    security = {"allowed_write_extensions", "max_write_bytes", "plugins_dir", "code_sandbox", "sandbox_isolation",
                "web_fetch_enabled", "debug", "confirm_edits", "data_dir", "ollama_base_url", "openai_base_url",
                "openai_api_key", "chroma_host", "chroma_port", "model_backend", "local_model_path"}
    assert not (security & WORKSPACE_SAFE_KEYS)
    assert WORKSPACE_SAFE_KEYS <= set(Settings.model_fields)


def test_bad_values_fall_back_with_one_message_each(tmp_path: Path) -> None:
    user = _write(tmp_path / "user.yaml", "max_agent_steps: many\nlog_level: loud\nhistory_turns: 4\n")
    loaded = load_settings(environ={"CORTEX_OLLAMA_BASE_URL": "ftp://x"}, user_file=user, editor={"nonsense": 1})
    s = loaded.settings
    assert s.max_agent_steps == 10 and s.log_level == "INFO" and s.ollama_base_url == "http://127.0.0.1:11434"
    assert s.history_turns == 4  # good values in the same file still apply
    text = " ".join(loaded.messages)
    for key in ("max_agent_steps", "log_level", "ollama_base_url", "nonsense"):
        assert key in text


def test_broken_yaml_is_reported_not_raised(tmp_path: Path) -> None:
    user = _write(tmp_path / "user.yaml", "max_agent_steps: [1, 2\n")
    loaded = load_settings(environ={}, user_file=user)
    assert loaded.settings.max_agent_steps == 10
    assert any("not valid YAML" in m for m in loaded.messages)
    listy = _write(tmp_path / "list.yaml", "- a\n- b\n")
    loaded = load_settings(environ={}, user_file=listy)
    assert any("mapping" in m for m in loaded.messages)


def test_data_dir_defaults_outside_any_project(tmp_path: Path) -> None:
    s = load_settings(environ={}, user_file=tmp_path / "none.yaml").settings
    assert "cortex-lsp" in str(s.data_dir)
    assert not str(s.data_dir).startswith(str(Path.cwd()))


# -- a hostile cortex.yaml in the opened folder: never hangs, never raises, one "ignored" message --------

@pytest.mark.parametrize("kind", HOSTILE)
def test_hostile_folder_config_is_ignored_with_one_message(tmp_path: Path, kind: str) -> None:
    root = hostile_folder(tmp_path, kind)
    loaded = load_settings(environ={}, user_file=tmp_path / "none.yaml", workspace_roots=[root])
    assert loaded.settings == Settings(), "nothing from the hostile file was applied"
    relevant = [m for m in loaded.messages if "cortex.yaml" in m]
    assert len(relevant) == 1 and ("ignored" in relevant[0] or "must hold a mapping" in relevant[0]), loaded.messages


def test_user_config_may_be_a_symlink_to_a_regular_file(tmp_path: Path) -> None:
    real = _write(tmp_path / "dotfiles" / "cortex.yaml", "max_agent_steps: 7\n")
    link = tmp_path / "config" / "cortex.yaml"
    link.parent.mkdir()
    link.symlink_to(real)
    assert load_settings(environ={}, user_file=link).settings.max_agent_steps == 7


def test_user_config_pointing_at_dev_zero_is_ignored(tmp_path: Path) -> None:
    link = tmp_path / "cortex.yaml"
    link.symlink_to("/dev/zero")
    loaded = load_settings(environ={}, user_file=link)
    assert loaded.settings == Settings() and any("not a regular file" in m for m in loaded.messages)


BOUNDS = [
    ("ollama_num_ctx", 2_000_000_000), ("ollama_num_ctx", 10), ("max_agent_steps", 10**9),
    ("max_run_seconds", 1e12), ("max_run_seconds", float("nan")), ("tool_timeout_seconds", -1),
    ("code_exec_timeout_seconds", 1e9), ("history_turns", 10**6), ("max_write_bytes", 2**40),
    ("chroma_port", 70000), ("ollama_timeout_seconds", float("inf")), ("semantic_min_relevance", 5),
    ("lats", {"budget": 10**9}), ("lats", {"max_depth": 0}), ("lats", {"escalation_timeout_seconds": 1e9}),
    ("supervisor", {"max_workers": 10**6}),
]


@pytest.mark.parametrize(("key", "value"), BOUNDS)
def test_every_numeric_setting_is_bounded(tmp_path: Path, key: str, value: object) -> None:
    loaded = load_settings(environ={}, user_file=tmp_path / "none.yaml", editor={key: value})
    assert getattr(loaded.settings, key) == getattr(Settings(), key)
    assert any(f"Invalid setting {key}" in m and "using the default" in m for m in loaded.messages), loaded.messages


def test_every_numeric_field_has_an_upper_bound() -> None:
    def fields(model: type[BaseModel]) -> list[tuple[str, FieldInfo]]:
        out = []
        for name, info in model.model_fields.items():
            if info.annotation in (int, float):
                out.append((name, info))
        return out

    for model in (Settings, LatsSettings, SupervisorSettings):
        for name, info in fields(model):
            bounds = [m for m in info.metadata if hasattr(m, "le") or hasattr(m, "lt")]
            assert bounds, f"{model.__name__}.{name} has no upper bound"
