"""CI refuses to skip security: with ``CORTEX_REQUIRE_SANDBOX=1`` / ``CORTEX_REQUIRE_EDITORS=1`` (set by
.ci/run) a skipped sandbox or editor test fails with the skip's reason; other skips stay skips, and
without the switches (a user's machine) every skip stays a skip. Runs pytest itself, with this suite's
conftest as a plugin, on a few tests that skip."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

PROBES = {
    "test_sandbox_probe.py": "def test_jail():\n    pytest.skip('bubblewrap is not usable here: no user namespaces')\n",
    "test_layers_probe.py": "def test_drop():\n    pytest.skip('runs as root only (the drop is a no-op otherwise)')\n",
    "editors/test_nvim_probe.py": "def test_nvim():\n    pytest.skip('Neovim 0.11 is not installed')\n",
    "test_other_probe.py": "def test_make():\n    pytest.skip('make is not installed')\n",
}


def _run(tmp_path: Path, **switches: str) -> subprocess.CompletedProcess[str]:
    for name, body in PROBES.items():
        path = tmp_path / name
        path.parent.mkdir(exist_ok=True)
        path.write_text("import pytest\n\n" + body)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CORTEX_REQUIRE_")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-c", os.devnull, "--rootdir", str(tmp_path),
         "-p", "no:cacheprovider", "-q", "-rfEs", str(tmp_path)],
        cwd=REPO, env={**env, **switches}, capture_output=True, text=True, timeout=120)


def test_on_a_users_machine_every_skip_stays_a_skip(tmp_path: Path) -> None:
    done = _run(tmp_path)
    assert done.returncode == 0, done.stdout
    assert "4 skipped" in done.stdout and "bubblewrap is not usable" in done.stdout


@pytest.mark.parametrize(("switch", "failing"), [
    ("CORTEX_REQUIRE_SANDBOX", {"test_sandbox_probe.py::test_jail", "test_layers_probe.py::test_drop"}),
    ("CORTEX_REQUIRE_EDITORS", {"editors/test_nvim_probe.py::test_nvim"}),
])
def test_in_ci_a_skipped_tier_fails_with_its_reason(tmp_path: Path, switch: str, failing: set[str]) -> None:
    done = _run(tmp_path, **{switch: "1"})
    assert done.returncode == 1, done.stdout
    failed = {line.split()[1].split(tmp_path.name + "/")[-1]
              for line in done.stdout.splitlines() if line.startswith("FAILED ")}
    assert failed == failing, done.stdout
    assert f"{switch}=1: this tier must run here, but it was skipped" in done.stdout
    assert "make is not installed" in done.stdout  # the other skip is still a skip
