"""Mutation checks for the guards: switch each guard off in a scratch copy and show that tests then fail.

Usage: ``.venv/bin/python scripts/mutate.py [NAME ...] [--list] [--keep]`` (``make mutate`` runs them all).

For every mutation the script copies the working tree (tracked and untracked, not ignored) into a
scratch folder, switches one guard off there (an early ``return`` at the top of the named function, or
an exact text replacement that must match once), and runs the tests that guard is meant to be caught
by, against the scratch copy's package, stopping at the first failure. A mutation whose tests all pass
is a guard no test can see: the script then exits 1. Before any mutation, the same tests run on the
unmutated copy, and must pass (else a failure would prove nothing).

The result table (Markdown) goes to stdout; docs/security.md keeps the last one.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Mutation:
    """One guard switched off: ``function`` (``Class.method`` or ``outer.inner``) in ``file`` starts with
    ``body``; or, when ``old`` is set, ``old`` is replaced by ``new`` (exactly one occurrence)."""

    name: str
    what: str
    file: str
    tests: tuple[str, ...]
    function: str = ""
    body: str = ""
    old: str = ""
    new: str = ""


SECURITY_WRITES = ("tests/security/test_security_write_grants.py", "tests/security/test_consent_tables.py")
SANDBOX = ("tests/security/test_sandbox_boundary.py", "tests/security/test_sandbox_layers.py",
           "tests/tools/test_sandbox_escape.py")

MUTATIONS = (
    Mutation("url-provenance", "web_fetch opens any address, typed by the user or not",
             "cortex_lsp/guards/urls.py", ("tests/security/test_web_fetch_gate.py",),
             function="check_user_url", body="return None"),
    Mutation("url-address", "web_fetch connects to loopback, private and metadata addresses",
             "cortex_lsp/guards/urls.py", ("tests/tools/test_web_fetch.py", "tests/security/test_web_fetch_gate.py"),
             function="check_public_address", body="return None"),
    Mutation("python-exec-gate", "python_exec is offered whatever the user's words",
             "cortex_lsp/agent/plan_guards.py", ("tests/security/test_python_exec_gate.py",),
             function="python_allowed", body="return True"),
    Mutation("executor-offer", "the executor runs a tool the run did not offer the model",
             "cortex_lsp/agent/executor.py",
             ("tests/security/test_python_exec_gate.py", "tests/security/test_security_agent.py"),
             old="        if name not in self.offered:\n", new="        if False:\n"),
    Mutation("strict-sink", "an editor that cannot review is sent every write, asked or not",
             "cortex_lsp/guards/consent.py", SECURITY_WRITES,
             function="sink_refusal", body="return None"),
    Mutation("asked-label", "every write is labelled as asked for",
             "cortex_lsp/guards/consent.py", SECURITY_WRITES,
             function="decide", body="return WriteDecision(asked=True)"),
    Mutation("path-inside", "a path outside the open folder counts as inside",
             "cortex_lsp/guards/paths.py",
             ("tests/security/test_security_agent.py", "tests/security/test_security_lsp.py"),
             function="_is_within", body="return True"),
    Mutation("path-hidden", "hidden files (.env, .git, .ssh) are readable and writable",
             "cortex_lsp/guards/paths.py",
             ("tests/security/test_security_agent.py", "tests/security/test_security_lsp.py"),
             function="_hidden_part", body="return None"),
    Mutation("provenance-cut", "quoted, fenced and pasted material counts as the user's instruction",
             "cortex_lsp/intent/provenance.py",
             ("tests/security/test_security_agent.py", "tests/security/test_python_exec_gate.py",
              "tests/security/test_web_fetch_gate.py", *SECURITY_WRITES),
             function="instruction_text", body="return normalize(text)"),
    Mutation("sandbox-restricted", "the in-process layer lets a snippet hold any value",
             "cortex_lsp/tools/sandbox/allowlist.py", SANDBOX,
             function="is_denied", body="return False"),
    Mutation("sandbox-audit", "the worker's audit hook checks no event",
             "cortex_lsp/tools/sandbox/audit.py", SANDBOX,
             function="install.hook", body="return None"),
    Mutation("sandbox-seccomp", "the worker installs no syscall filter",
             "cortex_lsp/tools/sandbox/seccomp.py", SANDBOX,
             function="install", body="return None"),
    Mutation("sandbox-landlock", "the worker's Landlock ruleset is never applied",
             "cortex_lsp/tools/sandbox/landlock.py", SANDBOX,
             function="Confinement.confine", body="return []"),
    Mutation("sandbox-bwrap-network", "bubblewrap shares the host's network namespace",
             "cortex_lsp/tools/sandbox/isolation.py", SANDBOX,
             old='        "--unshare-all",\n', new='        "--unshare-all", "--share-net",\n'),
)


def _find(tree: ast.Module, dotted: str) -> ast.FunctionDef | ast.AsyncFunctionDef:
    scope: list[ast.stmt] = tree.body
    found: ast.AST | None = None
    for part in dotted.split("."):
        found = next((n for n in scope if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                      and n.name == part), None)
        if found is None:
            raise SystemExit(f"mutate.py: {dotted} not found (the guard moved: update MUTATIONS)")
        scope = found.body
    if not isinstance(found, ast.FunctionDef | ast.AsyncFunctionDef):
        raise SystemExit(f"mutate.py: {dotted} is not a function")
    return found


def mutated_source(source: str, mutation: Mutation) -> str:
    """``source`` with ``mutation`` applied (raises ``SystemExit`` when it no longer applies)."""
    if mutation.old:
        if source.count(mutation.old) != 1:
            raise SystemExit(f"mutate.py: {mutation.name}: the text to replace is not in {mutation.file} once")
        return source.replace(mutation.old, mutation.new)
    func = _find(ast.parse(source), mutation.function)
    first = func.body[0]
    docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
        and isinstance(first.value.value, str)
    anchor = func.body[1] if docstring and len(func.body) > 1 else first
    lines = source.splitlines(keepends=True)
    indent = re.match(r"\s*", lines[anchor.lineno - 1]).group(0)  # type: ignore[union-attr]
    line = anchor.lineno - 1
    if docstring and len(func.body) == 1:
        line = (first.end_lineno or first.lineno)
    lines.insert(line, f"{indent}{mutation.body}  # mutate.py: guard switched off\n")
    return "".join(lines)


def scratch_copy(target: Path) -> None:
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file() and not source.is_symlink():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def run_tests(copy: Path, tests: tuple[str, ...], *, first_failure: bool, log: Path) -> tuple[int, str, float]:
    """pytest on ``tests`` in ``copy`` with the copy's package first on the path: (exit code, the first
    failed test or the summary line, seconds); its whole output goes to ``log``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = str(copy)
    env["CORTEX_REQUIRE_SANDBOX"] = "1"  # as CI: a sandbox tier that skips is a failure, not a pass
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-rf", *tests]
    if first_failure:
        argv.insert(4, "-x")
    started = time.monotonic()
    done = subprocess.run(argv, cwd=copy, env=env, capture_output=True, text=True, check=False)
    log.write_text(done.stdout + "\n--- stderr\n" + done.stderr)
    output = done.stdout.splitlines()
    failed = next((ln.removeprefix("FAILED ").split(" - ", 1)[0] for ln in output if ln.startswith("FAILED ")), "")
    if len(failed) > 110:
        failed = failed[:110] + "…"
    summary = next((ln.strip("= ") for ln in reversed(output) if ln.startswith("=") or " passed" in ln), "")
    return done.returncode, failed or summary or "\n".join(output[-5:]), time.monotonic() - started


def _package_in(copy: Path) -> bool:
    probe = subprocess.run([sys.executable, "-c", "import cortex_lsp; print(cortex_lsp.__file__)"],
                           cwd="/", env={**os.environ, "PYTHONPATH": str(copy)}, capture_output=True, text=True,
                           check=False)
    return probe.stdout.strip().startswith(str(copy))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="mutations to run (default: all)")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args(argv)
    if args.list:
        for m in MUTATIONS:
            print(f"{m.name:26} {m.what}")
        return 0
    unknown = set(args.names) - {m.name for m in MUTATIONS}
    if unknown:
        parser.error(f"unknown mutation(s): {', '.join(sorted(unknown))} (see --list)")
    chosen = [m for m in MUTATIONS if not args.names or m.name in args.names]
    scratch = Path(tempfile.mkdtemp(prefix="cortex-mutate-"))
    copy = scratch / "tree"
    try:
        scratch_copy(copy)
        if not _package_in(copy):
            print("mutate.py: the scratch copy's package is not the one Python imports", file=sys.stderr)
            return 2
        for mutation in chosen:  # every mutation must still apply before anything runs
            mutated_source((REPO / mutation.file).read_text(), mutation)
        union = tuple(dict.fromkeys(t for m in chosen for t in m.tests))
        code, summary, seconds = run_tests(copy, union, first_failure=False, log=scratch / "baseline.log")
        print(f"baseline (no guard off): {summary}, exit {code} ({seconds:.0f} s)", file=sys.stderr)
        if code != 0:
            tail = (scratch / "baseline.log").read_text().splitlines()[-30:]
            print("\n".join(tail), file=sys.stderr)
            print("mutate.py: the tests fail without any mutation; fix that first", file=sys.stderr)
            return 2
        print("| guard switched off | what it lets through | first failing test | time |")
        print("|---|---|---|---|")
        missed = []
        for mutation in chosen:
            target = copy / mutation.file
            original = target.read_text()
            target.write_text(mutated_source(original, mutation))
            try:
                code, summary, seconds = run_tests(copy, mutation.tests, first_failure=True,
                                                   log=scratch / f"{mutation.name}.log")
            finally:
                target.write_text(original)
            caught = code == 1
            if not caught:
                missed.append(mutation.name)
            verdict = f"`{summary}`" if caught else f"**NOT CAUGHT** ({summary}, exit {code})"
            print(f"| `{mutation.name}` | {mutation.what} | {verdict} | {seconds:.0f} s |", flush=True)
        if missed:
            print(f"mutate.py: no test failed with these guards off: {', '.join(missed)}", file=sys.stderr)
            return 1
        return 0
    finally:
        if args.keep:
            print(f"scratch copy kept: {copy}", file=sys.stderr)
        else:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
