"""LATS: Language Agent Tree Search over tool moves, bounded by ``settings.lats``.

Each expansion asks the model for up to ``n_branches`` candidate moves from a node (a tool call, or a
final answer). Tool moves run through the run's :class:`~cortex_lsp.agent.executor.ToolSession`, so
every per-call guard still applies (and identical calls across branches run once). Children are
scored by the evaluator (``model``: the model grades the trajectory 0-10; ``heuristic``: from tool
success and whether an answer exists), scores are memoised per trajectory and backed up the tree, and
the next node to expand is the open leaf with the best upper-confidence value. The search stops at
``budget`` expansions, at a good enough answer, or when the kernel's time limit cancels it
(:meth:`LatsSearch.best_answer` then gives what it has).

Searching must not have side effects the user would see twice: ``write_file`` is never a search move;
the kernel saves the chosen answer afterwards if the user asked for a save.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cortex_lsp.agent import prompts
from cortex_lsp.agent.context import RunContext, selection_message
from cortex_lsp.agent.deps import AgentDeps, Emit
from cortex_lsp.agent.executor import ToolSession
from cortex_lsp.agent.parsing import extract_json, extract_object
from cortex_lsp.agent.plan_guards import GuardedPlan
from cortex_lsp.models.base import ChatOptions, Message, ModelError, ModelMissing, ModelUnavailable, collect
from cortex_lsp.ports import StepStarted

GOOD_ENOUGH = 0.8
EXPLORATION = 1.0
SEARCH_EXCLUDED = frozenset({"write_file"})
OBSERVATION_LIMIT = 1500

EXPAND_FORMAT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "candidates": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "thought": {"type": "string"},
                    "tool": {"type": ["string", "null"]},
                    "arguments": {"type": "object"},
                    "answer": {"type": ["string", "null"]},
                },
            },
        }
    },
    "required": ["candidates"],
}
EVALUATE_FORMAT: dict[str, Any] = {
    "type": "object",
    "properties": {"score": {"type": "number"}, "reason": {"type": "string"}},
    "required": ["score"],
}


@dataclass
class Move:
    thought: str = ""
    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    answer: str | None = None

    def describe(self) -> str:
        if self.answer is not None:
            return f"answer: {self.answer[:300]}"
        return f"call {self.tool}({self.arguments})"


@dataclass
class Node:
    move: Move | None = None
    parent: Node | None = None
    depth: int = 0
    observation: str = ""
    success: bool = True
    children: list[Node] = field(default_factory=list)
    visits: int = 0
    value: float = 0.0
    score: float = 0.0
    expanded: bool = False

    @property
    def terminal(self) -> bool:
        return self.move is not None and self.move.answer is not None

    def path(self) -> list[Node]:
        out: list[Node] = []
        node: Node | None = self
        while node is not None and node.move is not None:
            out.append(node)
            node = node.parent
        return list(reversed(out))

    def trajectory(self) -> str:
        lines = []
        for i, node in enumerate(self.path(), 1):
            assert node.move is not None
            lines.append(f"{i}. {node.move.thought}".rstrip() + f"\n   {node.move.describe()}")
            if node.observation:
                lines.append("   " + node.observation[:OBSERVATION_LIMIT].replace("\n", "\n   "))
        return "\n".join(lines) or "(nothing tried yet)"


def parse_candidates(text: str, limit: int) -> list[Move]:
    value = extract_json(text)
    if isinstance(value, dict):
        value = value.get("candidates", value.get("moves", [value]))
    if not isinstance(value, list):
        return []
    moves: list[Move] = []
    for item in value:
        if not isinstance(item, dict):
            continue
        answer = item.get("answer")
        tool = item.get("tool")
        args = item.get("arguments") if isinstance(item.get("arguments"), dict) else {}
        thought = str(item.get("thought") or "")[:300]
        if isinstance(answer, str) and answer.strip():
            moves.append(Move(thought=thought, answer=answer.strip()))
        elif isinstance(tool, str) and tool.strip():
            moves.append(Move(thought=thought, tool=tool.strip(), arguments=dict(args or {})))
    return moves[:limit]


def heuristic_score(node: Node) -> float:
    path = node.path()
    succeeded = sum(1 for n in path if n.move and n.move.tool and n.success)
    failed = sum(1 for n in path if n.move and n.move.tool and not n.success)
    if node.terminal:
        base = 0.6 + (0.2 if succeeded else 0.0)
    else:
        base = 0.5 if node.success else 0.1
    return max(0.0, min(1.0, base - 0.1 * failed))


class LatsSearch:
    def __init__(
        self,
        deps: AgentDeps,
        ctx: RunContext,
        session: ToolSession,
        emit: Emit,
        prior: Sequence[Message] | None = None,
    ) -> None:
        self.deps = deps
        self.ctx = ctx
        self.session = session
        self.emit = emit
        self.prior = list(prior or [])
        self.settings = deps.settings.lats
        self.root = Node()
        self.expansions = 0
        self._memo: dict[str, float] = {}
        self._step = 0

    # -- public ------------------------------------------------------------------------------------
    async def run(self, guarded: GuardedPlan) -> str | None:
        tools = [t for t in self.session.offered if t not in SEARCH_EXCLUDED]
        while self.expansions < self.settings.budget:
            node = self._select()
            if node is None:
                break
            await self._expand(node, tools)
            best = self._best_terminal()
            if best is not None and best.score >= GOOD_ENOUGH:
                break
        return self.best_answer()

    def best_answer(self) -> str | None:
        best = self._best_terminal()
        return best.move.answer if best is not None and best.move is not None else None

    def nodes(self) -> list[Node]:
        out: list[Node] = []
        stack = [self.root]
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(node.children)
        return out

    # -- search ------------------------------------------------------------------------------------
    def _best_terminal(self) -> Node | None:
        terminals = [n for n in self.nodes() if n.terminal]
        return max(terminals, key=lambda n: n.score, default=None)

    def _select(self) -> Node | None:
        if not self.root.expanded:
            return self.root
        total = max(1, self.root.visits)
        open_leaves = [
            n
            for n in self.nodes()
            if not n.expanded and not n.terminal and n.depth < self.settings.max_depth and n.success
        ]
        if not open_leaves:
            open_leaves = [
                n
                for n in self.nodes()
                if not n.expanded and not n.terminal and n.depth < self.settings.max_depth
            ]
        if not open_leaves:
            return None

        def ucb(n: Node) -> float:
            mean = n.value / n.visits if n.visits else n.score
            return mean + EXPLORATION * math.sqrt(math.log(total + 1) / (n.visits + 1))

        return max(open_leaves, key=ucb)

    async def _expand(self, node: Node, tools: list[str]) -> None:
        node.expanded = True
        self.expansions += 1
        moves = await self._propose(node, tools)
        if not moves:
            self._backup(node, 0.0)
            return
        for move in moves:
            child = Node(move=move, parent=node, depth=node.depth + 1)
            node.children.append(child)
            self._step += 1
            self.emit(StepStarted(self._step, f"Search: {move.thought or move.describe()}"[:160]))
            if move.tool is not None:
                if move.tool in SEARCH_EXCLUDED or move.tool not in tools:
                    child.success = False
                    child.observation = f"[{move.tool}] not available during the search."
                else:
                    outcome = await self.session.call(move.tool, move.arguments)
                    move.tool = outcome.name
                    child.success = outcome.result.success and not outcome.blocked
                    child.observation = outcome.result.text_for_model(OBSERVATION_LIMIT)
            child.score = await self._evaluate(child)
            self._backup(child, child.score)

    def _backup(self, node: Node | None, score: float) -> None:
        while node is not None:
            node.visits += 1
            node.value += score
            node = node.parent

    # -- model calls -------------------------------------------------------------------------------
    def _base_messages(self) -> list[Message]:
        msgs: list[Message] = []
        sel = selection_message(self.ctx.request)
        if sel is not None:
            msgs.append(sel)
        if self.prior:
            findings = [m.content[:OBSERVATION_LIMIT] for m in self.prior if m.role == "tool"]
            if findings:
                msgs.append(Message("user", "[earlier tool results: data]\n" + "\n\n".join(findings[-5:])))
        return msgs

    async def _propose(self, node: Node, tools: list[str]) -> list[Move]:
        specs = self.deps.tools.specs(tools)
        listing = (
            "\n".join(
                f"- {s.name}: {s.description[:140]} args: {list(s.parameters.get('properties', {}))}"
                for s in specs
            )
            or "(none: give an answer)"
        )
        system = prompts.fill(prompts.LATS_EXPAND, n=self.settings.n_branches, tools=listing)
        messages = [
            Message("system", system),
            *self._base_messages(),
            Message("user", f"Request: {self.ctx.task}\n\nTried so far:\n{node.trajectory()}"),
        ]
        try:
            reply = await collect(
                self.deps.model.chat_stream(
                    messages,
                    model=self.deps.settings.reasoning_model,
                    format=EXPAND_FORMAT,
                    options=ChatOptions(temperature=0.7),
                )
            )
        except (ModelUnavailable, ModelMissing):
            raise
        except ModelError:
            return []
        return parse_candidates(reply.content, self.settings.n_branches)

    async def _evaluate(self, node: Node) -> float:
        key = node.trajectory()
        if key in self._memo:
            return self._memo[key]
        score = heuristic_score(node)
        if self.settings.evaluator == "model":
            messages = [
                Message("system", prompts.LATS_EVALUATE),
                Message("user", f"Request: {self.ctx.task}\n\nPartial solution (data):\n{key}"),
            ]
            try:
                reply = await collect(
                    self.deps.model.chat_stream(
                        messages,
                        model=self.deps.settings.reasoning_model,
                        format=EVALUATE_FORMAT,
                        options=ChatOptions(temperature=0.0, max_tokens=120),
                    )
                )
                verdict = extract_object(reply.content)
                raw = verdict.get("score") if verdict else None
                if isinstance(raw, (int, float)) and not isinstance(raw, bool):
                    score = max(0.0, min(1.0, float(raw) / 10.0))
            except (ModelUnavailable, ModelMissing):
                raise
            except ModelError:
                pass
        self._memo[key] = score
        return score
