"""WriteGrant.check: exactly the named files, replace only when named for it, a safe unnamed file."""

from __future__ import annotations

from pathlib import Path

import pytest

from cortex_lsp.guards.root_choice import relative_to_roots
from cortex_lsp.intent.grants import NO_GRANT, WriteGrant, path_key, unsafe_name
from cortex_lsp.intent.intent import parse_intent


def test_a_named_create_allows_only_that_new_file() -> None:
    grant = parse_intent("Save the summary to summary.md").write_grant
    assert grant.check("summary.md", exists=False) is None
    assert grant.check("./summary.md", exists=False) is None
    assert grant.check("Summary.MD", exists=False) is not None  # another file on a case-sensitive disk
    assert grant.check("conftest.py", exists=False) is not None
    assert grant.check("docs/summary.md", exists=False) is not None
    assert grant.check("summary.md", exists=True) is not None  # create is not replace


def test_a_replace_allows_only_the_named_existing_file() -> None:
    grant = parse_intent("Update existing.txt with a one-line summary").write_grant
    assert grant.check("existing.txt", exists=True) is None
    reason = grant.check("app.py", exists=True)
    assert reason is not None and "existing.txt" in reason
    assert grant.check("new.txt", exists=False) is not None


@pytest.mark.parametrize(
    "name",
    [
        "conftest.py", "sitecustomize.py", "usercustomize.py", "setup.py", "__init__.py", "evil.pth",
        ".bashrc", ".env", ".github/workflows/ci.yml", ".gitlab-ci.yml", "noxfile.py", "tox.ini",
        "pyproject.toml", "setup.cfg", "Makefile", "Dockerfile", "run.sh", "json.py", "os.py",
        "bin/tool.md", "notes.md.py", "README", "test_evil.py", "evil_test.py", "helper.py", "page.html",
        "package.json",
    ],
)
def test_an_unnamed_save_never_picks_an_executable_or_config_name(name: str) -> None:
    grant = parse_intent("Save it").write_grant
    assert grant.unnamed_create
    assert unsafe_name(name) is not None
    assert grant.check(name, exists=False) is not None


def test_an_unnamed_save_allows_one_plain_new_file() -> None:
    grant = parse_intent("Save the answer").write_grant
    assert grant.check("answer.md", exists=False) is None
    assert grant.check("result/answer.txt", exists=False) is None
    assert grant.check("answer.md", exists=True) is not None
    assert grant.check("second.md", exists=False, written=["answer.md"]) is not None
    assert grant.check("answer.md", exists=False, written=["answer.md"]) is None


def test_no_grant_refuses_everything_and_says_so() -> None:
    assert NO_GRANT.empty
    reason = NO_GRANT.check("a.md", exists=False)
    assert reason is not None and "did not ask" in reason
    assert "none" in NO_GRANT.describe()


def test_describe_names_the_files() -> None:
    grant = WriteGrant(create=frozenset({"a.md"}), replace=frozenset({"b.txt"}))
    text = grant.describe()
    assert "create a.md" in text and "replace b.txt" in text
    assert grant.named("./a.md") and not grant.named("c.md")


def test_path_helpers(tmp_path: Path) -> None:
    assert path_key(".\\Docs\\A.md") == "docs/a.md"
    (tmp_path / "d").mkdir()
    assert relative_to_roots(tmp_path / "d" / "x.md", [tmp_path]) == "d/x.md"
    assert relative_to_roots(Path("/elsewhere/x.md"), [tmp_path]) is None
