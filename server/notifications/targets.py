"""Where a webhook may point: nowhere inside the server's own network, unless the operator says so.

A webhook is a URL a player chose, which the server then POSTs to: without a rule it is a way
to make the server talk to its own admin port, to the database, to a cloud's metadata address
(169.254.169.254) or to anything else on its local network. So, as GitLab and Gitea do, a
webhook may not reach a loopback, private, link-local, shared (100.64/10), multicast,
unspecified or reserved address, nor any address that is not globally routable:

* when it is set, a URL whose host is such an address literally is refused (`check_literal`);
* when it is sent, the host name is resolved and the connection is made to a resolved address
  that is allowed (`CheckedEndpoints`, the Agent's endpoint factory), so a name that resolves
  to 127.0.0.1, or changes its answer between the two (DNS rebinding), is refused too; and
  redirects are never followed (an answer 3xx is a failure).

The operator may allow host names or networks (`[notifications] webhook_allow`, e.g.
`["hooks.internal", "10.1.0.0/16", "127.0.0.1"]`).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable
from typing import Any

from twisted.internet import defer, threads
from twisted.internet.endpoints import TCP4ClientEndpoint, TCP6ClientEndpoint, wrapClientTLS
from twisted.web.client import BrowserLikePolicyForHTTPS
from twisted.web.iweb import IAgentEndpointFactory
from zope.interface import implementer

from server.config.networks import parse_hosts_and_networks

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

NOT_ALLOWED = (
    "webhooks cannot point at a loopback, private, link-local or multicast address "
    "(the server's operator can allow one with webhook_allow)"
)


class TargetRefused(Exception):
    """The webhook's host is, or resolves only to, addresses webhooks may not reach."""


def _address(text: str) -> Address | None:
    try:
        address = ipaddress.ip_address(text.strip("[]").split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


class WebhookTargets:
    """The rule for webhook addresses, with the operator's `allow` list (host names or networks)."""

    def __init__(self, allow: Iterable[str] = ()):
        self.names, self.networks = parse_hosts_and_networks(allow)

    def allows_name(self, host: str) -> bool:
        return host.lower().rstrip(".") in self.names

    def allows(self, address: Address) -> bool:
        """Whether a webhook may connect to `address`."""
        if any(address in network for network in self.networks):
            return True
        return address.is_global and not address.is_multicast and not address.is_reserved

    def check_literal(self, host: str) -> None:
        """TargetRefused for a host written as an address webhooks may not reach."""
        address = _address(host)
        if address is not None and not self.allows_name(host) and not self.allows(address):
            raise TargetRefused(NOT_ALLOWED)

    def pick(self, host: str, addresses: Iterable[str]) -> str:
        """The first of a host's resolved addresses that a webhook may reach."""
        named = self.allows_name(host)
        seen = False
        for text in addresses:
            address = _address(text)
            if address is None:
                continue
            seen = True
            if named or self.allows(address):
                return str(address)
        if not seen:
            raise TargetRefused("the webhook's host name has no address")
        raise TargetRefused(NOT_ALLOWED)


def _getaddrinfo(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


Resolver = Callable[[str, int], Any]  # (host, port) -> Deferred[list[address text]]


@implementer(IAgentEndpointFactory)
class CheckedEndpoints:
    """The Agent's endpoints for webhooks: resolve the host, check the addresses, connect to
    an allowed one (TLS checked against the host name)."""

    def __init__(
        self,
        reactor: Any,
        targets: WebhookTargets,
        timeout: float,
        resolve: Resolver | None = None,
        tls: Any = None,
    ):
        self.reactor = reactor
        self.targets = targets
        self.timeout = timeout
        self.resolve = resolve or (lambda host, port: threads.deferToThread(_getaddrinfo, host, port))
        self.tls = tls or BrowserLikePolicyForHTTPS()

    def endpointForURI(self, uri: Any) -> _CheckedEndpoint:
        host = uri.host.decode("ascii") if isinstance(uri.host, bytes) else str(uri.host)
        return _CheckedEndpoint(self, host, int(uri.port), uri.scheme == b"https")


class _CheckedEndpoint:
    def __init__(self, owner: CheckedEndpoints, host: str, port: int, tls: bool):
        self.owner = owner
        self.host = host
        self.port = port
        self.tls = tls

    def connect(self, factory: Any) -> defer.Deferred:
        return defer.ensureDeferred(self._connect(factory))

    async def _connect(self, factory: Any) -> Any:
        owner = self.owner
        literal = _address(self.host)
        if literal is not None:
            addresses = [str(literal)]
        else:
            try:
                addresses = await defer.maybeDeferred(owner.resolve, self.host, self.port)
            except OSError:
                from twisted.internet.error import DNSLookupError

                raise DNSLookupError(self.host) from None
        chosen = owner.targets.pick(self.host, addresses)
        kind = TCP6ClientEndpoint if ":" in chosen else TCP4ClientEndpoint
        endpoint: Any = kind(owner.reactor, chosen, self.port, timeout=owner.timeout)
        if self.tls:
            creator = owner.tls.creatorForNetloc(self.host.encode("ascii"), self.port)
            endpoint = wrapClientTLS(creator, endpoint)
        return await endpoint.connect(factory)
