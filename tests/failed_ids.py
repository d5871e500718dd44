"""A pytest plugin for scripts/test.sh: writes the ids of the tests that failed or errored, one a line,
to the file named by ``CORTEX_FAILED_IDS`` at the end of the run, so the script can print them last."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

_failed: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.failed and report.nodeid not in _failed:
        what = "" if report.when == "call" else f" (error in {report.when})"
        _failed.append(report.nodeid + what)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        _failed.append(f"{report.nodeid or '.'} (collection error)")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    target = os.environ.get("CORTEX_FAILED_IDS")
    if target and not hasattr(session.config, "workerinput"):  # the controller writes (xdist workers don't)
        Path(target).write_text("".join(f"{nodeid}\n" for nodeid in _failed), encoding="utf-8")
