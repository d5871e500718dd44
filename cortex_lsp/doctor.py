"""Pre-flight checks (``cortex.doctor`` and ``cortex-lsp doctor``): each failure comes with a fix."""

from __future__ import annotations

import asyncio
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cortex_lsp.config import Settings
from cortex_lsp.models.base import ModelError


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    #: a warning does not fail the doctor (e.g. OS isolation missing: the sandbox still works)
    warning: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "detail": self.detail, "fix": self.fix, "warning": self.warning}


async def _model_checks(settings: Settings) -> list[Check]:
    from cortex_lsp.models.factory import create_model_client

    try:
        client, info = await create_model_client(settings)
    except ModelError as exc:
        return [Check("model server", False, str(exc), exc.advice)]
    checks: list[Check] = []
    try:
        version = await client.version()
        backend = getattr(info, "backend", client.backend)
        url = getattr(info, "base_url", "")
        checks.append(Check("model server", True, f"{backend} {version} at {url}".strip()))
        installed = await client.list_models()
        chat = getattr(info, "chat_model", None) or settings.ollama_model
        embed = getattr(info, "embed_model", None) or settings.embed_model
        for role, name in (("chat model", chat), ("embedding model", embed)):
            from cortex_lsp.models.ollama_client import model_present

            present = model_present(name, installed) or (client.backend != "ollama" and name in installed)
            fix = f"Run `ollama pull {name}`." if client.backend == "ollama" else f"Serve {name} from {url}."
            detail = f"{name} {'is' if present else 'is not'} available"
            checks.append(Check(role, present, detail, "" if present else fix))
    except ModelError as exc:
        checks.append(Check("model server", False, str(exc), exc.advice))
    finally:
        await client.aclose()
    return checks


def _data_dir_check(settings: Settings) -> Check:
    path = settings.data_dir.expanduser()
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".doctor-", delete=True):
            pass
        return Check("data folder", True, f"{path} is writable")
    except OSError as exc:
        return Check("data folder", False, f"{path} is not writable: {exc.strerror}",
                     "Set `data_dir` (CORTEX_DATA_DIR) to a folder you can write.")


def _roots_check(roots: list[Path]) -> Check:
    if not roots:
        return Check("workspace roots", False, "No folder is open: file tools are off.",
                     "Open a folder in the editor (or pass --root DIR to the CLI).", warning=True)
    missing = [str(r) for r in roots if not r.is_dir()]
    if missing:
        return Check("workspace roots", False, f"Missing: {', '.join(missing)}", "Open an existing folder.")
    return Check("workspace roots", True, ", ".join(str(r) for r in roots))


def _sandbox_check(settings: Settings) -> Check:
    try:
        from cortex_lsp.tools.sandbox import isolation_status
    except ImportError:
        return Check("sandbox", False, "The Python sandbox is not installed.", "Reinstall cortex-lsp.")
    ok, detail = isolation_status(settings)
    fix = "" if ok else "Install bubblewrap: `sudo apt-get install bubblewrap`."
    if settings.sandbox_isolation == "none":  # the user's choice, but never a silent one
        return Check("sandbox isolation", False, detail, "Set sandbox_isolation: auto.", warning=True)
    return Check("sandbox isolation", ok, detail, fix, warning=not ok and settings.sandbox_isolation != "bwrap")


def _sandbox_layers_check() -> Check:
    """The in-process layers every worker gets, with or without bubblewrap."""
    import os

    from cortex_lsp.tools.sandbox import seccomp

    root = "; as root, the worker drops to uid 65534 before any code runs" if os.geteuid() == 0 else ""
    if seccomp.program(deny_exec=True) is None:
        return Check("sandbox layers", False, "The seccomp filter is written for x86_64 only: here workers run "
                     "without it (RestrictedPython guards, the audit hook and resource limits still apply)" + root
                     + ".", "", warning=True)
    return Check("sandbox layers", True, "Every worker: RestrictedPython guards, an audit hook that ends it on "
                 "any write, network, process or new code, a seccomp filter and resource limits" + root + ".")


async def run_checks(settings: Settings, roots: list[Path], *, settings_messages: Sequence[str] = ()) -> list[Check]:
    checks = await _model_checks(settings)
    checks.append(_data_dir_check(settings))
    checks.append(_roots_check(roots))
    checks.append(await asyncio.to_thread(_sandbox_check, settings))
    checks.append(_sandbox_layers_check())
    if settings_messages:
        checks.append(Check("settings", False, " ".join(settings_messages), "Fix the named settings.", warning=True))
    else:
        checks.append(Check("settings", True, f"loaded (python {sys.version.split()[0]})"))
    return checks


def failed(checks: list[Check]) -> list[Check]:
    return [c for c in checks if not c.ok and not c.warning]
