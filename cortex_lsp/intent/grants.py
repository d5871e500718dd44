"""Write grants: which files the user's own words allow Cortex to create or replace.

A :class:`WriteGrant` is derived once from the parsed intent (:mod:`cortex_lsp.intent.intent`). It is
the strict reading of what the words asked for: the ``asked`` label of a write builds on it
(:mod:`cortex_lsp.guards.asked`), and where nobody reviews a write only an asked one is sent
(:mod:`cortex_lsp.guards.consent`). It covers exactly

* creating a file the user named with a granting save/create/write verb (``create``),
* replacing an existing file the user named with a granting replace/update/overwrite verb (``replace``),
* when the user asked to save but named no file: one new plain text/data file (``.md``, ``.txt``,
  ``.json``, ``.csv`` …) with a safe name (``unnamed_create``): never code, an executable, a
  tool-configuration or a dotfile name (:func:`unsafe_name`),

and nothing else. Paths compare as normalised relative paths, case-insensitively.
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Iterable
from dataclasses import dataclass

__all__ = ["NO_GRANT", "WriteGrant", "exact_key", "hazard", "path_key", "unsafe_name"]

#: Names an unnamed save may never pick: run by Python, test runners, build and CI tools, shells.
UNSAFE_NAMES = frozenset(
    n.lower()
    for n in (
        "conftest.py", "sitecustomize.py", "usercustomize.py", "setup.py", "__init__.py", "__main__.py",
        "noxfile.py", "manage.py", "fabfile.py", "tasks.py", "dodo.py", "pavement.py", "wsgi.py", "asgi.py",
        "tox.ini", "pytest.ini", "setup.cfg", "pyproject.toml", "mypy.ini", "ruff.toml", "requirements.txt",
        "pipfile", "pipfile.lock", "poetry.lock", "uv.lock", "makefile", "gnumakefile", "dockerfile",
        "containerfile", "docker-compose.yml", "docker-compose.yaml", "compose.yml", "compose.yaml",
        "jenkinsfile", "vagrantfile", "procfile", "rakefile", "gemfile", "justfile", "taskfile.yml",
        "package.json", "package-lock.json", "tsconfig.json", "deno.json", "cargo.toml", "build.rs", "go.mod",
        "build.gradle", "pom.xml", "cmakelists.txt", "meson.build", "sconstruct", "mkdocs.yml",
        "azure-pipelines.yml", "bitbucket-pipelines.yml", "appveyor.yml", "cloudbuild.yaml", "netlify.toml",
        "vercel.json", "renovate.json", "composer.json", "app.json", "manifest.json", "bower.json",
        "codecov.yml", "readthedocs.yml", "environment.yml",
    )
)
#: Extensions an unnamed save may never pick (run or loaded by something on its own).
UNSAFE_EXTENSIONS = frozenset(
    "pth pyc pyo pyd pyz pyw so dll dylib exe com bat cmd ps1 psm1 vbs vbe js mjs cjs jse wsf wsh msi "
    "scr sh bash zsh fish csh ksh command desktop service timer plist reg lnk url jar app apk deb rpm "
    "whl egg cfg ini toml conf env rc lock".split()
)
#: Folders whose files tools run or read as configuration (CI, editors, hooks).
UNSAFE_DIRS = frozenset(
    d.lower() for d in ("bin", "scripts", "hooks", "node_modules", "site-packages", "__pycache__",
                        "ci", "debian", "etc")
)
#: the only kinds of file a save without a name may create: plain text and data
PLAIN_EXTENSIONS = frozenset("md markdown txt text json csv tsv log rst adoc org".split())
_SHADOWED = frozenset(getattr(sys, "stdlib_module_names", ())) | frozenset(
    ("pytest", "numpy", "pandas", "requests", "setuptools", "pip", "django", "flask", "yaml", "six")
)


def exact_key(path: str) -> str:
    """A path as the grant compares it: ``/`` separators, no leading ``./`` or ``/``, case kept (on this
    file system ``Haiku.md`` is another file than the ``haiku.md`` the user named)."""
    text = path.strip().strip("\"'`").replace("\\", "/")
    return "/".join(p for p in text.split("/") if p not in ("", "."))


def path_key(path: str) -> str:
    """:func:`exact_key`, case-folded: for matching names against tables (``Conftest.py``)."""
    return exact_key(path).casefold()


def hazard(relative: str) -> str | None:
    """Why ``relative`` is a file that programs run or read as configuration (a hidden file, a file in a
    scripts or configuration folder, a tool's configuration name, a loaded extension, a module that would
    shadow another), else ``None``. Such a file is written only when the user named it."""
    return _unsafe(relative, strict=False)


def unsafe_name(relative: str) -> str | None:
    """Why an unnamed save may not pick ``relative``: a :func:`hazard`, or not a plain text or data file
    with one extension, else ``None``."""
    return _unsafe(relative, strict=True)


def _unsafe(relative: str, *, strict: bool) -> str | None:
    key = path_key(relative)
    if not key:
        return "there is no file name"
    parts = key.split("/")
    name = parts[-1]
    if any(p.startswith(".") for p in parts):
        return f"{relative} is a hidden file or folder"
    if any(p in UNSAFE_DIRS for p in parts[:-1]):
        return f"{relative} is in a folder of scripts or configuration"
    if name in UNSAFE_NAMES:
        return f"{name} is a file that tools run or read as configuration"
    stem, dot, ext = name.rpartition(".")
    if dot and stem and ext in UNSAFE_EXTENSIONS:
        return f".{ext} files are run or loaded by other programs"
    if dot and ext == "py" and (stem in _SHADOWED or stem.endswith("customize")):
        return f"{name} would shadow the Python module {stem!r}"
    if not strict:
        return None
    if not dot or not stem:
        return f"{relative} has no file extension"
    if ext not in PLAIN_EXTENSIONS:
        return (
            f".{ext} is not a plain text or data file (code is run by test runners and imports); "
            "a save without a name makes a " + ", ".join(f".{e}" for e in sorted(PLAIN_EXTENSIONS)) + " file"
        )
    if "." in stem:
        return f"{name} has more than one extension"
    return None


@dataclass(frozen=True)
class WriteGrant:
    """What the user's own words allow to be written (see the module docstring)."""

    create: frozenset[str] = frozenset()
    replace: frozenset[str] = frozenset()
    unnamed_create: bool = False

    @property
    def empty(self) -> bool:
        return not (self.create or self.replace or self.unnamed_create)

    def named(self, relative: str) -> bool:
        """Did the user name ``relative`` as a file to write (create or replace)?"""
        key = exact_key(relative)
        return key in {exact_key(p) for p in self.create | self.replace}

    def check(self, relative: str, *, exists: bool, written: Collection[str] = ()) -> str | None:
        """``None`` when writing ``relative`` is allowed, else the reason it is not.

        ``exists`` says whether the file exists (on disk or as an open editor buffer). ``written`` are
        the paths this run already wrote: an unnamed save allows one new file, not several.
        """
        key = exact_key(relative)
        shown = relative.strip() or "(no path)"
        replace = {exact_key(p) for p in self.replace}
        create = {exact_key(p) for p in self.create}
        if self.empty:
            return (
                f"Not written: you did not ask to save or change a file, so {shown} may not be written."
            )
        if exists:
            if key in replace:
                return None
            if replace:
                return (
                    f"Not written: {shown} already exists, and you asked to replace only "
                    f"{_listed(self.replace)}."
                )
            return (
                f"Not written: {shown} already exists and you did not ask to replace or update it."
            )
        if key in create or key in replace:
            return None
        if self.unnamed_create and not create:
            why = unsafe_name(relative)
            if why is not None:
                return f"Not written: {why}."
            others = {exact_key(w) for w in written} - create - replace - {key}
            if others:
                return "Not written: you asked for one file to be saved, and it was saved already."
            return None
        return (
            f"Not written: you asked to write {_listed(self.create | self.replace)}, "
            f"not {shown}."
        )

    def describe(self) -> str:
        """One line for the result's notes: what the user's words allowed to be written."""
        if self.empty:
            return "write grant: none (the request asked for no file to be written)"
        parts: list[str] = []
        if self.create:
            parts.append(f"create {_listed(self.create)}")
        if self.replace:
            parts.append(f"replace {_listed(self.replace)}")
        if self.unnamed_create and not self.create:
            parts.append("create one new file with a plain name (the request named none)")
        return "write grant from the request: " + "; ".join(parts)


def _listed(paths: Iterable[str]) -> str:
    names = sorted(set(paths))
    return ", ".join(names) if names else "no file"


NO_GRANT = WriteGrant()
