"""Code actions only where they help, through the real server: on a selection, inside a function or a
top-level Python block, or on a diagnostic; never on a plain line or in prose without a selection."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from tests.lsp_harness import CortexClient, lsp_session

PY = '''import os

X = 1


def f(x):
    return x * 2


if __name__ == "__main__":
    print(f(X))
'''
MD = "# Notes\n\nSome prose here.\n\n- a list item\n"


def _point(line: int, character: int = 0) -> types.Range:
    return types.Range(start=types.Position(line, character), end=types.Position(line, character))


async def _titles(client: CortexClient, uri: str, rng: types.Range,
                  diagnostics: list[types.Diagnostic] | None = None) -> list[str]:
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=rng,
        context=types.CodeActionContext(diagnostics=diagnostics or [])))
    return sorted(a.title for a in actions or [])


def _open(client: CortexClient, path: Path, text: str, language: str) -> str:
    path.write_text(text)
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=path.as_uri(), language_id=language, version=1, text=text)))
    return path.as_uri()


BOTH = ["Cortex: Explain this", "Cortex: Run this"]
CASES = [
    ("py", _point(0, 3), []),                      # the import line
    ("py", _point(2, 0), []),                      # a top-level assignment
    ("py", _point(6, 8), BOTH),                    # inside f
    ("py", _point(10, 6), BOTH),                   # inside the __main__ block
    ("py", types.Range(start=types.Position(0, 0), end=types.Position(2, 5)), BOTH),  # a selection
    ("md", _point(2, 3), []),                      # prose, no selection
    ("md", _point(4, 3), []),                      # a list item is not a block to explain
    ("md", types.Range(start=types.Position(2, 0), end=types.Position(2, 16)), ["Cortex: Explain this"]),
]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "ws").mkdir(exist_ok=True)
    return {"py": tmp_path / "ws" / "mod.py", "md": tmp_path / "ws" / "notes.md"}


async def test_code_actions_only_where_they_help(tmp_path: Path, files: dict[str, Path]) -> None:
    async with lsp_session(None, tmp_path) as client:
        uris = {"py": _open(client, files["py"], PY, "python"), "md": _open(client, files["md"], MD, "markdown")}
        seen = [(kind, rng, await _titles(client, uris[kind], rng)) for kind, rng, _ in CASES]
        diag = types.Diagnostic(range=types.Range(start=types.Position(0, 0), end=types.Position(0, 9)),
                                message="'os' imported but unused", source="ruff")
        on_diagnostic = await _titles(client, uris["py"], _point(0, 3), [diag])
        md_diagnostic = await _titles(client, uris["md"], _point(2, 3), [diag])
    for (kind, rng, want), (_, _, got) in zip(CASES, seen, strict=True):
        assert got == want, (kind, rng, got)
    assert on_diagnostic == ["Cortex: Explain this error: 'os' imported but unused"]
    assert md_diagnostic == ["Cortex: Explain this error: 'os' imported but unused"]
