"""root_refusal: with several open folders, a granted name means the first folder holding that file."""

from __future__ import annotations

from pathlib import Path

import pytest

from cortex_lsp.guards.root_choice import root_refusal


@pytest.fixture()
def roots(tmp_path: Path) -> list[Path]:
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for root in (a, b, c):
        (root / "docs").mkdir(parents=True)
    for root in (a, b):
        (root / "notes.md").write_text(root.name)
    (b / "docs" / "only_b.md").write_text("b")
    (a / "docs" / "only_a.md").write_text("a")
    return [a, b, c]


# (path under which root, relative name, refused?, words in the reason)
CASES = [
    ("a", "notes.md", False, ""),                      # the first folder holding it
    ("b", "notes.md", True, "several open folders"),   # ambiguous name, other folder
    ("c", "notes.md", True, "several open folders"),   # would create a second copy in a third folder
    ("b", "docs/only_b.md", False, ""),                # only b has it
    ("a", "docs/only_b.md", True, "open folder b"),    # a new file shadowing b's
    ("c", "docs/only_a.md", True, "open folder a"),
    ("c", "brand_new.md", False, ""),                  # nobody has it: the grant decides
    ("b", "docs/../notes.md", True, "several open folders"),  # resolved before the check
]


@pytest.mark.parametrize(("where", "relative", "refused", "words"), CASES)
def test_root_refusal_table(roots: list[Path], where: str, relative: str, refused: bool, words: str) -> None:
    root = {r.name: r for r in roots}[where]
    reason = root_refusal(root / relative, roots)
    assert (reason is not None) == refused, reason
    if refused:
        assert reason is not None and words in reason and reason.startswith("Not written:")


def test_one_root_or_outside_is_not_this_guards_business(roots: list[Path], tmp_path: Path) -> None:
    assert root_refusal(roots[1] / "notes.md", roots[1:2]) is None
    assert root_refusal(tmp_path / "elsewhere.md", roots) is None  # the path guards refuse it
