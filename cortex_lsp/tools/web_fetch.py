"""The ``web_fetch`` tool: open a web page the user named and return its readable text.

It holds against a hostile model and hostile pages:

- it opens only an address the user wrote in this conversation (:mod:`cortex_lsp.guards.urls`);
- it resolves the host itself (``getaddrinfo`` in a thread), checks **every** address, and connects to
  the address it checked: the request goes to the IP literal, with the ``Host`` header and the TLS
  server name (SNI, certificate check) set to the host name, so no second resolution can rebind it;
- redirects are followed by hand (at most 5); every new host is resolved and checked the same way, and
  an https → http downgrade is refused;
- robots.txt (user agent ``CortexLSP``) is honoured, fetched through the same checked path;
- binary media types are refused from the Content-Type before any body byte is read; bodies are
  streamed and stop at 2 MB; HTML becomes readable text or markdown; the output is capped.

The address check and the resolver can be replaced **for tests only** (constructor arguments), so the
fetching logic can be exercised against a local test server; the default constructor always uses the
real check and the system resolver. Proxies from the environment are never used (a proxy would
resolve the name again).
"""

from __future__ import annotations

import asyncio
import codecs
import ipaddress
import re
import socket
import ssl
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urljoin
from urllib.robotparser import RobotFileParser

import html2text
import httpx

from cortex_lsp.guards.urls import (
    FetchUrl,
    IPAddress,
    UrlRefused,
    check_public_address,
    check_user_url,
    parse_fetch_url,
)
from cortex_lsp.intent.asks import fetch_urls
from cortex_lsp.intent.provenance import request_text
from cortex_lsp.tools.base import BaseTool, ToolContext, ToolResult
from cortex_lsp.tools.details import FetchFailure, PageFetch

USER_AGENT = "CortexLSP"
MAX_REDIRECTS = 5
MAX_BODY_BYTES = 2 * 1024 * 1024
MAX_ROBOTS_BYTES = 512 * 1024
MAX_OUTPUT_CHARS = 12_000
CONNECT_TIMEOUT = 10.0
_REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})
_TEXT_TYPES = frozenset(
    {
        "application/json", "application/ld+json", "application/xml", "application/xhtml+xml",
        "application/rss+xml", "application/atom+xml", "application/javascript", "application/x-javascript",
        "application/ecmascript", "application/yaml", "application/x-yaml", "application/toml",
        "application/x-sh", "application/sql", "application/csv",
    }
)
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_DROP_ELEMENTS = re.compile(r"(?is)<(script|style|noscript|template|svg|iframe)\b.*?</\1\s*>")
_COMMENTS = re.compile(r"(?s)<!--.*?-->")
_META_CHARSET = re.compile(rb"""(?i)<meta[^>]+charset\s*=\s*["']?([a-z0-9_\-:.]+)""")
_BLANK_LINES = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")

Resolver = Callable[[str, int], Awaitable[list[IPAddress]]]
AddressPolicy = Callable[[IPAddress], None]


class FetchRefused(Exception):
    """A fetch stopped by a rule or a failure; the message is what the model is told."""


class TooManyRedirects(FetchRefused):
    """More than :data:`MAX_REDIRECTS` redirects."""


async def system_resolver(host: str, port: int) -> list[IPAddress]:
    """Every address ``host`` resolves to (``getaddrinfo`` in the loop's thread pool), in order."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    out: list[IPAddress] = []
    for _family, _type, _proto, _canon, sockaddr in infos:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if address not in out:
            out.append(address)
    return out


def default_ssl_context() -> ssl.SSLContext:
    """TLS verified against the operating system's trust store (``truststore``), else certifi's."""
    try:
        import truststore

        return truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    except Exception:  # truststore missing or the platform store unusable
        return ssl.create_default_context()


@dataclass
class Page:
    url: FetchUrl
    status: int
    content_type: str
    body: bytes
    truncated: bool
    address: str
    charset: str | None = None


@dataclass
class _Session:
    """One tool call: the pinned addresses (one resolution per host), a client per host name (so a
    TLS connection made for one name is never reused for another), and robots.txt verdicts."""

    resolver: Resolver
    policy: AddressPolicy
    ssl_context: ssl.SSLContext
    read_timeout: float
    pins: dict[tuple[str, int], list[IPAddress]] = field(default_factory=dict)
    clients: dict[str, httpx.AsyncClient] = field(default_factory=dict)
    robots: dict[tuple[str, str, int], RobotFileParser | bool] = field(default_factory=dict)
    resolutions: int = 0

    async def close(self) -> None:
        for client in self.clients.values():
            await client.aclose()

    def _client(self, host: str) -> httpx.AsyncClient:
        client = self.clients.get(host)
        if client is None:
            client = httpx.AsyncClient(
                verify=self.ssl_context,
                trust_env=False,  # no proxies: they would resolve the name again
                follow_redirects=False,
                timeout=httpx.Timeout(self.read_timeout, connect=CONNECT_TIMEOUT),
                headers={"User-Agent": USER_AGENT},
            )
            self.clients[host] = client
        return client

    async def _addresses(self, url: FetchUrl) -> list[IPAddress]:
        """Resolve once, check every address, remember the answer for the rest of the call."""
        key = (url.host, url.port)
        if key in self.pins:
            return self.pins[key]
        if url.ip is not None:
            addresses = [url.ip]
        else:
            self.resolutions += 1
            try:
                addresses = await self.resolver(url.host, url.port)
            except (OSError, UnicodeError) as exc:
                raise FetchRefused(f"Could not resolve {url.host}: {exc}.") from None
            if not addresses:
                raise FetchRefused(f"Could not resolve {url.host}: no addresses.")
        for address in addresses:
            try:
                self.policy(address)
            except UrlRefused as exc:
                where = "" if url.ip is not None else f"{url.host} resolves to {address}. "
                raise FetchRefused(f"{where}{exc}") from None
        self.pins[key] = addresses
        return addresses

    async def _send(self, url: FetchUrl) -> tuple[httpx.Response, IPAddress]:
        """GET ``url`` from one of its checked addresses (first that connects); the response streams."""
        addresses = await self._addresses(url)
        client = self._client(url.host)
        extensions: dict[str, Any] = {}
        if url.scheme == "https" and url.ip is None:
            extensions["sni_hostname"] = url.host
        failure: Exception | None = None
        for address in addresses:
            literal = f"[{address}]" if address.version == 6 else str(address)
            request = client.build_request(
                "GET",
                f"{url.scheme}://{literal}:{url.port}{url.target}",
                headers={"Host": url.host_header, "Accept": "text/html,text/*;q=0.9,*/*;q=0.5"},
                extensions=extensions,
            )
            try:
                return await client.send(request, stream=True), address
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                failure = exc
        raise FetchRefused(f"Could not connect to {url.host_header}: {failure}.")

    async def follow(self, url: FetchUrl, *, obey_robots: bool) -> tuple[FetchUrl, httpx.Response, str]:
        """GET ``url``, following up to 5 redirects by hand; each hop passes every check again."""
        for hop in range(MAX_REDIRECTS + 1):
            if obey_robots and not await self.robots_allow(url):
                raise FetchRefused(f"Not fetched: robots.txt of {url.host_header} disallows {url.target} "
                                   f"for {USER_AGENT}.")
            response, address = await self._send(url)
            location = response.headers.get("location")
            if response.status_code not in _REDIRECT_CODES or not location:
                return url, response, str(address)
            await response.aclose()
            if hop == MAX_REDIRECTS:
                raise TooManyRedirects(f"Not fetched: more than {MAX_REDIRECTS} redirects.")
            try:
                following = parse_fetch_url(urljoin(str(url), location))
            except UrlRefused as exc:
                raise FetchRefused(f"The redirect from {url} was refused. {exc}") from None
            if url.scheme == "https" and following.scheme == "http":
                raise FetchRefused(f"Not fetched: {url} redirects to plain http ({following}); "
                                   "a downgrade from https is refused.")
            url = following
        raise TooManyRedirects("Not fetched: too many redirects.")  # pragma: no cover - unreachable

    async def robots_allow(self, url: FetchUrl) -> bool:
        key = url.origin
        verdict = self.robots.get(key)
        if verdict is None:
            verdict = await self._load_robots(url)
            self.robots[key] = verdict
        if isinstance(verdict, bool):
            return verdict
        return verdict.can_fetch(USER_AGENT, str(url))

    async def _load_robots(self, url: FetchUrl) -> RobotFileParser | bool:
        """robots.txt of ``url``'s origin: a parser, or True (allow all) / False (disallow all)."""
        robots_url = replace(url, path="/robots.txt", query="")
        try:
            _final, response, _address = await self.follow(robots_url, obey_robots=False)
        except TooManyRedirects:
            return True  # a redirect loop counts as no robots.txt
        try:
            if response.status_code in (401, 403):
                return False
            if 400 <= response.status_code < 500:
                return True
            if response.status_code >= 500:
                raise FetchRefused(f"Not fetched: robots.txt of {url.host_header} is unavailable "
                                   f"(HTTP {response.status_code}); try again later.")
            body, _cut = await read_capped(response, MAX_ROBOTS_BYTES)
        finally:
            await response.aclose()
        parser = RobotFileParser()
        parser.parse(body.decode("utf-8", errors="replace").splitlines())
        return parser


async def read_capped(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    """Read at most ``limit`` (decoded) bytes of a streamed body; True if there was more."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        if size + len(chunk) > limit:
            chunks.append(chunk[: limit - size])
            return b"".join(chunks), True
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks), False


def is_text_type(mime: str) -> bool:
    return mime.startswith("text/") or mime in _TEXT_TYPES or mime.endswith(("+json", "+xml"))


def _charset(page: Page) -> str:
    candidates = [page.charset]
    match = _META_CHARSET.search(page.body[:4096])
    if match:
        candidates.append(match.group(1).decode("ascii", errors="ignore"))
    for name in candidates:
        if not name:
            continue
        try:
            return codecs.lookup(name).name
        except LookupError:
            continue
    return "utf-8"


def html_to_text(html: str, *, markdown: bool, base_url: str = "") -> str:
    """Readable text of an HTML page: scripts, styles and comments dropped; links kept for markdown."""
    cleaned = _COMMENTS.sub(" ", _DROP_ELEMENTS.sub(" ", html))
    converter = html2text.HTML2Text(baseurl=base_url)
    converter.body_width = 0
    converter.ignore_images = True
    converter.unicode_snob = True
    converter.ignore_links = not markdown
    converter.ignore_emphasis = not markdown
    converter.single_line_break = False
    return converter.handle(cleaned)


def page_text(page: Page, fmt: str) -> str:
    text = page.body.decode(_charset(page), errors="replace")
    mime = page.content_type
    looks_html = text.lstrip()[:200].lower().startswith(("<!doctype html", "<html"))
    if mime in _HTML_TYPES or (not mime and looks_html):
        text = html_to_text(text, markdown=fmt == "markdown", base_url=str(page.url))
    text = _BLANK_LINES.sub("\n\n", text.replace("\r\n", "\n")).strip()
    return text


def cap_output(text: str, *, body_truncated: bool) -> str:
    notes = []
    if len(text) > MAX_OUTPUT_CHARS:
        notes.append(f"[... cut at {MAX_OUTPUT_CHARS:,} characters; {len(text) - MAX_OUTPUT_CHARS:,} more "
                     "not shown]")
        text = text[:MAX_OUTPUT_CHARS]
    if body_truncated:
        notes.append(f"[the page is larger than {MAX_BODY_BYTES // (1024 * 1024)} MB; only the first "
                     f"{MAX_BODY_BYTES // (1024 * 1024)} MB were read]")
    if not text:
        text = "(the page has no readable text)"
    return "\n".join([text, *notes])


class WebFetchTool(BaseTool):
    """``web_fetch``. ``resolver``, ``address_policy`` and ``ssl_context`` exist for tests only."""

    name = "web_fetch"
    description = (
        "Fetch a web page by its full URL and return its readable text. Only opens an address the user "
        "wrote in this conversation, exactly as written."
    )
    parameters = {
        "type": "object",
        "properties": {
            "url": {"type": "string", "description": "the address exactly as the user wrote it"},
            "format": {"type": "string", "enum": ["text", "markdown"]},
        },
        "required": ["url"],
        "additionalProperties": False,
    }

    def __init__(
        self,
        *,
        resolver: Resolver | None = None,
        address_policy: AddressPolicy | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self._resolver: Resolver = resolver or system_resolver
        self._policy: AddressPolicy = address_policy or check_public_address
        self._ssl_context = ssl_context

    def repair_arguments(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        args = dict(arguments)
        if isinstance(args.get("url"), str):
            args["url"] = args["url"].strip().strip("<>")
        if isinstance(args.get("format"), str):
            args["format"] = args["format"].strip().lower()
        return args

    async def execute(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        if not context.settings.web_fetch_enabled:
            return self.fail("web_fetch is turned off in the settings (web_fetch_enabled: false).")
        raw = arguments.get("url")
        fmt = arguments.get("format") or "markdown"
        if not isinstance(raw, str):
            return self.fail("Give the URL as a string.")
        try:
            url = parse_fetch_url(raw)
            # only the user's own words of each turn: a URL inside pasted or quoted material is data
            # and only one a granting fetch/open/summarize action names ("never fetch X", "is X a
            # phishing link?" grant nothing): refused here, before any DNS lookup
            turns = [request_text(turn) for turn in context.user_turns if isinstance(turn, str)]
            check_user_url(raw, [" ".join(fetch_urls(t)) for t in [*turns, context.user_words]])
        except UrlRefused as exc:
            return self.fail(str(exc), detail=FetchFailure(raw), refused=True)
        if self._ssl_context is None:
            self._ssl_context = default_ssl_context()
        budget = max(1.0, context.settings.tool_timeout_seconds - 0.5)
        session = _Session(self._resolver, self._policy, self._ssl_context, read_timeout=min(budget, 20.0))
        try:
            async with asyncio.timeout(budget):
                page = await self._fetch(session, url)
        except FetchRefused as exc:
            return self.fail(str(exc), detail=FetchFailure(raw, session.resolutions))
        except TimeoutError:
            return self.fail(f"Not fetched: {url} did not answer within {budget:g} s.",
                             detail=FetchFailure(raw, session.resolutions))
        except httpx.HTTPError as exc:
            return self.fail(f"Could not fetch {url}: {exc.__class__.__name__}: {exc}.",
                             detail=FetchFailure(raw, session.resolutions))
        finally:
            await session.close()
        return self.ok(
            cap_output(page_text(page, fmt), body_truncated=page.truncated),
            detail=PageFetch(url=raw, final_url=str(page.url), status=page.status, content_type=page.content_type,
                             bytes_read=len(page.body), truncated=page.truncated, address=page.address,
                             resolutions=session.resolutions),
        )

    async def _fetch(self, session: _Session, url: FetchUrl) -> Page:
        final, response, address = await session.follow(url, obey_robots=True)
        try:
            if response.status_code >= 400:
                raise FetchRefused(f"{final} answered HTTP {response.status_code} "
                                   f"{response.reason_phrase}.".replace(" .", "."))
            mime = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if mime and not is_text_type(mime):
                raise FetchRefused(f"Not fetched: {final} is {mime}, not a text page; web_fetch reads only "
                                   "text (HTML, plain text, JSON, XML).")
            body, truncated = await read_capped(response, MAX_BODY_BYTES)
        finally:
            await response.aclose()
        if not mime and b"\x00" in body[:4096]:
            raise FetchRefused(f"Not fetched: {final} looks like binary data, not a text page.")
        return Page(final, response.status_code, mime, body, truncated, address, response.charset_encoding)
