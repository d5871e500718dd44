"""What the server sends goes out through a thread of its own: a write never blocks the event loop.

pygls writes each message to stdout with a blocking ``write`` and ``flush`` on the event loop. A pipe
holds 64 KB; a run's last messages (the answer in the ``done`` event and again in the result: a long
answer is hundreds of KB) or a burst of progress reports filled it, and the loop then waited for the
editor to read — a code action sent meanwhile waited with it. :class:`ThreadedWriter` takes the bytes
(a list append) and one daemon thread writes them, in order. When more than :data:`MAX_QUEUED_BYTES`
wait (an editor that stopped reading), ``write`` waits for room: memory stays bounded. A broken pipe
is raised on the loop by the next ``write``, as pygls' own writer raised it.
"""

from __future__ import annotations

import collections
import threading
import time
from typing import BinaryIO

#: bytes that may wait for the editor to read before ``write`` itself waits
MAX_QUEUED_BYTES = 64 * 1024 * 1024


class ThreadedWriter:
    """pygls' writer interface (``write``, ``close``) over a writing thread."""

    def __init__(self, stdout: BinaryIO) -> None:
        self._stdout = stdout
        self._queue: collections.deque[bytes] = collections.deque()
        self._queued = 0
        self._ready = threading.Condition()
        self._closed = False
        self._broken: OSError | None = None
        self._busy = False
        self._thread = threading.Thread(target=self._pump, name="cortex-stdout", daemon=True)
        self._thread.start()

    def write(self, data: bytes) -> None:
        with self._ready:
            if self._broken is not None:
                raise BrokenPipeError(str(self._broken))
            while self._queued > MAX_QUEUED_BYTES and self._broken is None and not self._closed:
                self._ready.wait(0.1)
            self._queue.append(data)
            self._queued += len(data)
            self._ready.notify_all()

    def _pump(self) -> None:
        while True:
            with self._ready:
                while not self._queue and not self._closed:
                    self._ready.wait()
                if not self._queue:
                    return
                parts = list(self._queue)
                self._queue.clear()
                size = self._queued
                self._busy = True
            try:
                self._stdout.write(b"".join(parts))
                self._stdout.flush()
            except (OSError, ValueError) as exc:
                with self._ready:
                    self._broken = exc if isinstance(exc, OSError) else BrokenPipeError(str(exc))
                    self._queue.clear()
                    self._queued = 0
                    self._busy = False
                    self._ready.notify_all()
                return
            with self._ready:
                self._queued -= size
                self._busy = False
                self._ready.notify_all()

    def drain(self, timeout: float) -> bool:
        """Wait until everything written so far is out (at most ``timeout`` s); False if it is not."""
        deadline = time.monotonic() + timeout
        with self._ready:
            while (self._queue or self._busy) and self._broken is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._ready.wait(left)
        return True

    def close(self) -> None:
        """Write what is queued (at most a few seconds), then close stdout."""
        self.drain(5.0)
        with self._ready:
            self._closed = True
            self._ready.notify_all()
        try:
            self._stdout.close()
        except (OSError, ValueError):
            pass
