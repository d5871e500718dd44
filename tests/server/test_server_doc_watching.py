"""The editor's file changes keep doc_search fresh without a walk per search: the real server over stdio
registers a file watcher when the client can (``client/registerCapability``), and a
``workspace/didChangeWatchedFiles`` makes the next search re-read that path only. The work done is read
from the index's own log line (folders walked, paths re-read), never from timings."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

from lsprotocol import types
from pytest_lsp import make_test_lsp_client

from cortex_lsp.agent.prompts import ROLE_EXECUTOR, ROLE_PLANNER
from tests.lsp_harness import CortexClient, Recorder, ask, capabilities, close_session, server_env
from tests.scripted_model import Reply, ScriptedModelServer, call
from tests.waiting import until

WORD = "zanzibarquokka"
REFRESHED = re.compile(r"doc index refreshed: (\d+) folder\(s\) walked \((\d+) file\(s\)\), (\d+) changed path")


def script_search(model: ScriptedModelServer) -> None:
    plan = {"kind": "tools", "steps": [f"Search the documents for {WORD} with doc_search"], "tools": ["doc_search"]}
    model.on(Reply(content=json.dumps(plan)), contains=ROLE_PLANNER, times=None)
    model.on(Reply(content="Found it."), contains="[doc_search result]", times=None)
    model.on(Reply(tool_calls=[call("doc_search", action="search", query=WORD)]), contains=ROLE_EXECUTOR, times=None)


@asynccontextmanager
async def session(model: ScriptedModelServer, tmp_path: Path, *, watch: bool) -> AsyncIterator[CortexClient]:
    """A session whose client answers ``client/registerCapability`` (and records it) before it starts."""
    root, data = tmp_path / "ws", tmp_path / "data"
    data.mkdir(exist_ok=True)
    client = cast(CortexClient, make_test_lsp_client())
    client.rec = Recorder()
    registered: list[types.RegistrationParams] = []
    client.registered = registered  # type: ignore[attr-defined]

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def on_register(params: types.RegistrationParams) -> None:
        registered.append(params)

    caps = capabilities()
    assert caps.workspace is not None
    if not watch:
        caps.workspace.did_change_watched_files = None
    else:
        caps.workspace.did_change_watched_files = types.DidChangeWatchedFilesClientCapabilities(
            dynamic_registration=True)
    await client.start_io(sys.executable, "-m", "cortex_lsp", env=server_env(model, data, CORTEX_LOG_LEVEL="INFO"))
    client.init_result = await client.initialize_session(types.InitializeParams(
        capabilities=caps, process_id=os.getpid(), root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)]))
    try:
        yield client
    finally:
        await close_session(client)


def refreshes(client: CortexClient) -> list[tuple[int, int, int]]:
    found = [REFRESHED.search(m.message) for m in client.log_messages]
    return [(int(m[1]), int(m[2]), int(m[3])) for m in found if m]


async def search_output(client: CortexClient) -> str:
    result = await ask(client, f"Find {WORD} in my documents")
    outputs = [c["output"] for c in result["tool_calls"] if c["tool"] == "doc_search"]
    assert outputs, result
    return str(outputs[-1])


def make_folder(tmp_path: Path, files: int = 30) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    for n in range(files):
        (root / f"note{n}.md").write_text(f"# Note {n}\n\nOrdinary text number {n}.\n")
    return root


async def wait_for(predicate: Any, what: str = "the watcher's registration") -> None:
    await until(predicate, what=what)  # raises when it never comes (it used to return silently after 10 s)


def changed(client: CortexClient, *events: tuple[Path, types.FileChangeType]) -> None:
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        changes=[types.FileEvent(uri=p.as_uri(), type=t) for p, t in events]))


async def test_a_watched_change_is_found_without_a_walk(model: ScriptedModelServer, tmp_path: Path) -> None:
    script_search(model)
    root = make_folder(tmp_path)
    async with session(model, tmp_path, watch=True) as client:
        await wait_for(lambda: client.registered)  # type: ignore[attr-defined]
        [params] = client.registered  # type: ignore[attr-defined]
        assert params.registrations[0].method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
        first = await search_output(client)
        (root / "note7.md").write_text(f"# Note 7\n\nThe {WORD} ledger moved here.\n")
        (root / "note3.md").unlink()
        changed(client, (root / "note7.md", types.FileChangeType.Changed),
                (root / "note3.md", types.FileChangeType.Deleted))
        second = await search_output(client)
        (root / "note7.md").unlink()
        changed(client, (root / "note7.md", types.FileChangeType.Deleted))
        third = await search_output(client)
        log = refreshes(client)
    assert WORD not in first and "note7.md" in second and WORD in second and WORD not in third
    assert "note3.md" not in second and "note7.md" not in third
    assert log == [(1, 30, 0), (0, 0, 2), (0, 0, 1)]  # one walk, then only the changed paths


async def test_a_client_that_cannot_watch_still_gets_fresh_results(
    model: ScriptedModelServer, tmp_path: Path
) -> None:
    script_search(model)
    root = make_folder(tmp_path)
    async with session(model, tmp_path, watch=False) as client:
        await search_output(client)
        (root / "note7.md").write_text(f"# Note 7\n\nThe {WORD} ledger moved here.\n")  # no event at all
        second = await search_output(client)
        log = refreshes(client)
        registered = client.registered  # type: ignore[attr-defined]
    assert registered == []
    assert "note7.md" in second and WORD in second
    assert log == [(1, 30, 0), (1, 30, 0)]  # a walk each time, as before


async def test_a_burst_of_a_thousand_events_costs_one_walk(model: ScriptedModelServer, tmp_path: Path) -> None:
    script_search(model)
    root = make_folder(tmp_path)
    async with session(model, tmp_path, watch=True) as client:
        await wait_for(lambda: client.registered)  # type: ignore[attr-defined]
        await search_output(client)
        burst = [(root / f"gen{n}.md", types.FileChangeType.Created) for n in range(1000)]
        changed(client, *burst)
        (root / "note9.md").write_text(f"# Note 9\n\nThe {WORD} after the build.\n")
        changed(client, (root / "note9.md", types.FileChangeType.Changed))
        found = await search_output(client)
        log = refreshes(client)
    assert "note9.md" in found
    assert log == [(1, 30, 0), (1, 30, 0)]  # coalesced: one walk instead of 1,001 paths
