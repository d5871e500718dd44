"""A request that names what is in a source file, not the file: the names it writes as code, the one
file that defines them, and the route that reads it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cortex_lsp.agent.code_mentions import SourceIndex, file_holding, mentioned_names
from cortex_lsp.agent.meaning import Meaning
from cortex_lsp.agent.meaning_route import combine
from cortex_lsp.agent.project_view import ProjectView, scan
from cortex_lsp.agent.router import read_intent, route

TOOLS = ["read_file", "list_dir", "write_file", "calculator", "python_exec", "doc_search"]


@pytest.mark.parametrize(("message", "names"), [
    ("what does the /health endpoint return", ["/health"]),
    ("what does register() give back?", ["register"]),
    ("where is parse_date defined?", ["parse_date"]),
    ("what does the `chunk` function do", ["chunk"]),
    ("what does InvoiceList hold", ["InvoiceList"]),
    ("what is in notes.md and and/or in src/db.py", []),   # file names are files, "and/or" is no route
    ("how do I install it?", []),
])
def test_the_names_a_request_writes_as_code(message: str, names: list[str]) -> None:
    assert mentioned_names(message) == names


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "app.py").write_text('@app.get("/health")\ndef health():\n    return {"status": "ok"}\n')
    (tmp_path / "src" / "routes.py").write_text('def register():\n    return ["/health", "/invoices"]\n')
    (tmp_path / "src" / "main.py").write_text("from routes import register\nregister()\n")
    (tmp_path / "src" / "a.py").write_text("def twice():\n    pass\n")
    (tmp_path / "src" / "b.py").write_text("def twice():\n    pass\n")
    (tmp_path / ".hidden.py").write_text("def secret_thing():\n    pass\n")
    return tmp_path


@pytest.mark.parametrize(("names", "expected"), [
    (["/health"], "app.py"),              # the file that registers the route, not the one listing it
    (["register"], "src/routes.py"),      # the definition, not the call
    (["/invoices"], None),                # only held (in a list): no file defines it
    (["twice"], None),                    # defined twice: no file
    (["secret_thing"], None),             # hidden files are not looked in
    (["nowhere_at_all"], None),
])
def test_the_one_file_that_defines_a_name(project: Path, names: list[str], expected: str | None) -> None:
    assert file_holding(project, scan(project).code_files, names) == expected


def test_what_only_mentions_a_name_or_tests_it_places_nothing(tmp_path: Path) -> None:
    for folder in ("src", "tests", "vendor"):
        (tmp_path / folder).mkdir()
    (tmp_path / "src" / "notes.py").write_text("# see parse_timestamp in utils\nimport utils\n")
    (tmp_path / "tests" / "test_api.py").write_text('def test_health(client):\n    client.get("/health")\n')
    (tmp_path / "test_dates.py").write_text("def parse_date():\n    pass\n")
    (tmp_path / "vendor" / "server.py").write_text('@app.get("/health")\ndef health():\n    pass\n')
    files = scan(tmp_path).code_files
    assert not any(f.startswith("vendor/") for f in files)
    for name in ("parse_timestamp", "/health", "parse_date"):
        assert file_holding(tmp_path, files, [name]) is None, name


def test_hostile_shapes_stay_bounded(tmp_path: Path) -> None:
    # a long run of underscores, blank lines before a name, a FIFO swapped in after the scan: each is
    # read in linear time, or not at all (a quadratic pattern here took minutes on 256 KB)
    assert mentioned_names("what does a" + "_" * 20000 + "( return?") == []
    (tmp_path / "blank.py").write_text("\n" * 200_000 + "x = 1\n")
    assert file_holding(tmp_path, ["blank.py"], ["missing_name", "other_name"]) is None
    os.mkfifo(tmp_path / "pipe.py")
    assert file_holding(tmp_path, ["pipe.py"], ["some_name"]) is None  # no writer: would block forever


def test_a_named_route_reads_the_file_that_defines_it(project: Path) -> None:
    view = scan(project)
    message = "what does the /health endpoint return"
    meaning = Meaning(route="direct", nearest="data_value", score=-0.12, margin=0.02, runner_up="direct",
                      project=view, code_file=file_holding(project, view.code_files, mentioned_names(message)))
    intent = read_intent(message)
    chosen = combine(route(intent, message=message, available=TOOLS), meaning, intent, message=message,
                     available=TOOLS, exists=lambda name: (project / name).exists())
    assert [(c.tool, c.arguments) for c in chosen.calls] == [("read_file", {"path": "app.py"})]
    # a question about such things in general reads nothing; nor a clear direct reading
    general = "what is a /health endpoint in REST APIs generally?"
    intent = read_intent(general)
    assert combine(route(intent, message=general, available=TOOLS), meaning, intent, message=general,
                   available=TOOLS).calls == ()
    clear = Meaning(route="direct", nearest="direct", score=0.2, margin=0.7, runner_up="read", project=view,
                    code_file="app.py")
    intent = read_intent(message)
    assert combine(route(intent, message=message, available=TOOLS), clear, intent, message=message,
                   available=TOOLS).calls == ()


def test_the_project_view_lists_source_files_two_levels_down(project: Path) -> None:
    assert set(scan(project).code_files) == {"app.py", "src/routes.py", "src/main.py", "src/a.py", "src/b.py"}
    assert ProjectView().code_files == ()


def test_the_index_reads_a_file_again_only_when_it_changed(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import cortex_lsp.agent.code_mentions as code_mentions

    index = SourceIndex()
    files = scan(project).code_files
    assert file_holding(project, files, ["register"], index) == "src/routes.py"
    reads: list[Path] = []
    real = code_mentions.read_text

    def counted(path: Path, limit: int) -> str | None:
        reads.append(path)
        return real(path, limit)

    monkeypatch.setattr(code_mentions, "read_text", counted)
    assert file_holding(project, files, ["register"], index) == "src/routes.py"
    assert reads == []  # nothing changed: nothing read
    (project / "src" / "routes.py").write_text("def routes_of_the_app():\n    return []\n")
    assert file_holding(project, files, ["register"], index) is None  # the definition is gone
    assert file_holding(project, files, ["routes_of_the_app"], index) == "src/routes.py"
    assert reads == [project / "src" / "routes.py"]
