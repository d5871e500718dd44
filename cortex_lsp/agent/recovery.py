"""Recovery, once each per run: the model skipped a tool that the plan and the user both needed.

* ``save``: the user asked for a file but no ``write_file`` was tried ("I saved it" with no write) →
  the model is told nothing was saved and to call ``write_file``;
* ``run_code``: the user asked to run code, the model pasted code instead of calling
  ``python_exec`` → Cortex runs that code itself and hands the model the result;
* ``nudge``: another required tool was never used → "use the tool now";
* ``retry``: "let me try again" after a failed call, with no call → one real retry.

Each kind fires at most once; the kernel applies the action and runs another step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from cortex_lsp.agent import prompts
from cortex_lsp.agent.executor import ToolSession
from cortex_lsp.agent.plan_guards import asks_to_save
from cortex_lsp.agent.runnability import extract_code
from cortex_lsp.intent.intent import Intent

RecoveryKind = Literal["save", "run_code", "nudge", "retry"]

_RETRY = re.compile(
    r"\b(?:let me|let's|let us|i'll|i will|i'm going to|i am going to|i need to)\s+"
    r"(?:try|run|attempt|call|do)\b[^.\n]*\b(?:again|once more|another time)\b|\bretrying\b",
    re.IGNORECASE,
)
_SAVE_CLAIM = re.compile(
    r"\b(?:i(?:'ve| have)?\s+(?:now\s+)?(?:saved|written|wrote|created|stored)|"
    r"(?:has|have) been (?:saved|written|created|stored)|saved (?:it|the|to|as|in)|"
    r"(?:file|it) (?:is|was) (?:now )?(?:saved|created|written))\b",
    re.IGNORECASE,
)


@dataclass
class RecoveryAction:
    kind: RecoveryKind
    message: str
    code: str | None = None


def claims_save(text: str) -> bool:
    return _SAVE_CLAIM.search(text or "") is not None


def says_retry(text: str) -> bool:
    return _RETRY.search(text or "") is not None


@dataclass
class Recovery:
    intent: Intent
    offered: list[str]
    required: list[str]
    used: set[RecoveryKind] = field(default_factory=set)

    def _attempted(self, session: ToolSession, name: str) -> bool:
        return any(c.name == name for c in session.history)

    def check(self, content: str, session: ToolSession) -> RecoveryAction | None:
        """The recovery to apply to a step that ended without tool calls, or ``None``."""
        if (
            "save" not in self.used
            and "write_file" in self.offered
            and asks_to_save(self.intent)
            and not self._attempted(session, "write_file")
        ):
            self.used.add("save")
            msg = (
                prompts.NUDGE_SAVE
                if claims_save(content)
                else prompts.fill(prompts.NUDGE_TOOL, tool="write_file")
            )
            return RecoveryAction("save", msg)
        cues = self.intent.cues
        wants_run = cues.run or cues.python
        if (
            "run_code" not in self.used
            and wants_run
            and "python_exec" in self.offered
            and not self._attempted(session, "python_exec")
        ):
            code = extract_code(content)
            if code:
                self.used.add("run_code")
                return RecoveryAction("run_code", prompts.RAN_FOR_YOU, code=code)
        if "nudge" not in self.used:
            for name in self.required:
                if name in self.offered and not self._attempted(session, name):
                    self.used.add("nudge")
                    return RecoveryAction("nudge", prompts.fill(prompts.NUDGE_TOOL, tool=name))
        if (
            "retry" not in self.used
            and session.history
            and not session.history[-1].result.success
            and says_retry(content)
        ):
            self.used.add("retry")
            return RecoveryAction("retry", prompts.NUDGE_RETRY)
        return None
