"""The web listener served: the pages and JSON API on the web ports bound at the start.

`WebSiteService` makes the site once the games, the notifications and the login guard are
there (a cluster node's site also finds and relays to the games of the other nodes, and
publishes where its own web listener is). At stop it ends the pages' event streams.
"""

from __future__ import annotations

from typing import Any

from twisted.logger import Logger

from server.config.errors import ConfigError
from server.config.file import ServerConfig
from server.guards.connections import DescriptorShare
from server.guards.proxies import TrustedProxies
from server.services.games import Games
from server.services.listeners import Listeners
from server.services.logins import LoginGuarding
from server.services.notifications import NotificationsService
from server.services.ordered import AsyncService
from server.services.store import StoreService

log = Logger()

# How long a web request for a game that is moving or failing over waits for its new owner.
WEB_RELAY_WAIT_S = 15.0


def web_secret(config: ServerConfig) -> bytes | None:
    """The web listener's secret, read before anything starts (None without a web listener)."""
    if not config.web:
        return None
    from server.web.secret import SecretError, load_secret

    try:
        return load_secret(config.web_secret_file)
    except SecretError as error:
        raise ConfigError(str(error)) from None


class WebSiteService(AsyncService):
    """Serves `listeners` with the site of `games` (a `LoadedGames` or a `ClusterNodeService`);
    `web` is the site's `server.web.WebSite`, once started."""

    def __init__(
        self,
        config: ServerConfig,
        reactor,
        listeners: Listeners,
        games: Games,
        store: StoreService,
        guard: LoginGuarding,
        notifications: NotificationsService,
        descriptors: DescriptorShare | None = None,
        hashing: Any = None,
        desks: Any = None,
    ):
        self.setName("web site")
        self._hashing = hashing  # with `desks`, for the players' games against the computer
        self._desks = desks
        self.config = config
        self.reactor = reactor
        self.secret = web_secret(config)
        self.listeners = listeners
        self.games = games
        self._store = store
        self._guard = guard
        self._notifications = notifications
        self._descriptors = descriptors
        self.web: Any = None

    async def start(self) -> None:
        from server.web import make_site

        config, node = self.config, self.games.node
        places = None
        if node is not None and config.node is not None:
            from server.cluster.web_places import NodeWebPlaces

            places = NodeWebPlaces(node, wait=min(config.node.relay_timeout, WEB_RELAY_WAIT_S))
        guard = self._guard.guard
        site = make_site(
            self.games.directory,
            self._store.store,
            self.reactor,
            secret=self.secret,
            places=places,
            reactor=self.reactor,
            notifications=self._notifications.notifications,
            limits=config.limits,
            login_guard=guard,
            proxies=TrustedProxies(config.trusted_proxies),
            share=self._descriptors,
            computer_games=self._computer_games(),
        )
        self.web = site.web  # type: ignore[attr-defined]
        await self.web.start()  # the sessions that ended before: refused from the first request
        self.listeners.serve(site)
        if places is not None:
            await self._publish_address(node, places)

    def _computer_games(self) -> Any:
        """What starts a player's game against the computer: on a server that is no cluster
        node, when the limits let players start them (`computer_games_per_account`)."""
        config = self.config
        if self.games.node is not None or self._desks is None or not config.limits.computer_games_per_account:
            return None
        from server.admin.computer_games import ComputerGames
        from server.admin.live import LiveBackend

        backend = LiveBackend(
            self.games.directory,
            self._store.store,
            self.reactor,
            config.game,
            desk=self._desks.desk,
            hasher=self._hashing.hasher if self._hashing is not None else None,
        )
        return ComputerGames(backend, config.limits)

    async def _publish_address(self, node: Any, places: Any) -> None:
        """Tell the other nodes where this node's web listener is; forget what the pages kept
        of a game that leaves this node."""
        from server.cluster.web_places import web_address

        settings = self.config.node
        assert settings is not None
        listeners = list(zip(self.listeners.descriptions, self.listeners.ports, strict=True))
        address = web_address(settings.advertise, settings.web_advertise, listeners)
        if address is None:
            log.warn(
                "cluster node {node}: no plain tcp web listener: the other nodes cannot relay web "
                "requests here (set cluster.web_advertise)",
                node=settings.node,
            )
        await places.publish(address)
        node.watch_departures(self.web.forget)
        log.info(
            "cluster node {node}: web listener reached by the other nodes at {address}",
            node=settings.node,
            address=address,
        )

    async def stop(self) -> None:
        if self.web is not None:
            self.web.close()  # ends the pages' event streams
