"""The server's side of the sandbox stays small whatever the code or the folder holds: the folder-module
search (dotted names, lookups), the runnability check's text scans, names the file system can't take,
links out of the folder (the answer never depends on what they point at), and code nested past
Python's own limits. No worker process here; the pool tests are in test_sandbox_folder_imports.py."""

from __future__ import annotations

import ast
import os
import resource
import subprocess
import sys
import textwrap
import tracemalloc
from pathlib import Path

import pytest

from cortex_lsp.agent.runnability import cannot_run_reply
from cortex_lsp.tools.sandbox import audit
from cortex_lsp.tools.sandbox.allowlist import RefusedImport
from cortex_lsp.tools.sandbox.folder_loader import FolderLoader, FolderModule
from cortex_lsp.tools.sandbox.folder_modules import MAX_LOOKUPS, gather, imported_names
from cortex_lsp.tools.sandbox.policy import (
    MAX_DOTTED_PARTS,
    MAX_MODULE_NAME_CHARS,
    MAX_MODULE_NAME_PARTS,
    ImportScope,
    compile_module,
    compile_snippet,
)

ROOT_OF_REPO = Path(__file__).resolve().parents[2]


def _dotted(parts: int) -> str:
    return ".".join(["a"] * parts)


def _peak_bytes(func: object, *args: object) -> int:
    tracemalloc.start()
    try:
        func(*args)  # type: ignore[operator]
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_long_dotted_import_costs_the_search_little_memory(tmp_path: Path) -> None:
    """Python's parser holds every prefix of an import's dotted name, and the search kept each prefix
    too: memory quadratic in the parts (30 000 parts: a gigabyte). Code with a dotted name past the bound
    is not parsed, and each name yields a bounded number of bounded names."""
    (tmp_path / "utils.py").write_text(f"import {_dotted(5000)}\nX = 1\n")
    assert _peak_bytes(gather, "import utils\nprint(utils.X)", [tmp_path]) < 4_000_000
    assert _peak_bytes(gather, f"import {_dotted(5000)}", [tmp_path]) < 4_000_000
    assert _peak_bytes(cannot_run_reply, f"import {_dotted(5000)}", [tmp_path]) < 4_000_000
    found = gather("import utils", [tmp_path])
    assert sorted(found.modules) == ["utils"]  # read; its own imports are left for the worker to refuse
    names = list(imported_names(ast.parse(f"import {_dotted(MAX_DOTTED_PARTS - 1)}\nfrom b import c"), None))
    assert len(names) <= MAX_MODULE_NAME_PARTS + 2
    assert all(len(n) <= MAX_MODULE_NAME_CHARS for n in names)
    assert "b" in names and "b.c" in names


def test_many_names_are_looked_up_up_to_the_bound(tmp_path: Path) -> None:
    """Each distinct name costs a few ``stat`` calls: past the bound, names are neither looked up nor
    kept. The first ones are still found."""
    (tmp_path / "m0.py").write_text("X = 0\n")
    (tmp_path / "late.py").write_text("X = 1\n")
    code = "import m0\n" + "\n".join(f"import n{i}" for i in range(MAX_LOOKUPS * 20)) + "\nimport late\n"
    found = gather(code, [tmp_path])
    assert sorted(found.modules) == ["m0"]


def test_a_name_the_file_system_cant_take_is_not_found_by_itself(tmp_path: Path) -> None:
    (tmp_path / "utils.py").write_text("X = 1\n")
    long_part = "a" * 300  # past a file name's 255 bytes: stat raises ENAMETOOLONG
    found = gather(f"import utils\nimport {long_part}\nimport b{'c' * 252}\n", [tmp_path])
    assert sorted(found.modules) == ["utils"]
    reply = cannot_run_reply(f"import {long_part}", [tmp_path])
    assert reply is not None and "The sandbox can't run this code" in reply
    assert cannot_run_reply("import utils\nprint(utils.X)", [tmp_path]) is None


def _links_out(tmp_path: Path) -> Path:
    """A folder whose links lead out: some to what exists outside, some to what does not."""
    outside = tmp_path / "outside"
    (outside / "pkg").mkdir(parents=True)
    (outside / "pkg" / "__init__.py").write_text("SECRET = 1\n")
    (outside / "plain").mkdir()
    (outside / "mod.py").write_text("SECRET = 1\n")
    root = tmp_path / "ws"
    root.mkdir()
    (root / "there.py").symlink_to(outside / "mod.py")
    (root / "gone.py").symlink_to(outside / "missing.py")
    (root / "pkgthere").symlink_to(outside / "pkg")
    (root / "pkggone").symlink_to(outside / "missing_pkg")
    (root / "dirthere").symlink_to(outside / "plain")
    (root / "dirgone").symlink_to(outside / "missing_dir")
    (root / "json.py").symlink_to(outside / "mod.py")
    (root / "math.py").symlink_to(outside / "missing.py")
    return root


@pytest.mark.parametrize(("there", "gone"), [("there", "gone"), ("pkgthere", "pkggone"), ("dirthere", "dirgone")])
def test_a_link_out_gets_the_same_answer_whether_its_target_exists(tmp_path: Path, there: str, gone: str) -> None:
    root = _links_out(tmp_path)
    one, other = gather(f"import {there}", [root]), gather(f"import {gone}", [root])
    assert one.unavailable[there].replace(there, "X") == other.unavailable[gone].replace(gone, "X")
    assert "outside the open folder (through a link)" in one.unavailable[there]
    assert one.modules == other.modules == {}
    reply_one, reply_other = cannot_run_reply(f"import {there}", [root]), cannot_run_reply(f"import {gone}", [root])
    assert reply_one is not None and reply_other is not None
    assert reply_one.replace(there, "X") == reply_other.replace(gone, "X")


def test_a_standard_name_linked_out_is_noted_whether_its_target_exists(tmp_path: Path) -> None:
    root = _links_out(tmp_path)
    notes = gather("import json, math", [root]).notes
    assert any(n.startswith("json.py in the folder was not used") for n in notes), notes
    assert any(n.startswith("math.py in the folder was not used") for n in notes), notes


NESTED = [
    ("attribute-chain", "import json\nX = json" + ".a" * 3000 + "\n", 2),
    ("long-sum", "X = 1\nY = " + "+".join(["1"] * 5000) + "\n", 2),
    ("deep-unary", "X = 1\n\nY = " + "-" * 3000 + "1\n", 3),
    ("dotted-import", "import " + _dotted(MAX_DOTTED_PARTS + 1) + "\n", 1),
]


@pytest.mark.parametrize(("source", "line"), [c[1:] for c in NESTED], ids=[c[0] for c in NESTED])
def test_code_past_pythons_nesting_is_refused_with_its_line(source: str, line: int) -> None:
    module = compile_module(source, "<folder>/utils.py", ImportScope())
    assert module.code is None and module.refused, module
    assert str(module.error).startswith(f"line {line}: "), module.error
    snippet = compile_snippet(source)
    assert snippet.code is None and snippet.refused, snippet
    assert str(snippet.error).startswith(f"Refused by the sandbox: line {line}: "), snippet.error
    assert cannot_run_reply(source, []) is not None


def test_a_from_import_gets_only_what_the_module_bound() -> None:
    """``from utils import x`` is Python's IMPORT_FROM on the module the loader returns: a name it lacks
    would be looked up in ``sys.modules`` under the module's ``__name__``. The loader refuses a name the
    module did not bind before that, whatever ``__name__`` says."""
    code = compile("__name__ = 'cortex_lsp.tools.sandbox'\nX = 1\n", "<folder>/utils.py", "exec")
    entry = FolderModule(name="utils", path="utils.py", is_package=False, filename="<folder>/utils.py",
                         source="", code=code)
    loader = FolderLoader({"utils": entry}, {}, lambda package: {})
    assert sys.modules["cortex_lsp.tools.sandbox.audit"] is audit  # what a fallback by __name__ would give

    def importer(name: str, globals: object = None, locals: object = None, fromlist: tuple[str, ...] = (),
                 level: int = 0) -> object:
        return loader.import_(name, fromlist or ())

    namespace: dict[str, object] = {"__builtins__": {"__import__": importer}}
    exec(compile("from utils import X", "<sandbox>", "exec"), namespace)
    assert namespace["X"] == 1
    with pytest.raises(ImportError) as caught:
        exec(compile("from utils import audit", "<sandbox>", "exec"), namespace)
    assert "cannot import name 'audit'" in str(caught.value)
    assert namespace.get("audit") is not audit
    with pytest.raises(RefusedImport):
        loader.import_(_dotted(MAX_MODULE_NAME_PARTS + 1), ())


# -- the text scans, in a process with a CPU-time cap: a quadratic scan is killed there -------------------
SCANS = textwrap.dedent('''
    from cortex_lsp.agent import runnability as r
    reply = r.cannot_run_reply("\\n" * 150_000 + "(", [])
    assert reply is None or "sandbox" in reply
    assert r.cannot_run_reply(" \\n" * 90_000 + "import os(", []) is not None
    assert r.extract_code("```a\\n" * 30_000) is None
    assert r.extract_code("~~~~\\n" * 30_000 + "```python\\nprint(1)\\n```\\n") == "print(1)"
    assert r.inline_code("run: " + "for " * 40_000) is None
    r.inline_code("run: " + "x(1) " * 30_000)
    r.inline_code("x: " * 60_000)
    assert r._TRAILING_WORDS.sub("", "x" + " " * 150_000 + "x") == "x" + " " * 150_000 + "x"
    print("SCANNED")
''')


def _capped(seconds: int) -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds))


def test_the_text_scans_stay_linear() -> None:
    """Runs of blank lines, fences never closed, ``for`` without ``in``, runs of spaces: each scan once
    took time quadratic (or worse) in them, freezing the server. Here the whole set must finish in a
    process capped at 60 CPU seconds (linear scans take well under one)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT_OF_REPO)}
    done = subprocess.run([sys.executable, "-c", SCANS], capture_output=True, text=True, env=env, check=False,
                          preexec_fn=lambda: _capped(60), timeout=600)
    assert done.returncode == 0 and "SCANNED" in done.stdout, (done.returncode, done.stderr[-2000:])


def test_a_search_nobody_waits_for_stops(tmp_path: Path) -> None:
    """The pool sets ``stop`` when its run is cancelled (a thread can't be cancelled): the search ends
    at its next name, with a note."""
    import threading

    (tmp_path / "utils.py").write_text("X = 1\n")
    stop = threading.Event()
    stop.set()
    found = gather("import utils", [tmp_path], stop)
    assert found.modules == {} and any("took too long" in n for n in found.notes), found
    assert sorted(gather("import utils", [tmp_path], threading.Event()).modules) == ["utils"]
