"""Where a cluster's games run, as a node's web listener asks (`server.web.contract.GamePlaces`).

`NodeWebPlaces` answers from the node's last claim round (`ClusterNode.placement`) and from
the web addresses the nodes publish (`server.database.web_addresses`), kept here and read again
when the web listener looks again (`refresh`) or after `ADDRESSES_KEPT_S`. `publish` writes
this node's own address once its web listener listens; `web_address` says which one that is.
"""

from __future__ import annotations

from typing import Any

from twisted.internet import defer
from twisted.logger import Logger

from server.config.cluster import parse_address
from server.database.ownership import RUNNING
from server.database.web_addresses import thd_set_web_address, thd_web_addresses
from server.web.contract import AWAY, ELSEWHERE, HERE, UNKNOWN, Location

ADDRESSES_KEPT_S = 5.0
REFRESH_TIMEOUT_S = 3.0

log = Logger()


def web_address(advertise: str, web_advertise: str | None, listeners: list[tuple[str, Any]]) -> str | None:
    """This node's web address for the other nodes: `web_advertise` when given, else the host
    of `advertise` and the port of the first plain tcp web listener (`listeners`: the
    configured endpoint strings and their ports); None when there is no such listener."""
    if web_advertise:
        return web_advertise
    host, _ = parse_address(advertise)
    for description, port in listeners:
        if description.split(":", 1)[0] in ("tcp", "tcp6"):
            bound = getattr(port.getHost(), "port", None)
            if bound:
                return f"[{host}]:{bound}" if ":" in host else f"{host}:{bound}"
    return None


class NodeWebPlaces:
    def __init__(self, cluster: Any, wait: float):
        self.cluster = cluster  # server.cluster.node.ClusterNode
        self._wait = wait
        self.addresses: dict[str, str] = {}
        self._read_at: float | None = None

    @property
    def node(self) -> str:
        return str(self.cluster.name)

    @property
    def wait(self) -> float:
        return self._wait

    def locate(self, name: str) -> Location:
        if self.cluster.local(name) is not None:
            return Location(HERE, self.node)
        placement = self.cluster.placement(name)
        if placement is None:
            return Location(UNKNOWN)
        if not placement.owned or placement.node == self.node:
            return Location(AWAY, placement.node)  # no owner now, or arriving here
        return Location(ELSEWHERE, placement.node, self.addresses.get(placement.node))

    def default_name(self) -> str | None:
        found = self.cluster.default_name()
        return None if found is None else str(found)

    def refresh(self) -> defer.Deferred:
        return defer.ensureDeferred(self._refresh())

    async def _refresh(self) -> None:
        """A claim round and the addresses read again; bounded (a node that lost its claim
        connection runs no round until it joins again) and never failing: a request waiting
        for its game goes on with what is known."""
        round_done = self.cluster.refresh()
        round_done.addTimeout(REFRESH_TIMEOUT_S, self.cluster.reactor)
        try:
            await round_done
            await self._read_addresses()
        except Exception as error:
            log.info("web: where the games run could not be looked up ({error})", error=error)

    async def _read_addresses(self) -> None:
        self.addresses = dict(await self.cluster.store.read(thd_web_addresses))
        self._read_at = self.cluster.reactor.seconds()

    def peers(self) -> defer.Deferred:
        return defer.ensureDeferred(self._peers())

    async def _peers(self) -> list[tuple[str, str]]:
        now = self.cluster.reactor.seconds()
        if self._read_at is None or now - self._read_at > ADDRESSES_KEPT_S:
            try:
                await self._read_addresses()
            except Exception as error:
                log.info("web: the other nodes' web addresses could not be read ({error})", error=error)
        running = {n.name for n in self.cluster.nodes.values() if n.alive and n.state == RUNNING}
        owners = {p.node for p in self.cluster.placements.values() if p.owned}
        others = (running | owners) - {self.node}
        return sorted((node, self.addresses[node]) for node in others if node in self.addresses)

    def publish(self, address: str | None) -> defer.Deferred:
        """Write this node's web address (None: it has none the others can reach)."""
        return defer.ensureDeferred(self._publish(address))

    async def _publish(self, address: str | None) -> None:
        await self.cluster.store.read(thd_set_web_address, self.node, address)
        await self._read_addresses()
