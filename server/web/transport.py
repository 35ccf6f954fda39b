"""The web listener's HTTP connections, with the limits of `[limits]` (`server.config.limits`).

twisted.web reads a request's whole body before anything sees it, parses a posted form on the
reactor thread, restarts its idle timeout with every byte and takes any number of connections.
This module is the listener's `Site` (`GuardedSite`), its connections (`GuardedChannel`) and
requests (`GuardedRequest`), which instead:

* bound every body by its route (`Router.body_limit`: a form 16 KiB, a JSON document 64 KiB,
  nothing much elsewhere): a `Content-Length` over the limit is answered 413 as soon as the
  headers are in, before a byte of the body is read; a chunked body is counted as it comes
  and refused at the limit; the bytes already sent are read and dropped for at most
  `LINGER_S` (so that the client reads the answer instead of a reset), then the connection is
  closed. Forms are never parsed by twisted.web (`parsePOSTFormSubmission=False`): the pages
  parse their small, bounded forms themselves (`server.web.forms`);
* give a request deadlines that bytes do not extend: its headers must be in within
  `web_header_seconds` of its first byte and its body within `web_body_seconds` after them
  (408 otherwise); a connection with no request under way is closed after `web_idle_seconds`;
* count connections per client address (`web_connections_per_address`; IPv6 by /64; a
  trusted proxy or another node of the cluster has no such limit) and take them from the
  descriptors that `tp_descriptor_share` leaves to the listeners other than TP
  (`server.guards.connections`); a connection beyond is answered 429 (its address) or 503 (the
  listener is full) and closed;
* allow each client address `web_requests_per_second` requests a second after a burst of
  `web_request_burst`; beyond: 429 with `Retry-After`;
* send no `Server` version, and `Strict-Transport-Security` over TLS (also when a trusted
  proxy says the client used https).

Every refusal made here has a text and the form the path wants (`WebGuards.shape`: JSON under
/api/, a page elsewhere). Times come from an injected clock.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.internet.protocol import Protocol
from twisted.logger import Logger
from twisted.web.http import HTTPChannel
from twisted.web.server import Request, Site

from server.config.limits import Limits
from server.guards.connections import ConnectionLimiter, DescriptorShare
from server.guards.login_guard import GuardedClient, LoginGuard
from server.guards.proxies import TrustedProxies
from server.guards.rates import RateTable, address_key
from server.web.relay import client_address, is_secure

log = Logger()

#: After a refusal of a body, bytes the client still sends are read and dropped this long.
LINGER_S = 1.0
LINGER_BYTES = 8 * 2**20
#: A connection refused for its address's share: its request line must come this fast.
REFUSED_PEEK_S = 2.0
REFUSED_PEEK_BYTES = 8192
#: Connections answered "too many" at the same time; beyond, they are closed unanswered.
REFUSING_AT_ONCE = 512
#: A refusal of connections is logged once per address and this many seconds.
REFUSAL_LOG_S = 60.0
HSTS = b"max-age=31536000"

TOO_MANY_CONNECTIONS = "Too many connections from your address (at most {limit}); close some and try again."
LISTENER_FULL = "The server is busy; try again shortly."
TOO_MANY_REQUESTS = "Too many requests from your address; slow down and try again in {wait} s."
TOO_LARGE = "The request body is too large: at most {limit} bytes here."
TOO_SLOW = "The request took too long to arrive; the connection is closed."
BAD_REQUEST = "That is not an HTTP request this server understands."

Shape = Callable[[Any, int, str], bytes]


@dataclass
class WebGuards:
    """What the listener's connections and requests need: the limits, the clock, the trusted
    proxies, the connection and request counters, the body limit of a request line's method
    and path, and how to shape a refusal (`pages.refusal_body`)."""

    limits: Limits
    clock: IReactorTime
    proxies: TrustedProxies = field(default_factory=TrustedProxies)
    body_limit: Callable[[bytes, bytes], int] = lambda method, path: 1024
    shape: Shape | None = None
    share: DescriptorShare | None = None
    login_guard: LoginGuard | None = None
    exempt_host: Callable[[str], bool] = lambda host: False
    connections: ConnectionLimiter = field(init=False)
    requests: RateTable | None = field(init=False)
    refusing: int = 0
    _noted: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        limits = self.limits
        if self.share is None:
            self.share = DescriptorShare(limits.tp_descriptor_share)
        self.connections = ConnectionLimiter(limits.web_connections_per_address, self.share)
        self.requests = (
            RateTable(limits.web_requests_per_second, limits.web_request_burst)
            if limits.web_requests_per_second
            else None
        )

    def exempt(self, host: str) -> bool:
        """A peer without a per-address limit: a trusted proxy, another node of the cluster."""
        return self.proxies.trusts(host) or self.exempt_host(host)

    def note_refusal(self, key: str, why: str) -> None:
        """Log a refused connection, at most once per address and `REFUSAL_LOG_S`."""
        now = self.clock.seconds()
        if now - self._noted.get(key, -math.inf) < REFUSAL_LOG_S:
            return
        if len(self._noted) > 4096:
            self._noted.clear()
        self._noted[key] = now
        log.warn("web: refusing connections from {address}: {why}", address=key, why=why)

    def seconds(self, name: str) -> float:
        return float(getattr(self.limits, name) or 0)


def _shaped(guards: WebGuards, request: Any, status: int, text: str) -> tuple[bytes, bytes]:
    """(content type, body) of a refusal the transport makes."""
    if guards.shape is None:
        return b"text/plain; charset=utf-8", text.encode()
    request.setHeader(b"content-type", b"text/plain; charset=utf-8")
    body = guards.shape(request, status, text)
    content_type = request.responseHeaders.getRawHeaders(b"content-type", [b"text/plain; charset=utf-8"])
    return content_type[-1], body


_REASONS = {
    400: b"Bad Request",
    408: b"Request Timeout",
    413: b"Content Too Large",
    429: b"Too Many Requests",
    503: b"Service Unavailable",
}


def _raw_answer(status: int, content_type: bytes, body: bytes, extra: dict[bytes, bytes]) -> bytes:
    """A whole HTTP/1.1 answer that closes the connection, with the security headers."""
    from server.web.routing import SECURITY_HEADERS

    lines = [b"HTTP/1.1 %d %s" % (status, _REASONS.get(status, b"Refused"))]
    headers = {
        **SECURITY_HEADERS,
        b"content-type": content_type,
        b"content-length": b"%d" % len(body),
        b"cache-control": b"no-store",
        b"connection": b"close",
        **extra,
    }
    lines.extend(name + b": " + value for name, value in headers.items())
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


class GuardedRequest(Request):
    """A request whose body is bounded, whose form is not parsed by twisted.web, which is
    counted against its client's request rate, and which sends no `Server` version."""

    def __init__(self, channel, *args, **kwargs):
        kwargs["parsePOSTFormSubmission"] = False
        super().__init__(channel, *args, **kwargs)
        self._body_limit = 0
        self._body_seen = 0

    @property
    def guards(self) -> WebGuards | None:
        return getattr(getattr(self.channel, "site", None), "guards", None)

    def gotLength(self, length):
        guards = self.guards
        channel = self.channel
        self.content = io.BytesIO()
        if guards is None:
            return
        method = getattr(channel, "_command", b"GET")
        path = getattr(channel, "_path", b"/")
        self._body_limit = guards.body_limit(method, path)
        if length is not None and length > self._body_limit:
            channel.refuse(413, TOO_LARGE.format(limit=self._body_limit))

    def handleContentChunk(self, data):
        if getattr(self.channel, "refusing", False):
            return
        self._body_seen += len(data)
        if self.guards is not None and self._body_seen > self._body_limit:
            self.channel.refuse(413, TOO_LARGE.format(limit=self._body_limit))
            return
        self.content.write(data)

    def requestReceived(self, command, path, version):
        if getattr(self.channel, "refusing", False):
            return
        super().requestReceived(command, path, version)

    def process(self):
        guards = self.guards
        if guards is not None and guards.requests is not None and not self._from_a_node(guards):
            key = address_key(client_address(self))
            now = guards.clock.seconds()
            if not guards.requests.take(key, now):
                wait = max(1, math.ceil(guards.requests.wait(key, now)))
                self._answer_now(
                    guards, 429, TOO_MANY_REQUESTS.format(wait=wait), {b"retry-after": b"%d" % wait}
                )
                return
        super().process()

    def _from_a_node(self, guards: WebGuards) -> bool:
        """A request another node of the cluster relayed (it counted the client's rate)."""
        peer = getattr(self.getClientAddress(), "host", "") or ""
        return guards.exempt_host(str(peer))

    def _answer_now(self, guards: WebGuards, status: int, text: str, headers: dict[bytes, bytes]) -> None:
        from server.web.routing import SECURITY_HEADERS

        self.site = self.channel.site  # type: ignore[attr-defined]
        self.setResponseCode(status)
        for name, value in {**SECURITY_HEADERS, **headers}.items():
            self.setHeader(name, value)
        content_type, body = _shaped(guards, self, status, text)
        self.setHeader(b"content-type", content_type)
        self.setHeader(b"content-length", b"%d" % len(body))
        self.setHeader(b"cache-control", b"no-store")
        self.write(body)
        self.finish()

    def write(self, data):
        if not self.startedWriting:
            self.responseHeaders.removeHeader(b"server")
            if is_secure(self):
                self.setHeader(b"strict-transport-security", HSTS)
        super().write(data)


IDLE, HEADERS, BODY, HANDLING = "idle", "headers", "body", "handling"


class GuardedChannel(HTTPChannel):
    """One web connection: its deadlines, its share of the connections of its address, its
    login brake clients (`login_client`), and refusals written before a request is read."""

    site: Any

    def __init__(self) -> None:
        super().__init__()
        self.refusing = False
        self.address = ""
        self.counted = False
        self.phase = IDLE
        self._deadline: IDelayedCall | None = None
        self._lingered = 0
        self._logins: dict[str, GuardedClient] = {}

    @property
    def guards(self) -> WebGuards:
        return self.site.guards

    # -- deadlines ---------------------------------------------------------------------------

    def connectionMade(self):
        super().connectionMade()
        self.setTimeout(None)  # our deadlines instead of an idle timeout every byte restarts
        self._arm(IDLE)

    def _arm(self, phase: str) -> None:
        if self._deadline is not None and self._deadline.active():
            self._deadline.cancel()
        self._deadline = None
        self.phase = phase
        seconds = {
            IDLE: "web_idle_seconds",
            HEADERS: "web_header_seconds",
            BODY: "web_body_seconds",
        }.get(phase)
        if seconds is None or self.refusing:
            return
        limit = self.guards.seconds(seconds)
        if limit:
            self._deadline = self.guards.clock.callLater(limit, self._expired, phase)

    def _expired(self, phase: str) -> None:
        self._deadline = None
        if phase == IDLE:
            self.loseConnection()
        else:
            self.refuse(408, TOO_SLOW)

    def dataReceived(self, data):
        if self.refusing:
            self._lingered += len(data)
            if self._lingered > LINGER_BYTES:
                self.transport.abortConnection()
            return
        if self.phase == IDLE and data:
            self._arm(HEADERS)
        super().dataReceived(data)

    def lineReceived(self, line):
        if not self.refusing:  # after a refusal the rest of what was read is dropped
            super().lineReceived(line)

    def rawDataReceived(self, data):
        if not self.refusing:
            super().rawDataReceived(data)

    def allHeadersReceived(self):
        if self.refusing:
            return
        self._arm(BODY)
        super().allHeadersReceived()

    def allContentReceived(self):
        if self.refusing:
            return
        self._arm(HANDLING)
        super().allContentReceived()

    def requestDone(self, request):
        if self.persistent and not self.refusing:
            self._arm(IDLE)  # before buffered bytes of the next request are parsed
        super().requestDone(request)

    def _send100Continue(self):
        if not self.refusing:
            super()._send100Continue()

    def _respondToBadRequestAndDisconnect(self):
        self.refuse(400, BAD_REQUEST)

    # -- refusals written here ---------------------------------------------------------------

    def refuse(self, status: int, text: str) -> None:
        """Answer `status` with `text` now, whatever state the request is in, and close the
        connection (after reading and dropping what the client still sends, for a moment)."""
        if self.refusing:
            return
        self.refusing = True
        self.persistent = False
        self._arm(HANDLING)
        path = getattr(self, "_path", None) or b"/"
        request: Any = self.requests[-1] if self.requests else None
        if request is None or getattr(request, "path", None) is None:
            request = _Stand_in(path, request)
        content_type, body = _shaped(self.guards, request, status, text)
        transport: Any = self.transport
        transport.write(_raw_answer(status, content_type, body, {}))
        lose_write = getattr(transport, "loseWriteConnection", None)
        if lose_write is not None:
            try:
                lose_write()
            except Exception:  # a transport without half-close
                pass
        self.guards.clock.callLater(LINGER_S, self._end)

    def _end(self) -> None:
        transport: Any = self.transport
        if transport is not None and getattr(transport, "connected", False):
            transport.abortConnection()

    # -- the login brake -----------------------------------------------------------------------

    def login_client(self, address: str) -> GuardedClient | None:
        """This connection's client of the login brake for the client `address` (a proxy's
        connection carries several)."""
        guard = self.guards.login_guard
        if guard is None:
            return None
        client = self._logins.get(address)
        if client is None:
            if len(self._logins) >= 64:  # a proxy's long connection: the oldest is let go
                oldest = next(iter(self._logins))
                self._logins.pop(oldest).lost()
            client = self._logins[address] = guard.client(address, "web")
        return client

    def connectionLost(self, reason):
        if self._deadline is not None and self._deadline.active():
            self._deadline.cancel()
        self._deadline = None
        for client in self._logins.values():
            client.lost()
        self._logins.clear()
        if self.counted:
            self.counted = False
            self.guards.connections.close(self.address)
        super().connectionLost(reason)


class RefusedConnection(Protocol):
    """A connection beyond its address's share (or the listener's): its request line is read
    (to answer in the form the path wants), then it is answered and closed."""

    def __init__(self, guards: WebGuards, status: int, text: str):
        self.guards = guards
        self.status = status
        self.text = text
        self.buffer = b""
        self.done = False
        self._timer: IDelayedCall | None = None

    def connectionMade(self) -> None:
        self.guards.refusing += 1
        self._timer = self.guards.clock.callLater(REFUSED_PEEK_S, self._answer)

    def dataReceived(self, data: bytes) -> None:
        if self.done:
            return
        self.buffer += data
        if b"\n" in self.buffer or len(self.buffer) >= REFUSED_PEEK_BYTES:
            self._answer()

    def _answer(self) -> None:
        if self.done:
            return
        self.done = True
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        first = self.buffer.split(b"\n", 1)[0].split()
        path = first[1] if len(first) >= 2 else b"/"
        request = _Stand_in(path)
        content_type, body = _shaped(self.guards, request, self.status, self.text)
        extra = {b"retry-after": b"10"}
        transport: Any = self.transport
        if transport is not None:
            transport.write(_raw_answer(self.status, content_type, body, extra))
            transport.loseConnection()

    def connectionLost(self, reason=None) -> None:
        self.done = True
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self.guards.refusing = max(0, self.guards.refusing - 1)


class _Stand_in:
    """Just enough of a request for `WebGuards.shape` (its path, its headers), for a refusal
    before the request line or the headers were all read."""

    def __init__(self, path: bytes, request: Any = None):
        from twisted.web.http_headers import Headers

        self.path = path.split(b"?", 1)[0]
        self.requestHeaders = getattr(request, "requestHeaders", None) or Headers()
        self.responseHeaders = Headers()

    def getHeader(self, name: bytes) -> bytes | None:
        values = self.requestHeaders.getRawHeaders(name)
        return values[-1] if values else None

    def setHeader(self, name: bytes, value: bytes) -> None:
        self.responseHeaders.setRawHeaders(name, [value])


class _Closed(Protocol):
    def connectionMade(self) -> None:
        transport: Any = self.transport
        transport.abortConnection()


class GuardedSite(Site):
    """The web listener's Site (see the module docstring); `guards` holds what it enforces."""

    noisy = False

    requestFactory = GuardedRequest
    protocol = GuardedChannel  # type: ignore[assignment]  # HTTP/1.1 only: no HTTP/2 upgrade

    def __init__(self, resource, guards: WebGuards, **kwargs):
        super().__init__(resource, parsePOSTFormSubmission=False, timeout=None, **kwargs)
        self.guards = guards

    def buildProtocol(self, addr):
        host = str(getattr(addr, "host", "") or "")
        key = address_key(host)
        guards = self.guards
        why = guards.connections.open(key, exempt=guards.exempt(host))
        if why is not None:
            limit = guards.connections.per_address
            guards.note_refusal(key, "too many connections" if why == ConnectionLimiter.ADDRESS else "full")
            if guards.refusing >= REFUSING_AT_ONCE:
                return _Closed()
            if why == ConnectionLimiter.ADDRESS:
                return RefusedConnection(guards, 429, TOO_MANY_CONNECTIONS.format(limit=limit))
            return RefusedConnection(guards, 503, LISTENER_FULL)
        channel = super().buildProtocol(addr)
        channel.address = key
        channel.counted = True
        return channel
