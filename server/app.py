"""Putting a server together: its parts as Services (`server.services`), started in order.

`start_server` makes a `Server` for a configuration and starts it. Making it checks every
setting that can be checked without touching anything (endpoint strings, the web secret, the
admin accounts): a ConfigError then means nothing was started. Starting it binds the listeners,
opens the store, loads the games and serves them; a part that fails to start stops what started,
in reverse, and the failure goes on to the caller.
"""

from __future__ import annotations

from typing import Any

from twisted.internet import defer
from twisted.logger import Logger

from server.config.file import ServerConfig
from server.game.directory import GameDirectory
from server.game.stand_in import StandInPlayer
from server.guards.connections import DescriptorShare
from server.model.store import GameStore
from server.services.admin import AdminService
from server.services.cluster import ClusterNodeService
from server.services.discovery import Advertisement
from server.services.games import LoadedGames
from server.services.listeners import ADMIN, TP, WEB, Listeners, OpenListeners
from server.services.logins import LoginGuarding, PasswordHashing
from server.services.notifications import NotificationDelivery, NotificationsService
from server.services.operations import DeskHolder, DeskLease, OperatorRequests
from server.services.ordered import OrderedServices
from server.services.store import StoreService
from server.services.tp import TPService
from server.services.web import WebSiteService

log = Logger()


class Server(OrderedServices):
    """A server: the Services of its parts, in the order they start (see `server.services`).
    With `config.node` it is a cluster node (`server.cluster`): it joins the others on the
    PostgreSQL database and runs its share of the games, and its listeners serve them all.
    `store`: a store made by the caller (tests) instead of the configured database."""

    def __init__(self, config: ServerConfig, reactor, store: GameStore | None = None):
        super().__init__()
        self.config = config
        limits = config.limits
        # Made first, so that a setting that cannot work fails before anything starts.
        tp = Listeners(TP, config.listen, reactor, backlog=limits.listen_backlog)
        web = Listeners(WEB, config.web, reactor) if config.web else None
        admin = Listeners(ADMIN, config.admin.listen, reactor) if config.admin.listen else None
        self._store = StoreService(config, reactor, store)
        hashing = PasswordHashing(reactor, limits)
        # one login brake for every listener; `ann` and `ann@DEFAULT` are one account to it
        guard = LoginGuarding(reactor, limits, default_game=lambda: self.directory.default_name)
        # the file descriptors the listeners other than TP share (web, and admin)
        self.descriptors = DescriptorShare(limits.tp_descriptor_share)
        notifications = NotificationsService(config, reactor, self._store, web)
        desk: DeskLease | None = None
        desks: DeskHolder
        self._games: LoadedGames | ClusterNodeService
        if config.node is not None:
            self._games = desks = ClusterNodeService(config, reactor, self._store, hashing, notifications)
        else:
            directory = GameDirectory(stand_in=StandInPlayer(config.stand_in))
            desk = desks = DeskLease(reactor, self._store, hashing, notifications, directory)
            self._games = LoadedGames(config, reactor, self._store, hashing, desk, directory)
        games, store_service = self._games, self._store
        self._tp = tp
        self._site = site = None
        if web is not None:
            self._site = site = WebSiteService(
                config,
                reactor,
                web,
                games,
                store_service,
                guard,
                notifications,
                self.descriptors,
                hashing=hashing,
                desks=desks,
            )
        operators = None
        if admin is not None:
            operators = AdminService(
                config, reactor, admin, games, store_service, hashing, desks, guard, self.descriptors
            )
        services = [
            tp,
            web,
            store_service,
            hashing,
            guard,
            notifications,
            desk,
            games,
            TPService(tp, games, guard, limits, reactor),
            site,
            admin,
            operators,
            NotificationDelivery(notifications),
            OperatorRequests(desks),
            OpenListeners([listeners for listeners in (tp, web, admin) if listeners is not None]),
            Advertisement(config, reactor, tp, games) if config.discovery.enabled else None,
        ]
        for service in services:
            if service is not None:
                service.setServiceParent(self)
        self._stopped: defer.Deferred[None] | None = None

    @property
    def directory(self) -> GameDirectory:
        """The games this server runs."""
        return self._games.directory

    @property
    def store(self) -> Any:
        return self._store.store

    @property
    def ports(self) -> list[Any]:
        """The TP listening ports, in the order of `config.listen`."""
        return self._tp.ports

    @property
    def web(self) -> Any:
        """The web pages' `server.web.WebSite` (None without a web listener)."""
        return self._site.web if self._site is not None else None

    def stop(self) -> defer.Deferred[None]:
        """Stop cleanly, once: no new connections or operator requests; turns being resolved
        are stored (nothing a player was told is lost, nothing half-done is left); then the
        store is closed, after the work already handed to it."""
        if self._stopped is None:
            self._stopped = self.stopService().addCallback(lambda _: log.info("server stopped"))
        return self._stopped


def start_server(config: ServerConfig, reactor, store: GameStore | None = None) -> defer.Deferred[Server]:
    """Start a `Server` for `config`; fires with it once it accepts connections.

    The order makes a start that fails create and change nothing: the settings are checked
    first, the TP and web listeners bound next (a bad endpoint, a port in use, a missing web
    secret fail here), and only then is the database opened, created or given a first game. A
    later failure (an admin listener) stops what started, in reverse, and removes a SQLite
    database that this start created."""
    return defer.ensureDeferred(_start(config, reactor, store))


async def _start(config: ServerConfig, reactor, store: GameStore | None) -> Server:
    server = Server(config, reactor, store)
    await server.startService()
    return server
