"""Fixtures for the tools tests: the local HTTP(S) sites of the web_fetch tests (:mod:`tests.tools.web_site`)."""

from __future__ import annotations

import shutil
import ssl
import subprocess
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.tools.web_site import Certs, LocalSite, Route


@pytest.fixture
def site() -> Iterator[LocalSite]:
    server = LocalSite()
    yield server
    server.close()


@pytest.fixture
def internal(site: LocalSite) -> Iterator[LocalSite]:
    """A second server standing for an internal service: 127.0.0.2 on the same port as ``site``."""
    try:
        server = LocalSite("127.0.0.2", site.port)
    except OSError as exc:
        pytest.skip(f"cannot bind 127.0.0.2:{site.port}: {exc}")
    server.routes["/"] = Route(body=b"internal secrets")
    yield server
    server.close()


@pytest.fixture
def no_http(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A spy on the HTTP client: records (and blocks) every request that would be sent."""
    sent: list[str] = []

    async def spy(self: httpx.AsyncClient, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        sent.append(str(request.url))
        raise httpx.ConnectError("blocked by the test spy", request=request)

    monkeypatch.setattr(httpx.AsyncClient, "send", spy)
    return sent


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    """A throwaway CA and a server certificate for ``site.test`` (made with the openssl CLI)."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    d = tmp_path_factory.mktemp("tls")

    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=Test CA",
        "-keyout", "ca.key", "-out", "ca.pem", "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign")
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=site.test", "-keyout", "site.key",
        "-out", "site.csr")
    (d / "ext.cnf").write_text("subjectAltName=DNS:site.test\nbasicConstraints=CA:FALSE\n")
    run("x509", "-req", "-in", "site.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-days", "2", "-out", "site.pem", "-extfile", "ext.cnf")
    return Certs(d / "ca.pem", d / "site.pem", d / "site.key")


@pytest.fixture
def tls_site(certs: Certs) -> Iterator[LocalSite]:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(certs.cert, certs.key)
    server = LocalSite(tls=ctx)
    yield server
    server.close()
