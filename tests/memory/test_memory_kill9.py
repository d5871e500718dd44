"""Kill -9 mid-run: a real subprocess writes turns as fast as it can and is SIGKILLed; every turn it
had reported committed is in the database, intact, and the database passes an integrity check."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cortex_lsp.memory.episodic import EpisodicStore

WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from cortex_lsp.memory.episodic import EpisodicStore

    store = EpisodicStore(Path(sys.argv[1]))
    sid = store.new_session("/kill9")
    print("session", sid, flush=True)
    n = 0
    while True:
        role = "user" if n % 2 == 0 else "assistant"
        turn_id = store.add_turn(sid, role, f"turn {n} " + "x" * (n % 997))
        print("committed", turn_id, n, flush=True)
        n += 1
    """
)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
@pytest.mark.parametrize("kill_after", [5, 200])
def test_sigkill_mid_run_loses_no_committed_turn(tmp_path: Path, kill_after: int) -> None:
    db = tmp_path / "memory.db"
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(db)], stdout=subprocess.PIPE, text=True,
                            cwd=str(Path(__file__).resolve().parents[2]))
    assert proc.stdout is not None
    committed: dict[int, int] = {}
    session = ""
    try:
        for line in proc.stdout:
            parts = line.split()
            if parts[0] == "session":
                session = parts[1]
            elif parts[0] == "committed":
                committed[int(parts[1])] = int(parts[2])
                if len(committed) >= kill_after:
                    os.kill(proc.pid, signal.SIGKILL)  # while it keeps writing
                    break
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert len(committed) >= kill_after

    check = sqlite3.connect(db)
    assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    check.close()
    store = EpisodicStore(db)
    try:
        rows = {t.id: t for t in store.turns(session)}
        for turn_id, n in committed.items():
            assert turn_id in rows, f"committed turn {n} was lost"
            assert rows[turn_id].content == f"turn {n} " + "x" * (n % 997)
        # Nothing half-written: every stored turn is complete, and the ids have no gaps.
        ids = sorted(rows)
        assert ids == list(range(ids[0], ids[0] + len(ids)))
        for t in rows.values():
            n = int(t.content.split()[1])
            assert t.content == f"turn {n} " + "x" * (n % 997)
        # Reopened after the crash, the store keeps working.
        store.add_turn(session, "user", "after the crash")
        assert store.turns(session)[-1].content == "after the crash"
    finally:
        store.close()
