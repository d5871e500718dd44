"""The bare model, asked directly: the baseline the knowledge cases are compared with.

Each selected case's first message goes to the same model as one user message (no system prompt, no
history, no tools; the same temperature and answer cap as Cortex's direct answers), and its answer is
judged by the case's own answer checks. The first token and the whole answer are timed, so the
results file can set Cortex's latency next to the model's own.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from evals.cases import Case
from evals.checks import TurnOutcome, check_turn
from evals.runner import RunConfig

#: the same as Cortex's direct answers on a small model (kernel.DIRECT_MAX_TOKENS, SMALL_TEMPERATURE)
MAX_TOKENS = 320
TEMPERATURE = 0.0


@dataclass
class BareOutcome:
    case: Case
    answer: str = ""
    seconds: float = 0.0
    first_token_seconds: float | None = None
    reasons: list[str] = field(default_factory=list)
    error: str = ""

    @property
    def passed(self) -> bool:
        return not self.reasons and not self.error


async def _client(config: RunConfig):  # type: ignore[no-untyped-def]
    from cortex_lsp.models.local_server import start_embedded
    from cortex_lsp.models.ollama_client import OllamaClient
    from cortex_lsp.models.openai_client import OpenAIClient

    if config.backend == "embedded":
        client = await start_embedded(config.model or None, request_seconds=120)
        return client, client.server.chat_model
    if config.backend == "ollama":
        return OllamaClient(config.base_url or "http://127.0.0.1:11434", timeout=120), config.model or "qwen2.5:7b"
    return OpenAIClient(config.base_url or "http://127.0.0.1:8080/v1", timeout=120), config.model


async def ask_bare(cases: list[Case], config: RunConfig) -> list[BareOutcome]:
    """Each case's first turn, asked of the bare model (one model process for all of them)."""
    from cortex_lsp.models.base import ChatOptions, Message, ModelError

    client, name = await _client(config)
    outcomes: list[BareOutcome] = []
    try:
        for case in cases:
            turn = case.turns[0]
            out = BareOutcome(case=case)
            began = time.monotonic()
            parts: list[str] = []
            try:
                async for chunk in client.chat_stream(
                    [Message("user", turn.message)], model=name,
                    options=ChatOptions(temperature=TEMPERATURE, max_tokens=MAX_TOKENS),
                ):
                    if chunk.content:
                        if out.first_token_seconds is None:
                            out.first_token_seconds = time.monotonic() - began
                        parts.append(chunk.content)
            except ModelError as exc:
                out.error = str(exc)
            out.seconds = time.monotonic() - began
            out.answer = "".join(parts)
            judged = TurnOutcome(index=0, command="bare", result={"answer": out.answer, "tool_calls": []},
                                 started=began, ended=began + out.seconds, progress_reports=len(parts))
            out.reasons = check_turn(turn.checks, judged, [judged])
            outcomes.append(out)
    finally:
        await client.aclose()
    return outcomes
