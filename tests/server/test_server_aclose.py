"""Closing the server's services at shutdown while other work still adds services (the warm-up builds
the tool registry while the sandbox closes): every service is closed once and nothing raises. This race
made a CI run's shutdown answer "dictionary changed size during iteration"; the test client then never
sent ``exit`` and waited for the server for the rest of the run."""

from __future__ import annotations

import asyncio

from cortex_lsp.server import build_server


class _Service:
    def __init__(self, on_close: object = None) -> None:
        self.closed = 0
        self.on_close = on_close

    async def aclose(self) -> None:
        await asyncio.sleep(0)  # the warm-up gets a turn here
        self.closed += 1
        if callable(self.on_close):
            self.on_close()


async def test_services_added_while_others_close_are_all_closed_once() -> None:
    server = build_server()
    late = _Service()
    later = _Service()
    first = _Service(on_close=lambda: server.set_service("registry", late))
    server.set_service("sandbox", first)
    server.set_service("flag", True)  # a plain value: nothing to close
    late.on_close = lambda: server.set_service("another", later)
    await server.aclose()
    assert (first.closed, late.closed, later.closed) == (1, 1, 1)


async def test_a_service_that_fails_to_close_does_not_stop_the_others() -> None:
    server = build_server()

    class Broken:
        async def aclose(self) -> None:
            raise OSError("gone")

    after = _Service()
    server.set_service("broken", Broken())
    server.set_service("after", after)
    await server.aclose()
    assert after.closed == 1
