"""The answer's tokens through a token sink: every piece, in order, and no event object per token.

The model is the scripted server over HTTP through the real Ollama client (its reply read in a thread of its
own, which joins the lines that arrived together); the host side is a counting sink (what the LSP's
``RunStream`` is: callable for events, ``write_token`` for text).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cortex_lsp.agent.executor import Executor
from cortex_lsp.agent.tokens import TokenSink, flush_tokens, token_writer
from cortex_lsp.agent.types import RunRecord
from cortex_lsp.models.base import Message
from cortex_lsp.ports import AgentEvent, AnswerToken
from tests.agent.conftest import AgentHarness
from tests.scripted_model import Reply

HUGE = 20_000


@dataclass
class CountingSink:
    """Counts what the host receives: events (any object per call), token pieces, flushes."""

    events: list[AgentEvent] = field(default_factory=list)
    pieces: list[str] = field(default_factory=list)
    flushes: list[int] = field(default_factory=list)  # how many pieces had arrived at each flush

    def __call__(self, event: AgentEvent) -> None:
        self.events.append(event)

    def write_token(self, text: str) -> None:
        self.pieces.append(text)

    def flush_tokens(self) -> None:
        self.flushes.append(len(self.pieces))


def _text(n: int) -> str:
    return " ".join(f"w{i}" for i in range(n))


async def test_a_huge_answer_reaches_the_sink_complete_in_order_with_no_event_per_token(agent: AgentHarness) -> None:
    text = _text(HUGE)
    agent.model.on(Reply(content=text), contains="stream it", times=None)
    sink = CountingSink()
    record = RunRecord(session_id="s1")
    answer = await Executor(agent.deps(), sink, record).answer([Message("user", "stream it")])
    assert isinstance(sink, TokenSink)
    assert answer == text
    assert "".join(sink.pieces) == text, "every piece, in order"
    # the scripted server streams one token per line; the reader thread hands over what arrived together
    assert 1 <= len(sink.pieces) <= HUGE
    assert sink.events == [], "no AgentEvent (and no dict) was built for a token"
    assert sink.flushes == [len(sink.pieces)], "one flush, when the answer was complete"
    assert "".join(record.answer_parts) == text


async def test_a_plain_emit_still_gets_token_events(agent: AgentHarness) -> None:
    agent.model.on(Reply(content="Tokyo is the capital."), contains="capital", times=None)
    events: list[AgentEvent] = []
    answer = await Executor(agent.deps(), events.append, RunRecord(session_id="s1")).answer(
        [Message("user", "capital of Japan?")])
    assert answer == "Tokyo is the capital."
    assert {e.type for e in events} == {"token"}
    assert "".join(e.value for e in events if isinstance(e, AnswerToken)) == answer


async def test_a_quiet_answer_sends_nothing_to_the_sink(agent: AgentHarness) -> None:
    agent.model.on(Reply(content=_text(50)), contains="silent", times=None)
    sink = CountingSink()
    answer = await Executor(agent.deps(), sink, RunRecord(session_id="s1")).answer(
        [Message("user", "silent")], live=False)
    assert answer == _text(50)
    assert sink.pieces == [] and sink.events == [] and sink.flushes == []


async def test_an_already_generated_answer_goes_through_the_sink_and_is_flushed(agent: AgentHarness) -> None:
    sink = CountingSink()
    record = RunRecord(session_id="s1")
    Executor(agent.deps(), sink, record).stream_text("one two three", ["one ", "two ", "three"])
    assert sink.pieces == ["one ", "two ", "three"] and sink.flushes == [3] and sink.events == []


def test_token_writer_falls_back_to_events_for_a_plain_emit() -> None:
    events: list[AgentEvent] = []
    write = token_writer(events.append)
    write("a")
    write("b")
    flush_tokens(events.append)  # nothing to flush for a plain emit
    assert events == [AnswerToken("a"), AnswerToken("b")]
