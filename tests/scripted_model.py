"""A scripted model server: a real HTTP server on 127.0.0.1 that speaks the parts of Ollama's API
(``/api/chat`` streamed NDJSON with tool calls, ``/api/embed``, ``/api/tags``, ``/api/show``,
``/api/version``) and of the OpenAI-compatible API (``/v1/chat/completions`` with SSE,
``/v1/embeddings``, ``/v1/models``) that Cortex's clients use.

Tests script its replies and read the requests it received::

    model = ScriptedModelServer().start()
    model.on(Reply(content="Tokyo."), contains="capital of Japan")    # a rule, matched on the request
    model.script(Reply(tool_calls=[call("read_file", path="a.txt")]))  # or a FIFO queue
    ... point the server under test at model.url ...
    assert model.chat_requests[-1]["messages"][-1]["content"] == ...

Rules are tried in order, then the queue, then ``default``. Embeddings are a deterministic hashed
bag of words, so texts that share words are near each other (real similarity, no model needed).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

EMBED_DIM = 64
_TOKEN = re.compile(r"\S+\s*|\s+")
_WORD = re.compile(r"[a-z0-9_]+")


def call(name: str, **arguments: Any) -> dict[str, Any]:
    """A tool call for :class:`Reply` ``tool_calls``."""
    return {"name": name, "arguments": arguments}


@dataclass
class Reply:
    content: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    #: seconds to wait before each streamed token (0: as fast as possible)
    token_delay: float = 0.0
    #: seconds to wait before the first byte
    first_delay: float = 0.0
    #: an HTTP error instead of a reply
    status: int = 200
    error: str = ""
    #: never answer (until the client gives up or the server stops)
    hang: bool = False
    #: a hostile flood after ``content``: this many bytes of "x", streamed as it is written (never held whole)
    flood_bytes: int = 0
    #: how the flood comes: ``tokens`` (4 KB per message), ``line`` (one message: a single giant token),
    #: ``tool_args`` (one ``write_file`` call whose ``content`` argument is the flood)
    flood_as: Literal["tokens", "line", "tool_args"] = "tokens"

    #: drop the connection after this many streamed tokens (a model server dying mid-answer)
    cut_after: int | None = None


FLOOD_PIECE = 4096


@dataclass
class Rule:
    reply: Reply
    contains: str | None = None
    when: Callable[[dict[str, Any]], bool] | None = None
    times: int | None = 1
    path: str | None = None

    def matches(self, path: str, body: dict[str, Any]) -> bool:
        if self.times is not None and self.times <= 0:
            return False
        if self.path and self.path != path:
            return False
        if self.contains is not None and self.contains not in json.dumps(body.get("messages", body)):
            return False
        return not (self.when is not None and not self.when(body))


def embed_text(text: str, dim: int = EMBED_DIM) -> list[float]:
    """A deterministic bag-of-words embedding: shared words ⇒ high cosine similarity."""
    vec = [0.0] * dim
    words = _WORD.findall(text.lower())
    for word in words:
        digest = hashlib.md5(word.encode()).digest()
        index = int.from_bytes(digest[:4], "little") % dim
        vec[index] += 1.0 if digest[4] % 2 == 0 else -1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    if not words:
        vec[0] = 1.0
        norm = 1.0
    return [v / norm for v in vec]


class ScriptedModelServer:
    def __init__(
        self,
        models: tuple[str, ...] = ("qwen2.5:7b", "nomic-embed-text:latest"),
        *,
        default: Reply | None = None,
        no_tool_models: tuple[str, ...] = (),
        tokens_per_second: float | None = None,
    ) -> None:
        self.models = list(models)
        self.default = default or Reply(content="OK")
        self.no_tool_models = set(no_tool_models)
        self.tokens_per_second = tokens_per_second
        self.rules: list[Rule] = []
        self.queue: list[Reply] = []
        self.requests: list[tuple[str, dict[str, Any]]] = []
        #: bytes of each flood actually written before the client stopped reading (or all of it)
        self.flood_sent: list[int] = []
        #: while cleared, embedding requests wait (at most 30 s) before they are answered
        self.embed_gate = threading.Event()
        self.embed_gate.set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        #: the client connections open now: stop() closes them, as a model server that went away would
        self._connections: set[socket.socket] = set()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting -------------------------------------------------------------------------------
    def on(self, reply: Reply, *, contains: str | None = None,
           when: Callable[[dict[str, Any]], bool] | None = None, times: int | None = 1,
           path: str | None = None, first: bool = False) -> Rule:
        rule = Rule(reply=reply, contains=contains, when=when, times=times, path=path)
        with self._lock:
            if first:
                self.rules.insert(0, rule)
            else:
                self.rules.append(rule)
        return rule

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self.queue.extend(replies)

    def reset(self) -> None:
        with self._lock:
            self.rules.clear()
            self.queue.clear()
            self.requests.clear()

    def clear_requests(self) -> None:
        """Forget the requests received so far (the rules and the queue stay)."""
        with self._lock:
            self.requests.clear()

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return [b for p, b in self.requests if p in ("/api/chat", "/v1/chat/completions")]

    @property
    def embed_requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return [b for p, b in self.requests if p in ("/api/embed", "/v1/embeddings")]

    def _pick(self, path: str, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append((path, body))
            for rule in self.rules:
                if rule.matches(path, body):
                    if rule.times is not None:
                        rule.times -= 1
                    return rule.reply
            if self.queue:
                return self.queue.pop(0)
            return self.default

    # -- lifecycle -------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self._httpd is not None, "start() the server first"
        host, port = self._httpd.server_address[:2]
        host_text = host.decode() if isinstance(host, bytes) else str(host)
        return f"http://{host_text}:{port}"

    def start(self) -> ScriptedModelServer:
        handler = _make_handler(self)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="scripted-model", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Go down as a real server does: stop listening and drop every open connection.

        A kept-alive connection in the client's pool would otherwise still be answered by its handler
        thread, and a "model down" test would depend on whether the client reused one.
        """
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        with self._lock:
            open_now = list(self._connections)
        for conn in open_now:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def wait(self, seconds: float) -> bool:
        """Sleep ``seconds`` unless the server is stopping (returns True if it is)."""
        return self._stopping.wait(seconds)

    def pace(self) -> float:
        return 1.0 / self.tokens_per_second if self.tokens_per_second else 0.0


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text) or ([text] if text else [])


def _make_handler(server: ScriptedModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # TCP_NODELAY, as Ollama (Go net/http) sends: with Nagle + delayed ACKs a streamed reply's
        # first chunk after the headers waits ~40 ms for an ACK, at random, on every call.
        disable_nagle_algorithm = True

        def log_message(self, *args: Any) -> None:
            pass

        def setup(self) -> None:
            super().setup()
            with server._lock:
                server._connections.add(self.connection)

        def finish(self) -> None:
            with server._lock:
                server._connections.discard(self.connection)
            with contextlib.suppress(OSError):
                super().finish()

        # -- helpers -----------------------------------------------------------------------------
        def _json(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _body(self) -> dict[str, Any]:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                data = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                data = {"_raw": raw.decode(errors="replace")}
            return data if isinstance(data, dict) else {"_value": data}

        def _start_stream(self, content_type: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _end_stream(self) -> None:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _cut(self) -> None:
            """Close the connection mid-stream, as a model server that died would."""
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)

        def _delay(self, reply: Reply) -> float:
            return reply.token_delay or server.pace()

        def _hang_or_error(self, reply: Reply, openai: bool) -> bool:
            if reply.first_delay and server.wait(reply.first_delay):
                return True
            if reply.hang:
                while not server.wait(0.05):
                    pass
                return True
            if reply.status != 200:
                err = reply.error or "scripted error"
                self._json(reply.status, {"error": {"message": err}} if openai else {"error": err})
                return True
            return False

        # -- routes ------------------------------------------------------------------------------
        def do_GET(self) -> None:
            path = self.path.split("?")[0]
            with server._lock:
                server.requests.append((path, {}))
            if path == "/api/version":
                self._json(200, {"version": "0.12.0-scripted"})
            elif path == "/api/tags":
                self._json(200, {"models": [_model_entry(m) for m in server.models]})
            elif path in ("/v1/models", "/models"):
                self._json(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in server.models]})
            elif path == "/":
                self._json(200, {"status": "Ollama is running"})
            else:
                self._json(404, {"error": "not found"})

        def do_HEAD(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            path = self.path.split("?")[0]
            body = self._body()
            try:
                if path == "/api/chat":
                    self._ollama_chat(body)
                elif path in ("/api/embed", "/api/embeddings"):
                    self._ollama_embed(path, body)
                elif path == "/api/show":
                    with server._lock:
                        server.requests.append((path, body))
                    name = body.get("model") or body.get("name") or ""
                    if _known(name):
                        self._json(200, {"modelfile": "", "parameters": "", "template": "",
                                         "details": {"family": "scripted"},
                                         "capabilities": ["completion", "tools"]})
                    else:
                        self._json(404, {"error": f"model '{name}' not found"})
                elif path in ("/v1/chat/completions", "/chat/completions"):
                    self._openai_chat(body)
                elif path in ("/v1/embeddings", "/embeddings"):
                    self._openai_embed(body)
                else:
                    self._json(404, {"error": "not found"})
            except (BrokenPipeError, ConnectionResetError):
                pass

        def _ollama_chat(self, body: dict[str, Any]) -> None:
            model = str(body.get("model", ""))
            if not _known(model):
                with server._lock:
                    server.requests.append(("/api/chat", body))
                self._json(404, {"error": f'model "{model}" not found, try pulling it first'})
                return
            if body.get("tools") and model in server.no_tool_models:
                with server._lock:
                    server.requests.append(("/api/chat", body))
                self._json(400, {"error": f"registry.ollama.ai/library/{model} does not support tools"})
                return
            reply = server._pick("/api/chat", body)
            if self._hang_or_error(reply, openai=False):
                return
            created = time.strftime("%Y-%m-%dT%H:%M:%SZ")
            if body.get("stream", True) is False:
                message: dict[str, Any] = {"role": "assistant", "content": reply.content}
                if reply.tool_calls:
                    message["tool_calls"] = [{"function": c} for c in reply.tool_calls]
                self._json(200, {"model": model, "created_at": created, "message": message, "done": True,
                                 "done_reason": "stop"})
                return
            self._start_stream("application/x-ndjson")
            delay = self._delay(reply)
            for sent, token in enumerate(_tokens(reply.content)):
                if delay and server.wait(delay):
                    return
                if reply.cut_after is not None and sent >= reply.cut_after:
                    self._cut()
                    return
                line = {"model": model, "created_at": created,
                        "message": {"role": "assistant", "content": token}, "done": False}
                self._chunk(json.dumps(line).encode() + b"\n")
            if reply.flood_bytes and not self._flood(reply, model, created):
                return
            if reply.tool_calls:
                line = {"model": model, "created_at": created,
                        "message": {"role": "assistant", "content": "",
                                    "tool_calls": [{"function": c} for c in reply.tool_calls]},
                        "done": False}
                self._chunk(json.dumps(line).encode() + b"\n")
            final = {"model": model, "created_at": created, "message": {"role": "assistant", "content": ""},
                     "done": True, "done_reason": "stop", "prompt_eval_count": 10,
                     "eval_count": len(_tokens(reply.content))}
            self._chunk(json.dumps(final).encode() + b"\n")
            self._end_stream()

        def _flood(self, reply: Reply, model: str, created: str) -> bool:
            """Stream ``reply.flood_bytes`` of hostile text; False when the client hung up first."""
            head = json.dumps({"model": model, "created_at": created}).encode()[:-1]
            sent = 0
            piece = b"x" * FLOOD_PIECE
            try:
                if reply.flood_as == "tokens":
                    while sent < reply.flood_bytes:
                        self._chunk(head + b', "message": {"role": "assistant", "content": "' + piece
                                    + b'"}, "done": false}\n')
                        sent += FLOOD_PIECE
                else:
                    if reply.flood_as == "line":
                        self._chunk(head + b', "message": {"role": "assistant", "content": "')
                        tail = b'"}, "done": false}\n'
                    else:
                        self._chunk(head + b', "message": {"role": "assistant", "content": "", "tool_calls": '
                                    b'[{"function": {"name": "write_file", "arguments": {"path": "big.txt", '
                                    b'"content": "')
                        tail = b'"}}}]}, "done": false}\n'
                    while sent < reply.flood_bytes:
                        self._chunk(piece * 16)
                        sent += FLOOD_PIECE * 16
                    self._chunk(tail)
            except (BrokenPipeError, ConnectionResetError, OSError):
                with server._lock:
                    server.flood_sent.append(sent)
                return False
            with server._lock:
                server.flood_sent.append(sent)
            return True

        def _ollama_embed(self, path: str, body: dict[str, Any]) -> None:
            with server._lock:
                server.requests.append((path, body))
            server.embed_gate.wait(30)
            model = str(body.get("model", ""))
            if not _known(model):
                self._json(404, {"error": f'model "{model}" not found, try pulling it first'})
                return
            raw = body.get("input", body.get("prompt", ""))
            texts = [raw] if isinstance(raw, str) else list(raw)
            if path == "/api/embeddings":
                self._json(200, {"embedding": embed_text(texts[0] if texts else "")})
            else:
                self._json(200, {"model": model, "embeddings": [embed_text(t) for t in texts]})

        def _openai_chat(self, body: dict[str, Any]) -> None:
            model = str(body.get("model", ""))
            if server.models and not _known(model):
                with server._lock:
                    server.requests.append(("/v1/chat/completions", body))
                self._json(404, {"error": {"message": f"model '{model}' not found"}})
                return
            reply = server._pick("/v1/chat/completions", body)
            if self._hang_or_error(reply, openai=True):
                return
            calls: list[dict[str, Any]] = [
                {"id": f"call_{i}", "type": "function",
                 "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments", {}))}}
                for i, c in enumerate(reply.tool_calls)
            ]
            if not body.get("stream"):
                message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
                if calls:
                    message["tool_calls"] = calls
                self._json(200, {"id": "chatcmpl-scripted", "object": "chat.completion", "model": model,
                                 "choices": [{"index": 0, "message": message,
                                              "finish_reason": "tool_calls" if calls else "stop"}]})
                return
            self._start_stream("text/event-stream")
            delay = self._delay(reply)

            def send(delta: dict[str, Any], finish: str | None = None) -> None:
                event = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "model": model,
                         "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
                self._chunk(b"data: " + json.dumps(event).encode() + b"\n\n")

            send({"role": "assistant", "content": ""})
            for token in _tokens(reply.content):
                if delay and server.wait(delay):
                    return
                send({"content": token})
            for i, c in enumerate(calls):
                args = c["function"]["arguments"]
                half = len(args) // 2
                # Tool-call arguments arrive in pieces, as real servers send them.
                send({"tool_calls": [{"index": i, "id": c["id"], "type": "function",
                                      "function": {"name": c["function"]["name"], "arguments": args[:half]}}]})
                send({"tool_calls": [{"index": i, "function": {"arguments": args[half:]}}]})
            send({}, "tool_calls" if calls else "stop")
            self._chunk(b"data: [DONE]\n\n")
            self._end_stream()

        def _openai_embed(self, body: dict[str, Any]) -> None:
            with server._lock:
                server.requests.append(("/v1/embeddings", body))
            raw = body.get("input", "")
            texts = [raw] if isinstance(raw, str) else list(raw)
            self._json(200, {"object": "list", "model": body.get("model", ""),
                             "data": [{"object": "embedding", "index": i, "embedding": embed_text(t)}
                                      for i, t in enumerate(texts)]})

    def _known(name: str) -> bool:
        if not server.models:
            return True
        full = name if ":" in name else f"{name}:latest"
        return name in server.models or full in server.models

    return Handler


def _model_entry(name: str) -> dict[str, Any]:
    return {"name": name, "model": name, "modified_at": "2026-01-01T00:00:00Z", "size": 1000,
            "digest": hashlib.sha256(name.encode()).hexdigest(),
            "details": {"format": "gguf", "family": "scripted", "parameter_size": "7B",
                        "quantization_level": "Q4_K_M"}}
