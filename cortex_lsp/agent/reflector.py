"""The reflector: did a failing, repeating or empty step make progress? (JSON verdict, tolerant.)

Two consecutive "no progress" verdicts stop the ReAct loop (the kernel counts them). A reply that
can't be parsed, or a model error other than an unreachable server, counts as progress: the reflector
may end a run early, never keep a broken one going.
"""

from __future__ import annotations

from typing import Any

from cortex_lsp.agent import prompts
from cortex_lsp.agent.executor import RESULT_LIMIT, StepOutcome
from cortex_lsp.agent.parsing import as_bool, extract_object
from cortex_lsp.config import Settings
from cortex_lsp.models.base import (
    ChatOptions,
    Message,
    ModelClient,
    ModelError,
    ModelMissing,
    ModelUnavailable,
    collect,
)

REFLECT_FORMAT: dict[str, Any] = {
    "type": "object",
    "properties": {"progress": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["progress"],
}
STALL_LIMIT = 2


def describe_step(step: StepOutcome, limit: int = 1500) -> str:
    lines: list[str] = []
    if step.content:
        lines.append(f"assistant said: {step.content[:500]}")
    for call in step.calls:
        status = "repeated" if call.repeated else ("ok" if call.result.success else "failed")
        body = call.result.text_for_model(min(limit, RESULT_LIMIT))[:limit]
        lines.append(f"called {call.name}({call.arguments}) -> {status}\n{body}")
    if not lines:
        lines.append("the step produced nothing")
    return "\n".join(lines)


class Reflector:
    def __init__(self, model: ModelClient, settings: Settings) -> None:
        self.model = model
        self.settings = settings

    async def evaluate(self, task: str, step: StepOutcome) -> bool:
        messages = [
            Message("system", prompts.REFLECTOR),
            Message("user", f"Task: {task}\n\nLatest step (data):\n{describe_step(step)}"),
        ]
        try:
            reply = await collect(
                self.model.chat_stream(
                    messages,
                    model=self.settings.reasoning_model,
                    format=REFLECT_FORMAT,
                    options=ChatOptions(temperature=0.0, max_tokens=120),
                )
            )
        except (ModelUnavailable, ModelMissing):
            raise
        except ModelError:
            return True
        verdict = extract_object(reply.content)
        if verdict is None:
            return True
        progress = as_bool(verdict.get("progress"))
        return True if progress is None else progress
