"""The admin listener served: its ports, bound after every other part has started (as the
operator commands need the games, the store and the desk), get the admin protocol's factory,
with the server's limits, its one login guard and the descriptor share it takes from with the web.

The admin settings are checked when the service is made: a listener without an admin account
is a configuration error before anything starts.
"""

from __future__ import annotations

from typing import Any

from twisted.application.service import Service

from server.admin.listener import build_factory, check_settings, warn_if_exposed
from server.config.file import ServerConfig
from server.guards.connections import DescriptorShare
from server.services.games import Games
from server.services.listeners import Listeners
from server.services.logins import LoginGuarding, PasswordHashing
from server.services.operations import DeskHolder
from server.services.store import StoreService


class AdminService(Service):
    """Serves the admin ports of `listeners` with the operator commands over `games` (a
    `LoadedGames` or a `ClusterNodeService`) and the desk of `desks`."""

    def __init__(
        self,
        config: ServerConfig,
        reactor,
        listeners: Listeners,
        games: Games,
        store: StoreService,
        hashing: PasswordHashing,
        desks: DeskHolder,
        guard: LoginGuarding,
        descriptors: DescriptorShare | None = None,
    ):
        check_settings(config.admin)
        self.setName("admin")
        self.config = config
        self.reactor = reactor
        self.listeners = listeners
        self.games = games
        self._store = store
        self._hashing = hashing
        self._desks = desks
        self._guard = guard
        self._descriptors = descriptors

    def startService(self) -> None:
        super().startService()
        config, reactor, hasher = self.config, self.reactor, self._hashing.hasher
        assert hasher is not None  # the hashing pool starts with the store, before any listener
        node = self.games.node
        backend: Any
        if node is not None:
            from server.admin.cluster import ClusterBackend

            backend = ClusterBackend(
                self.games.directory,
                self._store.store,
                reactor,
                config.game,
                cluster=node,
                desk=self._desks.desk,
                hasher=hasher,
            )
        else:
            from server.admin.live import LiveBackend

            backend = LiveBackend(
                self.games.directory,
                self._store.store,
                reactor,
                config.game,
                desk=self._desks.desk,
                hasher=hasher,
            )
        for description in self.listeners.descriptions:
            warn_if_exposed(description)
        factory = build_factory(
            config.admin,
            backend,
            reactor,
            hasher,
            limits=config.limits,
            guard=self._guard.guard,
            share=self._descriptors,
        )
        self.listeners.serve(factory)
