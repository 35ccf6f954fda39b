"""The games advertised on the local network (multicast DNS), from when the server serves to
the first moment of its stop."""

from __future__ import annotations

from typing import Any

from twisted.logger import Logger

from server.config.file import ServerConfig
from server.services.games import Games
from server.services.listeners import Listeners
from server.services.ordered import AsyncService

log = Logger()


class Advertisement(AsyncService):
    """Advertises the games of `games` on the TP ports of `listeners`. Where multicast DNS
    cannot be used, the server runs unadvertised and says so."""

    def __init__(self, config: ServerConfig, reactor, listeners: Listeners, games: Games):
        self.setName("advertisement")
        self.config = config
        self.reactor = reactor
        self.listeners = listeners
        self.games = games
        self.advertiser: Any = None  # server.tp.discovery.Advertiser

    async def start(self) -> None:
        from server.tp.discovery import DiscoveryUnavailable, advertise, listeners_from

        settings = self.config.discovery
        try:
            self.advertiser, _ = advertise(
                listeners_from(self.listeners.descriptions, self.listeners.ports),
                self.games.directory,
                self.reactor,
                admin_email=settings.admin_email,
                comment=settings.comment,
            )
        except DiscoveryUnavailable as error:
            log.warn("{error}; the games are not advertised", error=error)

    async def stop(self) -> None:
        advertiser, self.advertiser = self.advertiser, None
        if advertiser is not None:
            await advertiser.stop()  # the network is told the games are gone
