"""A cluster node's place in the server: it joins the cluster where a single server loads its
games, and at stop hands its games over to the other nodes.

`ClusterNodeService` joins once the store (the node's fenced store) is open: the node claims its
share of the games and brings them to life with its operator desk (`desk`), which polls only
the requests of those games. The notifications follow the games the node runs now and those
that arrive later, and forget those that leave. At stop, the node hands every game to the
least loaded running node and leaves; what is left is settled as a single server's games are.
"""

from __future__ import annotations

from typing import Any

from server.config.file import ServerConfig
from server.game.directory import GameDirectory
from server.services.games import settle
from server.services.logins import PasswordHashing
from server.services.notifications import NotificationsService
from server.services.operations import StopsDeskOnce
from server.services.ordered import AsyncService
from server.services.store import StoreService


class ClusterNodeService(StopsDeskOnce, AsyncService):
    """The node (`node`, once joined), its games (`directory`) and its desk (`desk`)."""

    def __init__(
        self,
        config: ServerConfig,
        reactor,
        store: StoreService,
        hashing: PasswordHashing,
        notifications: NotificationsService,
    ):
        self.setName("cluster node")
        self.config = config
        self.reactor = reactor
        self._store = store
        self._hashing = hashing
        self._notifications = notifications
        self.node: Any = None  # server.cluster.node.ClusterNode

    @property
    def directory(self) -> GameDirectory:
        return self.node.directory if self.node is not None else GameDirectory()

    @property
    def session_factory(self):
        """What serves each TP connection: a session that relays to the node running its game."""
        return self.node.session_factory

    async def start(self) -> None:
        from server.cluster.start import join_cluster

        node = await join_cluster(self.config, self._store.store, self.reactor, self._hashing.hasher)
        self.node, self.desk = node, node.desk
        notifications = self._notifications.notifications
        if notifications is not None:
            node.desk.notifications = notifications  # the games that arrive from now on
            for game in list(node.directory.games.values()):
                notifications.follow(game)
            node.watch_departures(notifications.forget)

    async def stop(self) -> None:
        node = self.node
        if node is None:
            return
        await self.stop_desk()
        await node.stop()  # hands every game over to the other nodes
        await settle(node.directory, self.reactor)
        node.directory.stand_in.close()  # (the process pool of a hard stand-in)
