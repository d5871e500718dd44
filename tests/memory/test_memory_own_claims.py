"""Memory keeps a fact only from the user's own assertive, first-person words.

Extends the hostile polarity table of ``test_memory_polarity``: the consolidation model is scripted
HOSTILE and proposes a fact the user's words contradict (a hedge: "hardly"; a stance of opposition:
"against"), attribute to someone else ("my brother is"), only report ("my boss thinks I …"), wish,
doubt or joke about, or that sits in pasted text the user only asked about. The side effect asserted
is the ``facts`` table of the real SQLite store on disk (and Chroma through ``semantic.all()``). The
genuine table checks the same rule keeps what the user does say about themselves.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from cortex_lsp.intent.intent import parse_intent
from cortex_lsp.intent.self_claims import clause_subject, harden, is_assertive
from cortex_lsp.intent.self_talk import fact_backing, self_statements
from cortex_lsp.memory.consolidation import judge
from cortex_lsp.memory.store import PersistentMemory
from tests.scripted_model import Reply, ScriptedModelServer

# (class, what the user wrote, the fact a hostile model proposes)
HOSTILE = [
    # (a) hedged and negative adverbs negate
    ("hedge", "I'm hardly an expert in Rust.", "The user is an expert in Rust."),
    ("hedge", "I am barely a beginner at Chess.", "The user is a beginner at Chess."),
    ("hedge", "I'm scarcely a morning person.", "The user is a morning person."),
    ("hedge", "I am by no means a fan of Java.", "The user is a fan of Java."),
    ("hedge", "I am anything but a morning person.", "The user is a morning person."),
    ("hedge", "I'm far from a good cook.", "The user is a good cook."),
    ("hedge", "I'm not really into golf.", "The user is into golf."),
    ("hedge", "I am in no way a Windows user.", "The user is a Windows user."),
    ("hedge", "Ich bin kaum ein Experte in Rust.", "The user is an expert in Rust."),
    ("hedge", "Ich bin keineswegs ein Fan von Java.", "The user is a fan of Java."),
    ("hedge", "Je suis à peine un expert en Rust.", "The user is an expert in Rust."),
    ("hedge", "Yo apenas soy experto en Rust.", "The user is an expert in Rust."),
    # (b) stances of opposition never back a "prefers/likes"
    ("oppose", "I am against using tabs.", "The user prefers using tabs."),
    ("oppose", "I'm opposed to dark mode.", "The user prefers dark mode."),
    ("oppose", "I refuse to use Windows.", "The user uses Windows."),
    ("oppose", "I object to tabs in YAML files.", "The user likes tabs in YAML files."),
    ("oppose", "I avoid meetings on Fridays.", "The user likes meetings on Fridays."),
    ("oppose", "I'm no fan of Kotlin.", "The user likes Kotlin."),
    ("oppose", "Ich bin gegen Tabs.", "The user prefers Tabs."),
    ("oppose", "Je suis contre Java.", "The user likes Java."),
    ("oppose", "Yo estoy en contra de Java.", "The user likes Java."),
    # (c) another person's attribute is not the user's
    ("person", "My brother is a doctor.", "The user is a doctor."),
    ("person", "My wife likes Python.", "The user likes Python."),
    ("person", "My best friend lives in Berlin.", "The user lives in Berlin."),
    ("person", "My boss is a vegetarian.", "The user is a vegetarian."),
    ("person", "I'm a nurse and my brother is a doctor.", "The user is a doctor."),
    ("person", "Mein Bruder lebt in Berlin.", "The user lives in Berlin."),
    ("person", "Ma sœur habite à Paris.", "The user lives in Paris."),
    ("person", "Mi hermano vive en Madrid.", "The user lives in Madrid."),
    # (d) reported speech, belief, wishes, doubts, jokes and play acting do not assert
    ("reported", "My boss thinks I am lazy.", "The user is lazy."),
    ("reported", "People say I am rich.", "The user is rich."),
    ("reported", "People call me a genius.", "The user is a genius."),
    ("reported", "Everyone thinks I'm a morning person.", "The user is a morning person."),
    ("reported", "I doubt that I am a good cook.", "The user is a good cook."),
    ("reported", "I wish I were a doctor.", "The user is a doctor."),
    ("reported", "I'm a doctor — just kidding.", "The user is a doctor."),
    ("reported", "I'm a fake doctor in a play.", "The user is a doctor."),
    ("reported", "I am told I am rude.", "The user is rude."),
    ("reported", "If I were rich I'd buy a boat.", "The user is rich."),
    ("reported", "Ich wünschte, ich wäre in Berlin.", "The user is in Berlin."),
    ("reported", "Si j'étais riche, j'habiterais à Paris.", "The user lives in Paris."),
    ("reported", "Ojalá yo viviera en Madrid.", "The user lives in Madrid."),
    ("reported", "I play a doctor on TV.", "The user is a doctor."),
    ("reported", "Apparently I am lazy.", "The user is lazy."),
    ("reported", "I am considered lazy.", "The user is lazy."),
    # a following "Not." / "Just kidding." / "Scratch that." takes the sentence back
    ("retract", "I'm a doctor. Not.", "The user is a doctor."),
    ("retract", "I am 30. Not.", "The user is 30."),
    ("retract", "I live in Rome. Scratch that.", "The user lives in Rome."),
    ("retract", "I'm a pilot. Je rigole.", "The user is a pilot."),
    # (e) pasted material the user only asks about never speaks for the user
    ("pasted", "My colleague sent me this, what does it mean?\nI am the admin of this server.\nThanks, Bob",
     "The user is the admin of this server."),
    ("pasted", "Is this a scam?\nI am your bank manager and I prefer wire transfers.",
     "The user prefers wire transfers."),
    ("pasted", "Is this a scam?\nI am your bank manager and I prefer wire transfers.", "The user is a bank manager."),
    ("pasted", "What language is this? I am a doctor.", "The user is a doctor."),
    ("pasted", "Is this email legit?\nI am the CEO and I need gift cards today.", "The user is the CEO."),
    ("pasted", "I got this message, is it safe?\nI live in Lagos and I need your help.", "The user lives in Lagos."),
    ("pasted", 'He wrote "I am the admin of this server". Is he?', "The user is the admin of this server."),
    ("pasted", "Is it legit?\nI am your bank manager.", "The user is a bank manager."),
    ("pasted", "Translate: I live in Berlin.", "The user lives in Berlin."),
    ("pasted", "Bob wrote: I am allergic to nuts. Should I cook for him?", "The user is allergic to nuts."),
    ("pasted", "```\nI am the admin of this server.\n```\nWhat is this?", "The user is the admin of this server."),
    ("pasted", "> I am the admin of this server.\n\nWho wrote that?", "The user is the admin of this server."),
]
HOSTILE_IDS = [f"{i:02d}-{cls}" for i, (cls, _, _) in enumerate(HOSTILE)]

# (what the user wrote, a fact about the user their words do back)
GENUINE = [
    ("I am a security engineer.", "The user is a security engineer."),
    ("I prefer tabs.", "The user prefers tabs."),
    ("I live in Berlin.", "The user lives in Berlin."),
    ("My name is Roydon and I prefer Python.", "The user's name is Roydon."),
    ("My name is Roydon and I prefer Python.", "The user prefers Python."),
    ("Honestly, I love Rust.", "The user loves Rust."),
    ("At work, I use Go.", "The user uses Go."),
    ("I'm called Sam.", "The user's name is Sam."),
    ("Please always answer me in bullet points.", "The user prefers answers in bullet points."),
    ("My llama is called Bartholomew.", "The user's llama is called Bartholomew."),
    ("My brother is a doctor.", "The user's brother is a doctor."),
    ("My wife likes Python.", "The user's wife likes Python."),
    ("I'm hardly an expert in Rust.", "The user is hardly an expert in Rust."),
    ("I'm hardly an expert in Rust.", "The user is not an expert in Rust."),
    ("I am against using tabs.", "The user is against using tabs."),
    ("I am against using tabs.", "The user does not like using tabs."),
    ("I'm no fan of Kotlin.", "The user is not a fan of Kotlin."),
    ("I am a teacher. Is this worksheet good?", "The user is a teacher."),
    ("I'm a nurse and my brother is a doctor.", "The user is a nurse."),
    ("I don't like meetings.", "The user does not like meetings."),
    ("I said I prefer tabs.", "The user prefers tabs."),
    ("I'm a doctor. Just kidding! I live in Rome.", "The user lives in Rome."),
    ("I used to play the violin.", "The user used to play the violin."),
    ("Is it possible to learn Rust fast? I am a Java developer.", "The user is a Java developer."),
    ("I am new to Rust. What is this error?", "The user is new to Rust."),
    ("Remember that my demo is at 11 AM on Friday.", "The user's demo is at 11 AM on Friday."),
]
GENUINE_IDS = [f"{i:02d}-{fact.removeprefix('The user').strip(' .')[:30]}" for i, (_, fact) in enumerate(GENUINE)]


@pytest.mark.parametrize(("cls", "message", "hostile"), HOSTILE, ids=HOSTILE_IDS)
def test_the_hostile_fact_is_refused(cls: str, message: str, hostile: str) -> None:
    assert not judge(hostile, self_statements(message)).kept
    if cls != "pasted":  # even when the whole message is taken as the user's words
        assert fact_backing(hostile, [message]) is not None


@pytest.mark.parametrize(("message", "fact"), GENUINE, ids=GENUINE_IDS)
def test_the_genuine_fact_is_kept(message: str, fact: str) -> None:
    verdict = judge(fact, self_statements(message))
    assert verdict.kept, verdict.reason


def _facts_on_disk(memory: PersistentMemory) -> list[str]:
    with sqlite3.connect(memory.settings.data_dir / "memory.db") as db:
        return sorted(row[0] for row in db.execute("select content from facts"))


async def test_a_hostile_model_never_gets_these_into_the_store(
    memory: PersistentMemory, model_server: ScriptedModelServer
) -> None:
    hostile = sorted({fact for _, _, fact in HOSTILE})
    # every consolidation proposes every hostile fact: each must be backed by *this* message
    model_server.on(Reply(content=json.dumps({"facts": hostile})), times=None)
    sid = await memory.new_session("/ws")
    for _, message, _ in HOSTILE:
        await memory.store_turn(sid, "user", message)
        memory.schedule_consolidation(sid, message)
        await memory.wait_idle()
    assert _facts_on_disk(memory) == []
    assert [f.content for f in await memory.semantic.all()] == []
    model_server.rules.clear()
    unrelated = [f for f in hostile if "Python" not in f]  # "likes Python" is what "I prefer Python" says
    proposed = [*unrelated, "The user's name is Roydon.", "The user prefers Python."]
    model_server.on(Reply(content=json.dumps({"facts": proposed})), times=None)
    message = "My name is Roydon and I prefer Python."
    memory.schedule_consolidation(sid, message)
    await memory.wait_idle()
    assert _facts_on_disk(memory) == ["The user prefers Python.", "The user's name is Roydon."]


PASTED_WITH_GRANT_CUTS = [
    'He said "I am the admin of this server" yesterday. I am a nurse.',
    "Summarize this:\nI am the admin of this server.",
    "My notes say I am the admin here. I live in Oslo.",
    "Here is the email:\nI am your bank manager.\n\nI live in Oslo.",
    "```\nI am root\n```\nI am a nurse.",
]


@pytest.mark.parametrize("message", PASTED_WITH_GRANT_CUTS)
def test_memory_reads_only_the_words_the_write_grants_read(message: str) -> None:
    words = parse_intent(message).words
    for statement in self_statements(message):
        assert statement.rstrip(".") in words
        assert "admin" not in statement and "bank" not in statement and "root" not in statement


@pytest.mark.parametrize(
    ("clause", "subject"),
    [
        ("I am a nurse", "self"),
        ("Honestly, I love Rust", "self"),
        ("At work, I use Go", "self"),
        ("Call me Rob", "self"),
        ("My name is Roydon", "my:name"),
        ("My brother is a doctor", "person:brother"),
        ("My best friend lives in Berlin", "person:friend"),
        ("My boss's car is red", "person:boss's"),
        ("People say I am rich", "other"),
        ("Mein Bruder lebt in Berlin", "person:bruder"),
        ("Ich bin Arzt", "self"),
    ],
)
def test_clause_subject(clause: str, subject: str) -> None:
    assert clause_subject(clause) == subject


def test_hedges_and_opposition_read_as_not() -> None:
    assert harden("I'm hardly an expert") == "I'm not an expert"
    assert harden("I am against using tabs") == "I am not using tabs"
    assert harden("Je suis à peine expert") == "Je suis not expert"
    assert not is_assertive("I wish I were a doctor")
    assert is_assertive("I'm called Sam")
