"""The operator desk of a running server: its lease taken before the games are loaded, its
request queue polled while the server serves.

`DeskLease` makes the `OperatorDesk` of a server on a database and takes the database's server
lease, so that a second server on the same database is refused before it loads or creates
anything. `OperatorRequests` polls the request queue from when the server serves; at stop it is
stopped early (no operator request is carried out while the server stops), and the lease is
given back with it. A cluster node has no lease: its desk comes with the node
(`server.services.cluster`).
"""

from __future__ import annotations

from typing import Any, Protocol

from twisted.application.service import Service
from twisted.internet import defer

from server.game.directory import GameDirectory
from server.services.logins import PasswordHashing
from server.services.notifications import NotificationsService, keeps_operations
from server.services.ordered import AsyncService
from server.services.store import StoreService


class DeskHolder(Protocol):
    """A service that made the server's desk (None: it has none)."""

    desk: Any  # server.operating.desk.OperatorDesk

    def stop_desk(self) -> defer.Deferred[None]: ...


class StopsDeskOnce:
    """`stop_desk` for a `DeskHolder`: the desk stops once, whoever asks first."""

    desk: Any = None
    _desk_stopped: defer.Deferred[None] | None = None

    def stop_desk(self) -> defer.Deferred[None]:
        if self._desk_stopped is None:
            desk = self.desk
            self._desk_stopped = (
                defer.ensureDeferred(desk.stop()) if desk is not None else defer.succeed(None)
            )
        return self._desk_stopped


class DeskLease(StopsDeskOnce, AsyncService):
    """The desk of a single server on a database (`desk`, once its lease is taken), serving
    the games of `directory`."""

    def __init__(
        self,
        reactor,
        store: StoreService,
        hashing: PasswordHashing,
        notifications: NotificationsService,
        directory: GameDirectory,
    ):
        self.setName("operator desk")
        self.reactor = reactor
        self._store = store
        self._hashing = hashing
        self._notifications = notifications
        self.directory = directory

    async def start(self) -> None:
        store = self._store.store
        if not keeps_operations(store):
            return
        from server.operating.desk import OperatorDesk

        desk = OperatorDesk(store, self.directory, self.reactor, hasher=self._hashing.hasher)
        desk.notifications = self._notifications.notifications
        await desk.take_lease()
        self.desk = desk  # only a desk that holds the lease gives it back

    async def stop(self) -> None:
        await self.stop_desk()


class OperatorRequests(Service):
    """Polls the operator request queue of `holder`'s desk while the server serves."""

    def __init__(self, holder: DeskHolder):
        self.setName("operator requests")
        self.holder = holder

    def startService(self) -> None:
        super().startService()
        if self.holder.desk is not None:
            self.holder.desk.start()

    def stopService(self) -> defer.Deferred[None]:
        super().stopService()
        return self.holder.stop_desk()
