"""The TP listener served: once the games are there, its held ports get their `TPFactory`."""

from __future__ import annotations

from twisted.application.service import Service

from server.config.limits import Limits
from server.services.games import Games
from server.services.listeners import Listeners
from server.services.logins import LoginGuarding
from server.tp.network import TPFactory


class TPService(Service):
    """Serves the TP ports of `listeners` with the games of `games` (a `LoadedGames` or a
    `ClusterNodeService`: its `directory`, and the `session_factory` of its connections)."""

    def __init__(self, listeners: Listeners, games: Games, guard: LoginGuarding, limits: Limits, reactor):
        self.setName("TP")
        self.listeners = listeners
        self.games = games
        self.guard = guard
        self.limits = limits
        self.reactor = reactor
        self.factory: TPFactory | None = None

    def startService(self) -> None:
        super().startService()
        self.factory = TPFactory(
            self.games.directory,
            self.games.session_factory,
            limits=self.limits,
            guard=self.guard.guard,
            clock=self.reactor,
        )
        self.listeners.serve(self.factory)
