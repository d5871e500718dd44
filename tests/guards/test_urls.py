"""URL guards: provenance (the user's own addresses only), URL form, and public-address checks."""

from __future__ import annotations

import ipaddress

import pytest

from cortex_lsp.guards.urls import (
    AddressRefused,
    UrlRefused,
    check_public_address,
    check_user_url,
    embedded_ipv4,
    is_user_url,
    parse_fetch_url,
    user_typed_urls,
)

# ------------------------------------------------------------------------------------------ extraction


def test_extracts_urls_and_bare_hosts_as_written() -> None:
    turns = [
        "Please read https://example.com/page?a=1. Also www.foo.org/docs, thanks!",
        "and (see https://en.wikipedia.org/wiki/Foo_(bar)) or <http://bar.net/x>",
    ]
    assert user_typed_urls(turns) == [
        "https://example.com/page?a=1",
        "www.foo.org/docs",
        "https://en.wikipedia.org/wiki/Foo_(bar)",
        "http://bar.net/x",
    ]


@pytest.mark.parametrize(
    "text",
    ["mail bob@corp.com", "open notes.md and main.py", "version 1.2.3", "e.g. this", "./data/file.csv"],
)
def test_emails_file_names_and_versions_are_not_addresses(text: str) -> None:
    assert user_typed_urls([text]) == []


# ------------------------------------------------------------------------------------------ provenance

TYPED = [
    "summarise https://example.com/page?x=1 please",
    "and http://plain.org/a/",
    "also docs.python.org/3/",
]


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/page?x=1",
        "https://example.com/page/?x=1",  # trailing slash ignored
        "https://example.com/page?x=1#section",  # fragment ignored
        "https://EXAMPLE.com/page?x=1",  # host names are case-insensitive
        "https://example.com:443/page?x=1",  # the default port written out
        "http://plain.org/a",
        "https://plain.org/a/",  # http may become https
        "http://docs.python.org/3/",  # a bare host: either scheme
        "https://docs.python.org/3",
    ],
)
def test_user_typed_urls_are_allowed(url: str) -> None:
    assert is_user_url(url, TYPED)
    check_user_url(url, TYPED)


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/page?x=1&secret=hunter2",  # query-string exfiltration
        "https://example.com/page?secret=abc",
        "https://example.com/page",  # query dropped: still not what was typed
        "https://www.example.com/page?x=1",  # host as written
        "https://example.com.evil.net/page?x=1",
        "https://example.com/other",  # the model's guess
        "https://example.com/page/../admin?x=1",
        "http://example.com/page?x=1",  # https never becomes http
        "https://example.com:8443/page?x=1",
        "https://plain.org/a/b",
        "https://internal.corp/wiki",  # from a file or a page, never in the user's words
        "ftp://example.com/page?x=1",
        "file:///etc/passwd",
        "https://user:pw@example.com/page?x=1",
        "",
    ],
)
def test_urls_the_user_did_not_type_are_refused(url: str) -> None:
    assert not is_user_url(url, TYPED)
    with pytest.raises(UrlRefused, match="the user wrote"):
        check_user_url(url, TYPED)


def test_only_the_turns_passed_count() -> None:
    assert not is_user_url("https://example.com/page?x=1", [])
    assert not is_user_url("https://example.com/page?x=1", ["the page said https://example.org"])


# ------------------------------------------------------------------------------------------ form


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("file:///etc/passwd", "only http"),
        ("gopher://127.0.0.1:6379/_FLUSHALL", "only http"),
        ("ftp://example.com/x", "only http"),
        ("data:text/html,<script>alert(1)</script>", "only http"),
        ("javascript:alert(1)", "only http"),
        ("//example.com/x", "only http"),
        ("https://user:pass@example.com/", "password"),
        ("https://user@example.com/", "password"),
        ("http://example.com@127.0.0.1/", "password"),
        ("http://2130706433/", "unusual spelling"),
        ("http://0177.0.0.1/", "unusual spelling"),
        ("http://0x7f.1/", "unusual spelling"),
        ("http://0x7f000001/", "unusual spelling"),
        ("http://127.1/", "unusual spelling"),
        ("http://127.000.000.001/", "unusual spelling"),
        ("http://1.2.3.4./", "unusual spelling"),
        ("http://%31%32%37.0.0.1/", "unusual spelling|not a valid host"),
        ("http://%65xample.com/", "not a valid host"),
        ("http://exa mple.com/", "spaces"),
        ("http://example.com\\@evil.net/", "backslashes"),
        ("http://[::1%25eth0]/", "zone"),
        ("http://example.com:99999/", "port"),
        ("http:///path", "no host"),
    ],
)
def test_bad_url_forms_are_refused(url: str, reason: str) -> None:
    with pytest.raises(UrlRefused, match=reason):
        parse_fetch_url(url)


def test_good_url_is_split() -> None:
    url = parse_fetch_url("HTTPS://Example.COM:8443/a/b?q=1#frag")
    assert (url.scheme, url.host, url.port, url.path, url.query, url.ip) == (
        "https", "example.com", 8443, "/a/b", "q=1", None,
    )
    assert url.host_header == "example.com:8443"
    assert str(url) == "https://example.com:8443/a/b?q=1"
    v6 = parse_fetch_url("http://[2606:4700::1]/")
    assert v6.ip == ipaddress.IPv6Address("2606:4700::1") and v6.host_header == "[2606:4700::1]"


# ------------------------------------------------------------------------------------------ addresses


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("127.0.0.1", "loopback"),
        ("127.255.0.9", "loopback"),
        ("10.0.0.1", "private"),
        ("10.255.255.254", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.1", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "metadata"),
        ("169.254.1.1", "link-local"),
        ("100.64.0.1", "carrier-grade"),
        ("100.127.255.254", "carrier-grade"),
        ("0.0.0.0", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("240.0.0.1", "private|reserved"),
        ("255.255.255.255", "private|reserved"),
        ("192.0.2.1", "private"),  # documentation
        ("::1", "loopback"),
        ("::", "unspecified"),
        ("fc00::1", "private"),
        ("fd12:3456::1", "private"),
        ("fe80::1", "link-local"),
        ("fe80::1%eth0", "link-local"),
        ("ff02::1", "multicast"),
        ("::ffff:127.0.0.1", "127.0.0.1"),
        ("::ffff:10.0.0.1", "10.0.0.1"),
        ("::ffff:169.254.169.254", "metadata"),
        ("::127.0.0.1", "127.0.0.1"),  # IPv4-compatible
        ("2002:7f00:1::", "127.0.0.1"),  # 6to4
        ("2002:a9fe:a9fe::1", "metadata"),  # 6to4 of 169.254.169.254
        ("64:ff9b::7f00:1", "127.0.0.1"),  # NAT64
        ("64:ff9b::a00:1", "10.0.0.1"),
        ("2001:db8::1", "private"),
    ],
)
def test_non_public_addresses_are_refused(address: str, why: str) -> None:
    with pytest.raises(AddressRefused, match=why):
        check_public_address(address)


@pytest.mark.parametrize(
    "address", ["93.184.215.14", "8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "2a00:1450:4001::200e"]
)
def test_public_addresses_pass(address: str) -> None:
    check_public_address(address)
    check_public_address(ipaddress.ip_address(address))


def test_embedded_ipv4_is_found() -> None:
    assert embedded_ipv4(ipaddress.IPv6Address("::ffff:192.168.0.1")) == ipaddress.IPv4Address("192.168.0.1")
    assert embedded_ipv4(ipaddress.IPv6Address("2606:4700::1")) is None


def test_garbage_is_not_an_address() -> None:
    with pytest.raises(AddressRefused):
        check_public_address("not-an-ip")


# every IANA special-purpose block is denied by name (is_global differs between
# Python versions), and a bare file name whose extension is also a TLD is no address the user typed
SPECIAL: list[str] = [
    "192.88.99.1",  # 6to4 relay anycast (RFC 7526)
    "3fff::1",  # IPv6 documentation (RFC 9637)
    "3fff:fff::1",
    "2002:808:808::1",  # 6to4, even of a public address
    "192.31.196.1",  # AS112
    "192.52.193.1",  # AMT
    "192.175.48.1",  # direct delegation AS112
    "198.18.0.1",  # benchmarking
    "198.51.100.7",  # TEST-NET-2
    "203.0.113.9",  # TEST-NET-3
    "192.0.0.8",  # IETF protocol assignments
    "100::1",  # discard-only
    "2001:2::1",  # benchmarking
    "2001:20::1",  # ORCHIDv2
    "5f00::1",  # SRv6 SIDs
    "fec0::1",  # site-local
]


@pytest.mark.parametrize("address", SPECIAL)
def test_special_purpose_blocks_are_refused(address: str) -> None:
    with pytest.raises(AddressRefused):
        check_public_address(address)
    with pytest.raises(AddressRefused):
        check_public_address(ipaddress.ip_address(address))


#: (the user's words, the address a model asks for, counts as typed?)
FILE_HOSTS: list[tuple[str, str, bool]] = [
    ("What does my script report.sh do?", "https://report.sh/", False),
    ("Explain the difference between node.js and deno.", "https://node.js/", False),
    ("Run setup.py for me", "https://setup.py/", False),
    ("Why does main.rs not compile?", "http://main.rs", False),
    ("Look at build.zip and index.html", "https://build.zip/", False),
    ("Open report.sh:8080", "http://report.sh:8080/", True),  # a port: an address
    ("Open https://report.sh/", "https://report.sh/", True),  # a scheme: an address
    ("Open www.report.sh", "https://www.report.sh/", True),  # "www.": an address
    ("Open example.com/docs", "https://example.com/docs", True),  # a real TLD: an address
]


@pytest.mark.parametrize(("words", "url", "typed"), FILE_HOSTS, ids=[w for w, _, _ in FILE_HOSTS])
def test_a_file_name_is_no_host(words: str, url: str, typed: bool) -> None:
    assert is_user_url(url, [words]) is typed
