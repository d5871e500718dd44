"""Command line: ``cortex-lsp serve | acp | ask | doctor | memory … | reset-memory``.

``acp`` runs the same agent over the Agent Client Protocol on stdio (cortex_lsp/acp/).

``serve`` (the default) runs the language server on stdio, or ``--tcp --port N`` on 127.0.0.1. Every
other command is a thin LSP client of that same server, started as a child over stdio: it shows the
streamed steps, prints the answer, and applies edits to disk only after showing them and getting a yes.

Ordinary mistakes (an empty question, ``--limit 0``, a ``--root`` that is not a folder, an unknown id),
errors the server reports and Ctrl-C end with one line on stderr and a non-zero exit, not a traceback
(``CORTEX_DEBUG=1`` shows the traceback of an unexpected error).
"""

from __future__ import annotations

import argparse
import asyncio
import faulthandler
import os
import signal
import sys
import threading
import time
from collections.abc import Awaitable, Coroutine
from pathlib import Path
from typing import Any, NoReturn

from cortex_lsp import __version__

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
#: after Ctrl-C the CLI closes the server and exits; if that is not done in this long, it exits anyway
CANCEL_GRACE_SECONDS = 20.0
_cancel_said = threading.Event()


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``cortex-lsp ask: argument QUESTION: is empty (… --help)``."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _text(value: str) -> str:
    if not value.strip():
        raise argparse.ArgumentTypeError("is empty")
    return value


def _limit(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if not 1 <= number <= 100:
        raise argparse.ArgumentTypeError(f"must be between 1 and 100, not {number}")
    return number


def _folder(value: str) -> Path:
    path = Path(value).expanduser()
    if not path.exists():
        raise argparse.ArgumentTypeError(f"{value}: no such folder")
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{value}: not a folder")
    from cortex_lsp.guards.project_roots import root_refusal

    if (why := root_refusal(path)) is not None:  # the server would refuse it too: say so before starting it
        raise argparse.ArgumentTypeError(f"{why}; pass a project folder")
    return path


#: how long a thread may hold the GIL while another waits for it (Python's default: 5 ms). The server's
#: worker threads (a model's reply being read, indexing, SQLite) run Python too; with the default a code
#: action waited up to 5 ms for the GIL each time one of them was busy (median 8.8 ms while a reply
#: streamed flat out, 3.9 ms at 1 ms, load ~9; benchmarks in docs/benchmarks.md)
SWITCH_INTERVAL_SECONDS = 0.001


def _editor_first() -> None:
    """The process serves an editor: its event loop gets the GIL back within a millisecond."""
    sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)


def _serve(args: argparse.Namespace) -> int:
    from cortex_lsp.memory.private import private_umask
    from cortex_lsp.server import build_server
    from cortex_lsp.server.logs import setup_logging

    private_umask()  # everything the server creates (memory, indexes) is the user's alone: 0700/0600
    _editor_first()
    if hasattr(signal, "SIGUSR1"):  # `kill -USR1 PID` prints every thread's stack to the server's stderr
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    setup_logging(os.environ.get("CORTEX_LOG_LEVEL", "INFO").upper())
    server = build_server()
    try:
        if args.tcp:
            server.start_tcp("127.0.0.1", args.port)
        else:
            server.start_io()
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    return server.exit_code


def _acp() -> int:
    from cortex_lsp.acp import main as acp_main
    from cortex_lsp.memory.private import private_umask
    from cortex_lsp.server.logs import setup_logging

    private_umask()  # everything the agent creates (memory, indexes) is the user's alone: 0700/0600
    _editor_first()
    setup_logging(os.environ.get("CORTEX_LOG_LEVEL", "INFO").upper())
    try:
        return acp_main()
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="cortex-lsp", description="Cortex: a local AI agent as a language server.")
    p.add_argument("--version", action="version", version=f"cortex-lsp {__version__}")
    sub = p.add_subparsers(dest="command")

    serve = sub.add_parser("serve", help="run the language server (stdio by default)")
    serve.add_argument("--tcp", action="store_true", help="listen on 127.0.0.1 instead of stdio")
    serve.add_argument("--port", type=int, default=2087)

    sub.add_parser("acp", help="run the agent over the Agent Client Protocol on stdio (Zed, JetBrains, ...)")
    ask = sub.add_parser("ask", help="ask the agent, through the language server")
    ask.add_argument("message", metavar="QUESTION", type=_text, help="what to ask (quote it)")
    ask.add_argument("--root", type=_folder, help="the folder the agent may use (default: the sample workspace/)")
    ask.add_argument("--session", help="continue a session id")
    ask.add_argument("--orchestration", choices=["single", "lats", "supervisor"], default="single")
    ask.add_argument("--yes", action="store_true", help="apply the agent's file edits without asking")
    ask.add_argument("--json", action="store_true", help="print the whole result object as JSON")
    ask.add_argument("--quiet", action="store_true", help="don't show progress")

    doctor = sub.add_parser("doctor", help="check model server, models, data folder, sandbox, roots")
    doctor.add_argument("--root", type=_folder)
    doctor.add_argument("--json", action="store_true")

    memory = sub.add_parser("memory", help="search, list or forget memories")
    msub = memory.add_subparsers(dest="memory_command", required=True)
    ms = msub.add_parser("search", help="memories that match a query, best first")
    ms.add_argument("query", metavar="QUERY", type=_text)
    ms.add_argument("--type", action="append", choices=["semantic", "procedural", "episodic"])
    ms.add_argument("--limit", type=_limit, default=10, help="how many (1-100, default 10)")
    ms.add_argument("--json", action="store_true", help="print the results as JSON")
    sessions = msub.add_parser("sessions", help="the chat sessions, newest first")
    sessions.add_argument("--json", action="store_true", help="print the sessions as JSON")
    mf = msub.add_parser("forget", help="delete one memory by its id")
    mf.add_argument("id", metavar="ID", type=_text)
    mf.add_argument("--json", action="store_true", help="print the result as JSON")

    reset = sub.add_parser("reset-memory", help="delete all memory (facts, tool sequences, history)")
    reset.add_argument("--yes", action="store_true", help="confirm")
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
        if args.command == "acp":
            return _acp()
        if args.command in (None, "serve"):
            if args.command is None:
                args.tcp, args.port = False, 0
            return _serve(args)
        return _command(args)
    except KeyboardInterrupt:
        _say_cancelled()
        return EXIT_INTERRUPTED


def _command(args: argparse.Namespace) -> int:
    from cortex_lsp import client

    if args.command == "ask":
        return _run(client.ask(args))
    if args.command == "doctor":
        return _run(client.doctor(args))
    if args.command == "memory":
        return _run(client.memory(args))
    if args.command == "reset-memory":
        if not args.yes:
            print("This deletes all stored memory (facts, tool sequences and chat history). "
                  "Run again with --yes to confirm.", file=sys.stderr)
            return EXIT_USAGE
        return _run(client.reset(args))
    return EXIT_USAGE


def _say_cancelled() -> None:
    if not _cancel_said.is_set():
        _cancel_said.set()
        print("Cancelled.", file=sys.stderr, flush=True)


def exit_if_stuck(seconds: float = CANCEL_GRACE_SECONDS) -> None:
    """After Ctrl-C: if the process has not ended ``seconds`` later (a server or a task that does not let
    go), say "Cancelled." and end it with 130. A Ctrl-C always ends the CLI."""
    def later() -> None:
        time.sleep(seconds)
        _say_cancelled()
        os._exit(EXIT_INTERRUPTED)

    threading.Thread(target=later, name="cancel-grace", daemon=True).start()


async def _bounded_on_interrupt(coro: Coroutine[Any, Any, int]) -> int:
    """``coro``, with asyncio's own Ctrl-C handling (it cancels the run) plus :func:`exit_if_stuck`."""
    chained = signal.getsignal(signal.SIGINT)
    if callable(chained) and threading.current_thread() is threading.main_thread():
        armed = threading.Event()

        def on_interrupt(signum: int, frame: Any) -> None:
            if not armed.is_set():
                armed.set()
                exit_if_stuck()
            chained(signum, frame)

        signal.signal(signal.SIGINT, on_interrupt)
    return await coro


def _run(coro: Awaitable[int]) -> int:
    from cortex_lsp.client import CliError

    main_coro: Coroutine[Any, Any, int] = coro  # type: ignore[assignment]
    try:
        return asyncio.run(_bounded_on_interrupt(main_coro))
    except KeyboardInterrupt:
        _say_cancelled()
        return EXIT_INTERRUPTED
    except CliError as exc:
        print(f"cortex-lsp: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:
        if os.environ.get("CORTEX_DEBUG"):
            raise
        detail = " ".join(str(exc).split())[:300] or type(exc).__name__
        print(f"cortex-lsp: unexpected error: {type(exc).__name__}: {detail} "
              "(CORTEX_DEBUG=1 shows the traceback)", file=sys.stderr)
        return 1

