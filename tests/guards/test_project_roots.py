"""``root_refusal``: the whole file system, the home folder, folders of homes and system folders are not
projects; their project sub-folders (and ordinary folders) are."""

from __future__ import annotations

from pathlib import Path

import pytest

from cortex_lsp.guards.project_roots import root_refusal


@pytest.mark.parametrize("folder", ["/", "/etc", "/etc/ssh", "/usr", "/usr/lib/python3", "/bin", "/var", "/var/lib",
                                    "/var/log/apt", "/proc", "/proc/self", "/sys", "/dev", "/boot", "/lib", "/home",
                                    "/tmp", "/opt", "/run", "/etc/../etc", "//"])
def test_system_folders_are_refused(folder: str) -> None:
    reason = root_refusal(Path(folder))
    assert reason is not None and folder in reason


def test_home_and_its_holders_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "users" / "ann"
    (home / "code" / "app").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    assert "home folder itself" in (root_refusal(home) or "")
    assert "holds home folders" in (root_refusal(tmp_path / "users") or "")
    assert root_refusal(home / "code" / "app") is None
    link = tmp_path / "link-to-home"
    link.symlink_to(home)
    assert "home folder itself" in (root_refusal(link) or "")  # a link to it is the folder itself


@pytest.mark.parametrize("folder", ["/opt/project", "/srv/site", "/var/www/site", "/usr/local/src/tool", "/tmp/x"])
def test_project_folders_are_accepted(folder: str) -> None:
    assert root_refusal(Path(folder)) is None
