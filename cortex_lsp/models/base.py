"""The model client interface every backend implements, and its error types.

The agent and memory talk to models only through :class:`ModelClient`: streamed chat with optional
tool schemas and a JSON-schema ``format``, embeddings, and the model list. Errors carry advice a
user can act on (``ModelError.advice``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]
    id: str | None = None


@dataclass(frozen=True)
class Message:
    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_name: str | None = None


@dataclass(frozen=True)
class ToolSpec:
    """A tool as offered to the model: a name, a description and a JSON schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class ChatChunk:
    """One piece of a streamed reply: text, and (usually on the last chunk) tool calls."""

    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    done: bool = False
    #: how many of the server's streamed messages this chunk holds (a reader thread joins what arrived together)
    pieces: int = 1


@dataclass
class ChatResult:
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    model: str = ""
    tools_dropped: bool = False


@dataclass(frozen=True)
class ChatOptions:
    temperature: float | None = None
    max_tokens: int | None = None
    num_ctx: int | None = None
    #: force a call of this tool (constrained decoding where the server supports it); tools must be offered
    tool_choice: str | None = None


class ModelError(Exception):
    """A model call failed; ``advice`` says what the user can do about it."""

    kind: str = "error"

    def __init__(self, message: str, advice: str = "") -> None:
        super().__init__(message)
        self.advice = advice

    def user_message(self) -> str:
        text = str(self)
        return f"{text} {self.advice}".strip() if self.advice else text


class ModelUnavailable(ModelError):
    """The model server can't be reached."""

    kind = "unavailable"


class ModelMissing(ModelError):
    """The server answered but doesn't have the model."""

    kind = "missing"


@runtime_checkable
class ModelClient(Protocol):
    backend: str

    def chat_stream(
        self,
        messages: Sequence[Message],
        *,
        model: str,
        tools: Sequence[ToolSpec] | None = None,
        format: dict[str, Any] | Literal["json"] | None = None,
        options: ChatOptions | None = None,
    ) -> AsyncIterator[ChatChunk]: ...

    async def embed(self, texts: Sequence[str], *, model: str) -> list[list[float]]: ...

    async def list_models(self) -> list[str]: ...

    async def version(self) -> str: ...

    async def aclose(self) -> None: ...


async def collect(stream: AsyncIterator[ChatChunk]) -> ChatResult:
    """Gather a streamed reply into one :class:`ChatResult`."""
    parts: list[str] = []
    calls: list[ToolCall] = []
    async for chunk in stream:
        if chunk.content:
            parts.append(chunk.content)
        calls.extend(chunk.tool_calls)
    return ChatResult(content="".join(parts), tool_calls=calls)


def plain_http_options(url: str) -> dict[str, Any]:
    """httpx client options for a model server at ``url``: a plain ``http://`` server gets no TLS set-up
    (loading the system's certificates costs ~80 ms of CPU in one call that holds the GIL, per client)
    and no redirects (which could lead to an ``https://`` host its certificates were never loaded for);
    an ``https://`` server keeps httpx's defaults (certificates verified)."""
    if url.lower().startswith("http://"):
        return {"verify": False, "follow_redirects": False}
    return {}
