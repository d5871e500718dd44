"""Command line: ``cortex-lsp serve | ask | doctor | memory … | reset-memory``.

``serve`` (the default) runs the language server on stdio, or ``--tcp --port N`` on 127.0.0.1. Every
other command is a thin LSP client of that same server, started as a child over stdio: it shows the
streamed steps, prints the answer, and applies edits to disk only after showing them and getting a yes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

from cortex_lsp import __version__


def _serve(args: argparse.Namespace) -> int:
    from cortex_lsp.memory.private import private_umask
    from cortex_lsp.server import build_server
    from cortex_lsp.server.logs import setup_logging

    private_umask()  # everything the server creates (memory, indexes) is the user's alone: 0700/0600
    setup_logging(os.environ.get("CORTEX_LOG_LEVEL", "INFO").upper())
    server = build_server()
    if args.tcp:
        server.start_tcp("127.0.0.1", args.port)
    else:
        server.start_io()
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="cortex-lsp", description="Cortex: a local AI agent as a language server.")
    p.add_argument("--version", action="version", version=f"cortex-lsp {__version__}")
    sub = p.add_subparsers(dest="command")

    serve = sub.add_parser("serve", help="run the language server (stdio by default)")
    serve.add_argument("--tcp", action="store_true", help="listen on 127.0.0.1 instead of stdio")
    serve.add_argument("--port", type=int, default=2087)

    ask = sub.add_parser("ask", help="ask the agent, through the language server")
    ask.add_argument("message")
    ask.add_argument("--root", type=Path, help="the folder the agent may use (default: the sample workspace/)")
    ask.add_argument("--session", help="continue a session id")
    ask.add_argument("--orchestration", choices=["single", "lats", "supervisor"], default="single")
    ask.add_argument("--yes", action="store_true", help="apply the agent's file edits without asking")
    ask.add_argument("--json", action="store_true", help="print the whole result object as JSON")
    ask.add_argument("--quiet", action="store_true", help="don't show progress")

    doctor = sub.add_parser("doctor", help="check model server, models, data folder, sandbox, roots")
    doctor.add_argument("--root", type=Path)
    doctor.add_argument("--json", action="store_true")

    memory = sub.add_parser("memory", help="search, list or forget memories")
    msub = memory.add_subparsers(dest="memory_command", required=True)
    ms = msub.add_parser("search")
    ms.add_argument("query")
    ms.add_argument("--type", action="append", choices=["semantic", "procedural", "episodic"])
    ms.add_argument("--limit", type=int, default=10)
    msub.add_parser("sessions")
    mf = msub.add_parser("forget")
    mf.add_argument("id")

    reset = sub.add_parser("reset-memory", help="delete all memory (facts, tool sequences, history)")
    reset.add_argument("--yes", action="store_true", help="confirm")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command in (None, "serve"):
        if args.command is None:
            args.tcp, args.port = False, 0
        return _serve(args)
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
            return 2
        return _run(client.reset(args))
    return 2


def _run(coro: Awaitable[int]) -> int:
    try:
        return asyncio.run(coro)  # type: ignore[arg-type]
    except KeyboardInterrupt:
        return 130


def print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))

