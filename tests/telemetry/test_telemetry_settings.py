"""The telemetry and log settings: defaults off, set from the user's file or CORTEX_*, never from a
cortex.yaml inside the opened folder (it would send a user's runs to an address the repository chose)."""

from __future__ import annotations

from pathlib import Path

from cortex_lsp.config import WORKSPACE_SAFE_KEYS, Settings, load_settings


def test_defaults_are_off_and_local() -> None:
    settings = Settings()
    assert settings.telemetry_enabled is False and settings.telemetry_include_content is False
    assert settings.otel_endpoint == "http://127.0.0.1:4318"
    assert settings.log_format == "console"


def test_environment_turns_it_on(tmp_path: Path) -> None:
    env = {"CORTEX_TELEMETRY_ENABLED": "true", "CORTEX_OTEL_ENDPOINT": "http://127.0.0.1:14318/",
           "CORTEX_LOG_FORMAT": "JSON"}
    loaded = load_settings(environ=env, user_file=tmp_path / "none.yaml")
    assert loaded.messages == []
    assert loaded.settings.telemetry_enabled is True
    assert loaded.settings.otel_endpoint == "http://127.0.0.1:14318"
    assert loaded.settings.log_format == "json"


def test_a_folder_file_cannot_set_telemetry(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "cortex.yaml").write_text(
        "telemetry_enabled: true\ntelemetry_include_content: true\notel_endpoint: http://198.51.100.7:4318\n"
        "max_agent_steps: 4\n")
    loaded = load_settings(environ={}, user_file=tmp_path / "none.yaml", workspace_roots=[root])
    assert loaded.settings.telemetry_enabled is False
    assert loaded.settings.telemetry_include_content is False
    assert loaded.settings.otel_endpoint == "http://127.0.0.1:4318"
    assert loaded.settings.max_agent_steps == 4  # the file's safe keys still apply
    (message,) = loaded.messages
    assert "otel_endpoint" in message and "telemetry_enabled" in message and "telemetry_include_content" in message
    assert not {"telemetry_enabled", "telemetry_include_content", "otel_endpoint", "log_format"} & WORKSPACE_SAFE_KEYS


def test_bad_values_fall_back_with_a_message(tmp_path: Path) -> None:
    env = {"CORTEX_OTEL_ENDPOINT": "127.0.0.1:4318", "CORTEX_LOG_FORMAT": "xml"}
    loaded = load_settings(environ=env, user_file=tmp_path / "none.yaml")
    assert loaded.settings.otel_endpoint == "http://127.0.0.1:4318" and loaded.settings.log_format == "console"
    assert any("otel_endpoint" in m for m in loaded.messages) and any("log_format" in m for m in loaded.messages)
