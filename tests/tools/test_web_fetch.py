"""web_fetch against real local HTTP(S) servers: hostile URLs, redirects, rebinding, robots, limits.

The fetching logic runs against servers on 127.0.0.1 (and 127.0.0.2). Loopback is not public, so
those tests inject a test-only address policy, :class:`AllowOnce`: the first check of the site's own
address passes (it stands in for a public host) and every other check is the real one. Every refusal
is asserted on its effect: the servers' request logs (or a spy on the HTTP client) show no request.
"""

from __future__ import annotations

import pytest

from cortex_lsp.guards.urls import check_public_address
from cortex_lsp.tools.base import ToolResult
from cortex_lsp.tools.details import PageFetch
from cortex_lsp.tools.registry import ToolRegistry
from cortex_lsp.tools.web_fetch import MAX_BODY_BYTES, MAX_OUTPUT_CHARS, WebFetchTool
from tests.tools.web_site import (
    AllowOnce,
    Certs,
    LocalSite,
    MapResolver,
    Route,
    client_tls,
    context,
    fetch,
)


def _page(result: ToolResult) -> PageFetch:
    """What web_fetch read (the test fails when no page was read)."""
    assert isinstance(result.detail, PageFetch), result
    return result.detail

# ------------------------------------------------------------------------------------------ hostile URLs


@pytest.mark.parametrize(
    "template",
    [
        "http://127.0.0.1:{port}/",
        "http://localhost:{port}/",
        "http://[::1]:{port}/",
        "http://[::ffff:127.0.0.1]:{port}/",
        "http://[::ffff:7f00:1]:{port}/",
        "http://2130706433:{port}/",
        "http://0177.0.0.1:{port}/",
        "http://0x7f.1:{port}/",
        "http://0x7f000001:{port}/",
        "http://127.1:{port}/",
        "http://user:pass@127.0.0.1:{port}/",
        "gopher://127.0.0.1:{port}/_GET%20/",
        "file:///etc/passwd",
    ],
)
async def test_loopback_in_any_spelling_is_refused(site: LocalSite, template: str) -> None:
    url = template.format(port=site.port)
    result = await fetch(WebFetchTool(), url, context(f"please fetch {url}"))
    assert not result.success
    assert "Not fetched" in result.error
    assert site.requests == []


@pytest.mark.parametrize(
    "url",
    [
        "http://10.0.0.1/",
        "http://10.1.2.3:8080/admin",
        "http://172.16.0.1/",
        "http://172.31.255.254/",
        "http://192.168.1.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://100.64.0.1/",
        "http://0.0.0.0/",
        "http://[fd00::1]/",
        "http://[fe80::1]/",
        "http://[::ffff:169.254.169.254]/",
        "http://[64:ff9b::a9fe:a9fe]/",
        "http://[2002:a9fe:a9fe::]/",
    ],
)
async def test_private_addresses_are_refused_before_any_request(url: str, no_http: list[str]) -> None:
    result = await fetch(WebFetchTool(), url, context(f"get {url}"))
    assert not result.success and "Not fetched" in result.error
    assert no_http == []


async def test_a_name_resolving_to_private_space_is_refused(site: LocalSite) -> None:
    resolver = MapResolver({"intranet.test": [["10.0.0.5"]]})
    url = f"http://intranet.test:{site.port}/"
    result = await fetch(WebFetchTool(resolver=resolver), url, context(url))
    assert not result.success and "10.0.0.5" in result.error and "private" in result.error
    assert site.requests == []


async def test_every_resolved_address_is_checked(site: LocalSite) -> None:
    """One good answer among bad ones is not enough: the site (first answer) gets no request."""
    resolver = MapResolver({"mixed.test": [["127.0.0.1", "169.254.169.254"]]})
    url = f"http://mixed.test:{site.port}/"
    result = await fetch(WebFetchTool(resolver=resolver, address_policy=AllowOnce()), url, context(url))
    assert not result.success and "metadata" in result.error
    assert site.requests == []


# ------------------------------------------------------------------------------------------ provenance


@pytest.mark.parametrize(
    "asked",
    [
        "http://site.test:{port}/page?secret=hunter2",  # query-string exfiltration
        "http://site.test:{port}/admin",  # the model's guess
        "http://www.site.test:{port}/page",  # host as written
        "http://site.test:{port}/page/../admin",
        "http://site.test:{port}/page%3Fsecret%3Dx",
    ],
)
async def test_urls_the_user_did_not_type_are_not_opened(site: LocalSite, asked: str) -> None:
    resolver = MapResolver({"site.test": [["127.0.0.1"]], "www.site.test": [["127.0.0.1"]]})
    tool = WebFetchTool(resolver=resolver, address_policy=AllowOnce())
    ctx = context(f"summarise http://site.test:{site.port}/page for me")
    result = await fetch(tool, asked.format(port=site.port), ctx)
    assert not result.success and "the user wrote" in result.error
    assert site.requests == [] and resolver.calls == []


@pytest.mark.parametrize("suffix", ["", "/", "#part", "?"])
async def test_the_typed_url_opens_as_written(site: LocalSite, suffix: str) -> None:
    site.routes["/page"] = site.routes["/page/"] = Route(body=b"<p>the page</p>")
    resolver = MapResolver({"site.test": [["127.0.0.1"]]})
    tool = WebFetchTool(resolver=resolver, address_policy=AllowOnce())
    ctx = context(f"summarise http://site.test:{site.port}/page for me")
    result = await fetch(tool, f"http://site.test:{site.port}/page{suffix}", ctx)
    assert result.success, result.error
    assert "the page" in result.output
    assert site.paths() == ["/robots.txt", "/page/" if suffix == "/" else "/page"]


async def test_links_read_from_a_page_or_a_file_are_not_opened(site: LocalSite) -> None:
    site.routes["/page"] = Route(body=f'<a href="http://site.test:{site.port}/next">next</a>'.encode())
    resolver = MapResolver({"site.test": [["127.0.0.1"]]})
    tool = WebFetchTool(resolver=resolver, address_policy=AllowOnce())
    ctx = context(f"read http://site.test:{site.port}/page")
    first = await fetch(tool, f"http://site.test:{site.port}/page", ctx)
    assert first.success and f"http://site.test:{site.port}/next" in first.output
    before = list(site.requests)
    for url in (f"http://site.test:{site.port}/next", f"http://site.test:{site.port}/from-a-file"):
        result = await fetch(tool, url, ctx)
        assert not result.success and "the user wrote" in result.error
    assert site.requests == before


async def test_disabled_by_settings(site: LocalSite) -> None:
    url = f"http://127.0.0.1:{site.port}/"
    tool = WebFetchTool(address_policy=AllowOnce())
    result = await fetch(tool, url, context(url, web_fetch_enabled=False))
    assert not result.success and "turned off" in result.error
    assert site.requests == []


async def test_extra_arguments_are_rejected_by_the_schema(site: LocalSite) -> None:
    url = f"http://127.0.0.1:{site.port}/"
    tool = WebFetchTool(address_policy=AllowOnce())
    result = await ToolRegistry([tool]).execute(
        "web_fetch", {"url": url, "headers": {"Host": "169.254.169.254"}}, context(url)
    )
    assert not result.success and "Invalid arguments" in result.error
    assert site.requests == []


# ------------------------------------------------------------------------------------------ redirects


@pytest.mark.parametrize(
    ("location", "reason"),
    [
        ("http://127.0.0.1:{other}/", "loopback"),
        ("http://localhost:{other}/", "loopback"),
        ("http://[::1]:{other}/", "loopback"),
        ("http://169.254.169.254/latest/meta-data/", "metadata"),
        ("http://10.0.0.1/", "private"),
        ("http://2130706433:{other}/", "unusual spelling"),
        ("http://[::ffff:127.0.0.1]:{other}/", "loopback"),
        ("file:///etc/passwd", "only http"),
        ("gopher://127.0.0.1:{other}/", "only http"),
    ],
)
async def test_redirects_into_private_space_are_refused(site: LocalSite, location: str, reason: str) -> None:
    other = LocalSite()
    try:
        other.routes["/"] = Route(body=b"internal secrets")
        target = location.format(other=other.port)
        site.routes["/go"] = Route(status=302, headers={"Location": target}, body=b"")
        url = f"http://127.0.0.1:{site.port}/go"
        result = await fetch(WebFetchTool(address_policy=AllowOnce()), url, context(url))
        assert not result.success and "Not fetched" in result.error and reason in result.error
        assert "/go" in site.paths()
        assert other.requests == []
        assert "internal secrets" not in result.output
    finally:
        other.close()


async def test_redirect_within_the_checked_site_is_followed(site: LocalSite) -> None:
    site.routes["/go"] = Route(status=301, headers={"Location": "/dest?from=go"}, body=b"")
    site.routes["/dest"] = Route(body=b"<h1>Destination</h1>")
    url = f"http://127.0.0.1:{site.port}/go"
    result = await fetch(WebFetchTool(address_policy=AllowOnce()), url, context(url))
    assert result.success, result.error
    assert "Destination" in result.output
    assert _page(result).final_url == f"http://127.0.0.1:{site.port}/dest?from=go"


async def test_more_than_five_redirects_stop(site: LocalSite) -> None:
    site.routes["/loop"] = Route(status=302, headers={"Location": "/loop"}, body=b"")
    url = f"http://127.0.0.1:{site.port}/loop"
    result = await fetch(WebFetchTool(address_policy=AllowOnce()), url, context(url))
    assert not result.success and "redirects" in result.error
    assert site.paths().count("/loop") == 6


# ------------------------------------------------------------------------------------------ rebinding


async def test_connects_to_the_address_it_checked(site: LocalSite, internal: LocalSite) -> None:
    """The resolver answers the site first and the internal server after: one resolution, and the
    request reaches the checked address with the host name in the Host header."""
    resolver = MapResolver({"rebind.test": [["127.0.0.1"], ["127.0.0.2"]]})
    site.routes["/page"] = Route(body=b"<p>public page</p>")
    url = f"http://rebind.test:{site.port}/page"
    result = await fetch(WebFetchTool(resolver=resolver, address_policy=AllowOnce()), url, context(url))
    assert result.success, result.error
    assert resolver.calls == ["rebind.test"]
    assert _page(result).address == "127.0.0.1"
    assert ("/page", f"rebind.test:{site.port}") in site.requests
    assert internal.requests == []
    assert "public page" in result.output


# ------------------------------------------------------------------------------------------ robots.txt


@pytest.mark.parametrize(
    "robots",
    [
        "User-agent: CortexLSP\nDisallow: /private\n",
        "User-agent: *\nDisallow: /\n",
    ],
)
async def test_robots_disallow_is_honoured(site: LocalSite, robots: str) -> None:
    site.routes["/robots.txt"] = Route(headers={"Content-Type": "text/plain"}, body=robots.encode())
    site.routes["/private/page"] = Route(body=b"secret")
    url = f"http://127.0.0.1:{site.port}/private/page"
    result = await fetch(WebFetchTool(address_policy=AllowOnce()), url, context(url))
    assert not result.success and "robots.txt" in result.error
    assert site.paths() == ["/robots.txt"]


async def test_robots_allows_other_paths_and_a_missing_file_allows_all(site: LocalSite) -> None:
    site.routes["/robots.txt"] = Route(
        headers={"Content-Type": "text/plain"}, body=b"User-agent: CortexLSP\nDisallow: /private\n"
    )
    site.routes["/public"] = Route(body=b"<p>hello</p>")
    url = f"http://127.0.0.1:{site.port}/public"
    assert (await fetch(WebFetchTool(address_policy=AllowOnce()), url, context(url))).success
    assert site.paths() == ["/robots.txt", "/public"]

    plain = LocalSite()  # no robots.txt: 404
    try:
        plain.routes["/x"] = Route(body=b"<p>fine</p>")
        url = f"http://127.0.0.1:{plain.port}/x"
        result = await fetch(WebFetchTool(address_policy=AllowOnce()), url, context(url))
        assert result.success and "fine" in result.output
        assert plain.paths() == ["/robots.txt", "/x"]
    finally:
        plain.close()


# ------------------------------------------------------------------------------------------ body


async def test_body_stops_at_2_mb(site: LocalSite) -> None:
    chunk = b"a" * 65536 + b"\n"
    site.routes["/big"] = Route(headers={"Content-Type": "text/plain"}, body=chunk, repeat=1000)  # ~64 MB
    url = f"http://127.0.0.1:{site.port}/big"
    result = await fetch(WebFetchTool(address_policy=AllowOnce()), url, context(url))
    assert result.success, result.error
    assert _page(result).bytes_read == MAX_BODY_BYTES and _page(result).truncated is True
    assert "larger than 2 MB" in result.output
    assert site.wait_sent("/big") < 24 * 1024 * 1024


@pytest.mark.parametrize(
    "content_type",
    [
        "image/png",
        "audio/mpeg",
        "video/mp4",
        "application/octet-stream",
        "application/pdf",
        "application/zip",
    ],
)
async def test_binary_media_is_refused_without_reading_the_body(site: LocalSite, content_type: str) -> None:
    site.routes["/file"] = Route(headers={"Content-Type": content_type}, body=b"\x89PNG" + b"\0" * 65532,
                                 repeat=1000)
    url = f"http://127.0.0.1:{site.port}/file"
    result = await fetch(WebFetchTool(address_policy=AllowOnce()), url, context(url))
    assert not result.success and content_type in result.error
    assert site.wait_sent("/file") < 24 * 1024 * 1024


async def test_untyped_binary_body_is_refused(site: LocalSite) -> None:
    site.routes["/blob"] = Route(headers={}, body=b"\x00\x01\x02binary")
    url = f"http://127.0.0.1:{site.port}/blob"
    result = await fetch(WebFetchTool(address_policy=AllowOnce()), url, context(url))
    assert not result.success and "binary" in result.error


async def test_http_errors_are_failures(site: LocalSite) -> None:
    url = f"http://127.0.0.1:{site.port}/missing"
    result = await fetch(WebFetchTool(address_policy=AllowOnce()), url, context(url))
    assert not result.success and "404" in result.error


HTML = """<!doctype html><html><head><title>T</title>
<style>.x { color: red }</style><script>var token = "leak"; alert(1)</script></head>
<body><h1>Main title</h1><p>Some <b>bold</b> text with <a href="/more">a link</a>.</p>
<noscript>enable js</noscript><!-- hidden comment --><ul><li>one</li><li>two</li></ul>
<script>document.write("late")</script></body></html>"""


@pytest.mark.parametrize("fmt", ["markdown", "text"])
async def test_html_becomes_readable_text(site: LocalSite, fmt: str) -> None:
    site.routes["/doc"] = Route(body=HTML.encode())
    url = f"http://127.0.0.1:{site.port}/doc"
    result = await fetch(WebFetchTool(address_policy=AllowOnce()), url, context(url), format=fmt)
    assert result.success, result.error
    out = result.output
    assert "Main title" in out and "one" in out and "two" in out and "a link" in out
    for hidden in ("color: red", "leak", "alert", "document.write", "hidden comment", "<p>", "<h1>"):
        assert hidden not in out
    if fmt == "markdown":
        assert "# Main title" in out and f"(http://127.0.0.1:{site.port}/more)" in out and "**bold**" in out
    else:
        assert "](" not in out and "**" not in out


async def test_charset_from_the_header_is_used(site: LocalSite) -> None:
    site.routes["/latin"] = Route(headers={"Content-Type": "text/plain; charset=iso-8859-1"},
                                  body="café crème".encode("latin-1"))
    url = f"http://127.0.0.1:{site.port}/latin"
    result = await fetch(WebFetchTool(address_policy=AllowOnce()), url, context(url))
    assert result.success and result.output == "café crème"


async def test_output_is_capped_with_a_note(site: LocalSite) -> None:
    site.routes["/long"] = Route(headers={"Content-Type": "text/plain"}, body=b"word " * 10_000)
    url = f"http://127.0.0.1:{site.port}/long"
    result = await fetch(WebFetchTool(address_policy=AllowOnce()), url, context(url))
    assert result.success
    body, _, note = result.output.partition("\n[... cut at")
    assert len(body) == MAX_OUTPUT_CHARS and "more not shown" in note


# ------------------------------------------------------------------------------------------ TLS


async def test_tls_is_verified_against_the_host_name(tls_site: LocalSite, certs: Certs) -> None:
    tls_site.routes["/page"] = Route(body=b"<p>over tls</p>")
    resolver = MapResolver({"site.test": [["127.0.0.1"]], "other.test": [["127.0.0.1"]]})
    good = f"https://site.test:{tls_site.port}/page"
    tool = WebFetchTool(resolver=resolver, address_policy=AllowOnce(), ssl_context=client_tls(certs))
    result = await fetch(tool, good, context(good))
    assert result.success, result.error
    assert "over tls" in result.output and _page(result).address == "127.0.0.1"

    seen = len(tls_site.requests)
    wrong = f"https://other.test:{tls_site.port}/page"  # same address, a name the certificate lacks
    tool = WebFetchTool(resolver=resolver, address_policy=AllowOnce(), ssl_context=client_tls(certs))
    result = await fetch(tool, wrong, context(wrong))
    assert not result.success and "CERTIFICATE" in result.error.upper()
    assert len(tls_site.requests) == seen


async def test_https_to_http_downgrade_is_refused(tls_site: LocalSite, site: LocalSite, certs: Certs) -> None:
    site.routes["/plain"] = Route(body=b"<p>plain</p>")
    tls_site.routes["/go"] = Route(status=302, headers={"Location": f"http://site.test:{site.port}/plain"},
                                   body=b"")
    resolver = MapResolver({"site.test": [["127.0.0.1"]]})
    url = f"https://site.test:{tls_site.port}/go"
    tool = WebFetchTool(resolver=resolver, address_policy=AllowOnce(), ssl_context=client_tls(certs))
    result = await fetch(tool, url, context(url))
    assert not result.success and "downgrade" in result.error
    assert site.requests == []
    assert "/go" in tls_site.paths()


def test_default_constructor_uses_the_real_check() -> None:
    """Production builds the tool with no arguments; the test hooks must not leak into it."""
    tool = WebFetchTool()
    assert tool._policy is check_public_address
    assert tool.spec().parameters["additionalProperties"] is False
