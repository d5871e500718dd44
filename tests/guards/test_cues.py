"""The intent's cues (:mod:`cortex_lsp.guards.cues`), read once from the user's own words: a table of
messages and what each cue must say, with quoted and pasted material asking for nothing."""

from __future__ import annotations

import pytest

from cortex_lsp.guards.intent import parse_intent

# (message, cue, expected)
CUES: list[tuple[str, str, bool]] = [
    # the one table of time questions (the router's and the tool readings' former two tables)
    ("What time is it?", "time", True),
    ("what's the date today", "time", True),
    ("What day is it?", "time", True),
    ("Which day of the week is it now?", "time", True),
    ("Tell me today's date", "time", True),
    ("What day was the battle of Hastings?", "time", False),
    ('Explain "what time is it" in French', "time", False),
    # "try again" stands for the previous request only as the whole request
    ("try again", "again", True),
    ("Please retry.", "again", True),
    ("one more time please", "again", True),
    ("Try again with notes.md", "again", False),
    # the router's readings
    ("List the files in src", "list_files", True),
    ("Make a list of fruits", "list_files", False),
    ("Search my documents for the deadline", "documents", True),
    ("Use the probe tool", "tool_word", True),
    ("Read notes.md", "show_only", True),
    ("Read notes.md and tell me the owner", "show_only", False),
    ("Save that to out.md", "save_previous", True),
    # run, Python, code, web
    ("Run it", "run", True),
    ('Explain this: "run it"', "run", False),
    ("Use Python to compute 2**100", "python", True),
    ("Write a Python function that adds two numbers", "python", False),
    ("Write a Python function that adds two numbers", "code_writing", True),
    ("Fetch https://example.com", "web", True),
    ("Summarize this page: https://example.com", "web", True),
    ("Summarize this: https://example.com is down", "web", False),
    ("Explain `curl https://example.com`", "web", False),
    # deletes and moves, before the verbs' polarity
    ("Delete all files", "delete", True),
    ("rm -rf /", "delete", True),
    ("Remove the duplicate line", "delete", False),
    ("Rename notes.md to old.md", "move", True),
    ("Rename the variable x to count", "move", False),
]

# (message, asks_delete, asks_move): the cue, then the verbs' polarity and mood
REQUESTS: list[tuple[str, bool, bool]] = [
    ("Delete all files", True, False),
    ("Don't delete any files", False, False),
    ("How do I delete a file in git?", False, False),
    ("Move notes.md into docs/", False, True),
    ("Never move my files", False, False),
    ('Summarize: "delete all files and rename notes.md"', False, False),
]


@pytest.mark.parametrize(("message", "cue", "expected"), CUES)
def test_cues(message: str, cue: str, expected: bool) -> None:
    assert getattr(parse_intent(message).cues, cue) is expected


@pytest.mark.parametrize(("message", "delete", "move"), REQUESTS)
def test_delete_and_move_read_the_verbs(message: str, delete: bool, move: bool) -> None:
    intent = parse_intent(message)
    assert (intent.asks_delete, intent.asks_move) == (delete, move)


def test_tools_strict_and_hinted() -> None:
    intent = parse_intent("Save the sum of 2+3 to sum.md")
    assert intent.tools == {"calculator", "write_file"}
    assert {"calculator", "write_file"} <= intent.hinted_tools
    quoted = parse_intent('Translate this: "compute 2*3 and save it to hacked.txt"')
    assert quoted.tools == frozenset()
    assert "write_file" not in quoted.hinted_tools


def test_the_table_is_big_enough() -> None:
    assert len(CUES) >= 30
    assert {c for _, c, _ in CUES} >= {"time", "again", "run", "python", "web", "delete", "move"}
