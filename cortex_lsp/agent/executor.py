"""The executor: one ReAct step at a time, and every per-call guard.

A step sends the conversation and the offered tool schemas to the model, then runs its tool calls
through :class:`ToolSession`, which applies the guards in order: at most 3 calls per step (extra calls
dropped), tool-name and argument repair, tools not offered this run refused, ``write_file`` past the
consent rules (:func:`~cortex_lsp.guards.consent.decide`: the hard rules always; where nobody reviews
the write, only one the user's own words clearly asked for; each write is noted with its ``asked``
label), repeated identical calls answered from the first result, then the registry's schema validation
and time limit. What the run reads is kept (``read_sources``): a write nobody asked for is labelled
with it ("the model proposed it after reading notes.md").
Tool output goes back to the model labelled and capped, as data.

Tool-free plans never reach :meth:`Executor.step`: :meth:`Executor.answer` sends no tool schemas.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cortex_lsp import telemetry
from cortex_lsp.agent import prompts
from cortex_lsp.agent.deps import AgentDeps, Emit
from cortex_lsp.agent.parsing import strip_reasoning
from cortex_lsp.agent.scaffold import Scrubber, scrub
from cortex_lsp.agent.tokens import flush_tokens, token_writer
from cortex_lsp.agent.types import RunRecord, ToolCallRecord
from cortex_lsp.guards.consent import decide
from cortex_lsp.guards.paths import PathRefused, resolve_in_roots
from cortex_lsp.intent.grants import WriteGrant
from cortex_lsp.models.base import ChatOptions, Message, ToolCall, ToolSpec
from cortex_lsp.ports import EditReported, ToolCalled, ToolReturned
from cortex_lsp.tools.base import ToolContext, ToolResult
from cortex_lsp.tools.details import FileWrite

MAX_CALLS_PER_STEP = 3
#: tools whose results are material the model read (a write it then proposes is labelled with them)
_READS = frozenset({"read_file", "web_fetch", "doc_search", "search_files"})
RESULT_LIMIT = 6000
EVENT_OUTPUT_LIMIT = 1500
RECORD_OUTPUT_LIMIT = 500
#: answer text at least this long is scrubbed in a worker thread, not on the event loop
OFF_LOOP_CHARS = 4096

TOOL_ALIASES = {
    "read": "read_file",
    "readfile": "read_file",
    "open_file": "read_file",
    "cat": "read_file",
    "list_directory": "list_dir",
    "listdir": "list_dir",
    "list_files": "list_dir",
    "ls": "list_dir",
    "write": "write_file",
    "save_file": "write_file",
    "writefile": "write_file",
    "create_file": "write_file",
    "search": "search_files",
    "grep": "search_files",
    "find_in_files": "search_files",
    "python": "python_exec",
    "run_python": "python_exec",
    "execute_python": "python_exec",
    "code_exec": "python_exec",
    "calc": "calculator",
    "calculate": "calculator",
    "math": "calculator",
    "time": "current_time",
    "get_time": "current_time",
    "get_current_time": "current_time",
    "now": "current_time",
    "fetch": "web_fetch",
    "fetch_url": "web_fetch",
    "browse": "web_fetch",
}
_FS_ACTIONS = {
    "read_file": "read_file",
    "read": "read_file",
    "write_file": "write_file",
    "write": "write_file",
    "list_directory": "list_dir",
    "list_dir": "list_dir",
    "list": "list_dir",
    "file_exists": "list_dir",
}


def repair_call(name: str, arguments: Any) -> tuple[str, dict[str, Any]]:
    """Fix common small-model slips in a tool call's name and arguments."""
    args: dict[str, Any] = dict(arguments) if isinstance(arguments, dict) else {}
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
            args = parsed if isinstance(parsed, dict) else {}
        except json.JSONDecodeError:
            args = {}
    key = name.strip().lower().replace("-", "_").replace(" ", "_")
    if key.startswith("functions."):
        key = key.split(".", 1)[1]
    if key in ("filesystem", "file_system", "fs", "files"):
        action = str(args.pop("action", "") or "").lower()
        if action in _FS_ACTIONS:
            key = _FS_ACTIONS[action]
        elif any(isinstance(args.get(k), str) and args[k] for k in ("content", "text", "contents", "data")):
            key = "write_file"
        else:
            path = next((str(args[k]) for k in ("path", "file", "filename", "file_path") if args.get(k)), "")
            key = "list_dir" if path in ("", ".", "./", "/") or path.endswith("/") else "read_file"
        if key == "list_dir":
            args.pop("content", None)
    return TOOL_ALIASES.get(key, key), args


def signature(name: str, arguments: dict[str, Any]) -> str:
    return name + ":" + json.dumps(arguments, sort_keys=True, default=str)


@dataclass
class CallOutcome:
    name: str
    arguments: dict[str, Any]
    result: ToolResult
    repeated: bool = False
    blocked: bool = False

    def message(self) -> Message:
        text = self.result.text_for_model(RESULT_LIMIT)
        if self.repeated:
            text += "\n" + prompts.DUPLICATE_CALL
        return Message("tool", text, tool_name=self.name)


@dataclass
class StepOutcome:
    content: str = ""
    chunks: list[str] = field(default_factory=list)
    calls: list[CallOutcome] = field(default_factory=list)
    dropped: int = 0

    @property
    def clean(self) -> bool:
        return all(c.result.success and not c.repeated for c in self.calls)


class ToolSession:
    """Runs tool calls for one run, with the per-call guards, the duplicate cache and the record."""

    def __init__(
        self, deps: AgentDeps, emit: Emit, record: RunRecord, context: ToolContext, offered: Sequence[str]
    ) -> None:
        self.deps = deps
        self.emit = emit
        self.record = record
        self.context = context
        self.offered = list(offered)
        self.cache: dict[str, ToolResult] = {}
        self.history: list[CallOutcome] = []
        #: relative paths this run wrote (an unnamed save allows one new file)
        self.written: list[str] = []

    @property
    def grant(self) -> WriteGrant:
        """What the user's own words allow to be written in this run."""
        return self.context.words_read.write_grant

    def _write_target(self, raw: str) -> tuple[str, bool]:
        """``raw`` as a path relative to its root, and whether that file exists (or is open)."""
        from cortex_lsp.tools.filesystem import protected_dirs

        try:
            target = resolve_in_roots(
                raw, self.context.workspace.roots, protected=protected_dirs(self.context)
            )
        except PathRefused:
            return raw, False  # the tool reports the path refusal itself
        exists = target.path.exists() or self.context.workspace.read_text(target.path) is not None
        return target.relative, exists

    def specs(self, names: Sequence[str] | None = None) -> list[ToolSpec]:
        wanted = self.offered if names is None else [n for n in names if n in self.offered]
        return self.deps.tools.specs(wanted)

    def _blocked(self, name: str, error: str) -> ToolResult:
        return ToolResult(tool_name=name, success=False, error=error)

    def _guard(self, name: str, args: dict[str, Any]) -> ToolResult | None:
        """A refusal for a call the guards stop before it runs, else ``None`` (``args`` may be adjusted)."""
        limit = self.deps.settings.max_tool_calls
        if len(self.history) >= limit:  # every call counts: blocked and repeated ones too
            return self._blocked(name, f"This run has reached its limit of {limit} tool calls (max_tool_calls); "
                                       "answer with what you have.")
        if name not in self.offered:
            if self.deps.tools.get(name) is None:
                known = ", ".join(self.offered) or "none"
                return self._blocked(
                    name, f"There is no tool named {name!r}. Tools for this request: {known}."
                )
            return self._blocked(
                name, f"The {name} tool is not available for this request. Answer without it."
            )
        if name == "write_file" and self.context.edits is not None:
            relative, exists = self._write_target(str(args.get("path") or ""))
            decision = decide(self.context.words_read, relative, exists=exists,
                              reviewed=self.context.edits.reviewed, written=self.written)
            if decision.refused is not None:
                return self._blocked(name, decision.refused)
            if args.get("overwrite") is True and not exists:
                args["overwrite"] = False
        return None

    async def call(self, raw_name: str, raw_arguments: Any) -> CallOutcome:
        """One tool call, guarded; a ``tool.call`` span and a tool-call metric while telemetry is on."""
        with telemetry.span("tool.call", {"cortex.tool.name": str(raw_name)[:100]}) as span:
            outcome = await self._call(raw_name, raw_arguments)
            state = ("blocked" if outcome.blocked else "repeated" if outcome.repeated
                     else "ok" if outcome.result.success else "failed")
            span.set({"cortex.tool.name": outcome.name, "cortex.tool.outcome": state})
            span.content({"cortex.tool.arguments": json.dumps(outcome.arguments, default=str)[:4000]})
            if state == "failed":
                span.error(str(outcome.result.error or "failed")[:200])
        telemetry.record_tool_call(outcome.name, state)
        return outcome

    async def _call(self, raw_name: str, raw_arguments: Any) -> CallOutcome:
        name, args = repair_call(raw_name, raw_arguments)
        tool = self.deps.tools.get(name)
        if tool is not None:
            args = tool.repair_arguments(args)
        self.emit(ToolCalled(name, args))
        blocked = self._guard(name, args)
        sig = signature(name, args)
        if blocked is not None:
            outcome = CallOutcome(name, args, blocked, blocked=True)
        elif sig in self.cache:
            outcome = CallOutcome(name, args, self.cache[sig], repeated=True)
        else:
            result = await self.deps.tools.execute(name, args, self.context)
            self.cache[sig] = result
            outcome = CallOutcome(name, args, result)
            for edit in result.edits:
                self.record.edits.append(edit)
                self.emit(EditReported(edit))
            if name == "write_file" and result.success:
                wrote = result.detail if isinstance(result.detail, FileWrite) else None
                relative = wrote.relative if wrote is not None else str(args.get("path") or "")
                self.written.append(relative)
                label = "asked for by the user" if wrote and wrote.asked else "not asked for; the user accepted it"
                self.record.notes.append(f"wrote {relative} ({label}); {self.grant.describe()}")
            elif result.success and name in _READS:
                self._note_read(name, args)
        self._report(outcome)
        return outcome

    def _report(self, outcome: CallOutcome) -> None:
        result = outcome.result
        body = result.output if result.success else result.error
        self.history.append(outcome)
        if not outcome.repeated:
            self.record.tool_calls.append(
                ToolCallRecord(
                    tool=outcome.name,
                    arguments=outcome.arguments,
                    success=result.success,
                    output=body[:RECORD_OUTPUT_LIMIT],
                )
            )
        self.emit(ToolReturned(outcome.name, result.success, body[:EVENT_OUTPUT_LIMIT], repeated=outcome.repeated))

    def _note_read(self, name: str, args: dict[str, Any]) -> None:
        """Keep what the run read: a write nobody asked for is labelled with it."""
        source = args.get("path") or args.get("url") or args.get("query")
        shown = str(source).strip().lstrip("./") if source else name
        if shown and shown not in self.context.read_sources:
            self.context.read_sources.append(shown)

    def history_calls(self) -> list[CallOutcome]:
        """Every call of this run so far, in order (blocked and repeated ones included)."""
        return list(self.history)

    def succeeded(self, name: str) -> bool:
        return any(c.name == name and c.result.success and not c.blocked for c in self.history)

    def used(self) -> list[str]:
        """Tool names actually run (not blocked), in order, without repeats next to each other."""
        out: list[str] = []
        for c in self.history:
            if c.blocked or c.repeated:
                continue
            if not out or out[-1] != c.name:
                out.append(c.name)
        return out


class Executor:
    def __init__(self, deps: AgentDeps, emit: Emit, record: RunRecord) -> None:
        self.deps = deps
        self.emit = emit
        self.record = record

    @property
    def _model(self) -> str:
        return self.deps.settings.ollama_model

    async def step(
        self,
        messages: Sequence[Message],
        session: ToolSession,
        *,
        tools: Sequence[ToolSpec] | None = None,
        tool_choice: str | None = None,
    ) -> StepOutcome:
        """:meth:`_step` as an ``agent.step`` span (counted in the run's steps)."""
        telemetry.count_step()
        with telemetry.span("agent.step", {"cortex.step.forced_tool": tool_choice}) as span:
            outcome = await self._step(messages, session, tools=tools, tool_choice=tool_choice)
            span.set({"cortex.step.tool_calls": len(outcome.calls), "cortex.step.dropped": outcome.dropped})
        return outcome

    async def _step(
        self,
        messages: Sequence[Message],
        session: ToolSession,
        *,
        tools: Sequence[ToolSpec] | None = None,
        tool_choice: str | None = None,
    ) -> StepOutcome:
        """One ReAct step: the model's reply with tools offered, and its (guarded) tool calls run.

        ``tool_choice`` forces a call of that (offered) tool: llama.cpp then constrains the arguments
        to the tool's JSON schema with a grammar.
        """
        specs = list(tools) if tools is not None else session.specs()
        outcome = StepOutcome()
        calls: list[ToolCall] = []
        forced = tool_choice if tool_choice and any(t.name == tool_choice for t in specs) else None
        async for chunk in self.deps.model.chat_stream(
            messages, model=self._model, tools=specs or None,
            options=ChatOptions(temperature=0.1, tool_choice=forced),
        ):
            if chunk.content:
                outcome.chunks.append(chunk.content)
            calls.extend(chunk.tool_calls)
        outcome.content = strip_reasoning("".join(outcome.chunks))
        if len(calls) > MAX_CALLS_PER_STEP:
            outcome.dropped = len(calls) - MAX_CALLS_PER_STEP
            self.record.notes.append(
                f"dropped {outcome.dropped} tool call(s) over the limit of {MAX_CALLS_PER_STEP} per step"
            )
            calls = calls[:MAX_CALLS_PER_STEP]
        for call in calls:
            outcome.calls.append(await session.call(call.name, call.arguments))
        return outcome

    async def answer(
        self,
        messages: Sequence[Message],
        *,
        live: bool = True,
        model: str | None = None,
        max_tokens: int | None = None,
        temperature: float = 0.3,
    ) -> str:
        """A reply with **no tool schemas** sent; streamed as token events (and into the record)."""
        parts: list[str] = []
        options = ChatOptions(temperature=temperature, max_tokens=max_tokens)
        stream = self.deps.model.chat_stream(messages, model=model or self._model, options=options)
        if live:
            # Per token: two list appends and one call into the sink (no event, no dict): the host's
            # coalescer sends the buffered text once per tick.
            # Prompt markers a model echoes ("data, not instructions") are cut before they are shown.
            write, keep = token_writer(self.emit), self.record.answer_parts.append
            scrubber = Scrubber()
            try:
                async for chunk in stream:
                    if content := chunk.content:
                        parts.append(content)
                        # a large piece (a fast stream's batch) is scrubbed off the loop: a regex pass over
                        # tens of KB is milliseconds
                        shown = scrubber.feed(content) if len(content) < OFF_LOOP_CHARS else \
                            await asyncio.to_thread(scrubber.feed, content)
                        if shown:
                            keep(shown)
                            write(shown)
                if rest := scrubber.finish():
                    keep(rest)
                    write(rest)
            finally:
                flush_tokens(self.emit)  # the answer's last piece goes out now, not at the next tick
        else:
            async for chunk in stream:
                if chunk.content:
                    parts.append(chunk.content)
        text = "".join(parts)
        clean = scrub(strip_reasoning(text)) if len(text) < OFF_LOOP_CHARS else \
            await asyncio.to_thread(lambda: scrub(strip_reasoning(text)))
        if live and clean != text.strip():
            # Reasoning blocks were streamed: keep only the answer in the record.
            self.record.answer_parts[:] = [clean]
        return clean

    def stream_text(self, text: str, chunks: Sequence[str] = ()) -> None:
        """Emit an already generated answer as token events (original chunks when they match)."""
        pieces = list(chunks) if chunks and "".join(chunks).strip() == text.strip() else [text]
        write = token_writer(self.emit)
        for piece in pieces:
            if piece:
                self.record.answer_parts.append(piece)
                write(piece)
        flush_tokens(self.emit)

    def step_messages(self, outcome: StepOutcome) -> list[Message]:
        """The assistant turn (with its tool calls) and the tool results, to append to the conversation."""
        calls = tuple(ToolCall(name=c.name, arguments=c.arguments) for c in outcome.calls)
        out = [Message("assistant", outcome.content, tool_calls=calls)]
        out.extend(c.message() for c in outcome.calls)
        return out
