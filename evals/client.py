"""A minimal editor: a pygls language client that drives ``python -m cortex_lsp`` over stdio.

It does what an editor does and nothing more: initialize with one workspace folder, send
``workspace/executeCommand`` with its own ``workDoneToken``, collect ``$/progress`` and
``cortex/event``, answer ``workspace/applyEdit`` (writing accepted edits to disk, like an editor that
saves) and cancel with ``window/workDoneProgress/cancel``. The server's stderr goes to a log file.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import attrs
from lsprotocol import types
from pygls.lsp.client import BaseLanguageClient
from pygls.uris import to_fs_path

SHUTDOWN_SECONDS = 15.0


def plain(value: Any) -> Any:
    """pygls hands unknown structures over as attribute objects: turn them into dicts and lists."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if hasattr(value, "_asdict"):
        return plain(value._asdict())
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if attrs.has(type(value)):
        return plain(attrs.asdict(value))
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return plain(vars(value))
    return value


def apply_to_disk(edit: types.WorkspaceEdit) -> list[Path]:
    """Write a workspace edit the way an editor applies and saves it; returns the paths written."""
    written: list[Path] = []
    for change in edit.document_changes or []:
        if isinstance(change, types.CreateFile):
            path = Path(to_fs_path(change.uri) or "")
            if path.exists() and not (change.options and (change.options.overwrite or change.options.ignore_if_exists)):
                raise FileExistsError(str(path))
            if not path.exists():
                path.write_text("", encoding="utf-8")
            written.append(path)
        elif isinstance(change, types.TextDocumentEdit):
            path = Path(to_fs_path(change.text_document.uri) or "")
            old = path.read_text(encoding="utf-8") if path.exists() else ""
            path.write_text(_apply_text_edits(old, list(change.edits)), encoding="utf-8")
            written.append(path)
        else:
            raise ValueError(f"unsupported change {type(change).__name__}")
    for uri, edits in (edit.changes or {}).items():
        path = Path(to_fs_path(uri) or "")
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        path.write_text(_apply_text_edits(old, list(edits)), encoding="utf-8")
        written.append(path)
    return written


def _offset(lines: list[str], pos: types.Position) -> int:
    line = min(pos.line, len(lines))
    return sum(len(x) for x in lines[:line]) + (min(pos.character, len(lines[line])) if line < len(lines) else 0)


def _apply_text_edits(text: str, edits: list[Any]) -> str:
    """TextEdit / AnnotatedTextEdit (code-point offsets: exact for the BMP text the cases use)."""
    lines = text.splitlines(keepends=True)
    spans = sorted(((_offset(lines, e.range.start), _offset(lines, e.range.end), e.new_text) for e in edits),
                   reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


@dataclass
class Recorder:
    decline: bool = False
    edit_requests: int = 0
    edits_written: list[Path] = field(default_factory=list)
    progress: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    events: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    #: monotonic time the first answer token of each run arrived
    first_token: dict[str, float] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)


class EvalClient(BaseLanguageClient):
    """One server process and what it sent us."""

    def __init__(self, log_path: Path, *, decline_edits: bool = False, can_review: bool = True) -> None:
        super().__init__("cortex-evals", "1")
        self.rec = Recorder(decline=decline_edits)
        #: whether the client declares change annotations (the server then asks the user to confirm)
        self.can_review = can_review
        self.log_path = log_path
        self._stderr_task: asyncio.Task[None] | None = None
        #: set when the server logs the end of its warm-up (its model, memory and classifier are loaded)
        self.warmed = asyncio.Event()
        self._register()

    def _register(self) -> None:
        rec = self.rec

        @self.feature(types.WORKSPACE_APPLY_EDIT)
        def on_apply(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            rec.edit_requests += 1
            if rec.decline:
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="declined by the eval case")
            try:
                rec.edits_written.extend(apply_to_disk(params.edit))
            except (OSError, ValueError) as exc:
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason=str(exc))
            return types.ApplyWorkspaceEditResult(applied=True)

        @self.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def on_create(params: types.WorkDoneProgressCreateParams) -> None:
            return None

        @self.feature(types.PROGRESS)
        def on_progress(params: types.ProgressParams) -> None:
            value = plain(params.value)
            rec.progress[str(params.token)].append(value if isinstance(value, dict) else {})

        @self.feature("cortex/event")
        def on_event(params: Any) -> None:
            event = plain(params)
            run_id = str(event.get("run_id", ""))
            rec.events[run_id].append(event)
            if event.get("type") == "token" and run_id not in rec.first_token:
                rec.first_token[run_id] = time.monotonic()

        @self.feature(types.WINDOW_SHOW_MESSAGE)
        def on_show(params: types.ShowMessageParams) -> None:
            rec.messages.append(params.message)

        @self.feature(types.WINDOW_LOG_MESSAGE)
        def on_log(params: types.LogMessageParams) -> None:
            if "warm-up done" in params.message:
                self.warmed.set()

        @self.feature(types.CLIENT_REGISTER_CAPABILITY)
        def on_register(params: Any) -> None:
            return None

    async def launch(self, env: dict[str, str], root: Path) -> types.InitializeResult:
        await self.start_io(sys.executable, "-m", "cortex_lsp", env=env, cwd=str(root.parent))
        assert self._server is not None and self._server.stderr is not None
        self._stderr_task = asyncio.create_task(self._drain(self._server.stderr))
        caps = types.ClientCapabilities(
            workspace=types.WorkspaceClientCapabilities(
                apply_edit=True, workspace_folders=True,
                workspace_edit=types.WorkspaceEditClientCapabilities(
                    document_changes=True,
                    resource_operations=[types.ResourceOperationKind.Create],
                    change_annotation_support=types.ChangeAnnotationsSupportOptions(groups_on_label=True)
                    if self.can_review else None),
                execute_command=types.ExecuteCommandClientCapabilities()),
            window=types.WindowClientCapabilities(work_done_progress=True),
        )
        result = await self.initialize_async(types.InitializeParams(
            capabilities=caps, process_id=os.getpid(), root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
        ))
        self.initialized(types.InitializedParams())
        return result

    async def _drain(self, stream: asyncio.StreamReader) -> None:
        with self.log_path.open("ab") as log:
            while chunk := await stream.read(65536):
                log.write(chunk)
                log.flush()

    async def command(self, command: str, argument: dict[str, Any] | None, token: str | None) -> Any:
        params = types.ExecuteCommandParams(command=command, arguments=[argument] if argument is not None else [],
                                            work_done_token=token)
        return plain(await self.workspace_execute_command_async(params))

    def cancel(self, token: str) -> None:
        self.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))

    def server_alive(self) -> bool:
        return self._server is not None and self._server.returncode is None

    async def close(self) -> None:
        try:
            if self.server_alive():
                await asyncio.wait_for(self.shutdown_async(None), SHUTDOWN_SECONDS)
                self.exit(None)
                await asyncio.wait_for(self._server.wait(), SHUTDOWN_SECONDS)  # type: ignore[union-attr]
        except Exception:
            pass
        if self.server_alive():
            self._server.kill()  # type: ignore[union-attr]
            await self._server.wait()  # type: ignore[union-attr]
        try:
            await asyncio.wait_for(self.stop(), SHUTDOWN_SECONDS)
        except Exception:
            pass
        if self._stderr_task is not None:
            self._stderr_task.cancel()

    def log_tail(self, limit: int = 600) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return text[-limit:]
