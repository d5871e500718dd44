"""Pre-flight checks (``cortex.doctor`` and ``cortex-lsp doctor``): each failure comes with a fix.

A fix names a concrete action that works — a command to run, or a setting by its name in every place
it can be set (``ollama_base_url`` in the config file, ``cortex.ollamaBaseUrl`` in VS Code,
``CORTEX_OLLAMA_BASE_URL``) — never "fix the problem" and never "run doctor" (this *is* the doctor).
"""

from __future__ import annotations

import asyncio
import re
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cortex_lsp.config import Settings
from cortex_lsp.models.base import ModelError


def setting(name: str) -> str:
    """A setting by all its names: ``ollama_base_url``, VS Code ``cortex.ollamaBaseUrl``, Neovim's
    ``setup{settings={…}}``, ``CORTEX_OLLAMA_BASE_URL``."""
    head, *rest = name.split("_")
    camel = head + "".join(part.capitalize() for part in rest)
    return (f"`{name}` (VS Code: `cortex.{camel}`; Neovim: `setup{{settings={{{name}=…}}}}`; "
            f"environment: `CORTEX_{name.upper()}`)")


#: a model error's advice ends by pointing at the doctor: inside the doctor that is circular
_POINTS_AT_DOCTOR = re.compile(r"[;,.]?\s*(?:run\s+)?`?cortex-lsp doctor`?[^;.]*[;.]?", re.IGNORECASE)


def not_circular(fix: str) -> str:
    """``fix`` without any advice to run the doctor."""
    text = _POINTS_AT_DOCTOR.sub("", fix).strip()
    return text if not text or text.endswith((".", "!", "?")) else text + "."


def _model_server_fix(settings: Settings, advice: str) -> str:
    """What to do when no model server answers, for the configured backend, with the setting's names."""
    backend = settings.model_backend
    if backend == "ollama":
        return (f"Start Ollama (`ollama serve`), or set {setting('ollama_base_url')} to where it runs "
                f"(now {settings.ollama_base_url}).")
    if backend == "openai":
        return ("Start the server (for llama.cpp: `python -m llama_cpp.server --model PATH`), or set "
                f"{setting('openai_base_url')} to where it runs, including `/v1` (now {settings.openai_base_url}).")
    fix = not_circular(advice) or ("Run `scripts/setup.sh` in the cortex-lsp folder (or `make run`) to install "
                                   "the embedded model, or start Ollama (`ollama serve`).")
    return f"{fix} Ollama is looked for at {setting('ollama_base_url')} (now {settings.ollama_base_url})."


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
        return [Check("model server", False, str(exc), _model_server_fix(settings, exc.advice))]
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
            which = "ollama_model" if role == "chat model" else "embed_model"
            fix = (f"Run `ollama pull {name}`, or set {setting(which)} to a model `ollama list` shows."
                   if client.backend == "ollama"
                   else f"Load {name} in the server at {url}, or set {setting(which)} to a model it serves.")
            detail = f"{name} {'is' if present else 'is not'} available"
            checks.append(Check(role, present, detail, "" if present else fix))
    except ModelError as exc:
        checks.append(Check("model server", False, str(exc), _model_server_fix(settings, exc.advice)))
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
                     f"Set {setting('data_dir')} to a folder you can write, or run `chmod u+w {path}`.")


def _roots_check(roots: list[Path]) -> Check:
    if not roots:
        return Check("workspace roots", False, "No folder is open: file tools are off.",
                     "Open a folder: VS Code File → Open Folder; Neovim `cd` into it before `nvim` "
                     "(or `setup{root_dir=…}`); the CLI `--root DIR`.", warning=True)
    missing = [str(r) for r in roots if not r.is_dir()]
    if missing:
        return Check("workspace roots", False, f"Missing: {', '.join(missing)}",
                     "Open an existing folder (File → Open Folder; in Neovim `:cd` into it), or create it.")
    return Check("workspace roots", True, ", ".join(str(r) for r in roots))


def _sandbox_check(settings: Settings) -> Check:
    """Which OS boundary confines code (bubblewrap, or Landlock and seccomp), or why nothing runs."""
    try:
        from cortex_lsp.tools.sandbox.isolation import plan_isolation
    except ImportError:
        return Check("sandbox", False, "The Python sandbox is not installed.",
                     "Run `scripts/setup.sh` in the cortex-lsp folder (or `pip install -e .` there).")
    from cortex_lsp.tools.sandbox.isolation import isolation_status

    plan = plan_isolation(settings)
    ok, detail = isolation_status(settings)
    if settings.sandbox_isolation == "none":  # the user's choice, but never a silent one
        return Check("sandbox isolation", False, detail, f"Set {setting('sandbox_isolation')} to `auto`.",
                     warning=True)
    fix = f"{plan.fix[0].upper()}{plan.fix[1:]}." if plan.refuse else ""
    return Check("sandbox isolation", ok, detail, fix)


def _sandbox_layers_check() -> Check:
    """The layers every worker gets, whatever the boundary."""
    import os

    from cortex_lsp.tools.sandbox import seccomp

    root = "; as root, the worker drops to uid 65534 with no capability before any code runs" \
        if os.geteuid() == 0 else ""
    filtered, why = seccomp.available()
    if not filtered:
        return Check("sandbox layers", False, f"No seccomp filter ({why}): without bubblewrap no code runs "
                     "(RestrictedPython guards, the audit hook and resource limits alone are not enough)" + root
                     + ".", "Install libseccomp: `sudo apt-get install libseccomp2`.", warning=True)
    return Check("sandbox layers", True, "Every worker: RestrictedPython guards, an audit hook that ends it on "
                 "any write, network, process or new code, a libseccomp filter (no sockets, writes, new "
                 "processes, signal handlers or timers) and resource limits" + root + ".")


def _sandbox_landlock_check() -> Check:
    """The worker's Landlock rules (files and TCP), applied with or without bubblewrap."""
    from cortex_lsp.tools.sandbox import landlock

    version, why = landlock.abi()
    if version < 1:
        return Check("sandbox landlock", False, f"Landlock is not available ({why}): without bubblewrap, the "
                     "sandbox has no OS boundary and runs no code.",
                     "Use Linux 5.13 or later with Landlock enabled (kernel option `lsm=landlock,...`).",
                     warning=True)
    return Check("sandbox landlock", True,
                 f"Every worker restricts itself with Landlock ({landlock.describe(version)}).")


JAEGER_COMMAND = ("docker run --rm -p 16686:16686 -p 4318:4318 jaegertracing/jaeger:latest "
                  "(then open http://127.0.0.1:16686)")


async def _telemetry_check(settings: Settings) -> Check:
    """Off, or on and whether the OTLP/HTTP endpoint answers (an empty export: nothing is recorded)."""
    if not settings.telemetry_enabled:
        return Check("telemetry", True, f"off (turn on with {setting('telemetry_enabled')})")
    import importlib.util

    if importlib.util.find_spec("opentelemetry.sdk") is None or importlib.util.find_spec(
            "opentelemetry.exporter.otlp.proto.http") is None:
        return Check("telemetry", False, "telemetry_enabled is on but the OpenTelemetry SDK or its OTLP/HTTP "
                     "exporter is not installed.", "Run `pip install 'cortex-lsp[telemetry]'` in Cortex's "
                     "environment (scripts/setup.sh installs it).", warning=True)
    import httpx

    url = f"{settings.otel_endpoint}/v1/traces"
    content = " (with your text and file contents: telemetry_include_content)" \
        if settings.telemetry_include_content else " (ids, names and timings only)"
    try:
        async with httpx.AsyncClient(timeout=3.0, trust_env=False) as client:
            answer = await client.post(url, content=b"", headers={"Content-Type": "application/x-protobuf"})
    except httpx.HTTPError as exc:
        return Check("telemetry", False, f"on, but nothing answers at {settings.otel_endpoint} "
                     f"({exc.__class__.__name__}): traces and metrics are dropped.",
                     f"Start an OTLP collector there, e.g. Jaeger: `{JAEGER_COMMAND}`; or set "
                     f"{setting('otel_endpoint')} to yours.", warning=True)
    if answer.status_code >= 400:
        return Check("telemetry", False, f"on, but {url} answered HTTP {answer.status_code}: it may not be an "
                     "OTLP/HTTP endpoint.", f"Set {setting('otel_endpoint')} to the collector's OTLP/HTTP address "
                     "(port 4318 by default, without /v1/traces).", warning=True)
    return Check("telemetry", True, f"on: exporting to {settings.otel_endpoint}, which answers{content}")


async def run_checks(settings: Settings, roots: list[Path], *, settings_messages: Sequence[str] = ()) -> list[Check]:
    checks = await _model_checks(settings)
    checks.append(_data_dir_check(settings))
    checks.append(_roots_check(roots))
    checks.append(await asyncio.to_thread(_sandbox_check, settings))
    checks.append(_sandbox_layers_check())
    checks.append(_sandbox_landlock_check())
    checks.append(await _telemetry_check(settings))
    if settings_messages:
        checks.append(Check("settings", False, " ".join(settings_messages), SETTINGS_FIX, warning=True))
    else:
        checks.append(Check("settings", True, f"loaded (python {sys.version.split()[0]})"))
    return checks


SETTINGS_FIX = ("Correct or remove each setting named above where it came from (the source is in brackets: "
                "VS Code settings `cortex.*`, Neovim `setup{settings=…}`, `cortex.yaml` in your config folder "
                "or in the opened folder, a `CORTEX_*` variable), then restart the server; until then its "
                "default is used.")


def failed(checks: list[Check]) -> list[Check]:
    return [c for c in checks if not c.ok and not c.warning]
