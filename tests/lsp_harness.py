"""Start the real Cortex server over stdio with a pytest-lsp client, pointed at a scripted model.

    async with lsp_session(model, tmp_path) as client:
        result = await ask(client, "What is the capital of Japan?")

The client answers ``workspace/applyEdit`` (records every edit; accepts and writes the file to disk
like an editor that saves, or declines) and records ``cortex/event`` notifications per run id.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from lsprotocol import types
from pygls.uris import to_fs_path
from pytest_lsp import LanguageClient, client_capabilities, make_test_lsp_client

from cortex_lsp.agent.prompts import ROLE_PLANNER
from tests.scripted_model import Reply, ScriptedModelServer

DIRECT_PLAN = '{"kind": "direct", "steps": ["Answer directly"]}'

ApplyMode = Literal["accept", "decline", "unsupported"]


@dataclass
class Recorder:
    edits: list[types.ApplyWorkspaceEditParams] = field(default_factory=list)
    events: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    all_events: list[dict[str, Any]] = field(default_factory=list)
    mode: ApplyMode = "accept"
    write_to_disk: bool = True


def _apply_to_disk(edit: types.WorkspaceEdit) -> None:
    creates = set()
    for change in edit.document_changes or []:
        if isinstance(change, types.CreateFile):
            path = Path(to_fs_path(change.uri) or "")
            if path.exists() and not (change.options and change.options.overwrite):
                raise FileExistsError(path)
            creates.add(change.uri)
            path.write_text("", encoding="utf-8")
        elif isinstance(change, types.TextDocumentEdit):
            path = Path(to_fs_path(change.text_document.uri) or "")
            text = "".join(getattr(e, "new_text", "") for e in change.edits)
            path.write_text(text, encoding="utf-8")
    for uri, edits in (edit.changes or {}).items():
        Path(to_fs_path(uri) or "").write_text("".join(e.new_text for e in edits), encoding="utf-8")


class CortexClient(LanguageClient):
    """The pytest-lsp client as the harness sets it up (typing only)."""

    rec: Recorder
    init_result: types.InitializeResult


def server_env(model: ScriptedModelServer | None, data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CORTEX_")}
    env.update({
        "CORTEX_MODEL_BACKEND": "ollama",
        "CORTEX_OLLAMA_BASE_URL": model.url if model else "http://127.0.0.1:9",
        "CORTEX_DATA_DIR": str(data_dir),
        "CORTEX_CONFIG": str(data_dir / "no-user-config.yaml"),
        "CORTEX_LOG_LEVEL": "WARNING",
    })
    env.update(extra)
    return env


def capabilities(client: str = "visual-studio-code", *, progress: bool = True,
                 apply_edit: bool = True) -> types.ClientCapabilities:
    caps = client_capabilities(client)
    if not progress and caps.window is not None:
        caps.window.work_done_progress = False
    if not apply_edit and caps.workspace is not None:
        caps.workspace.apply_edit = False
    return caps


@asynccontextmanager
async def lsp_session(
    model: ScriptedModelServer | None,
    tmp_path: Path,
    *,
    folders: list[Path] | None = None,
    no_folder: bool = False,
    caps: types.ClientCapabilities | None = None,
    init_options: dict[str, Any] | None = None,
    apply_mode: ApplyMode = "accept",
    env: dict[str, str] | None = None,
    direct_plans: bool = True,
) -> AsyncIterator[CortexClient]:
    """``direct_plans``: the planner role is scripted to answer directly, so other rules script the answer."""
    if model is not None and direct_plans:
        model.on(Reply(content=DIRECT_PLAN), contains=ROLE_PLANNER, times=None, first=True)
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    data_dir = tmp_path / "data"
    data_dir.mkdir(exist_ok=True)
    client = cast(CortexClient, make_test_lsp_client())
    rec = Recorder(mode=apply_mode)
    client.rec = rec

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def on_apply(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        rec.edits.append(params)
        if rec.mode == "decline":
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="declined in test")
        if rec.write_to_disk:
            _apply_to_disk(params.edit)
        return types.ApplyWorkspaceEditResult(applied=True)

    @client.feature("cortex/event")
    def on_event(params: Any) -> None:
        event = params if isinstance(params, dict) else _plain(params)
        rec.all_events.append(event)
        rec.events[event["run_id"]].append(event)

    await client.start_io(sys.executable, "-m", "cortex_lsp", env=server_env(model, data_dir, **(env or {})))
    roots = [] if no_folder else (folders or [root])
    client.init_result = await client.initialize_session(types.InitializeParams(
        capabilities=caps or capabilities(),
        process_id=os.getpid(),
        root_uri=None if no_folder else roots[0].as_uri(),
        workspace_folders=None if no_folder else [types.WorkspaceFolder(uri=r.as_uri(), name=r.name) for r in roots],
        initialization_options=init_options,
    ))
    try:
        yield client
    finally:
        await close_session(client)


#: shutdown (bounded at 10 s by the server) + exit (the server's exit watchdog: 10 s), with room for load
EXIT_WAIT_SECONDS = 40.0


async def close_session(client: LanguageClient, wait: float = EXIT_WAIT_SECONDS) -> None:
    """``shutdown`` then ``exit``, as an editor does. The test fails when a running server answered the
    shutdown with an error (or not at all), and when it was still running ``wait`` seconds after ``exit``
    (it is killed then: a server that outlives its editor is a bug, and waiting on it would hang the suite)."""
    proc: asyncio.subprocess.Process | None = getattr(client, "_server", None)
    failed: str | None = None
    try:
        await asyncio.wait_for(client.shutdown_session(), timeout=wait)
    except Exception as exc:
        if proc is not None and proc.returncode is None:
            failed = f"shutdown failed: {exc!r}"
            with contextlib.suppress(Exception):
                client.exit(None)  # an editor sends exit (or goes away) whatever shutdown answered
    hung = proc is not None and proc.returncode is None
    if proc is not None and hung:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), timeout=wait if failed else 5)
        hung = proc.returncode is None
        if hung:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGUSR1)  # the server prints its threads' stacks (cli.py): to the
                await asyncio.sleep(1)  # test's captured stderr, through pytest-lsp's forwarder
                proc.kill()
    with contextlib.suppress(Exception):
        await asyncio.wait_for(client.stop(), timeout=10)
    assert failed is None, failed
    assert not hung, f"the server was still running {wait:g} s after shutdown/exit: killed"


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple) and not hasattr(value, "_asdict"):
        return [_plain(v) for v in value]
    if hasattr(value, "_asdict"):
        return _plain(value._asdict())
    if hasattr(value, "__dict__"):
        return _plain(vars(value))
    return value


async def execute(client: LanguageClient, command: str, argument: Any = None, *,
                  token: str | None = None, raw_arguments: list[Any] | None = None) -> Any:
    args = raw_arguments if raw_arguments is not None else ([] if argument is None else [argument])
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command, arguments=args, work_done_token=token))
    return _plain(result)


async def ask(client: LanguageClient, message: str, **fields: Any) -> dict[str, Any]:
    return await execute(client, "cortex.ask", {"message": message, **fields})  # type: ignore[no-any-return]


def progress_of(client: LanguageClient) -> dict[Any, list[Any]]:
    return dict(client.progress_reports)
