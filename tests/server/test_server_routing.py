"""A small model's routed requests through the real server (scripted model, real tools, real classifier):
where code computes the answer the model is never asked, and what the model writes reaches the user
without the prompt's scaffolding. The scripted model is hostile: asked for prose, it answers wrongly."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from cortex_lsp.agent.meaning import packaged_classifier
from cortex_lsp.agent.prompts import ROLE_CONTENT, ROLE_DIRECT, ROLE_PROSE
from cortex_lsp.models.onnx_embedder import embedder_unavailable_reason
from tests.lsp_harness import CortexClient, ask, capabilities, lsp_session
from tests.scripted_model import Reply, ScriptedModelServer

SALES = "region,month,amount\nNorth,Jan,120\nSouth,Jan,340\nEast,Jan,95\nWest,Jan,410\nNorth,Feb,230\nSouth,Feb,180\n"
WRONG = Reply(content="I'm ready to help. The total is 99.")

pytestmark = pytest.mark.skipif(embedder_unavailable_reason() is not None,
                                reason="the packaged sentence embedder is not installed")


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One centroid cache for the module's servers, filled here (a server embeds nothing then: on a
    loaded machine a cold server's first asks may pass the classifier's time limit and route by words)."""
    cache = tmp_path_factory.mktemp("cache")
    classifier = packaged_classifier(cache / "cortex-lsp")
    assert classifier is not None
    classifier.prepare()
    return cache


def small(cache: Path) -> dict[str, str]:
    return {"CORTEX_MODEL_PROFILE": "small", "XDG_CACHE_HOME": str(cache), "CORTEX_LOG_LEVEL": "INFO"}


WARM_SECONDS = 120.0


async def warmed(client: CortexClient) -> None:
    """Wait for the server's warm-up (the classifier loaded), as an editor opened before the question:
    a first ask on a loaded machine may otherwise pass the classifier's time limit and route by words."""
    deadline = time.monotonic() + WARM_SECONDS
    while not any("warm-up done" in e.message for e in client.log_messages):
        assert time.monotonic() < deadline, "no warm-up report in the log"
        await asyncio.sleep(0.05)


def asked(model: ScriptedModelServer, role: str) -> int:
    return sum(role in str(body.get("messages")) for body in model.chat_requests)


async def test_a_csv_total_and_a_data_question_naming_no_file_are_computed(
    model: ScriptedModelServer, tmp_path: Path, cache_dir: Path,
) -> None:
    model.default = WRONG
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "sales.csv").write_text(SALES, encoding="utf-8")
    (tmp_path / "ws" / "notes.md").write_text("nothing here\n", encoding="utf-8")
    async with lsp_session(model, tmp_path, env=small(cache_dir)) as client:
        await warmed(client)
        total = await ask(client, "What's the total amount in sales.csv?")
        average = await ask(client, "avg amount across all sales pls")
    assert "1375" in total["answer"] and "120 + 340 + 95 + 410 + 230 + 180" in total["answer"]
    assert [c["tool"] for c in total["tool_calls"]] == ["read_file"]
    assert "229.17" in average["answer"] and "99" not in average["answer"]
    assert [(c["tool"], c["arguments"].get("path")) for c in average["tool_calls"]] == [("read_file", "sales.csv")]
    assert any(n.startswith("meaning: ") for n in average["notes"])
    assert asked(model, ROLE_PROSE) == 0 and asked(model, ROLE_DIRECT) == 0


async def test_a_folder_overview_and_code_without_a_fence(
    model: ScriptedModelServer, tmp_path: Path, cache_dir: Path,
) -> None:
    model.default = WRONG
    (tmp_path / "ws" / "src").mkdir(parents=True)
    (tmp_path / "ws" / "src" / "main.py").write_text("print('hi')\n", encoding="utf-8")
    (tmp_path / "ws" / "src" / "db.py").write_text("URL = 'x'\n", encoding="utf-8")
    async with lsp_session(model, tmp_path, env=small(cache_dir)) as client:
        await warmed(client)
        listing = await ask(client, "give me a quick overview of what's in the src folder")
        ran = await ask(client, "Run this Python code: print(sum(range(101)))")
    assert [(c["tool"], c["arguments"]) for c in listing["tool_calls"]] == [("list_dir", {"path": "src"})]
    assert "main.py" in listing["answer"] and "db.py" in listing["answer"]
    assert [c["tool"] for c in ran["tool_calls"]] == ["python_exec"] and ran["tool_calls"][0]["success"]
    assert "5050" in ran["answer"]
    assert model.chat_requests == []  # the listing and the program's output are the answers


async def test_given_content_is_written_verbatim_whatever_the_model_says(
    model: ScriptedModelServer, tmp_path: Path, cache_dir: Path,
) -> None:
    model.on(Reply(content="I'm ready to help. What's the file you're working with?"), contains=ROLE_CONTENT)
    model.default = WRONG
    async with lsp_session(model, tmp_path, env=small(cache_dir)) as client:
        await warmed(client)
        await ask(client, "jot down 'call the plumber at 5' in reminders.txt")
        await ask(client, "make a file called shopping.md with milk, eggs and bread in it")
    assert (tmp_path / "ws" / "reminders.txt").read_text(encoding="utf-8").strip() == "call the plumber at 5"
    assert (tmp_path / "ws" / "shopping.md").read_text(encoding="utf-8").split() == ["milk", "eggs", "bread"]
    assert asked(model, ROLE_CONTENT) == 0


async def test_echoed_prompt_markers_never_reach_the_user(
    model: ScriptedModelServer, tmp_path: Path, cache_dir: Path,
) -> None:
    echo = "The data is not instructions: the owner is Priya (data, not instructions)."
    model.on(Reply(content=echo), contains=ROLE_PROSE, times=None)
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.md").write_text("# Team\nOwner: Priya.\n", encoding="utf-8")
    async with lsp_session(model, tmp_path, env=small(cache_dir)) as client:
        await warmed(client)
        result = await ask(client, "Read notes.md and tell me who the owner is")
        streamed = "".join(e["data"]["value"] for e in client.rec.events[result["run_id"]] if e["type"] == "token")
    assert asked(model, ROLE_PROSE) == 1, "the model was asked (and echoed the markers)"
    assert "not instructions" not in result["answer"].lower() and "Priya" in result["answer"]
    assert "not instructions" not in streamed.lower() and "Priya" in streamed


OPERATIONS = ("# Operations\n\n## Restoring a backup\n\nStop the server, then run `restore.sh 2024-05-01` with the\n"
              "date of the copy. Start the server again afterwards.\n\n## Newsletter\n\nIt goes out on Fridays.\n")


async def test_a_question_the_documents_cover_is_answered_from_them_with_the_lines(
    model: ScriptedModelServer, tmp_path: Path, cache_dir: Path,
) -> None:
    model.on(Reply(content="Use the restore button in the admin panel."), contains=ROLE_PROSE, times=None)
    model.default = WRONG
    (tmp_path / "ws" / "docs").mkdir(parents=True)
    (tmp_path / "ws" / "docs" / "operations.md").write_text(OPERATIONS, encoding="utf-8")
    async with lsp_session(model, tmp_path, env=small(cache_dir)) as client:
        await warmed(client)
        covered = await ask(client, "How do I restore a backup?")
        general = await ask(client, "What is the capital of Portugal?")
    assert [c["tool"] for c in covered["tool_calls"]] == ["doc_search"]
    assert "From docs/operations.md, line" in covered["answer"] and "restore.sh 2024-05-01" in covered["answer"]
    assert any("documents: nearest docs/operations.md" in n for n in covered["notes"])
    assert general["tool_calls"] == []  # the documents do not cover it: answered directly


async def test_text_given_for_a_new_file_is_proposed_for_review_whatever_the_word_tables_read(
    model: ScriptedModelServer, tmp_path: Path, cache_dir: Path,
) -> None:
    model.default = WRONG
    async with lsp_session(model, tmp_path, env=small(cache_dir)) as client:
        await warmed(client)
        result = await ask(client, "new file plan.txt, content: ship on Monday")
    assert [c["tool"] for c in result["tool_calls"]] == ["write_file"]
    assert (tmp_path / "ws" / "plan.txt").read_text(encoding="utf-8").strip() == "ship on Monday"
    assert model.chat_requests == []


async def test_a_write_meaning_proposed_is_not_sent_where_nobody_reviews_and_the_words_did_not_ask(
    model: ScriptedModelServer, tmp_path: Path, cache_dir: Path,
) -> None:
    model.default = WRONG
    caps = capabilities()
    assert caps.workspace is not None and caps.workspace.workspace_edit is not None
    caps.workspace.workspace_edit.change_annotation_support = None  # no review: strict mode
    async with lsp_session(model, tmp_path, env=small(cache_dir), caps=caps) as client:
        await warmed(client)
        result = await ask(client, "out.txt <- 42")
    [call] = result["tool_calls"]
    assert call["tool"] == "write_file" and not call["success"], "the route proposed the write"
    assert client.rec.edits == [] and not (tmp_path / "ws" / "out.txt").exists()
