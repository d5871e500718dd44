"""Snippets import the folder's own modules and packages, through the real pool, on every kind of host.

Hosts: ``none`` (``sandbox_isolation: none``), ``landlock`` (``auto`` with no bubblewrap on the
``PATH``: Landlock and seccomp in the worker) and ``bwrap``. What works (a module, a package, relative
and transitive imports, dataclasses, decorators, import loops), what a module can't do (refused as the
same code in the snippet is), what is never served (hidden files, links out, standard-module names,
files over the bounds), the limits, and what a hostile snippet could try with a module object.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from cortex_lsp.config import Settings
from cortex_lsp.tools.sandbox import SandboxPool, SandboxResult
from tests.procs import alive, command_line, cpu_seconds, descendants
from tests.tools.folder_world import build
from tests.waiting import until

ASYNC = pytest.mark.asyncio(loop_scope="module")
MARKER = f"FOLDER-SECRET-{uuid.uuid4().hex}"
TIMEOUT = 4.0


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("folder-imports"), MARKER)


@pytest_asyncio.fixture(loop_scope="module", scope="module", params=["none", "landlock", "bwrap"])
async def pool(request: pytest.FixtureRequest) -> AsyncIterator[SandboxPool]:
    mode = {"none": "none", "landlock": "auto", "bwrap": "bwrap"}[request.param]
    sandbox = SandboxPool(Settings(code_exec_timeout_seconds=TIMEOUT, sandbox_isolation=mode))
    path = os.environ.get("PATH", "")
    if request.param == "landlock":
        os.environ["PATH"] = "/nonexistent"  # no bubblewrap, as far as the plan can tell
    try:
        plan = await sandbox.isolation()
    finally:
        os.environ["PATH"] = path
    if request.param != "none" and plan.boundary != request.param:
        await sandbox.aclose()
        pytest.skip(f"no {request.param} boundary here: {plan.detail}")
    yield sandbox
    await sandbox.aclose()


async def _run(pool: SandboxPool, root: Path, code: str) -> SandboxResult:
    result = await pool.run(code, roots=[root])
    text = f"{result.stdout}{result.stderr}{result.value}{result.error}{result.notes}"
    assert MARKER not in text, f"the secret reached the result: {text[-600:]}"
    assert "SHADOW" not in text and "MAIN BLOCK RAN" not in text, text
    return result


WORKS: list[tuple[str, str, str, str | None]] = [
    # (id, code, stdout, value)
    ("slugify", "from utils import slugify; print(slugify('Hello World 2024'))", "hello-world-2024\n", None),
    ("chunk", "from utils import chunk; print(chunk([1,2,3,4,5,6,7], 3))", "[[1, 2, 3], [4, 5, 6], [7]]\n", None),
    ("package", "from src.db import DATABASE_URL\nprint(DATABASE_URL)", "sqlite:///app.db\n", None),
    ("package-attributes", "import src\n(src.DATABASE_URL, src.db.NAME, src.settings.NAME)", "",
     "('sqlite:///app.db', 'app.db', 'app.db')"),
    ("dotted-import", "import src.sub.deep\nsrc.sub.deep.URL", "", "'sqlite:///app.db#app.db'"),
    ("transitive", "import report\nreport.summary([1, 2, 3])", "",
     "{'chunks': [[1, 2], [3]], 'mean': 2, 'title': 'A B'}"),
    ("dataclass-future-annotations", "from utils import Point\nPoint(1, tags=['a'])", "",
     "Point(x=1, y=0, tags=['a'])"),
    ("module-class-private-attrs", "from utils import Stack\nlen(Stack().push(1).push(2))", "", "2"),
    ("private-name-import", "from utils import _private_helper\n_private_helper()", "", "'private ok'"),
    ("private-name-missing", "import utils\n(getattr(utils, '_missing', 5), hasattr(utils, '_nope'), utils._SEP)", "",
     "(5, False, '-')"),
    ("wraps-in-module", "import report\nreport.title(['x', 'y'])", "", "'X Y'"),
    ("self-import", "import selfref\nselfref.get()", "", "42"),
    ("import-loop", "import loop_a\nloop_a.both()", "", "'ab'"),
    ("module-globals-live", "import counter\ncounter.bump()\ncounter.bump()\ncounter.COUNT", "", "2"),
    ("module-imports-allowed-module", "import uses_json\nuses_json.dump({'a': 1})", "", "'{\"a\": 1}'"),
    ("same-module-object", "import utils\nfrom utils import slugify\nimport report\nutils.slugify is slugify", "",
     "True"),
]


@ASYNC
@pytest.mark.parametrize(("code", "stdout", "value"), [c[1:] for c in WORKS], ids=[c[0] for c in WORKS])
async def test_folder_modules_import_and_run(pool: SandboxPool, root: Path, code: str, stdout: str,
                                             value: str | None) -> None:
    result = await _run(pool, root, code)
    assert result.error is None, result.error
    assert (result.stdout, result.value) == (stdout, value)


@ASYNC
async def test_a_standard_module_name_in_the_folder_is_not_used(pool: SandboxPool, root: Path) -> None:
    result = await _run(pool, root, "import json, math\nprint(json.dumps([1]), math.pi > 3.1)")
    assert result.stdout == "[1] True\n", result
    assert any(n.startswith("json.py in the folder was not used") for n in result.notes), result.notes
    assert any(n.startswith("math/__init__.py in the folder was not used") for n in result.notes)
    refused = await _run(pool, root, "import cortex_lsp")
    assert refused.refused and "not allowed" in str(refused.error)


REFUSED_IN_MODULE: list[tuple[str, str, str, str]] = [
    # (id, the import, the same code as a snippet, the reason both share)
    ("imports-flask", "import app", "import flask", "import of 'flask' is not allowed in the sandbox"),
    ("imports-os", "import osuser", "import os\nprint(os.getcwd())", "import of 'os' is not allowed in the sandbox"),
    ("private-name-escape", "import escape_enum",
     "import enum\nclass E(enum.Enum):\n    A = 1\nconvert = getattr(E, '_convert_')",
     "access to '_convert_' is not allowed in the sandbox"),
    ("frames-by-name", "import frames",
     "def gen():\n    yield 1\nframe = getattr(gen(), 'gi_' + 'frame')", "access to 'gi_frame' is not allowed"),
    ("dunder-name", "import dunder_file", "HERE = __file__", '"__file__" is an invalid variable name'),
    ("module-getattr", "import module_getattr", "if True:\n    def __getattr__(name):\n        return name",
     '"__getattr__" is an invalid variable name'),
    ("guard-name", "import hook_names", "_getattr_ = None", '"_getattr_" is an invalid variable name'),
]


@ASYNC
@pytest.mark.parametrize(("importing", "same", "reason"), [c[1:] for c in REFUSED_IN_MODULE],
                         ids=[c[0] for c in REFUSED_IN_MODULE])
async def test_a_module_is_refused_what_the_snippet_is_refused(pool: SandboxPool, root: Path, importing: str,
                                                               same: str, reason: str) -> None:
    as_module = await _run(pool, root, importing)
    as_snippet = await _run(pool, root, same)
    assert as_snippet.refused and reason in str(as_snippet.error), as_snippet
    assert as_module.refused and reason in str(as_module.error), as_module
    assert str(as_module.error).startswith("Refused by the sandbox"), as_module.error


@ASYNC
async def test_a_module_reading_outside_the_folder_is_refused_like_the_snippet(pool: SandboxPool, root: Path
                                                                               ) -> None:
    outside = str(root.parent / "secret.txt")
    for target in (outside, "/etc/passwd", ".env"):
        as_module = await _run(pool, root, f"import opener\nopener.read({target!r})")
        as_snippet = await _run(pool, root, f"open({target!r}).read()")
        assert as_module.refused and as_snippet.refused, (as_module, as_snippet)
        assert str(as_module.error).startswith("Refused by the sandbox (opener.py, line 2): Access denied")
        assert str(as_module.error).split(": ", 1)[1] == str(as_snippet.error).split(": ", 1)[1]
    inside = await _run(pool, root, "import opener\nopener.read('src/settings.py')")
    assert inside.value == repr("NAME = 'app.db'\n"), inside


@ASYNC
@pytest.mark.parametrize(("code", "why"), [
    ("import outside_link", "outside the open folder (through a link)"),
    ("import linkpkg", "outside the open folder (through a link)"),
    ("import hidden_link", "hidden or private entry"),
    ("import env_link", "hidden or private entry"),
    ("from pkg_with_hidden import inner", "hidden or private entry"),
    ("import hardlinked", "other hard links"),
    ("import big", "the limit is 200000"),
    ("import nopkg", "no __init__.py"),
    ("import chain0", "more than 32 modules"),
    ("import heavy_all", "over 600000 bytes together"),
    ("import venvmod", "import of 'venvmod' is not allowed"),
    ("import secret", "import of 'secret' is not allowed"),
])
async def test_what_the_folder_cant_serve_is_refused_with_the_reason(pool: SandboxPool, root: Path, code: str,
                                                                     why: str) -> None:
    result = await _run(pool, root, code)
    assert result.refused and why in str(result.error), result


@ASYNC
async def test_import_errors_behave_like_python(pool: SandboxPool, root: Path) -> None:
    early = await _run(pool, root, "import early_a")
    assert "ImportError" in str(early.error) and "early_" in str(early.error), early
    missing = await _run(pool, root, "import src.nothing")
    assert "ModuleNotFoundError: No module named 'src.nothing' in the folder" in str(missing.error), missing
    too_far = await _run(pool, root, "import src.sub.too_far")
    assert too_far.refused and "relative imports are not allowed" in str(too_far.error), too_far
    raised = await _run(pool, root, "import calls_raiser")
    assert raised.stdout == "raiser ran\n", raised  # run once, not again on the second import
    assert "raised an error when it ran earlier in this run" in str(raised.error), raised
    traceback = await _run(pool, root, "import raiser")
    assert "raiser.py, line 2, in <module>" in str(traceback.error) and "ValueError: boom" in str(traceback.error)
    syntax = await _run(pool, root, "import syntax_error")
    assert "syntax_error.py (syntax_error) can't be imported: SyntaxError" in str(syntax.error), syntax
    relative = await _run(pool, root, "from . import utils")
    assert relative.refused and "relative imports are not allowed" in str(relative.error)


@ASYNC
@pytest.mark.parametrize(("module", "why"), [
    ("deep_attr", "line 2: a dotted name of more than 100 parts"),
    ("deep_sum", "line 1: the code is nested too deeply for the sandbox"),
    ("long_import", "line 1: a dotted name of more than 100 parts"),
])
async def test_a_module_past_pythons_nesting_is_refused_with_where(pool: SandboxPool, root: Path, module: str,
                                                                   why: str) -> None:
    """The worker once ended on these with no reply (a RecursionError past the compile's SyntaxError)."""
    result = await _run(pool, root, f"import {module}\nprint({module}.X)")
    assert result.refused, result
    assert str(result.error).startswith(f"Refused by the sandbox (line 1): {module}.py ({module}) can't be imported: "
                                        f"{why}"), result.error


@ASYNC
async def test_a_name_too_long_is_refused_alone(pool: SandboxPool, root: Path) -> None:
    """A name part past what a file name can be made the search fail whole (every folder module of the
    run gone); a dotted name too long for the parser made the server hold gigabytes."""
    long_part = "a" * 300
    result = await _run(pool, root, f"import utils\nimport {long_part}")
    assert result.refused and f"'{long_part[:60]}' (... 300 characters) is not allowed" in str(result.error), result
    assert "'utils'" not in str(result.error), result.error
    dotted = await _run(pool, root, "import " + ".".join(["a"] * 40_000))
    assert dotted.refused and "a dotted name of more than 100 parts" in str(dotted.error), dotted


@ASYNC
async def test_from_import_of_a_name_the_module_lacks(pool: SandboxPool, root: Path) -> None:
    result = await _run(pool, root, "from utils import no_such_name")
    assert "ImportError: cannot import name 'no_such_name' from 'utils'" in str(result.error), result
    private = await _run(pool, root, "from utils import _missing")
    assert "ImportError: cannot import name '_missing'" in str(private.error), private


@ASYNC
async def test_the_limits_hold_inside_a_module(pool: SandboxPool, root: Path) -> None:
    spin = await _run(pool, root, "import spin")
    assert str(spin.error).startswith(("Stopped: the code ran longer", "Stopped: the code used more than its CPU"))
    chatty = await _run(pool, root, "import chatty")
    assert "output limit reached" in str(chatty.error) and len(chatty.stdout) <= 100_000, chatty.error
    after = await _run(pool, root, "from utils import slugify\nslugify('still works')")
    assert after.value == "'still-works'", after


HOSTILE: list[tuple[str, str]] = [
    ("module-dict", "import utils\nprint(getattr(utils, '__dict__'))"),
    ("module-builtins", "import utils\nprint(getattr(utils, '__builtins__'))"),
    ("module-spec", "import utils\nprint(getattr(utils, '__spec__'))"),
    ("module-loader", "import utils\nprint(getattr(utils, '__loader__'))"),
    ("module-file", "import utils\nprint(getattr(utils, '__file__'))"),
    ("function-globals", "import utils\nprint(getattr(utils.slugify, '__globals__'))"),
    ("guard-hook-on-module", "import utils\nprint(getattr(utils, '_getattr_'))"),
    ("print-collector-on-module", "import utils\nprint(getattr(utils, '_print'))"),
    ("write-module", "import utils\nutils.slugify = len"),
    ("setattr-module", "import utils\nsetattr(utils, 'chunk', len)"),
    ("format-walk", "import utils\nprint('{0.__dict__}'.format(utils))"),
    ("from-import-dunder", "from utils import __builtins__"),
    ("star-import", "from utils import *"),
]


@ASYNC
@pytest.mark.parametrize("code", [c[1] for c in HOSTILE], ids=[c[0] for c in HOSTILE])
async def test_a_module_object_gives_nothing_away(pool: SandboxPool, root: Path, code: str) -> None:
    result = await _run(pool, root, code)
    assert result.refused, result
    assert "<built-in function" not in result.stdout and "'__builtins__'" not in result.stdout, result.stdout


@ASYNC
async def test_what_the_snippet_can_see_of_a_module(pool: SandboxPool, root: Path) -> None:
    result = await _run(pool, root, "import utils\nprint(dir(utils))\nimport copy\ncopy.copy(utils)")
    names = result.stdout
    assert "slugify" in names and "REGISTRY" in names and "_getattr_" not in names and "__builtins__" not in names
    assert "TypeError" in str(result.error), result.error  # modules can't be copied


@ASYNC
async def test_nothing_a_run_does_to_a_module_reaches_the_next_run(pool: SandboxPool, root: Path) -> None:
    first = await _run(pool, root, "import utils, counter\nutils.REGISTRY['x'] = 'poison'\ncounter.bump()\n"
                                   "(utils.REGISTRY, counter.COUNT)")
    assert first.value == "({'x': 'poison'}, 1)", first
    second = await _run(pool, root, "import utils, counter\n(utils.REGISTRY, counter.COUNT)")
    assert second.value == "({}, 0)", second
    json_first = await _run(pool, root, "import json\njson.dumps = len")
    assert json_first.refused
    json_after = await _run(pool, root, "import uses_json\nuses_json.dump([1])")
    assert json_after.value == "'[1]'", json_after


# its own event loop: the module's ``pool`` (alive between its parameters) runs on the module's loop, and
# a waiting worker it starts while this test runs would be one more process below this one
@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["none", "bwrap"])
async def test_a_cancelled_run_ends_its_worker_while_a_module_runs(root: Path, mode: str) -> None:
    sandbox = SandboxPool(Settings(code_exec_timeout_seconds=30, sandbox_isolation=mode), keep_warm=False)
    plan = await sandbox.isolation()
    if mode == "bwrap" and plan.bwrap is None:
        pytest.skip(f"bubblewrap is not usable here: {plan.detail}")
    before = {p for p in descendants(os.getpid()) if alive(p)}
    try:
        # a waiting worker (started and idle), so the CPU it uses from now on is the run's
        await sandbox.prewarm([root])
        await sandbox.wait_ready()
        workers = {p for p in descendants(os.getpid()) if alive(p)} - before
        assert workers, "no waiting worker was started"
        idle = sum(cpu_seconds(p) for p in workers)
        task = asyncio.ensure_future(sandbox.run("import spin", roots=[root]))
        # until the worker is running the module (``while True: pass``): it has used a CPU-second since it
        # was handed the snippet, which reading the request and loading one module never take
        await until(lambda: task.done() or sum(cpu_seconds(p) for p in workers) - idle >= 1.0, within=60,
                    what="the worker to spin in the module")
        assert not task.done(), task.result()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        try:
            await until(lambda: not {p for p in descendants(os.getpid()) if alive(p)} - before,
                        what="the worker processes to end after the cancel")
        except AssertionError as exc:
            left = {p: command_line(p) for p in descendants(os.getpid()) if alive(p) and p not in before}
            raise AssertionError(f"{exc}; still running: {left} (the run's workers: {sorted(workers)})") from None
    finally:
        await sandbox.aclose()
