"""Code actions only where they help, through the real server: Explain on a selection, inside a function
or a top-level Python block; Run this on a selection or a top-level block, never on a function's lines;
Run file (a source action) in a file with an entry block; Explain/Fix this error on a diagnostic; nothing
on a plain line or in prose without a selection.
A document the parser fails on (too deep) or that is over the parse cap gets a normal answer without
block actions; a document version is parsed once."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from cortex_lsp.server.code_actions import MAX_PARSE_CHARS, ParseCache, code_actions
from cortex_lsp.tools.sandbox.policy import MAX_CODE_CHARS
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
FILE = "Cortex: Run file"  # PY has an entry block
CASES = [
    ("py", _point(0, 3), [FILE]),                  # the import line
    ("py", _point(2, 0), [FILE]),                  # a top-level assignment
    ("py", _point(6, 8), ["Cortex: Explain this", FILE]),  # inside f: explained, never run line by line
    ("py", _point(10, 6), [*BOTH, FILE]),          # inside the __main__ block
    ("py", types.Range(start=types.Position(0, 0), end=types.Position(2, 5)), [*BOTH, FILE]),  # a selection
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
        assert got == sorted(want), (kind, rng, got)
    errors = [f"Cortex: {verb} this error: 'os' imported but unused" for verb in ("Explain", "Fix")]
    assert on_diagnostic == sorted([*errors, FILE])
    assert md_diagnostic == errors


# Hostile documents: a parse of 800 KB held the loop ~2 s on every code action, and valid
# but deep Python made the parser raise RecursionError/MemoryError, answered -32603 with a traceback.
FUNC = "def f(x):\n    return x * 2\n\n\n"
DEEP = {
    "chained_plus": FUNC + "x = " + "1+" * 90_000 + "1\n",   # 180 KB: RecursionError in ast.parse
    "unary_minus": FUNC + "x = " + "-" * 90_000 + "1\n",     # 90 KB: MemoryError in ast.parse
}
BIG = FUNC + "y = 1\n" * 150_000  # 900 KB of valid Python


def _params(uri: str, rng: types.Range, diagnostics: list[types.Diagnostic] | None = None) -> types.CodeActionParams:
    return types.CodeActionParams(text_document=types.TextDocumentIdentifier(uri=uri), range=rng,
                                  context=types.CodeActionContext(diagnostics=diagnostics or []))


async def test_deep_and_huge_documents_get_a_normal_answer(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    diag = types.Diagnostic(range=types.Range(start=types.Position(0, 0), end=types.Position(0, 3)), message="bad")
    got: dict[str, tuple[list[str], list[str], list[str]]] = {}
    async with lsp_session(None, tmp_path) as client:
        for name, text in {**DEEP, "big": BIG}.items():
            uri = _open(client, tmp_path / "ws" / f"{name}.py", text, "python")
            got[name] = (await _titles(client, uri, _point(1, 6)),  # inside f: needs the parse
                         await _titles(client, uri, _point(1, 6), [diag]),
                         await _titles(client, uri, types.Range(start=types.Position(0, 0),
                                                                end=types.Position(1, 16))))
        after = await _titles(client, _open(client, tmp_path / "ws" / "ok.py", PY, "python"), _point(6, 8))
    for name, (cursor, diagnostic, selection) in got.items():
        assert cursor == [], name  # no parse (failed, or too large to try): no block actions on a cursor
        assert diagnostic == ["Cortex: Explain this error: bad", "Cortex: Fix this error: bad"], name
        assert selection == BOTH, name  # the others still offered
    assert after == ["Cortex: Explain this", FILE]  # the server goes on as before


def test_a_document_over_the_cap_is_not_parsed() -> None:
    parses = ParseCache()
    uri = "file:///ws/big.py"
    assert code_actions(uri, BIG, "python", _params(uri, _point(1, 6)), parses=parses, version=1) == []
    assert parses.parses == 0
    assert len(BIG) > MAX_PARSE_CHARS == MAX_CODE_CHARS  # the same cap as cortex.run


@pytest.mark.parametrize("name", sorted(DEEP))
def test_any_parser_failure_is_no_parse(name: str) -> None:
    parses = ParseCache()
    uri = f"file:///ws/{name}.py"
    assert len(DEEP[name]) <= MAX_PARSE_CHARS  # parsed, and the parser fails
    assert parses.tree(uri, 1, DEEP[name]) is None
    assert code_actions(uri, DEEP[name], "python", _params(uri, _point(1, 6)), parses=parses, version=1) == []
    assert parses.parses == 1  # the failure is cached for the version too


def test_one_parse_per_document_version() -> None:
    parses = ParseCache(documents=2)
    a, b, c = "file:///ws/a.py", "file:///ws/b.py", "file:///ws/c.py"
    titles = [[x.title for x in code_actions(a, PY, "python", _params(a, _point(10, 6)), parses=parses, version=1)]
              for _ in range(3)]
    assert titles == [[*BOTH, FILE]] * 3 and parses.parses == 1
    parses.tree(a, 2, PY + "z = 2\n")  # an edit: a new version parses again
    assert parses.parses == 2
    parses.tree(a, 2, PY + "z = 2\n")
    parses.tree(a, 2, PY + "w = 3\n")  # reopened with the same version number, other text
    assert parses.parses == 3
    parses.tree(b, 1, PY)
    parses.tree(c, 1, PY)  # bounded: a is dropped
    parses.tree(a, 2, PY + "w = 3\n")
    assert parses.parses == 6


SCRIPT = '''def restock(item, n):
    return item + n


for name in ("a", "b"):
    print(restock(name, "!"))
'''


def test_run_this_is_the_top_level_block_and_run_file_needs_an_entry_block() -> None:
    uri = "file:///ws/shop.py"
    inside = code_actions(uri, SCRIPT, "python", _params(uri, _point(1, 8)))
    loop = code_actions(uri, SCRIPT, "python", _params(uri, _point(5, 4)))
    assert [a.title for a in inside] == ["Cortex: Explain this"]  # no Run this inside a function, no entry block
    run = next(a for a in loop if a.title == "Cortex: Run this")
    assert run.command is not None and run.command.arguments is not None
    run_argument = run.command.arguments[0]
    assert isinstance(run_argument, dict)
    assert run_argument["range"] == {"start": {"line": 4, "character": 0},
                                                 "end": {"line": 5, "character": 29}}
    main = code_actions(uri, PY, "python", _params(uri, _point(0, 0)))
    run_file = next(a for a in main if a.title == "Cortex: Run file")
    assert run_file.kind == types.CodeActionKind.Source
    assert run_file.command is not None and run_file.command.arguments == [{"uri": uri}]  # the whole file
    quickfix_only = code_actions(uri, PY, "python", types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=_point(0, 0),
        context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.QuickFix])))
    assert quickfix_only == []


def test_fix_this_error_carries_the_diagnostic_and_is_offered_only_where_cortex_may_write() -> None:
    uri = "file:///ws/mod.py"
    diag = types.Diagnostic(range=types.Range(start=types.Position(6, 11), end=types.Position(6, 12)),
                            message="name 'y' is not defined", source="pyright", code="reportUndefinedVariable",
                            severity=types.DiagnosticSeverity.Error)
    actions = code_actions(uri, PY, "python", _params(uri, _point(6, 11), [diag]))
    fix = next(a for a in actions if a.title.startswith("Cortex: Fix this error"))
    assert fix.kind == types.CodeActionKind.QuickFix and fix.diagnostics == [diag]
    assert fix.command is not None and fix.command.command == "cortex.fix"
    assert fix.command.arguments is not None
    argument = fix.command.arguments[0]
    assert isinstance(argument, dict)
    assert argument["uri"] == uri and argument["diagnostic"]["message"] == "name 'y' is not defined"
    assert argument["diagnostic"]["source"] == "pyright" and argument["range"]["start"] == {"line": 6, "character": 11}
    locked = code_actions(uri, PY, "python", _params(uri, _point(6, 11), [diag]), writable=False)
    assert [a.title for a in locked if "error" in a.title] == ["Cortex: Explain this error: name 'y' is not defined"]
