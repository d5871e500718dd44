"""The worker pool never waits without a bound on a worker that is gone.

asyncio's ``Process.wait()`` returns only once the process has exited *and* its pipes are closed. A
process that outlives the worker it was started by (bubblewrap's pid-1 inside the namespace, left behind
when bubblewrap is killed) keeps the pipe open: before the fix the pool's reaping, and with it a run or
``aclose``, waited forever (a 900 s pytest timeout in a fresh-clone ``make test``). Real processes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

import pytest

from cortex_lsp.tools.sandbox import pool as pool_module
from tests.procs import state as proc_state
from tests.waiting import until


async def _parent_leaving_a_child_behind() -> tuple[asyncio.subprocess.Process, int]:
    """A shell that starts a background ``sleep`` (it inherits stdout) and exits 0.3 s later."""
    proc = await asyncio.create_subprocess_exec(
        "sh", "-c", "sleep 60 & echo $!; sleep 0.3", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, start_new_session=True)
    assert proc.stdout is not None
    child = int((await proc.stdout.readline()).decode())
    return proc, child


@pytest.mark.asyncio
async def test_reaping_ends_although_a_left_behind_process_holds_the_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool_module, "REAP_TIMEOUT_SECONDS", 0.5)
    proc, child = await _parent_leaving_a_child_behind()
    try:
        assert proc.returncode is None  # still running: the reap below waits for its exit
        waiting = asyncio.ensure_future(proc.wait())
        # the premise: the shell has exited (the loop has its status), yet wait() has not returned, because
        # the child holds stdout (the pipe has not reached its end); checked on the state, not after a wait
        await until(lambda: proc.returncode is not None, what="the shell to exit")
        assert proc.stdout is not None and not proc.stdout.at_eof(), "the premise: the child holds the pipe"
        assert not waiting.done(), "wait() returned: the premise of this test does not hold on this Python"
        reaping = asyncio.ensure_future(pool_module._reap(proc))
        await asyncio.wait_for(reaping, 10)  # bounded, instead of forever
        assert proc.returncode == 0
        assert await asyncio.wait_for(waiting, 5) == 0  # and the pending wait() ended too
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)


@pytest.mark.asyncio
async def test_a_process_left_behind_in_the_group_is_killed_after_its_leader_exited() -> None:
    proc, child = await _parent_leaving_a_child_behind()
    try:
        for _ in range(200):  # the shell (the group's leader) exits by itself after 0.3 s
            if proc.returncode is not None:
                break
            await asyncio.sleep(0.05)
        assert proc.returncode == 0
        os.kill(child, 0)  # the premise: its child lives on
        pool_module._kill(proc)
        for _ in range(100):  # the kill is asynchronous; a zombie reaped by init is gone too
            try:
                os.kill(child, 0)
            except ProcessLookupError:
                break
            if proc_state(child) == "Z":
                break
            await asyncio.sleep(0.05)
        else:
            pytest.fail("the process left behind was not killed")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)
        await pool_module._reap(proc)


async def test_a_forged_reply_is_a_worker_failure_not_an_exception() -> None:
    """A reply the snippet forged (the worker's pipe is in reach of escaped code): JSON nested past the
    decoder's depth is a malformed reply (ValueError, so the run reports the worker's end), and notes
    that are not a list of strings are dropped instead of raising while the result is built."""
    from cortex_lsp.tools.sandbox.pool import _HEADER, _notes, _read_reply

    body = ("[" * 200_000 + "]" * 200_000).encode()
    reader = asyncio.StreamReader()
    reader.feed_data(_HEADER.pack(len(body)) + body)
    reader.feed_eof()
    with pytest.raises(ValueError, match="nested too deeply"):
        await _read_reply(reader)
    assert _notes(5) == [] and _notes(["a", 3, None]) == ["a"] and _notes(None) == []
