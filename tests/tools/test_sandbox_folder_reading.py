"""Finding and reading the folder's modules (server side), compiling them (the worker's policy), and the
runnability check that knows about them. No worker process here (see test_sandbox_folder_imports.py)."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest

from cortex_lsp.agent.runnability import FOLDER_ROOTS, cannot_run_reply
from cortex_lsp.tools.sandbox.folder_loader import compile_folder_modules
from cortex_lsp.tools.sandbox.folder_modules import gather
from cortex_lsp.tools.sandbox.policy import (
    MAX_FOLDER_MODULES,
    ImportScope,
    compile_module,
    resolve_relative,
    workspace_name_refusal,
)
from cortex_lsp.tools.sandbox.restricted import run_snippet
from tests.tools.folder_world import build

MARKER = f"FOLDER-SECRET-{uuid.uuid4().hex}"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("folder"), MARKER)


def test_a_module_and_what_it_imports_are_read(root: Path) -> None:
    found = gather("import report\nprint(report.summary([1, 2, 3]))", [root])
    assert sorted(found.modules) == ["report", "stats_helpers", "utils"]
    assert found.modules["utils"].path == "utils.py" and not found.modules["utils"].is_package
    assert found.unavailable == {} and found.notes == []
    request = found.request()
    assert {m["name"] for m in request["modules"]} == {"report", "stats_helpers", "utils"}
    assert all(MARKER not in m["source"] for m in request["modules"])


def test_a_package_its_submodules_and_relative_imports(root: Path) -> None:
    found = gather("from src.sub.deep import URL", [root])
    assert sorted(found.modules) == ["src", "src.db", "src.settings", "src.sub", "src.sub.deep"]
    assert found.modules["src"].is_package and found.modules["src"].path == "src/__init__.py"
    # from X import a: a is looked up as a submodule only where the folder has one
    assert sorted(gather("from src import settings", [root]).modules) == ["src", "src.db", "src.settings"]


def test_a_package_is_found_before_a_module_and_the_first_folder_wins(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    (one / "dup").mkdir(parents=True)
    (one / "dup" / "__init__.py").write_text("WHERE = 'package'\n")
    (one / "dup.py").write_text("WHERE = 'module'\n")
    two.mkdir()
    (two / "dup.py").write_text("WHERE = 'second folder'\n")
    (two / "only_two.py").write_text("X = 2\n")
    found = gather("import dup, only_two", [one, two])
    assert found.modules["dup"].is_package and "package" in found.modules["dup"].source
    assert found.modules["only_two"].path == "only_two.py"


@pytest.mark.parametrize(("code", "name", "why"), [
    ("import outside_link", "outside_link", "outside the open folder"),
    ("import linkpkg", "linkpkg", "outside the open folder"),
    ("import hidden_link", "hidden_link", "hidden or private entry"),
    ("import env_link", "env_link", "hidden or private entry"),
    ("from pkg_with_hidden import inner", "pkg_with_hidden.inner", "hidden or private entry"),
    ("import hardlinked", "hardlinked", "other hard links"),
    ("import big", "big", "the limit is 200000"),
    ("import nopkg", "nopkg", "no __init__.py"),
])
def test_what_the_guards_refuse_is_unavailable_with_the_reason(root: Path, code: str, name: str, why: str) -> None:
    found = gather(code, [root])
    assert name in found.unavailable and why in found.unavailable[name], found.unavailable
    assert name not in found.modules
    assert MARKER not in str(found.request())


def test_hidden_files_and_folders_have_no_module_name(root: Path) -> None:
    for code in ("import venvmod", "import secret", "from lib import venvmod"):
        found = gather(code, [root])
        assert found.modules == {} and MARKER not in str(found.request()), code


def test_standard_and_internal_names_are_never_read_from_the_folder(root: Path) -> None:
    found = gather("import json, math, cortex_lsp\nimport uses_json", [root])
    assert sorted(found.modules) == ["uses_json"]
    assert any(n.startswith("json.py in the folder was not used: json is a standard module") for n in found.notes)
    assert any(n.startswith("math/__init__.py in the folder was not used") for n in found.notes)
    assert any(n.startswith("cortex_lsp.py in the folder was not used") for n in found.notes)
    assert workspace_name_refusal("os") and workspace_name_refusal("RestrictedPython")
    assert workspace_name_refusal("utils") is None and workspace_name_refusal("src.db") is None
    assert workspace_name_refusal("utils.__init__") and workspace_name_refusal("ünï")


def test_the_count_and_byte_bounds_hold(root: Path) -> None:
    chain = gather("import chain0", [root])
    assert len(chain.modules) == MAX_FOLDER_MODULES
    assert f"chain{MAX_FOLDER_MODULES}" in chain.unavailable
    assert "more than 32 modules" in chain.unavailable[f"chain{MAX_FOLDER_MODULES}"]
    heavy = gather("import heavy_all", [root])
    assert sorted(heavy.modules) == ["heavy0", "heavy1", "heavy2", "heavy_all"]
    assert "over 600000 bytes together" in heavy.unavailable["heavy3"]


def test_a_module_importing_itself_or_a_loop_is_read_once(root: Path) -> None:
    assert sorted(gather("import selfref", [root]).modules) == ["selfref"]
    assert sorted(gather("import loop_a", [root]).modules) == ["loop_a", "loop_b"]


def test_relative_names() -> None:
    assert resolve_relative("src", 1, "db") == "src.db"
    assert resolve_relative("src.sub", 2, "") == "src"
    assert resolve_relative("src.sub", 3, "x") is None
    assert resolve_relative("", 1, "x") is None


def test_a_module_is_compiled_like_a_snippet_without_its_main_block() -> None:
    scope = ImportScope(folder=frozenset({"utils"}), package="")
    source = "import utils\n__all__ = ['x']\nx = 1\nif __name__ == '__main__':\n    import os\n"
    ok = compile_module(source, "<f>", scope)
    assert ok.code is not None and ok.error is None
    refused = compile_module("import os\n", "<f>", scope)
    assert refused.refused and "import of 'os' is not allowed" in str(refused.error)
    relative = compile_module("from . import x\n", "<f>", scope)
    assert relative.refused and "relative imports are not allowed" in str(relative.error)
    assert compile_module("from . import x\n", "<f>", ImportScope(folder=frozenset({"pkg"}), package="pkg")).code
    for source in ("HERE = __file__\n", "_getattr_ = None\n", "if True:\n    def __getattr__(n):\n        return n\n"):
        assert compile_module(source, "<f>", scope).refused, source


def test_the_worker_checks_the_modules_again() -> None:
    modules = [
        {"name": "json", "path": "json.py", "source": "X = 1", "package": False},
        {"name": "RestrictedPython", "path": "RestrictedPython.py", "source": "X = 1", "package": False},
        {"name": "big", "path": "big.py", "source": "#" * 200_001, "package": False},
        {"name": "fine", "path": "fine.py", "source": "X = 1", "package": False},
        {"name": "odd", "path": 3, "source": "X = 1", "package": False},
    ]
    compiled, refused = compile_folder_modules(modules, {"gone": "a reason", 5: "x"})
    assert sorted(compiled) == ["fine"] and compiled["fine"].code is not None
    assert sorted(refused) == ["RestrictedPython", "big", "gone", "json"]


def test_folder_modules_never_enter_sys_modules(root: Path) -> None:
    code = "import utils, src.db, selfref\nprint(utils.slugify('A b'), src.db.DATABASE_URL, selfref.get())"
    outcome = run_snippet(code, [root], **gather(code, [root]).request())
    assert outcome.error is None and outcome.stdout == "a-b sqlite:///app.db 42\n", outcome
    assert not {"utils", "src", "src.db", "selfref"} & set(sys.modules)


# -- runnability ---------------------------------------------------------------------------------------
def test_runnability_knows_the_folders_modules(root: Path) -> None:
    for code in ("from utils import slugify; print(slugify('Hello World 2024'))",
                 "from utils import chunk; print(chunk([1,2,3,4,5,6,7], 3))",
                 "from src.db import DATABASE_URL\nprint(DATABASE_URL)", "import report"):
        assert cannot_run_reply(code, [root]) is None, code
        reply = cannot_run_reply(code)
        assert reply is not None and "a package the sandbox does not have" in reply  # no folder given


def test_runnability_says_which_module_cant_run_and_why(root: Path) -> None:
    reply = cannot_run_reply("import app\napp.run()", [root])
    assert reply is not None
    assert "it imports app (app.py in the folder), which imports flask, a package the sandbox does not have" in reply
    assert "pip install flask" in reply and "it imports app, a package" not in reply
    osuser = cannot_run_reply("import osuser", [root])
    assert osuser is not None and "osuser.py in the folder), which imports os, which the sandbox does not allow" \
        in osuser
    dunder = cannot_run_reply("import dunder_file", [root])
    assert dunder is not None and "__file__" in dunder
    link = cannot_run_reply("import outside_link", [root])
    assert link is not None and "it imports outside_link from the folder, which the sandbox can't use" in link
    assert MARKER not in link


def test_runnability_reads_the_runs_folders_when_none_are_given(root: Path) -> None:
    token = FOLDER_ROOTS.set((root,))
    try:
        assert cannot_run_reply("import utils") is None
    finally:
        FOLDER_ROOTS.reset(token)
    assert cannot_run_reply("import utils") is not None


def test_runnability_names_a_submodule_the_folder_cant_serve(root: Path) -> None:
    reply = cannot_run_reply("from pkg_with_hidden import inner", [root])
    assert reply is not None and "pkg_with_hidden.inner from the folder" in reply and "hidden" in reply
