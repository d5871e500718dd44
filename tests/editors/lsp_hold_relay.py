"""A stdio relay between an editor and the real server that holds the server's messages back once the
editor has sent a ``workspace/executeCommand``, until the file named by ``$RELAY_RELEASE`` exists.

    python lsp_hold_relay.py SERVER_COMMAND...

While it holds, nothing from the server reaches the editor: what the editor shows then is its own doing
(the tmux redraw test reads the screen in that window). It writes ``$RELAY_RELEASE.holding`` when it
starts holding. Everything else passes through unchanged, in order.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path


def _frames(stream):  # type: ignore[no-untyped-def]
    """LSP frames (headers + body, as bytes) from ``stream``."""
    while True:
        headers = b""
        while not headers.endswith(b"\r\n\r\n"):
            byte = stream.read(1)
            if not byte:
                return
            headers += byte
        length = next(int(line.split(b":")[1]) for line in headers.split(b"\r\n")
                      if line.lower().startswith(b"content-length"))
        yield headers + stream.read(length)


def main() -> int:
    release = Path(os.environ["RELAY_RELEASE"])
    hold = threading.Event()
    server = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None
    out = sys.stdout.buffer

    def editor_to_server() -> None:
        for frame in _frames(sys.stdin.buffer):
            if b'"workspace/executeCommand"' in frame and not release.exists():
                hold.set()
                Path(f"{release}.holding").write_text("holding", encoding="utf-8")
            server.stdin.write(frame)  # type: ignore[union-attr]
            server.stdin.flush()  # type: ignore[union-attr]
        server.stdin.close()  # type: ignore[union-attr]

    threading.Thread(target=editor_to_server, daemon=True).start()
    for frame in _frames(server.stdout):
        while hold.is_set() and not release.exists():  # held (the server's pipe buffers the rest, in order)
            time.sleep(0.05)
        out.write(frame)
        out.flush()
    return server.wait()


if __name__ == "__main__":
    sys.exit(main())
