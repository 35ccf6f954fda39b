"""Finding Thousand Parsec servers on the local network with mDNS/DNS-SD (python-zeroconf).

tpserver-cpp registers ``_tp._tcp`` (plain TP) and ``_tps._tcp`` (TLS) services with TXT
records ``tp`` (protocol versions, "0.3,0.4"), ``server`` (its version), ``sertype`` (the
server's name), ``rule``/``rulever`` (the ruleset), ``turn``, ``next`` (the time of the next
turn, Unix seconds), ``plys`` (players), ``objs``, ``prd``, ``admin``, ``cmt``
(spec/protocol.md §8); tpserver-tae adds ``sn``/``ln``, the game's short and long names.
PY3's browser requires ``tp``, ``server``, ``sertype``, ``rule`` and ``rulever``; ``browse``
lists services without them too, marked ``complete=False``.

``browse(seconds)`` listens for that long and returns every server found, sorted by name.
``interfaces`` limits the network interfaces (tests use ``["127.0.0.1"]``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from zeroconf import InterfaceChoice, IPVersion, ServiceBrowser, ServiceListener, Zeroconf

__all__ = ["SERVICE_TYPES", "DiscoveredServer", "browse", "server_from_txt"]

SERVICE_TYPES = {"_tp._tcp.local.": "tp", "_tps._tcp.local.": "tps"}
REQUIRED_KEYS = ("tp", "server", "sertype", "rule", "rulever")


@dataclass(frozen=True, slots=True)
class DiscoveredServer:
    """One advertised server. ``scheme`` is "tp" or "tps" (TLS); ``host`` is its mDNS host name,
    ``addresses`` its IP addresses; the other fields come from the TXT record (None if absent)."""

    name: str
    scheme: str
    host: str
    port: int
    addresses: tuple[str, ...] = ()
    versions: tuple[str, ...] = ()
    server: str | None = None
    sertype: str | None = None
    rule: str | None = None
    rulever: str | None = None
    turn: int | None = None
    next_turn: int | None = None
    players: int | None = None
    comment: str | None = None
    game: str | None = None  # "sn": the game's short name (this server's advertisement)
    description: str | None = None  # "ln": its long name
    properties: Mapping[str, str] = field(default_factory=dict)

    @property
    def tls(self) -> bool:
        return self.scheme == "tps"

    @property
    def complete(self) -> bool:
        """All the keys a Thousand Parsec client requires are present."""
        return all(self.properties.get(key) for key in REQUIRED_KEYS)

    @property
    def connect_host(self) -> str:
        """What to give ``--host``: the first address, else the mDNS name."""
        return self.addresses[0] if self.addresses else self.host.rstrip(".")

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "scheme": self.scheme,
            "tls": self.tls,
            "host": self.host,
            "port": self.port,
            "addresses": list(self.addresses),
            "versions": list(self.versions),
            "server": self.server,
            "sertype": self.sertype,
            "rule": self.rule,
            "rulever": self.rulever,
            "turn": self.turn,
            "next_turn": self.next_turn,
            "players": self.players,
            "comment": self.comment,
            "game": self.game,
            "description": self.description,
            "complete": self.complete,
            "properties": dict(self.properties),
        }


def server_from_txt(
    name: str,
    scheme: str,
    host: str,
    port: int,
    addresses: Sequence[str],
    properties: Mapping[bytes, bytes | None] | Mapping[str, str | None],
) -> DiscoveredServer:
    """A ``DiscoveredServer`` from a service's TXT record (bytes or text, as zeroconf gives it)."""
    text = {_text(key): _text(value) for key, value in properties.items() if value is not None}
    return DiscoveredServer(
        name=name,
        scheme=scheme,
        host=host,
        port=port,
        addresses=tuple(addresses),
        versions=tuple(v.strip() for v in text.get("tp", "").split(",") if v.strip()),
        server=text.get("server"),
        sertype=text.get("sertype"),
        rule=text.get("rule"),
        rulever=text.get("rulever"),
        turn=_number(text.get("turn")),
        next_turn=_number(text.get("next")),
        players=_number(text.get("plys")),
        comment=text.get("cmt"),
        game=text.get("sn"),
        description=text.get("ln"),
        properties=text,
    )


class _Collector(ServiceListener):
    def __init__(self) -> None:
        self.found: dict[tuple[str, str], None] = {}
        self.lock = threading.Lock()

    def add_service(self, zc: Zeroconf, type_: str, name: str) -> None:
        with self.lock:
            self.found[(type_, name)] = None

    def update_service(self, zc: Zeroconf, type_: str, name: str) -> None:
        self.add_service(zc, type_, name)

    def remove_service(self, zc: Zeroconf, type_: str, name: str) -> None:
        with self.lock:
            self.found.pop((type_, name), None)


def browse(
    seconds: float = 3.0,
    *,
    interfaces: InterfaceChoice | Sequence[str] = InterfaceChoice.All,
    ipv6: bool = False,
) -> list[DiscoveredServer]:
    """Listen ``seconds`` for ``_tp._tcp`` and ``_tps._tcp`` services; return them by name.

    Raises ``OSError`` when no multicast socket can be opened on ``interfaces``."""
    zeroconf = Zeroconf(
        interfaces=list(interfaces) if not isinstance(interfaces, InterfaceChoice) else interfaces,
        ip_version=IPVersion.All if ipv6 else IPVersion.V4Only,
    )
    collector = _Collector()
    try:
        browser = ServiceBrowser(zeroconf, list(SERVICE_TYPES), listener=collector)
        time.sleep(max(seconds, 0.0))
        browser.cancel()
        with collector.lock:
            services = list(collector.found)
        servers = []
        for type_, name in services:
            info = zeroconf.get_service_info(type_, name, timeout=max(200, int(min(seconds, 3.0) * 1000)))
            if info is None or info.port is None:
                continue
            label = name[: -len(type_) - 1] if name.endswith("." + type_) else name
            servers.append(
                server_from_txt(
                    label,
                    SERVICE_TYPES[type_],
                    info.server or "",
                    info.port,
                    info.parsed_addresses(),
                    info.properties,
                )
            )
    finally:
        zeroconf.close()
    return sorted(servers, key=lambda s: (s.name, s.scheme, s.port))


def _text(value: bytes | str) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _number(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value.strip())
    except ValueError:
        return None
