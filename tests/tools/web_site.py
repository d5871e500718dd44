"""A local HTTP(S) site for the web_fetch tests: routes with request logs, a test-only address policy
(:class:`AllowOnce`), a fixed resolver (:class:`MapResolver`), a throwaway CA (:class:`Certs`) and the
tool's call helpers. The fixtures that start these are in ``tests/tools/conftest.py``.
"""

from __future__ import annotations

import ipaddress
import ssl
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cortex_lsp.config import Settings
from cortex_lsp.guards.urls import IPAddress, check_public_address
from cortex_lsp.ports import StaticWorkspace
from cortex_lsp.tools.base import ToolContext, ToolResult
from cortex_lsp.tools.registry import ToolRegistry
from cortex_lsp.tools.web_fetch import WebFetchTool

LOCAL = ipaddress.IPv4Address("127.0.0.1")
OTHER = ipaddress.IPv4Address("127.0.0.2")


@dataclass
class Route:
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "text/html; charset=utf-8"})
    body: bytes = b"<html><body><p>ok</p></body></html>"
    repeat: int = 1  # the body is streamed this many times


class LocalSite:
    """A real HTTP(S) server with scripted routes, a request log and a count of body bytes sent."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, tls: ssl.SSLContext | None = None) -> None:
        self.routes: dict[str, Route] = {}
        self.requests: list[tuple[str, str]] = []  # (path, Host header)
        self.sent: dict[str, int] = {}
        self.done = threading.Event()
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                site.requests.append((self.path, self.headers.get("Host", "")))
                route = site.routes.get(self.path) or site.routes.get(self.path.split("?")[0])
                if route is None:
                    route = Route(status=404, headers={"Content-Type": "text/plain"}, body=b"not found")
                self.send_response(route.status)
                for name, value in route.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(route.body) * route.repeat))
                self.end_headers()
                sent = 0
                try:
                    for _ in range(route.repeat):
                        self.wfile.write(route.body)
                        sent += len(route.body)
                except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
                    pass
                finally:
                    site.sent[self.path] = sent
                    site.done.set()

        self.server = ThreadingHTTPServer((host, port), Handler)
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def paths(self) -> list[str]:
        return [path for path, _host in self.requests]

    def wait_sent(self, path: str) -> int:
        """The body bytes sent for ``path`` once its handler finished (waits for the handler)."""
        for _ in range(200):
            if path in self.sent:
                return self.sent[path]
            self.done.wait(0.05)
            self.done.clear()
        raise AssertionError(f"the handler for {path} never finished")

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class AllowOnce:
    """Test policy: the first check of ``address`` passes; every other check is the real one."""

    def __init__(self, address: IPAddress = LOCAL) -> None:
        self.address = address
        self.used = False
        self.calls: list[IPAddress] = []

    def __call__(self, ip: IPAddress) -> None:
        self.calls.append(ip)
        if ip == self.address and not self.used:
            self.used = True
            return
        check_public_address(ip)


class MapResolver:
    """Test resolver: host → list of answers, one per call (the last repeats)."""

    def __init__(self, answers: dict[str, list[list[str]]]) -> None:
        self.answers = answers
        self.calls: list[str] = []

    async def __call__(self, host: str, port: int) -> list[IPAddress]:
        self.calls.append(host)
        options = self.answers.get(host)
        if not options:
            raise OSError(f"unknown host {host}")
        answer = options[min(len(self.calls_for(host)) - 1, len(options) - 1)]
        return [ipaddress.ip_address(a) for a in answer]

    def calls_for(self, host: str) -> list[str]:
        return [h for h in self.calls if h == host]


def context(*turns: str, **settings: Any) -> ToolContext:
    return ToolContext(
        workspace=StaticWorkspace([Path.cwd()]),
        settings=Settings(**settings),
        user_words=turns[-1] if turns else "",
        user_turns=list(turns),
    )


async def fetch(tool: WebFetchTool, url: str, ctx: ToolContext, **extra: Any) -> ToolResult:
    return await ToolRegistry([tool]).execute("web_fetch", {"url": url, **extra}, ctx)


@dataclass
class Certs:
    ca: Path
    cert: Path
    key: Path


def client_tls(certs: Certs) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(certs.ca))
