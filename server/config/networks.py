"""Lists of addresses and networks in the configuration, read once for every part that uses them.

`trusted_proxies` (addresses or networks: `["127.0.0.1", "10.0.0.0/8", "::1"]`) and
`[notifications] webhook_allow` (host names or networks) are checked when the configuration is
read, with one-line errors naming the entry; the guards and the notifications build their rules
from the same parsed values.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(entries: Iterable[str]) -> tuple[Network, ...]:
    """Each entry as a network (an address is a network of one); ValueError names a bad entry."""
    networks: list[Network] = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(str(entry).strip(), strict=False))
        except ValueError:
            raise ValueError(f"{entry!r} is not an address or a network (like 10.0.0.0/8)") from None
    return tuple(networks)


def parse_hosts_and_networks(entries: Iterable[str]) -> tuple[frozenset[str], tuple[Network, ...]]:
    """The host names (lower case, without a trailing dot) and the networks of a list that may
    hold both; ValueError names an entry that is neither."""
    names: set[str] = set()
    networks: list[Network] = []
    for entry in entries:
        text = str(entry).strip()
        try:
            networks.append(ipaddress.ip_network(text, strict=False))
        except ValueError:
            if not text or "/" in text or " " in text:
                raise ValueError(f"{entry!r} is neither a host name nor a network") from None
            names.add(text.lower().rstrip("."))
    return frozenset(names), tuple(networks)
