"""The ``python_exec`` tool through the real tool registry and a real sandbox pool: schema validation,
repair of double-escaped code, refusals surfaced as data, roots taken from the workspace."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from cortex_lsp.config import Settings
from cortex_lsp.ports import StaticWorkspace
from cortex_lsp.tools.base import ToolContext, ToolResult
from cortex_lsp.tools.details import CodeRun
from cortex_lsp.tools.python_exec import PythonExecTool, format_result, repair_code
from cortex_lsp.tools.registry import ToolRegistry
from cortex_lsp.tools.sandbox import SandboxPool, SandboxResult

ASYNC = pytest.mark.asyncio(loop_scope="module")
SETTINGS = Settings(code_exec_timeout_seconds=3)


def _ran(result: ToolResult) -> CodeRun:
    """The sandbox's report of a run (the test fails when the code never reached the sandbox)."""
    assert isinstance(result.detail, CodeRun), result
    return result.detail


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("pyexec")
    (folder / "numbers.txt").write_text("1\n2\n3\n4\n", encoding="utf-8")
    return folder


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def registry() -> AsyncIterator[ToolRegistry]:
    pool = SandboxPool(SETTINGS)
    yield ToolRegistry([PythonExecTool(pool)])
    await pool.aclose()


def _context(root: Path) -> ToolContext:
    return ToolContext(workspace=StaticWorkspace([root]), settings=SETTINGS)


@ASYNC
async def test_runs_code_and_reports_output_and_value(registry: ToolRegistry, root: Path) -> None:
    result = await registry.execute("python_exec", {"code": "print('sum')\nsum(range(5))"}, _context(root))
    assert result.success
    assert "stdout:\nsum" in result.output and "value: 10" in result.output
    assert _ran(result).value == "10" and _ran(result).backend == "restricted"


@ASYNC
async def test_reads_workspace_file_through_context_roots(registry: ToolRegistry, root: Path) -> None:
    code = "sum(int(x) for x in open('numbers.txt').read().split())"
    result = await registry.execute("python_exec", {"code": code}, _context(root))
    assert result.success and _ran(result).value == "10"


@ASYNC
async def test_double_escaped_code_is_repaired(registry: ToolRegistry, root: Path) -> None:
    code = 'for i in range(2):\\n    print(\\"row\\", i)'
    result = await registry.execute("python_exec", {"code": code}, _context(root))
    assert result.success, result.error
    assert _ran(result).stdout == "row 0\nrow 1\n"


@ASYNC
async def test_refusal_is_a_failed_result_marked_refused(
    registry: ToolRegistry, root: Path, tmp_path: Path
) -> None:
    target = tmp_path / "written.txt"
    code = f"import os\nopen({str(target)!r}, 'w').write('x')"
    result = await registry.execute("python_exec", {"code": code}, _context(root))
    assert not result.success and result.refused is True
    assert not target.exists()
    assert result.text_for_model().startswith("[python_exec result]\nERROR:")


@ASYNC
async def test_runtime_error_is_failed_but_not_refused(registry: ToolRegistry, root: Path) -> None:
    result = await registry.execute("python_exec", {"code": "1 / 0"}, _context(root))
    assert not result.success and result.refused is False
    assert "ZeroDivisionError" in result.error


@ASYNC
async def test_time_limit_stops_the_code(registry: ToolRegistry, root: Path) -> None:
    result = await registry.execute("python_exec", {"code": "while True:\n    pass"}, _context(root))
    assert not result.success and "time limit" in result.error
    follow = await registry.execute("python_exec", {"code": "print(1)"}, _context(root))
    assert follow.success and _ran(follow).stdout == "1\n"


@ASYNC
@pytest.mark.parametrize("arguments", [{}, {"code": 5}, {"code": "print(1)", "shell": "rm -rf /"}])
async def test_schema_rejects_bad_arguments(
    registry: ToolRegistry, root: Path, arguments: dict[str, object]
) -> None:
    result = await registry.execute("python_exec", arguments, _context(root))
    assert not result.success and "Invalid arguments" in result.error
    assert result.detail is None  # nothing ran


def test_schema_and_timeout() -> None:
    tool = PythonExecTool(SandboxPool(SETTINGS))
    assert tool.name == "python_exec"
    assert tool.parameters["required"] == ["code"] and tool.parameters["additionalProperties"] is False
    assert tool.timeout is not None and tool.timeout > SETTINGS.code_exec_timeout_seconds


@pytest.mark.parametrize(
    ("raw", "fixed"),
    [
        ("print(1)\\nprint(2)", "print(1)\nprint(2)"),
        ('print(\\"hi\\")', 'print("hi")'),
        ("x = 1\\r\\nx", "x = 1\nx"),
        ('print("a\\nb")', 'print("a\\nb")'),  # a real escape inside a string literal stays
        ("x = 1\nprint(x)", "x = 1\nprint(x)"),
        ("def f(:\\n  pass", "def f(:\\n  pass"),  # still broken after repair: left as written
    ],
)
def test_repair_code(raw: str, fixed: str) -> None:
    assert repair_code(raw) == fixed


def test_format_result_caps_and_labels() -> None:
    result = SandboxResult(stdout="x" * 10_000, stderr="", value="1", error=None, duration_ms=1.0)
    text = format_result(result, limit=100)
    assert text.startswith("stdout:\n") and "more characters cut" in text and len(text) < 200
    empty = SandboxResult(stdout="", stderr="", value=None, error=None, duration_ms=1.0)
    assert format_result(empty) == "(no output)"


async def test_without_bubblewrap_model_code_runs_only_inside_landlock_and_seccomp(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No silent downgrade: ``auto`` without bubblewrap runs code only inside Landlock and the seccomp
    filter, and refuses it on a host without them (simulated hosts: tests/security/test_sandbox_boundary.py)."""
    from cortex_lsp.tools.sandbox import landlock, seccomp

    monkeypatch.setenv("PATH", str(tmp_path))  # as far as the sandbox can tell, bubblewrap is missing
    pool = SandboxPool(Settings(sandbox_isolation="auto"))
    try:
        tool = PythonExecTool(pool)
        result = await tool.execute({"code": "print('RAN-MODEL-CODE')"}, _context(root))
        user_run = await pool.run("print('RAN-USER-CODE')", roots=[root])  # what cortex.run does
    finally:
        await pool.aclose()
    if landlock.abi()[0] > 0 and seccomp.available()[0]:
        assert result.success and _ran(result).isolation == "landlock+seccomp", result
        assert "RAN-MODEL-CODE" in result.output
        assert user_run.stdout == "RAN-USER-CODE\n" and user_run.isolation == "landlock+seccomp"
        assert not any("not isolated" in n for n in user_run.notes)
    else:
        assert not result.success and result.refused is True
        assert "RAN-MODEL-CODE" not in (result.output or "") + (result.error or "")
        assert "apt-get install" in (result.error or "")
        assert user_run.refused and user_run.stdout == ""


async def test_model_code_runs_under_none_the_users_explicit_choice(root: Path) -> None:
    pool = SandboxPool(Settings(sandbox_isolation="none"))
    try:
        result = await PythonExecTool(pool).execute({"code": "print(6 * 7)"}, _context(root))
    finally:
        await pool.aclose()
    assert result.success and "42" in result.output
    assert "not isolated" in result.output  # the warning is in the result text too


async def test_oversized_code_is_refused_before_any_parse(registry: ToolRegistry, root: Path) -> None:
    huge = "x = 1\n" * 50_000  # 300 000 characters
    assert repair_code(huge) is huge
    result = await registry.execute("python_exec", {"code": huge}, _context(root))
    assert not result.success and "over 200000 characters" in (result.error or "")
