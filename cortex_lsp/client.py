"""The CLI's LSP client: starts ``cortex-lsp serve`` as a child over stdio and drives it like an editor.

It shows streamed steps on stderr, prints the answer on stdout, and applies ``workspace/applyEdit``
requests to disk only after showing them (whether the user asked for the change, then its diff) and
getting a yes. That y/n is a review: the client declares it at ``initialize``
(``experimental.cortexReview``). With ``--yes`` nobody reviews, so it declares no review and the server
only sends writes the user's words clearly asked for (strict mode). Edits outside the folder it opened
are refused here too.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import difflib
import logging
import os
import re
import sys
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.client import LanguageClient
from pygls.uris import to_fs_path

from cortex_lsp import __version__
from cortex_lsp.cli_output import memory_table, print_json, sessions_table

DEFAULT_WORKSPACE = Path(__file__).resolve().parent.parent / "workspace"


class CliError(Exception):
    """A failure the CLI reports as one line (and exit code 1), never as a traceback."""


def _capabilities(review: bool) -> types.ClientCapabilities:
    """What the CLI client can do; ``review``: it asks y/n for every edit (not ``--yes``)."""
    return types.ClientCapabilities(
        window=types.WindowClientCapabilities(work_done_progress=True),
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=True,
            workspace_edit=types.WorkspaceEditClientCapabilities(
                document_changes=True,
                resource_operations=[types.ResourceOperationKind.Create],
                change_annotation_support=(types.ChangeAnnotationsSupportOptions(groups_on_label=False)
                                           if review else None),
            ),
            workspace_folders=True,
            configuration=False,
        ),
        experimental={"cortexReview": True} if review else None,
    )


def _diff(path: Path, text: str, create: bool) -> str:
    """The change as a unified diff (a new file: every line added)."""
    old = "" if create or not path.exists() else path.read_text(encoding="utf-8", errors="replace")
    lines = difflib.unified_diff(old.splitlines(keepends=True), text.splitlines(keepends=True),
                                 fromfile="/dev/null" if create else str(path), tofile=str(path))
    shown = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    return shown if len(shown) <= 4000 else shown[:4000] + "[…]\n"


def _descriptions(edit: types.WorkspaceEdit) -> list[str]:
    """What the server said about the change (the change annotations' descriptions)."""
    return [a.description for a in (edit.change_annotations or {}).values() if a.description]


def _to_dict(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _to_dict(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_dict(v) for v in value]
    if hasattr(value, "_asdict"):
        return _to_dict(value._asdict())
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return _to_dict(vars(value))
    return value


class CliClient:
    def __init__(self, root: Path | None, *, assume_yes: bool, quiet: bool, stream_answer: bool) -> None:
        self.root = root.resolve() if root else None
        self.assume_yes = assume_yes
        self.quiet = quiet
        self.stream_answer = stream_answer
        self.streamed = False
        self.lsp = LanguageClient("cortex-cli", __version__)
        if not os.environ.get("CORTEX_DEBUG"):
            # pygls logs harmless races with tracebacks (a reply to a request Ctrl-C cancelled); the CLI
            # reports failures itself, in one line
            logging.getLogger("pygls").setLevel(logging.CRITICAL)
        self._line_open = False  # streamed answer text not yet ended by a newline
        self.errors_shown: set[str] = set()  # error events already on stderr (not repeated as the answer)
        self.show_info = True  # the server's informational messages (off where the CLI says it itself)
        self._server_errors: deque[str] = deque(maxlen=20)  # the server's last stderr lines
        self._held_end: str | None = None  # the last progress end message, until its command answers
        self._register()

    def _write_token(self, text: str) -> None:
        if text:
            sys.stdout.write(text)
            sys.stdout.flush()
            self._line_open = not text.endswith("\n")
            self.streamed = True

    def end_line(self) -> None:
        """End the streamed answer's line, so what follows starts on its own line."""
        if self._line_open:
            sys.stdout.write("\n")
            sys.stdout.flush()
            self._line_open = False

    def _status(self, text: str) -> None:
        if not self.quiet:
            self.end_line()
            sys.stderr.write(f"\x1b[2m· {text}\x1b[0m\n" if sys.stderr.isatty() else f"· {text}\n")
            sys.stderr.flush()

    def _register(self) -> None:
        lsp = self.lsp

        @lsp.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def _create(params: types.WorkDoneProgressCreateParams) -> None:
            return None

        @lsp.feature(types.PROGRESS)
        def _progress(params: types.ProgressParams) -> None:
            value = _to_dict(params.value)
            kind, message = value.get("kind"), value.get("message") or value.get("title")
            if kind == "begin" and message:
                self._status(str(message))
            elif kind == "end" and message:
                # shown with the command's outcome: a command that fails says why in one line instead
                self._held_end = str(message)

        @lsp.feature("cortex/event")
        def _event(params: Any) -> None:
            event = _to_dict(params)
            etype, data = event.get("type"), event.get("data") or {}
            if etype == "token" and self.stream_answer:
                self._write_token(str(data.get("value", "")))
            elif etype == "plan":
                self._status(f"plan ({data.get('kind')}): " + "; ".join(map(str, data.get("steps") or [])))
            elif etype == "step_start":
                self._status(f"step {data.get('step')}: {data.get('description')}")
            elif etype == "tool_call":
                self._status(f"tool {data.get('tool')} {data.get('arguments')}")
            elif etype == "tool_result":
                self._status(f"{data.get('tool')}: {'ok' if data.get('success') else 'failed'}")
            elif etype == "error":
                message = str(data.get("message"))
                if not self.quiet:
                    self.errors_shown.add(message.strip())
                self._status(f"error: {message}")

        @lsp.feature(types.WINDOW_SHOW_MESSAGE)
        def _message(params: types.ShowMessageParams) -> None:
            if self.show_info or params.type in (types.MessageType.Error, types.MessageType.Warning):
                sys.stderr.write(f"{params.message}\n")

        @lsp.feature(types.WINDOW_LOG_MESSAGE)
        def _log(params: types.LogMessageParams) -> None:
            return None

        @lsp.feature(types.WORKSPACE_APPLY_EDIT)
        def _apply(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            return self.apply_edit(params)

    # -- edits -------------------------------------------------------------------------------------
    def _inside_root(self, uri: str) -> Path | None:
        fs = to_fs_path(uri)
        if not fs or self.root is None:
            return None
        path = Path(fs).resolve()
        try:
            path.relative_to(self.root)
        except ValueError:
            return None
        return path

    def apply_edit(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        plan: list[tuple[Path, str, bool]] = []  # (path, text, create)
        creates: set[str] = set()
        for change in params.edit.document_changes or []:
            if isinstance(change, types.CreateFile):
                creates.add(change.uri)
            elif isinstance(change, types.TextDocumentEdit):
                path = self._inside_root(change.text_document.uri)
                if path is None:
                    return types.ApplyWorkspaceEditResult(applied=False, failure_reason="outside the folder")
                text = "".join(getattr(e, "new_text", "") for e in change.edits)
                plan.append((path, text, change.text_document.uri in creates))
            else:
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="unsupported change")
        for uri, edits in (params.edit.changes or {}).items():
            path = self._inside_root(uri)
            if path is None:
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="outside the folder")
            plan.append((path, "".join(e.new_text for e in edits), False))
        if not plan:
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="empty edit")
        sys.stderr.write(f"\n{params.label or 'Cortex wants to write'}\n")
        for said in _descriptions(params.edit):
            sys.stderr.write(f"{said}\n")
        for path, text, create in plan:
            sys.stderr.write(_diff(path, text, create))
        if not self.assume_yes:
            if not sys.stdin.isatty():
                sys.stderr.write("Not applied: no terminal to confirm (use --yes).\n")
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="not confirmed")
            sys.stderr.write("Apply? [y/N] ")
            sys.stderr.flush()
            if sys.stdin.readline().strip().lower() not in ("y", "yes"):
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="declined by the user")
        for path, text, create in plan:
            if create:
                try:
                    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
                except FileExistsError:
                    return types.ApplyWorkspaceEditResult(applied=False, failure_reason=f"{path.name} exists")
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(text)
            else:
                path.write_text(text, encoding="utf-8")
        return types.ApplyWorkspaceEditResult(applied=True)

    # -- session -----------------------------------------------------------------------------------
    @asynccontextmanager
    async def session(self) -> AsyncIterator[CliClient]:
        # A session of its own: Ctrl-C in the terminal reaches this client only, which then shuts the
        # server down in order (it also stops when its stdin closes, if this process is killed).
        await self.lsp.start_io(sys.executable, "-m", "cortex_lsp", "serve", start_new_session=True)
        process: asyncio.subprocess.Process | None = getattr(self.lsp, "_server", None)
        drain = asyncio.create_task(self._drain_stderr(process))
        folders = [types.WorkspaceFolder(uri=self.root.as_uri(), name=self.root.name)] if self.root else None
        try:
            await self._request(self.lsp.initialize_async(types.InitializeParams(
                capabilities=_capabilities(review=not self.assume_yes),
                process_id=os.getpid(),
                root_uri=self.root.as_uri() if self.root else None,
                workspace_folders=folders,
                client_info=types.ClientInfo(name="cortex-cli", version=__version__),
            )))
            self.lsp.initialized(types.InitializedParams())
            yield self
        finally:
            await self._close(process)
            drain.cancel()

    async def _close(self, process: asyncio.subprocess.Process | None) -> None:
        if process is not None and process.returncode is None:
            try:
                await asyncio.wait_for(self.lsp.shutdown_async(None), 5.0)
                self.lsp.exit(None)
                await asyncio.wait_for(process.wait(), 5.0)
            except (Exception, asyncio.CancelledError):
                pass
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.lsp.stop(), 5.0)

    async def _drain_stderr(self, process: asyncio.subprocess.Process | None) -> None:
        """Read the server's stderr (a pipe: unread, it would fill and stall the server); keep its tail."""
        if process is None or process.stderr is None:
            return
        while line := await process.stderr.readline():
            text = line.decode("utf-8", "replace").strip()
            if text:
                self._server_errors.append(text)

    async def _request(self, pending: Any) -> Any:
        try:
            result = await pending
        except JsonRpcException as exc:
            self._held_end = None  # "Not started: …" would say the error twice
            raise CliError(_first_line(exc.message or str(exc))) from None
        except RuntimeError as exc:  # pygls fails pending requests this way when the server exits
            tail = f": {self._server_errors[-1]}" if self._server_errors else ""
            raise CliError(f"the language server stopped ({exc}){tail}") from None
        if self._held_end is not None:
            held, self._held_end = self._held_end, None
            self._status(held)
        return result

    async def command(self, name: str, argument: dict[str, Any] | None = None) -> dict[str, Any]:
        result = await self._request(self.lsp.workspace_execute_command_async(types.ExecuteCommandParams(
            command=name, arguments=[argument or {}],
            work_done_token=f"cli-{name}")))
        return _to_dict(result) or {}


def _first_line(text: str) -> str:
    """The first line of a server error, without a Python class name in front (``pkg.mod.Error: …``)."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    first = lines[0] if lines else "failed"
    return re.sub(r"^(?:[A-Za-z_][\w]*\.)+[A-Z]\w*:\s*", "", first) or first


def _root(args: argparse.Namespace) -> Path | None:
    root = getattr(args, "root", None)
    return root if root is not None else (DEFAULT_WORKSPACE if DEFAULT_WORKSPACE.is_dir() else None)


async def ask(args: argparse.Namespace) -> int:

    cli = CliClient(_root(args), assume_yes=args.yes, quiet=args.quiet, stream_answer=not args.json)
    async with cli.session():
        argument: dict[str, Any] = {"message": args.message, "orchestration": args.orchestration}
        if args.session:
            argument["session_id"] = args.session
        result = await cli.command("cortex.ask", argument)
    if args.json:
        print_json(result)
    else:
        cli.end_line()
        answer = str(result.get("answer", ""))
        shown = answer.strip() in cli.errors_shown  # the error, with its fix, is on stderr already
        if (not cli.streamed or result.get("stop_reason") != "answered") and not shown:
            sys.stdout.write(answer if answer.endswith("\n") else answer + "\n")
        for edit in result.get("edits", []):
            state = "applied" if edit.get("applied") else f"not applied ({edit.get('reason', '')})"
            if "applied" in edit and edit["applied"] is None:  # cancelled before the editor answered
                state = f"unknown — check the file ({edit.get('reason', '')})"
            sys.stderr.write(f"edit {edit.get('kind')} {edit.get('uri')}: {state}\n")
    return 0 if result.get("stop_reason") in ("answered", "refused") else 1


async def doctor(args: argparse.Namespace) -> int:

    cli = CliClient(_root(args), assume_yes=False, quiet=True, stream_answer=False)
    async with cli.session():
        result = await cli.command("cortex.doctor")
    if args.json:
        print_json(result)
    else:
        for check in result.get("checks", []):
            mark = "ok  " if check["ok"] else ("warn" if check.get("warning") else "FAIL")
            print(f"[{mark}] {check['name']}: {check['detail']}")
            if not check["ok"] and check.get("fix"):
                print(f"       fix: {check['fix']}")
    failed = [c for c in result.get("checks", []) if not c["ok"] and not c.get("warning")]
    return 1 if failed else 0


async def memory(args: argparse.Namespace) -> int:

    cli = CliClient(_root(args), assume_yes=False, quiet=True, stream_answer=False)
    async with cli.session():
        if args.memory_command == "search":
            argument: dict[str, Any] = {"query": args.query, "limit": args.limit}
            if args.type:
                argument["types"] = args.type
            result = await cli.command("cortex.memory.search", argument)
        elif args.memory_command == "sessions":
            result = await cli.command("cortex.memory.sessions")
        else:
            result = await cli.command("cortex.memory.forget", {"id": args.id})
    if args.json:
        print_json(result)
    elif args.memory_command == "search":
        print(memory_table(result.get("results") or [], args.query))
    elif args.memory_command == "sessions":
        print(sessions_table(result.get("sessions") or []))
    elif result.get("deleted"):
        print(f"Forgot {args.id}.")
    if args.memory_command == "forget" and not result.get("deleted"):
        if not args.json:
            sys.stderr.write(f"No memory with id {args.id!r} (cortex-lsp memory search QUERY shows ids).\n")
        return 1
    return 0


async def reset(args: argparse.Namespace) -> int:
    cli = CliClient(None, assume_yes=False, quiet=True, stream_answer=False)
    cli.show_info = False  # the server's "all memory deleted" for editors: said once, below
    async with cli.session():
        await cli.command("cortex.memory.reset", {"confirm": True})
    print("All Cortex memory deleted.")
    return 0
