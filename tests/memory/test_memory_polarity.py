"""Memory keeps a fact only with the polarity of the user's words.

The consolidation model is scripted HOSTILE: for every sentence it proposes the opposite of what the
user said (and, alongside, the faithful fact). Whatever it proposes, the store on disk (real SQLite and
real Chroma in a temporary folder) must never hold the opposite; the faithful fact is kept, so the
check is not simply refusing everything.
"""

from __future__ import annotations

import json

import pytest

from cortex_lsp.intent.self_talk import OPPOSITE, fact_backing, polar_segments, self_statements
from cortex_lsp.memory.store import PersistentMemory
from tests.scripted_model import Reply, ScriptedModelServer

# (what the user wrote, the opposite fact a hostile model proposes, the faithful fact)
POLARITY_TABLE = [
    ("My name is Zed Quux and I am not a security engineer. I hate Java.",
     "The user is a security engineer.", "The user's name is Zed Quux."),
    ("My name is Zed Quux and I am not a security engineer. I hate Java.",
     "The user likes Java.", "The user hates Java."),
    ("I live in Berlin, not Atlantis.", "The user lives in Atlantis.", "The user lives in Berlin."),
    ("I like Python.", "The user dislikes Python.", "The user likes Python."),
    ("I hate Java.", "The user likes Java.", "The user dislikes Java."),
    ("I love Rust.", "The user hates Rust.", "The user loves Rust."),
    ("I don't like meetings.", "The user likes meetings.", "The user does not like meetings."),
    ("I am a nurse.", "The user is not a nurse.", "The user is a nurse."),
    ("I'm not a vegetarian.", "The user is a vegetarian.", "The user is not a vegetarian."),
    ("I am not married.", "The user is married.", "The user is not married."),
    ("I am not from Texas, I live in Ohio.", "The user is from Texas.", "The user lives in Ohio."),
    ("I'm a teacher, not a student.", "The user is a student.", "The user is a teacher."),
    ("I prefer tabs, not spaces.", "The user prefers spaces.", "The user prefers tabs."),
    ("I use Vim rather than Emacs.", "The user uses Emacs.", "The user uses Vim."),
    ("I no longer smoke.", "The user smokes.", "The user no longer smokes."),
    ("I no longer live in Paris.", "The user lives in Paris.", "The user no longer lives in Paris."),
    ("I used to work at Google.", "The user works at Google.", "The user used to work at Google."),
    ("I used to play the violin.", "The user plays the violin.", "The user used to play the violin."),
    ("I was a lawyer.", "The user is a lawyer.", "The user was a lawyer."),
    ("I never drink coffee.", "The user drinks coffee.", "The user never drinks coffee."),
    ("I never work on weekends.", "The user works on weekends.", "The user never works on weekends."),
    ("I can't stand JavaScript.", "The user enjoys JavaScript.", "The user dislikes JavaScript."),
    ("I dislike spicy food.", "The user likes spicy food.", "The user dislikes spicy food."),
    ("I don't own a car but I have a bike.", "The user owns a car.", "The user has a bike."),
    ("I'm allergic to nuts, so I avoid Thai food.", "The user likes Thai food.", "The user avoids Thai food."),
    ("I don't have any pets.", "The user has pets.", "The user has no pets."),
    ("I'm not a tester but a developer.", "The user is a tester.", "The user is a developer."),
    ("I don't like Java, Python or Go.", "The user likes Python.", "The user does not like Python."),
]
IDS = [f"{i:02d}-{opp.removeprefix('The user ').rstrip('.')}" for i, (_, opp, _) in enumerate(POLARITY_TABLE)]


@pytest.mark.parametrize(("message", "opposite", "faithful"), POLARITY_TABLE, ids=IDS)
def test_the_check_refuses_the_opposite_and_keeps_the_faithful_fact(
    message: str, opposite: str, faithful: str
) -> None:
    statements = self_statements(message)
    assert fact_backing(opposite, statements) is not None
    assert fact_backing(faithful, statements) is None


@pytest.mark.parametrize(("message", "opposite", "faithful"), POLARITY_TABLE, ids=IDS)
async def test_a_hostile_model_never_gets_the_opposite_into_the_store(
    memory: PersistentMemory, model_server: ScriptedModelServer, message: str, opposite: str, faithful: str
) -> None:
    model_server.on(Reply(content=json.dumps({"facts": [opposite, faithful]})), times=None)
    sid = await memory.new_session("/ws")
    await memory.store_turn(sid, "user", message)
    memory.schedule_consolidation(sid, message)
    await memory.wait_idle()
    stored = [f.content for f in await memory.semantic.all()]
    assert opposite not in stored
    assert stored == [faithful]
    refused = [v for v in memory.last_verdicts[sid] if not v.kept]
    assert [v.fact for v in refused] == [opposite]


def test_the_issue_sentences_say_why_they_are_refused() -> None:
    statements = self_statements("My name is Zed Quux and I am not a security engineer. I hate Java.")
    assert fact_backing("The user is a security engineer.", statements) == OPPOSITE
    assert fact_backing("The user likes Java.", statements) == OPPOSITE
    assert fact_backing("The user lives in Atlantis.", self_statements("I live in Berlin, not Atlantis.")) == OPPOSITE


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I live in Berlin, not Atlantis", ["pos", "neg"]),
        ("I'm not a tester but a developer", ["neg", "pos"]),
        ("I don't like Java, Python or Go", ["neg"]),
        ("I like Go but not Java", ["pos", "neg"]),
        ("I no longer live in Paris", ["former-pos"]),
        ("I can't live without coffee", ["mixed"]),
        ("I use Vim rather than Emacs", ["pos", "neg"]),
    ],
)
def test_clause_polarity(text: str, expected: list[str]) -> None:
    assert [s.polarity for s in polar_segments(text)] == expected
