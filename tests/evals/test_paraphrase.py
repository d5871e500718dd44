"""The paraphrase set's loader and scoring: the set is whole, cases become checks, a run's route is read
from the tools it called."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals.paraphrase import HERE, ROUTES, as_case, decided, load, same_route, workspace_files


def test_the_dev_set_loads_with_its_workspace() -> None:
    cases = load(HERE / "routes_dev.tsv")
    assert len(cases) >= 80 and {c.route for c in cases} <= set(ROUTES)
    files = workspace_files()
    assert {"config.json", "sales.csv", "utils.py", "app.py", "docs/release.md", "src/main.py"} <= set(files)
    assert any("\n" in c.message for c in cases), "\\n in a message is a line break"


def test_cases_become_checks() -> None:
    cases = {c.route: c for c in load(HERE / "routes_dev.tsv")}
    write = as_case(cases["write_given"], {})
    assert write.file_contains and not write.turns[0].checks.contains
    read = as_case(cases["read"], {})
    assert read.turns[0].checks.contains == (cases["read"].expect,)


def test_a_bad_row_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.tsv"
    bad.write_text("message\troute\texpect\nhello\tteleport\tx\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.tsv:2"):
        load(bad)


@pytest.mark.parametrize(("calls", "edits", "route"), [
    ([], 0, "direct"),
    ([{"tool": "read_file"}], 0, "read"),
    ([{"tool": "list_dir"}, {"tool": "read_file"}], 0, "read"),
    ([{"tool": "write_file"}], 1, "write_given"),
    ([{"tool": "python_exec"}], 0, "run_code"),
    ([{"tool": "calculator"}], 0, "compute"),
    ([{"tool": "current_time"}], 0, "current_time"),
])
def test_the_route_a_run_took(calls: list[dict[str, object]], edits: int, route: str) -> None:
    assert decided(calls, edits) == route


def test_read_and_csv_are_one_route_and_code_computes_too() -> None:
    assert same_route("csv", "read") and same_route("read", "csv") and same_route("compute", "run_code")
    assert not same_route("list", "read") and not same_route("direct", "doc_search")
