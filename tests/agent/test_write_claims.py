"""The write-claim check on its own: a table of answers and ledgers, and what survives."""

from __future__ import annotations

import asyncio

import pytest

from cortex_lsp.agent.types import RunRecord, ToolCallRecord
from cortex_lsp.agent.write_claims import honest_answer, honest_for_record, ledger
from cortex_lsp.ports import EditOutcome
from cortex_lsp.tools.user_wait import tool_time_limit, waiting_for_user

DECLINED = EditOutcome(uri="file:///ws/summary.md", kind="create", applied=False,
                       reason="Not written: the editor declined it.")
WRITTEN = EditOutcome(uri="file:///ws/notes.txt", kind="create", applied=True)
TIMED_OUT = ToolCallRecord("write_file", {"path": "out.md"}, False, "ERROR: write_file did not finish within 30 s")

CASES = [
    # answer, edits, tool calls, kept (must stay), gone (must vanish)
    ("I saved a summary to summary.md.", [DECLINED], [], "summary.md was not written", "I saved a summary"),
    ("Done! The summary has been written to summary.md", [DECLINED], [], "the editor declined it", "has been written"),
    ("I saved it so you can open summary.md later.", [DECLINED], [], "summary.md was not written", "I saved it"),
    ("I created out.md with the results.", [], [TIMED_OUT], "did not finish within 30 s", "I created out.md"),
    ("I saved the summary to a file.", [], [], "No file was written", "I saved the summary"),
    ("Gespeichert in bericht.md.", [], [], "bericht.md was not written", "Gespeichert"),
    ("I saved notes.txt for you.", [WRITTEN], [], "I saved notes.txt for you.", "not written"),
    ("summary.md was not saved because you declined.", [DECLINED], [], "was not saved because", "[summary.md"),
    ("Shall I save it to summary.md?", [], [], "Shall I save it to summary.md?", "not written"),
    ("The file will be created once you accept.", [], [], "will be created", "not written"),
    ("The mean of data.csv is 3.", [], [], "The mean of data.csv is 3.", "Written:"),
    ("I wrote notes.txt but summary.md failed.", [WRITTEN, DECLINED], [], "summary.md failed", "not written ("),
]


@pytest.mark.parametrize(("answer", "edits", "calls", "kept", "gone"), CASES)
def test_claims(answer: str, edits: list[EditOutcome], calls: list[ToolCallRecord], kept: str, gone: str) -> None:
    text = honest_answer(answer, edits, calls).text
    assert kept in text
    assert gone not in text


def test_ledger_names_written_and_not_written() -> None:
    book = ledger([WRITTEN, DECLINED], [TIMED_OUT])
    assert book.written == ("notes.txt",)
    assert [name for name, _ in book.not_written] == ["summary.md", "out.md"]
    assert book.lines()[0] == "Written: notes.txt."


def test_record_gets_the_ledger_in_its_notes() -> None:
    record = RunRecord(session_id="s", edits=[DECLINED])
    text = honest_for_record("I saved summary.md.", record)
    assert "I saved summary.md" not in text
    assert record.notes == ["Written: nothing.", "Not written: summary.md (the editor declined it)."]


def test_multiline_answer_keeps_its_layout() -> None:
    answer = "## Stats\n\n- mean: 3\n- max: 5\n\nI saved this to summary.md.\n"
    text = honest_answer(answer, [DECLINED], []).text
    assert text.startswith("## Stats\n\n- mean: 3\n- max: 5\n\n[summary.md was not written")


async def test_waiting_for_user_pauses_time_limits_and_keeps_cancel() -> None:
    async def review(seconds: float) -> str:
        with waiting_for_user():
            await asyncio.sleep(seconds)
        return "reviewed"

    async with asyncio.timeout(0.2) as limit:
        with tool_time_limit(limit):
            assert await review(0.5) == "reviewed"
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.2) as limit:
            with tool_time_limit(limit):
                await review(0.0)
                await asyncio.sleep(0.5)
    task = asyncio.ensure_future(review(30))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


UNKNOWN = EditOutcome(uri="file:///ws/notes.txt", kind="create", applied=None,
                      reason="Unknown: the run was cancelled and the editor had not answered the edit within 10 s; "
                             "check the file.")


@pytest.mark.parametrize(("answer", "kept", "gone"), [
    ("", "Written: unknown — check notes.txt.", "Not written"),
    ("I saved notes.txt.", "[unknown — check notes.txt.]", "I saved notes.txt"),
    ("Here is the haiku.", "Here is the haiku.", "Not written"),
])
def test_an_unknown_outcome_is_reported_as_unknown_never_as_not_written(answer: str, kept: str, gone: str) -> None:
    book = ledger([UNKNOWN], [])
    assert book.unknown == ("notes.txt",) and book.written == () and book.not_written == ()
    honest = honest_answer(answer, [UNKNOWN], [])
    assert kept in honest.text and gone not in honest.text
    assert "Written: unknown — check notes.txt." in honest.notes


def test_unknown_beside_known_outcomes() -> None:
    other = EditOutcome(uri="file:///ws/a.md", kind="create", applied=True)
    lines = ledger([other, UNKNOWN, DECLINED], []).lines()
    assert lines == ["Written: a.md, unknown — check notes.txt.", "Not written: summary.md (the editor declined it)."]
