"""Who the client is behind a reverse proxy: the `trusted_proxies` setting.

Behind a proxy every connection comes from the proxy's address, so the brakes and limits that
count by address (`server.guards.rates.address_key`) would count every player as one. A proxy
names the client in `X-Forwarded-For` (and says whether the client used TLS in
`X-Forwarded-Proto`); anyone can send those headers, so they are believed only on a connection
from an address the operator names in `trusted_proxies` (addresses or networks:
`["127.0.0.1", "10.0.0.0/8", "::1"]`). The client is then the right-most address of
`X-Forwarded-For` that is not itself a trusted proxy (each proxy appends the address it saw,
so the entries to its left are whatever the client wrote).

Every listener that can sit behind a proxy reads the client through one `TrustedProxies`.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence

from server.config.networks import Network, parse_networks

#: X-Forwarded-For entries looked at (a longer header is a client's invention).
MAX_HOPS = 16


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = text.strip().strip('"')
    if text.startswith("[") and "]" in text:  # [v6]:port
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:  # v4:port
        text = text.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


class TrustedProxies:
    """The operator's `trusted_proxies`; an empty list trusts no one (headers are ignored)."""

    def __init__(self, entries: Iterable[str] = ()):
        self.networks: tuple[Network, ...] = parse_networks(entries)

    def __bool__(self) -> bool:
        return bool(self.networks)

    def trusts(self, host: str) -> bool:
        """Whether `host` (a peer address) is one of the trusted proxies."""
        if not self.networks:
            return False
        address = _address(host)
        return address is not None and any(address in network for network in self.networks)

    def client(self, peer: str, forwarded_for: Sequence[bytes | str] | None) -> str:
        """The client's address: `peer`, or for a trusted proxy's connection the right-most
        entry of `X-Forwarded-For` (all its values, in order) that is not a trusted proxy."""
        if not forwarded_for or not self.trusts(peer):
            return peer
        hops: list[str] = []
        for value in forwarded_for:
            text = value.decode("latin-1") if isinstance(value, bytes) else value
            hops.extend(part for part in text.split(",") if part.strip())
        found = peer
        for hop in reversed(hops[-MAX_HOPS:]):
            address = _address(hop)
            if address is None:
                break  # a malformed entry: nothing left of it can be believed
            found = str(address)
            if not self.trusts(found):
                break
        return found

    def secure(self, peer: str, forwarded_proto: Sequence[bytes | str] | None) -> bool | None:
        """What a trusted proxy's `X-Forwarded-Proto` says of the client's connection (True:
        https); None when the peer is not trusted or says nothing."""
        if not forwarded_proto or not self.trusts(peer):
            return None
        value = forwarded_proto[-1]
        text = value.decode("latin-1") if isinstance(value, bytes) else value
        last = text.split(",")[-1].strip().lower()
        return last in ("https", "wss")
