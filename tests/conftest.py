"""Shared fixtures and run-wide rules.

- The run has its own home (:mod:`tests.user_dirs`): ``HOME`` and the XDG folders point at a temporary
  folder from before collection to the end, for this process and every server it starts; at the end the
  run fails if anything was written under the user's real default data folder.
- ``CORTEX_REQUIRE_SANDBOX=1`` / ``CORTEX_REQUIRE_EDITORS=1`` (set by CI) turn a skip of the sandbox tier
  (bubblewrap, Landlock, root-only cases) or of the editor tier (Neovim, code-server) into a failure that
  gives the skip's reason. Without them such a skip stays a skip with its reason (a user's machine may
  lack bubblewrap or an editor).
- The code-server tests run on one pytest-xdist worker, one after the other.
- ``model``: a scripted model server per test.
"""

from __future__ import annotations

import os
import re
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

from tests import user_dirs
from tests.scripted_model import ScriptedModelServer

_home_key = pytest.StashKey[user_dirs.TestHome]()
_real_data_key = pytest.StashKey[user_dirs.Snapshot]()

_SANDBOX_REASON = re.compile(r"bubblewrap|bwrap|landlock|setpriv|\broot\b|sandbox", re.IGNORECASE)


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_real_data_key] = user_dirs.snapshot()
    config.stash[_home_key] = user_dirs.redirect()


def pytest_unconfigure(config: pytest.Config) -> None:
    home = config.stash.get(_home_key, None)
    if home is not None:
        user_dirs.restore(home)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    before = session.config.stash.get(_real_data_key, None)
    if before is None:
        return
    changed = user_dirs.changes(before, user_dirs.snapshot())
    if changed:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        lines = [f"The run wrote under the real data folder {user_dirs.REAL_DATA_DIR}:", *changed[:20]]
        if reporter is not None:
            reporter.write_sep("=", "user data touched", red=True)
            for line in lines:
                reporter.write_line(line, red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session")
def test_home(pytestconfig: pytest.Config) -> user_dirs.TestHome:
    """The run's temporary home (``HOME`` and the XDG folders point into it)."""
    return pytestconfig.stash[_home_key]


def _required_tier(item: pytest.Item, reason: str) -> str | None:
    """The switch that forbids skipping this test here, or ``None``."""
    path = Path(str(item.fspath))
    if os.environ.get("CORTEX_REQUIRE_EDITORS") == "1" and (
            "editors" in path.parts or item.get_closest_marker("editor") is not None):
        return "CORTEX_REQUIRE_EDITORS"
    if os.environ.get("CORTEX_REQUIRE_SANDBOX") == "1" and (
            path.name.startswith("test_sandbox") or _SANDBOX_REASON.search(reason)):
        return "CORTEX_REQUIRE_SANDBOX"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``scripts/test.sh`` runs ``-n auto --dist loadgroup``) the code-server tests
    share one worker: two code-servers and two Chromiums at once on 2 cores starve each other."""
    for item in items:
        if Path(str(item.fspath)).name.startswith("test_vscode_"):
            item.add_marker(pytest.mark.xdist_group("code-server"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
        item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if not report.skipped or hasattr(report, "wasxfail"):
        return report
    longrepr = report.longrepr
    reason = str(longrepr[2]) if isinstance(longrepr, tuple) else str(longrepr)
    switch = _required_tier(item, reason)
    if switch is not None:
        report.outcome = "failed"
        report.longrepr = f"{switch}=1: this tier must run here, but it was skipped: {reason}"
    return report


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    server = ScriptedModelServer().start()
    try:
        yield server
    finally:
        server.stop()
