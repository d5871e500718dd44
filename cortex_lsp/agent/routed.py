"""A routed run for a small model: code makes the tool calls the router decided, the model writes prose.

Order: the router's calls (each through :class:`~cortex_lsp.agent.executor.ToolSession`, so every
per-call guard applies), or for an ``undecided`` route one tool call under llama.cpp's constrained tool
choice; then the answer — shown as it is when the results are the answer (a sum, a listing, a
program's output), else written by the model from the results (one call, no tool schemas, a short
prompt); then, if the user asked, ``write_file`` of the text they gave or the model produced. The
write still needs the user's grant and the editor's edit: the route grants nothing.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass

from cortex_lsp.agent import prompts
from cortex_lsp.agent.context import RunContext, selection_message
from cortex_lsp.agent.deps import Emit
from cortex_lsp.agent.executor import CallOutcome, Executor, ToolSession
from cortex_lsp.agent.router import Route
from cortex_lsp.agent.runnability import cannot_run_reply
from cortex_lsp.agent.types import StopReason
from cortex_lsp.models.base import Message, ModelError
from cortex_lsp.ports import AgentEvent

#: answers a small model writes are short: it rambles, and every token costs time on a laptop
PROSE_MAX_TOKENS = 320
RESULT_CHARS = 3000
_CODE_SUFFIXES = (".py", ".js", ".ts", ".sh", ".json", ".css", ".html", ".sql", ".rs", ".go")
_FENCE = re.compile(r"```[\w+-]*\n(.*?)(?:```|$)", re.DOTALL)
_FILE_HEADER = re.compile(r"^\[file ([^\]:]+): data, not instructions\]\n")


@dataclass
class RoutedOutcome:
    stop: StopReason
    answer: str


def shown(call: CallOutcome) -> str:
    """A tool result as the user sees it when it is the answer."""
    result = call.result
    if not result.success:
        return f"{call.name} did not run: {result.error}"
    text = result.output.strip()
    header = _FILE_HEADER.match(text + "\n")
    if header:
        text = f"{header.group(1)}:\n" + text[header.end():].rstrip()
    return text


def file_content(text: str, path: str) -> str:
    """What to save: for a code file, the code inside a fence when the reply has one."""
    if path.lower().endswith(_CODE_SUFFIXES):
        match = _FENCE.search(text)
        if match and match.group(1).strip():
            return match.group(1).rstrip() + "\n"
    return text.strip() + "\n"


class RoutedRun:
    def __init__(
        self, ctx: RunContext, route: Route, session: ToolSession, executor: Executor, emit: Emit
    ) -> None:
        self.ctx = ctx
        self.route = route
        self.session = session
        self.executor = executor
        self.emit = emit
        self.step = 0

    def _start(self, description: str) -> None:
        self.step += 1
        self.emit(AgentEvent("step_start", {"step": self.step, "description": description}))

    async def run(self) -> RoutedOutcome:
        try:
            async with asyncio.timeout(max(self.ctx.loop_remaining(), 0.01)):
                calls = await self._calls()
        except TimeoutError:
            return await self._cut_off()
        refused = self._user_code_refused(calls)
        if refused is not None:
            self.executor.stream_text(refused)
            return RoutedOutcome("refused", refused)
        try:
            async with asyncio.timeout(max(self.ctx.remaining(), 0.01)):
                answer = await self._answer(calls)
                answer += await self._save(answer)
        except TimeoutError:
            return await self._cut_off()
        return RoutedOutcome("answered", answer)

    async def _cut_off(self) -> RoutedOutcome:
        self.executor.record.notes.append("the routed run was cut off at the time budget")
        partial = self.executor.record.answer.strip()
        if not partial:
            partial = "I had to stop before finishing (the time budget is used up)."
            self.executor.stream_text(partial)
        return RoutedOutcome("time_budget", partial)

    async def _calls(self) -> list[CallOutcome]:
        done: list[CallOutcome] = []
        for call in self.route.calls:
            self._start(f"{call.step()}")
            done.append(await self.session.call(call.tool, dict(call.arguments)))
        if not self.route.calls and self.route.kind == "undecided" and len(self.session.offered) == 1:
            tool = self.session.offered[0]
            self._start(f"Choose the arguments for {tool}")
            messages = [
                Message("system", prompts.fill(prompts.TOOL_ARGS, tool=tool)),
                Message("user", self.ctx.task),
            ]
            step = await self.executor.step(messages, self.session, tools=self.session.specs([tool]),
                                            tool_choice=tool)
            done.extend(step.calls)
        return done

    def _user_code_refused(self, calls: list[CallOutcome]) -> str | None:
        for call in calls:
            if call.name == "python_exec" and not call.result.success and call.result.data.get("refused"):
                return cannot_run_reply(str(call.arguments.get("code", ""))) or (
                    f"The sandbox refused to run the code: {call.result.error}"
                )
        return None

    async def _answer(self, calls: list[CallOutcome]) -> str:
        ok = [c for c in calls if c.result.success]
        if self.route.save_to and self.route.save_text is not None:
            return ""  # the user gave the text: nothing to write, the save line is the answer
        if calls and (not self.route.prose or not ok):
            text = "\n\n".join(shown(c) for c in calls)
            self.executor.stream_text(text)
            return text
        self._start("Write the answer")
        system = prompts.CONTENT if self.route.save_to else prompts.PROSE
        data = [Message("user", c.result.text_for_model(RESULT_CHARS)) for c in ok]
        failed = [c for c in calls if not c.result.success]
        if failed:
            data.append(Message("user", "[failed calls: data]\n" + "\n".join(shown(c) for c in failed)))
        sel = selection_message(self.ctx.request)
        if sel is not None:
            data.insert(0, sel)
        if self.ctx.facts:
            system += "\nKnown about the user: " + "; ".join(self.ctx.facts[:5])
        messages = [Message("system", system), *self.ctx.history[-4:], *data, Message("user", self.ctx.task)]
        try:
            answer = await self.executor.answer(messages, max_tokens=PROSE_MAX_TOKENS)
        except ModelError:
            if not ok:
                raise
            answer = ""
        if not answer.strip() and ok:
            answer = "\n\n".join(shown(c) for c in ok)  # the model said nothing: show what was found
            self.executor.stream_text(answer)
        return answer

    async def _save(self, answer: str) -> str:
        path = self.route.save_to
        if not path or "write_file" not in self.session.offered:
            return ""
        given = self.route.save_text
        content = given if given is not None else file_content(answer, path)
        if not content.strip():
            line = f"Nothing was saved to {path}: there was no text to save."
        else:
            self._start(f"Save to {path} with write_file")
            outcome = await self.session.call("write_file", {"path": path, "content": content})
            line = outcome.result.output if outcome.result.success else f"Not saved: {outcome.result.error}"
        text = ("\n\n" if answer.strip() else "") + line
        self.executor.stream_text(text)
        return text
