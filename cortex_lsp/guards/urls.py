"""URL guards for ``web_fetch``: whose URL it is, what form it takes, and where it leads.

Three pure checks, no network:

- **Provenance** (:func:`user_typed_urls`, :func:`is_user_url`): ``web_fetch`` opens only an address the
  user wrote in this conversation. The host must match as written (``www.example.com`` is not
  ``example.com``), the path and query exactly (a query can carry exfiltrated data); a trailing slash
  and the fragment are ignored; ``http`` may become ``https``, never the reverse; a bare host the user
  typed (``example.com/docs``) may be opened with either scheme.
- **Form** (:func:`parse_fetch_url`): only ``http``/``https``, no credentials, no control characters
  or backslashes, and no unusual IP spellings (``2130706433``, ``0177.0.0.1``, ``0x7f.1``, ``127.1``):
  resolvers read those as IP addresses, so they are refused outright rather than guessed at.
- **Address** (:func:`check_public_address`): after resolution, every address must be a public
  unicast one. Loopback, private, link-local (cloud metadata), shared (CGNAT), reserved, multicast,
  unspecified and IPv6 unique-local addresses are refused, including IPv4 addresses embedded in IPv6
  (IPv4-mapped, IPv4-compatible, 6to4, NAT64, Teredo), and every IANA special-purpose block by name
  (:data:`SPECIAL_PURPOSE`: 6to4 relays, the IPv6 documentation range 3fff::/20, …).

Which typed URL may be opened in a turn at all (a granting fetch action names it) is
:func:`cortex_lsp.intent.asks.fetch_urls`; ``web_fetch`` passes only those to :func:`check_user_url`.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

from cortex_lsp.intent.typed_urls import user_typed_urls

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

ALLOWED_SCHEMES = ("http", "https")
DEFAULT_PORTS = {"http": 80, "https": 443}

NOT_TYPED_MESSAGE = (
    "Not fetched: web_fetch only opens web addresses the user wrote in this conversation, and this one "
    "came from somewhere else (a file, a web page or a guess). Ask the user for the address, or answer "
    "without it."
)

_CONTROL_OR_SPACE = re.compile(r"[\x00-\x20\x7f\\]")
_NUMERIC_LABEL = re.compile(r"(?i)^(?:0x[0-9a-f]*|[0-9]+)$")
_DOTTED_QUAD = re.compile(r"^(?:0|[1-9][0-9]{0,2})(?:\.(?:0|[1-9][0-9]{0,2})){3}$")

_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_METADATA = ipaddress.ip_address("169.254.169.254")
#: every IANA special-purpose block (IPv4 and IPv6 Special-Purpose Address Registries, with RFC 7526's
#: 6to4 relay anycast and RFC 9637's IPv6 documentation range), denied by name whatever ``is_global``
#: says in this Python version
SPECIAL_PURPOSE = tuple(
    ipaddress.ip_network(n)
    for n in (
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
        "192.0.0.0/24", "192.0.2.0/24", "192.31.196.0/24", "192.52.193.0/24", "192.88.99.0/24",
        "192.168.0.0/16", "192.175.48.0/24", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
        "224.0.0.0/4", "240.0.0.0/4", "255.255.255.255/32",
        "::/128", "::1/128", "::ffff:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64",
        "100:0:0:1::/64", "2001::/23", "2001:db8::/32", "2002::/16", "2620:4f:8000::/48", "3fff::/20",
        "5f00::/16", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
    )
)


class UrlRefused(ValueError):
    """A URL the guards refuse; the message says why, in words a user (or a model) can act on."""


class AddressRefused(UrlRefused):
    """A resolved address that is not a public one."""


@dataclass(frozen=True)
class FetchUrl:
    """A URL that passed the form checks. ``host`` is lower-case, without brackets; ``ip`` is set when
    the host is an IP literal."""

    scheme: str
    host: str
    port: int
    path: str
    query: str
    ip: IPAddress | None = None

    @property
    def origin(self) -> tuple[str, str, int]:
        return (self.scheme, self.host, self.port)

    @property
    def host_header(self) -> str:
        shown = f"[{self.host}]" if isinstance(self.ip, ipaddress.IPv6Address) else self.host
        return shown if self.port == DEFAULT_PORTS[self.scheme] else f"{shown}:{self.port}"

    @property
    def target(self) -> str:
        """The request target: path plus query."""
        path = self.path or "/"
        return f"{path}?{self.query}" if self.query else path

    def __str__(self) -> str:
        return f"{self.scheme}://{self.host_header}{self.target}"


# --------------------------------------------------------------------------------------------- form


def _ipv4_number_spelling(host: str) -> bool:
    """Would a resolver read ``host`` as an IPv4 number? (WHATWG: its last label is numeric.)"""
    labels = host.rstrip(".").split(".") if host.rstrip(".") else []
    return bool(labels) and bool(_NUMERIC_LABEL.match(labels[-1]))


def _split(url: str) -> SplitResult:
    if not isinstance(url, str) or not url.strip():
        raise UrlRefused("Not fetched: the URL is empty.")
    text = url.strip()
    if _CONTROL_OR_SPACE.search(text):
        raise UrlRefused("Not fetched: the URL contains spaces, control characters or backslashes.")
    try:
        return urlsplit(text)
    except ValueError as exc:
        raise UrlRefused(f"Not fetched: the URL could not be read ({exc}).") from None


def parse_fetch_url(url: str) -> FetchUrl:
    """Check the form of ``url`` and split it; raise :class:`UrlRefused` with the reason."""
    parts = _split(url)
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        shown = f"{scheme}:" if scheme else "a URL without a scheme"
        raise UrlRefused(f"Not fetched: only http:// and https:// addresses can be opened, not {shown}.")
    if "@" in parts.netloc or parts.username is not None or parts.password is not None:
        raise UrlRefused("Not fetched: URLs with a user name or password (user:pass@host) are not opened.")
    host = (parts.hostname or "").strip()
    if not host:
        raise UrlRefused("Not fetched: the URL has no host name.")
    try:
        port = parts.port
    except ValueError:
        raise UrlRefused("Not fetched: the URL's port is not a number between 0 and 65535.") from None
    if port == 0:
        raise UrlRefused("Not fetched: port 0 is not a port that can be opened.")
    ip: IPAddress | None = None
    if parts.netloc.rsplit("@", 1)[-1].startswith("["):
        if "%" in host:
            raise UrlRefused("Not fetched: IPv6 addresses with a zone (%...) are not opened.")
        try:
            ip = ipaddress.IPv6Address(host)
        except ValueError:
            raise UrlRefused(f"Not fetched: {host!r} is not a valid IPv6 address.") from None
    elif _ipv4_number_spelling(host):
        if not _DOTTED_QUAD.match(host):
            raise UrlRefused(
                f"Not fetched: {host!r} is an unusual spelling of an IP address (decimal, octal, hex or "
                "shortened forms are not opened); write it as four decimal numbers."
            )
        ip = ipaddress.IPv4Address(host)
    else:
        try:
            host = host.encode("idna").decode("ascii").lower()
        except UnicodeError:
            raise UrlRefused(f"Not fetched: {host!r} is not a valid host name.") from None
        if not re.fullmatch(r"[a-z0-9.\-_]+", host) or ".." in host or host.startswith("."):
            raise UrlRefused(f"Not fetched: {host!r} is not a valid host name.")
    return FetchUrl(
        scheme=scheme,
        host=host,
        port=port if port is not None else DEFAULT_PORTS[scheme],
        path=parts.path or "/",
        query=parts.query,
        ip=ip,
    )


# --------------------------------------------------------------------------------------------- provenance


@dataclass(frozen=True)
class _Key:
    scheme: str | None  # None: a bare host, either scheme
    host: str
    port: int | None  # None: the scheme's default
    path: str
    query: str


def _key(url: str, *, bare: bool) -> _Key | None:
    try:
        parts = urlsplit(url if not bare else f"http://{url}")
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES or not parts.hostname or "@" in parts.netloc:
        return None
    if port == DEFAULT_PORTS[scheme] and not bare:
        port = None
    path = parts.path
    if path.endswith("/"):
        path = path[:-1]
    return _Key(None if bare else scheme, parts.hostname.lower(), port, path, parts.query)


def _same(candidate: _Key, typed: _Key) -> bool:
    if (candidate.host, candidate.path, candidate.query) != (typed.host, typed.path, typed.query):
        return False
    if typed.scheme is None:  # bare host: either scheme, the port as written
        default = DEFAULT_PORTS[candidate.scheme or "http"]
        return (candidate.port or default) == (typed.port or default)
    if candidate.port != typed.port:
        return False
    return candidate.scheme == typed.scheme or (typed.scheme == "http" and candidate.scheme == "https")


def is_user_url(url: str, user_turns: Iterable[str]) -> bool:
    """Did the user write this address (as the rules in the module docstring compare it)?"""
    if not isinstance(url, str) or _CONTROL_OR_SPACE.search(url.strip()):
        return False
    candidate = _key(url.strip(), bare=False)
    if candidate is None:
        return False
    for typed in user_typed_urls(user_turns):
        key = _key(typed, bare="://" not in typed)
        if key is not None and _same(candidate, key):
            return True
    return False


def check_user_url(url: str, user_turns: Iterable[str]) -> None:
    """Raise :class:`UrlRefused` unless the user wrote ``url``."""
    if not is_user_url(url, user_turns):
        raise UrlRefused(NOT_TYPED_MESSAGE)


# --------------------------------------------------------------------------------------------- address


def embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, compatible, 6to4, NAT64, Teredo), if any."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if any(ip in net for net in _NAT64):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip in _IPV4_COMPATIBLE and int(ip) > 1:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def _reason(ip: IPAddress) -> str | None:
    if ip.is_unspecified:
        return "an unspecified address"
    if ip.is_loopback:
        return "a loopback address (this machine)"
    if ip == _METADATA:
        return "the cloud metadata address"
    if ip.is_link_local:
        return "a link-local address"
    if isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT:
        return "a shared (carrier-grade NAT) address"
    if isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local:
        return "a site-local address"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_private:
        return "a private-network address"
    if ip.is_reserved:
        return "a reserved address"
    if not ip.is_global:
        return "not a public address"
    for net in SPECIAL_PURPOSE:
        if ip.version == net.version and ip in net:
            return f"in the special-purpose block {net}"
    return None


def check_public_address(ip: IPAddress | str) -> None:
    """Raise :class:`AddressRefused` unless ``ip`` is a public unicast address."""
    try:
        if isinstance(ip, ipaddress.IPv4Address | ipaddress.IPv6Address):
            address: IPAddress = ip
        else:
            address = ipaddress.ip_address(str(ip).split("%", 1)[0])
    except ValueError:
        raise AddressRefused(f"Not fetched: {ip!r} is not an IP address.") from None
    if isinstance(address, ipaddress.IPv6Address):
        inner = embedded_ipv4(address)
        if inner is not None:
            why = _reason(inner)
            if why:
                raise AddressRefused(f"Not fetched: {address} carries {inner}, which is {why}.")
    why = _reason(address)
    if why:
        raise AddressRefused(
            f"Not fetched: {address} is {why}; web_fetch only opens public internet addresses."
        )
