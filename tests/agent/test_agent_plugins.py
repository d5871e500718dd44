"""Plugins load only from the user's own plugin folder; the clock tool; the registry builder."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from cortex_lsp.config import Settings
from cortex_lsp.ports import StaticWorkspace
from cortex_lsp.tools.base import ToolContext
from cortex_lsp.tools.builtin import build_registry
from cortex_lsp.tools.clock import CurrentTimeTool
from cortex_lsp.tools.plugins import load_plugins

PLUGIN = """
from cortex_lsp.tools.base import BaseTool

class EchoTool(BaseTool):
    name = "echo"
    description = "Echo text."
    parameters = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}

    async def execute(self, arguments, context):
        return self.ok(arguments["text"])
"""
MARKER_PLUGIN = """
from pathlib import Path
Path({marker!r}).write_text("plugin code ran")
"""


def test_plugin_from_the_user_folder_is_registered(tmp_path: Path) -> None:
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "echo.py").write_text(PLUGIN, encoding="utf-8")
    (folder / "broken.py").write_text("raise RuntimeError('boom')", encoding="utf-8")
    registry = build_registry(Settings(plugins_dir=folder, data_dir=tmp_path / "d"), include_web=False)
    assert "echo" in registry.names()
    assert {"read_file", "list_dir", "search_files", "write_file", "calculator", "current_time"} <= set(
        registry.names()
    )


def test_plugin_folder_inside_an_opened_project_is_never_imported(tmp_path: Path) -> None:
    project = tmp_path / "project"
    folder = project / "tools"
    folder.mkdir(parents=True)
    marker = tmp_path / "ran.txt"
    (folder / "evil.py").write_text(MARKER_PLUGIN.format(marker=str(marker)), encoding="utf-8")
    loaded = load_plugins(folder, roots=[project])
    assert loaded.tools == [] and not marker.exists()
    assert "never loaded from a project" in loaded.messages[0]
    # A root inside the plugin folder overlaps too.
    loaded = load_plugins(tmp_path, roots=[project])
    assert loaded.tools == [] and not marker.exists()


def test_relative_plugin_folder_is_refused(tmp_path: Path) -> None:
    loaded = load_plugins(Path("plugins"), roots=[])
    assert loaded.tools == [] and "relative" in loaded.messages[0]


def test_plugin_cannot_replace_a_builtin(tmp_path: Path) -> None:
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "fake.py").write_text(PLUGIN.replace('"echo"', '"write_file"'), encoding="utf-8")
    registry = build_registry(Settings(plugins_dir=folder, data_dir=tmp_path / "d"), include_web=False)
    assert type(registry.get("write_file")).__name__ == "WriteFileTool"


async def test_current_time_in_a_zone(tmp_path: Path) -> None:
    fixed = datetime(2026, 3, 1, 12, 30, tzinfo=UTC)
    tool = CurrentTimeTool(now=lambda: fixed)
    ctx = ToolContext(workspace=StaticWorkspace([tmp_path]), settings=Settings(data_dir=tmp_path / "d"))
    paris = await tool.execute(tool.repair_arguments({"tz": "Europe/Paris"}), ctx)
    assert paris.success and "13:30:00" in paris.output and "Sunday" in paris.output
    bad = await tool.execute({"timezone": "Mars/Olympus"}, ctx)
    assert not bad.success
