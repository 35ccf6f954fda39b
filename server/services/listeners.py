"""The listening ports of the server: bound first, held until the server is ready, then opened.

A start that fails must create and change nothing, so every port is bound before the database
is opened (a bad endpoint string is a configuration error before anything starts; a port in use
fails the start before the database is touched). A bound port is held: connections wait in the
backlog, unanswered, until every part of the server has started; then `OpenListeners` lets
them in and says, one line per port, which listener it is. The protocol factory of a port comes
after the port (`LateFactory`): the games it serves are loaded after the port was bound.

At stop, `OpenListeners` closes every port first, so that no one connects to a server that is
stopping; each `Listeners` service closes those that were bound by a start that failed.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from typing import Any

from twisted.internet import defer
from twisted.internet import protocol as twisted_protocol
from twisted.internet.endpoints import serverFromString
from twisted.internet.error import CannotListenError
from twisted.logger import Logger

from server.config.errors import ConfigError
from server.operating.game_actions import OperationError
from server.services.ordered import AsyncService

log = Logger()

#: The settings that name listeners, and what listens on them.
TP, WEB, ADMIN = "listen", "web", "admin.listen"


def with_backlog(description: str, backlog: int) -> str:
    """A tcp:, tcp6:, ssl: or unix: endpoint string with `backlog=` added (0: as it is)."""
    kind = description.split(":", 1)[0]
    if not backlog or kind not in ("tcp", "tcp6", "ssl", "unix") or "backlog=" in description:
        return description
    return f"{description}:backlog={backlog}"


class LateFactory(twisted_protocol.Factory):
    """The factory of a port bound before the factory that serves it exists (the port is held
    meanwhile, so no connection comes before `serve`)."""

    noisy = False

    def __init__(self) -> None:
        self.target: twisted_protocol.Factory[Any] | None = None

    def serve(self, target: twisted_protocol.Factory[Any]) -> None:
        self.target = target
        target.doStart()

    def stopFactory(self) -> None:
        """The last port stopped: so does the factory that served it."""
        if self.target is not None:
            self.target.doStop()

    def buildProtocol(self, addr):
        assert self.target is not None, "a held port accepted a connection"
        return self.target.buildProtocol(addr)


class Listeners(AsyncService):
    """The ports of one setting (`TP`, `WEB` or `ADMIN`): the endpoint strings are checked when
    the service is made (ConfigError), the ports bound and held when it starts (OperationError
    for a port that cannot be had), served by the factory given to `serve`, let in by `open`."""

    def __init__(self, setting: str, descriptions: Sequence[str], reactor, *, backlog: int = 0):
        self.setName(setting)
        self.setting = setting
        self.descriptions = tuple(descriptions)
        self.endpoints = [(d, _endpoint(reactor, d, setting, backlog)) for d in self.descriptions]
        self.factory = LateFactory()
        self.ports: list[Any] = []  # IListeningPort, in the order of `descriptions`
        self._listening: list[Any] = []

    async def start(self) -> None:
        for description, endpoint in self.endpoints:
            try:
                port = await endpoint.listen(self.factory)
            except CannotListenError as error:
                reason = getattr(error.socketError, "strerror", None) or error.socketError
                raise OperationError(f"{self.setting}: cannot listen on {description!r}: {reason}") from None
            _hold(port)
            self.ports.append(port)
            self._listening.append(port)

    def serve(self, factory: twisted_protocol.Factory[Any]) -> None:
        """Serve the ports with `factory` (once the parts it needs have started)."""
        self.factory.serve(factory)

    def open(self) -> None:
        """Let connections in, and say where."""
        for description, port in zip(self.descriptions, self.ports, strict=True):
            _release(port)
            announce(self.setting, description, port.getHost())

    async def close(self) -> None:
        """Stop listening (the ports not closed yet); the connections made stay."""
        ports, self._listening = self._listening, []
        results = await defer.DeferredList(
            [defer.maybeDeferred(p.stopListening) for p in ports], consumeErrors=True
        )
        for ok, failure in results:
            if not ok:
                log.failure("stopping a {setting} listener failed", failure, setting=self.setting)

    async def stop(self) -> None:
        await self.close()


class OpenListeners(AsyncService):
    """Opens the held ports once the server is ready; at stop, closes them all first."""

    def __init__(self, listeners: Sequence[Listeners]):
        self.setName("open listeners")
        self.listeners = tuple(listeners)

    async def start(self) -> None:
        for listeners in self.listeners:
            listeners.open()

    async def stop(self) -> None:
        await defer.gatherResults([defer.ensureDeferred(each.close()) for each in self.listeners])


def announce(setting: str, description: str, address: Any) -> None:
    """One line for a listener that opened: where, and which it is (for the web listener, the
    address to open in a browser on this machine)."""
    tls = description.split(":", 1)[0] == "ssl"
    host = getattr(address, "host", None)
    port = getattr(address, "port", None)
    if host is None:  # a unix socket
        name = getattr(address, "name", None)
        where, every = os.fsdecode(name) if name else "?", ""
    else:
        where = f"{_url_host(host)}:{port}"
        every = " (every interface)" if host in ("0.0.0.0", "::") else ""
    fields: dict[str, Any] = {"host": host, "port": port, "tls": tls}
    if setting == WEB:
        fields["listener"], what = "web", "the web pages and JSON API"
        url = web_url(description, address, local=True)
        if url is not None:
            fields["url"] = url + "/"
            what += f": open {fields['url']}"
    elif setting == ADMIN:
        fields["listener"], what = "admin", f"the admin protocol ({'TLS' if tls else 'plain TCP'})"
    else:
        fields["listener"], what = ("tls", "TP over TLS") if tls else ("tp", "TP")
    log.info("listening on {where}{every} for {what}", where=where, every=every, what=what, **fields)


def web_url(description: str, address: Any, *, local: bool = False) -> str | None:
    """`http://HOST:PORT` of a web listener bound at `address` (None for a unix socket). A
    listener on every interface is named by this machine's name, or with `local` by the
    loopback address (what to open in a browser here)."""
    host, port = getattr(address, "host", None), getattr(address, "port", None)
    if host is None:
        return None
    if host in ("0.0.0.0", "::"):
        host = {"0.0.0.0": "127.0.0.1", "::": "::1"}[host] if local else socket.getfqdn()
    scheme = "https" if description.split(":", 1)[0] == "ssl" else "http"
    return f"{scheme}://{_url_host(host)}:{port}"


def first_web_url(listeners: Listeners | None) -> str | None:
    """The address of the first web listener of `listeners` that has one, once bound."""
    if listeners is None:
        return None
    for description, port in zip(listeners.descriptions, listeners.ports, strict=False):
        url = web_url(description, port.getHost())
        if url is not None:
            return url
    return None


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _endpoint(reactor, description: str, setting: str, backlog: int):
    try:
        return serverFromString(reactor, with_backlog(description, backlog))
    except (ValueError, TypeError, KeyError) as error:
        raise ConfigError(f"{setting}: {description!r} is not a usable endpoint ({error})") from None


def _hold(port) -> None:
    """Accept no connection on `port` yet (they wait in the backlog until `_release`)."""
    stop = getattr(port, "stopReading", None)
    if stop is not None:
        stop()


def _release(port) -> None:
    start = getattr(port, "startReading", None)
    if start is not None:
        start()
