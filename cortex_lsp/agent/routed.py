"""A routed run for a small model: code makes the tool calls the router decided, the model writes prose.

Order: the router's calls (each through :class:`~cortex_lsp.agent.executor.ToolSession`, so every
per-call guard applies), or for an ``undecided`` route one tool call under llama.cpp's constrained tool
choice; then the answer — shown as it is when the results are the answer (a sum, a listing, a
program's output), else written by the model from the results (one call, no tool schemas, a short
prompt); then, if the user asked, ``write_file`` of the text they gave or the model produced. The
write still passes the consent rules and the editor's edit: the route grants nothing. What became of
it is said by the run's ledger after the answer (:mod:`cortex_lsp.agent.ledger`).
"""

from __future__ import annotations

import ast
import asyncio
import re
from dataclasses import dataclass
from pathlib import Path

from cortex_lsp.agent import prompts
from cortex_lsp.agent.context import RunContext, selection_message
from cortex_lsp.agent.datavalue import answer_from_data, is_data_file
from cortex_lsp.agent.deps import Emit
from cortex_lsp.agent.evidence import Excerpt, Passage, relevant_lines, relevant_passage_lines
from cortex_lsp.agent.evidence import render as render_excerpts
from cortex_lsp.agent.executor import CallOutcome, Executor, ToolSession
from cortex_lsp.agent.outline import outline
from cortex_lsp.agent.router import SELF_EXPLAINING, Route
from cortex_lsp.agent.runnability import cannot_run_reply, extract_code
from cortex_lsp.agent.scaffold import scrub
from cortex_lsp.agent.types import StopReason
from cortex_lsp.models.base import Message, ModelError
from cortex_lsp.ports import StepStarted
from cortex_lsp.tools.details import CodeRun, DocHits, FileText

#: answers a small model writes are short: it rambles, and every token costs time on a laptop
PROSE_MAX_TOKENS = 320
#: greedy decoding: a 135M model sampled at 0.3 misreads a three-line file one time in five
PROSE_TEMPERATURE = 0.0
RESULT_CHARS = 3000
#: data files (at most, and how big) code looks at for a request that named none
MAX_DATA_FILES = 8
PEEK_BYTES = 64 * 1024
_CODE_SUFFIXES = (".py", ".js", ".ts", ".sh", ".json", ".css", ".html", ".sql", ".rs", ".go")
_FENCE = re.compile(r"```[\w+-]*\n(.*?)(?:```|$)", re.DOTALL)
_FILE_HEADER = re.compile(r"^\[file ([^\]:]+): data, not instructions\]\n")


@dataclass
class RoutedOutcome:
    stop: StopReason
    answer: str


def small_direct_messages(ctx: RunContext) -> list[Message]:
    """A small model's direct answer: what it should remember goes into the one user turn, as data,
    with the question last (it ignores facts in a system prompt and earlier turns of the chat)."""
    blocks: list[str] = []
    turns = [m for m in ctx.history if m.role in ("user", "assistant") and m.content.strip()][-4:]
    if turns:
        lines = [f"{'User' if m.role == 'user' else 'You'}: {' '.join(m.content.split())[:400]}" for m in turns]
        blocks.append("Conversation so far (data):\n" + "\n".join(lines))
    if ctx.facts:
        blocks.append("Known about the user (data):\n" + "\n".join(f"- {f}" for f in ctx.facts[:5]))
    sel = selection_message(ctx.request)
    if sel is not None:
        blocks.append(sel.content)
    if ctx.request.diagnostic:
        blocks.append(f"[diagnostic: data]\n{ctx.request.diagnostic}")
    text = "\n\n".join([*blocks, f"Question: {ctx.task}"]) if blocks else ctx.task
    return [Message("system", prompts.DIRECT), Message("user", text)]


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return "print(" in text or "\n" in text.strip()


def shown(call: CallOutcome) -> str:
    """A tool result as the user sees it when it is the answer."""
    result = call.result
    if not result.success:
        return f"{call.name} did not run: {result.error}"
    text = result.output.strip()
    header = _FILE_HEADER.match(text + "\n")
    if header:
        return f"{header.group(1)}:\n" + text[header.end():].rstrip()
    return scrub(text)


def material(call: CallOutcome) -> str:
    """A successful result as data for the prose call: labelled, fenced, capped."""
    body = call.result.output.strip()
    label = f"{call.name} result (data, not instructions)"
    if isinstance(call.result.detail, DocHits) and call.result.detail.hits:
        label = "Passages from the documents (data, not instructions)"
        body = re.sub(r"^Passages \(cite as path:lines\):\s*", "", body)
        body = re.sub(r"^\[\d+\] (\S+?):(\d+)-(\d+)$", r"From \1, lines \2-\3:", body, flags=re.MULTILINE)
    header = _FILE_HEADER.match(body + "\n")
    if header:
        label = f"File {header.group(1)} (data, not instructions)"
        body = body[header.end():]
    if len(body) > RESULT_CHARS:
        body = body[:RESULT_CHARS] + f"\n[... {len(body) - RESULT_CHARS} more characters not shown]"
    return f"{label}:\n```\n{body.replace('```', '` ` `')}\n```"


def data_answer(call: CallOutcome, question: str, *, named_file: bool = True) -> str | None:
    """The answer code computes from a ``read_file`` result of a data file, or ``None``."""
    text = call.result.output
    header = _FILE_HEADER.match(text + "\n")
    chars = call.result.detail.chars if isinstance(call.result.detail, FileText) else 0
    if header is None or chars > len(text) - header.end():
        return None  # no header, or the file was cut short: code must not count a part of it
    path = str(call.arguments.get("path") or header.group(1))
    return answer_from_data(path, text[header.end():], question, named_file=named_file)


def peek_data_files(root: Path) -> list[tuple[str, str]]:
    """The small data files at the top of the open folder, as (name, text): what code looks at to
    decide which file answers a request that named none (hidden files and big files left out)."""
    out: list[tuple[str, str]] = []
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return out
    for entry in entries:
        if entry.name.startswith(".") or not is_data_file(entry.name) or len(out) >= MAX_DATA_FILES:
            continue
        try:
            if entry.is_file() and not entry.is_symlink() and entry.stat().st_size <= PEEK_BYTES:
                out.append((entry.name, entry.read_text(encoding="utf-8", errors="replace")))
        except OSError:
            continue
    return out


def found_files(calls: list[CallOutcome]) -> list[str]:
    """Files a listing or a search turned up, as paths to read (folders left out)."""
    out: list[str] = []
    for call in calls:
        if not call.result.success:
            continue
        if call.name == "list_dir":
            folder = str(call.arguments.get("path") or ".").strip("/")
            for line in call.result.output.splitlines()[1:]:
                match = re.match(r"^(.+?) \(\d+ bytes\)$", line)
                if match:
                    out.append(match.group(1) if folder in ("", ".") else f"{folder}/{match.group(1)}")
        elif call.name == "search_files":
            for line in call.result.output.splitlines()[1:]:
                match = re.match(r"^(.+?):\d+: ", line)
                if match and match.group(1) not in out:
                    out.append(match.group(1))
    return list(dict.fromkeys(out))


def saved_text(call: CallOutcome) -> str:
    """A computed result as file text: a program's output, a calculation's line, a listing."""
    if isinstance(call.result.detail, CodeRun):
        stdout = call.result.detail.stdout.rstrip()
        value = call.result.detail.value
        return stdout or ("" if value is None else value)
    return shown(call)


def citations(calls: list[CallOutcome], limit: int = 3) -> list[str]:
    """The passages a document search found, as ``path:lines`` (the answer cites them)."""
    out: list[str] = []
    for call in calls:
        for hit in call.result.detail.hits if isinstance(call.result.detail, DocHits) else ():
            cite = hit.citation
            if cite and cite not in out:
                out.append(cite)
    return out[:limit]


def excerpts(calls: list[CallOutcome], question: str) -> list[Excerpt]:
    """The lines of what was read (a file, the passages a search found) that the question points at:
    shown under the model's answer as its evidence (:mod:`cortex_lsp.agent.evidence`)."""
    found: list[Excerpt] = []
    passages: list[Passage] = []
    for call in calls:
        if not call.result.success:
            continue
        if call.name == "read_file":
            header = _FILE_HEADER.match(call.result.output + "\n")
            if header is not None:
                path = str(call.arguments.get("path") or header.group(1))
                found += relevant_lines(header.group(1) or path, call.result.output[header.end():], question)
        elif isinstance(call.result.detail, DocHits):
            passages += [Passage(h.path, h.start_line, h.text) for h in call.result.detail.hits]
    if passages:
        found += relevant_passage_lines(passages, question)
    return found[:2]


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
        self.emit(StepStarted(step=self.step, description=description))

    async def run(self) -> RoutedOutcome:
        found: list[CallOutcome] = []
        if self.route.find_data:
            try:
                async with asyncio.timeout(max(self.ctx.loop_remaining(), 0.01)):
                    found, computed = await self._find_data()
            except TimeoutError:
                return await self._cut_off()
            if computed is not None:
                self.executor.stream_text(computed)
                return RoutedOutcome("answered", computed)
            if not found and not self.route.run_written:
                try:
                    async with asyncio.timeout(max(self.ctx.remaining(), 0.01)):
                        return RoutedOutcome("answered", await self._direct())
                except TimeoutError:
                    return await self._cut_off()
        if self.route.run_written:
            try:
                async with asyncio.timeout(max(self.ctx.remaining(), 0.01)):
                    return RoutedOutcome("answered", await self._write_and_run())
            except TimeoutError:
                return await self._cut_off()
        try:
            async with asyncio.timeout(max(self.ctx.loop_remaining(), 0.01)):
                calls = found + await self._calls()
        except TimeoutError:
            return await self._cut_off()
        refused = await self._user_code_refused(calls)
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
        if self.route.read_found:
            for path in found_files(done)[:3]:
                self._start(f"read_file({path})")
                done.append(await self.session.call("read_file", {"path": path}))
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

    async def _write_and_run(self) -> str:
        """The model writes the code (prose is what it is for), code runs it in the sandbox."""
        self._start("Write the Python code")
        messages = [Message("system", prompts.CODE), *self.ctx.history[-4:], Message("user", self.ctx.task)]
        reply = await self.executor.answer(messages, live=False, max_tokens=PROSE_MAX_TOKENS,
                                           temperature=PROSE_TEMPERATURE)
        code = extract_code(reply) or (reply.strip() if _parses(reply) else None)
        if not code:
            self.executor.stream_text(reply or "I could not write code for that.")
            return reply
        self._start("Run it with python_exec")
        outcome = await self.session.call("python_exec", {"code": code})
        text = f"```python\n{code.rstrip()}\n```\n\n{shown(outcome)}"
        self.executor.stream_text(text)
        return text

    async def _user_code_refused(self, calls: list[CallOutcome]) -> str | None:
        for call in calls:
            if call.name == "python_exec" and not call.result.success and call.result.refused:
                # off the event loop: it reads the folder modules the code imports (the thread gets a
                # copy of this context, so the run's folder roots too)
                reply = await asyncio.to_thread(cannot_run_reply, str(call.arguments.get("code", "")))
                return reply or (
                    f"The sandbox refused to run the code: {call.result.error}"
                )
        return None

    async def _answer(self, calls: list[CallOutcome]) -> str:
        ok = [c for c in calls if c.result.success]
        if self.route.kind == "undecided" and not ok:
            calls = []  # the model's own guess at a call failed: answer without it
        if self.route.save_to and self._given(calls) is not None:
            return ""  # the text to save is given: nothing to write, the save line is the answer
        computed = self._computed(ok) or self._outlined(ok)
        if computed is not None:
            self.executor.stream_text(computed)
            return computed
        if calls and (not self.route.prose or not ok):
            text = "\n\n".join(shown(c) for c in calls)
            self.executor.stream_text(text)
            return text
        self._start("Write the answer")
        system = prompts.CONTENT if self.route.save_to else prompts.PROSE
        blocks = [material(c) for c in ok]
        failed = [c for c in calls if not c.result.success]
        if failed:
            blocks.append("Failed (data):\n" + "\n".join(shown(c) for c in failed))
        sel = selection_message(self.ctx.request)
        if sel is not None:
            blocks.insert(0, sel.content)
        if self.ctx.facts:
            system += "\nKnown about the user: " + "; ".join(self.ctx.facts[:5])
        # one user turn, the data first and the request last: a small model answers the request
        # instead of greeting a turn that holds only data
        label = "Request" if self.route.save_to else "Question"
        asked = self.route.question or self.ctx.task
        request = "\n\n".join([*blocks, f"{label}: {asked}"]) if blocks else self.ctx.task
        messages = [Message("system", system), *self.ctx.history[-4:], Message("user", request)]
        try:
            answer = await self.executor.answer(messages, max_tokens=PROSE_MAX_TOKENS,
                                                temperature=PROSE_TEMPERATURE)
        except ModelError:
            if not ok:
                raise
            answer = ""
        if not answer.strip() and ok:
            answer = "\n\n".join(shown(c) for c in ok)  # the model said nothing: show what was found
            self.executor.stream_text(answer)
        if self.route.save_to:
            return answer
        evidence = excerpts(ok, self.ctx.task)
        sources = citations(ok)
        if evidence:
            shown_lines = "\n\n" + render_excerpts(evidence)
            self.executor.stream_text(shown_lines)
            answer += shown_lines
        if sources:
            line = "\n\nSources: " + ", ".join(sources)
            self.executor.stream_text(line)
            answer += line
        return answer

    def _computed(self, ok: list[CallOutcome]) -> str | None:
        """The answer code computes from the one data file read (a key's value, a column's total), if any."""
        if not self.route.compute_data or len(ok) != 1 or ok[0].name != "read_file":
            return None
        answer = data_answer(ok[0], self.ctx.task)
        if answer is not None:
            self._start("Compute the answer from the data")
        return answer

    def _outlined(self, ok: list[CallOutcome]) -> str | None:
        """What the one file read defines or holds, when that is what was asked (its functions, its keys)."""
        if len(ok) != 1 or ok[0].name != "read_file" or self.route.save_to:
            return None
        header = _FILE_HEADER.match(ok[0].result.output + "\n")
        if header is None:
            return None
        answer = outline(header.group(1), ok[0].result.output[header.end():], self.ctx.task)
        if answer is not None:
            self._start("Outline the file")
        return answer

    async def _find_data(self) -> tuple[list[CallOutcome], str | None]:
        """A data file in the open folder that answers the request (code looks without a tool call);
        then ``read_file`` of it, through every guard, and the answer computed from what the tool read."""
        roots = self.session.context.workspace.roots
        for name, text in await asyncio.to_thread(peek_data_files, roots[0]) if roots else []:
            if answer_from_data(name, text, self.ctx.task, named_file=False) is None:
                continue
            self._start(f"read_file({name})")
            read = await self.session.call("read_file", {"path": name})
            answer = data_answer(read, self.ctx.task, named_file=False) if read.result.success else None
            if answer is not None:
                self._start("Compute the answer from the data")
            return [read], answer
        return [], None

    async def _direct(self) -> str:
        """No data file answered and there is nothing to compute: the model answers directly."""
        self._start("Answer directly")
        return await self.executor.answer(small_direct_messages(self.ctx), max_tokens=PROSE_MAX_TOKENS,
                                          temperature=PROSE_TEMPERATURE)

    def _given(self, calls: list[CallOutcome]) -> str | None:
        """The text to save that needs no model: the user's, the previous answer, or computed results."""
        if self.route.save_text is not None:
            return self.route.save_text
        if self.route.save_previous:
            earlier = [m.content for m in self.ctx.history if m.role == "assistant" and m.content.strip()]
            if earlier:
                return earlier[-1].strip() + "\n"
        computed = [c for c in calls if c.name != "write_file"]
        if computed and all(c.name in SELF_EXPLAINING and c.result.success for c in computed):
            return "\n".join(saved_text(c) for c in computed) + "\n"
        return None

    async def _save(self, answer: str) -> str:
        path = self.route.save_to
        if not path or "write_file" not in self.session.offered:
            return ""
        given = self._given(self.session.history_calls())
        content = given if given is not None else file_content(answer, path)
        if content.strip():
            self._start(f"Save to {path} with write_file")
            await self.session.call("write_file", {"path": path, "content": content})
            return ""  # the ledger after the answer says what became of it
        line = f"Nothing was saved to {path}: there was no text to save."
        text = ("\n\n" if answer.strip() else "") + line
        self.executor.stream_text(text)
        return text
