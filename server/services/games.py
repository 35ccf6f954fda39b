"""The games a single server runs: loaded once the store is open and the desk holds the lease;
at stop, the turns being resolved are stored before anything after them stops.

`load_games` brings every stored game back as last committed (creating the configured open
game on a first start); `settle` is the wait at stop: games that are resolving a turn are given
`STOP_WAIT_S` to store it, then every game's timer stops. A cluster node's games come with the
node (`server.services.cluster`), which settles them the same way.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, Protocol

from twisted.internet import defer
from twisted.logger import Logger

from server.config.file import ServerConfig
from server.game.directory import GameDirectory
from server.model.store import GameStore
from server.services.logins import PasswordHashing
from server.services.operations import DeskLease
from server.services.ordered import AsyncService
from server.services.store import StoreService

log = Logger()

# How long a stopping server waits for turns being resolved to be stored.
STOP_WAIT_S = 60


class Games(Protocol):
    """What the services that serve the games ask of the one that has them (`LoadedGames`, or
    a cluster node's `server.services.cluster.ClusterNodeService`)."""

    @property
    def directory(self) -> GameDirectory:
        """The games this process runs."""

    @property
    def node(self) -> Any:
        """The `server.cluster.node.ClusterNode` (None: a single server)."""

    @property
    def session_factory(self) -> Any:
        """What serves a TP connection (None: `server.tp.session.Session`)."""


@defer.inlineCallbacks
def load_games(
    config: ServerConfig,
    store: GameStore,
    reactor,
    desk=None,
    *,
    hasher=None,
    now: float | None = None,
    directory: GameDirectory | None = None,
) -> Generator[Any, Any, GameDirectory]:
    """Every stored game as last committed, in `directory` (a new one by default); the
    configured open game is created on first start (at time `now`, the reactor's time by
    default).

    Each game resumes its turn (`Game.resume`): with the deadline its timer had and the players
    who had finished it, so a turn whose end a crash interrupted is resolved again now."""
    from server.operating.desk import restore_game

    stored = yield defer.maybeDeferred(store.load_games, all_states=False)
    directory = GameDirectory() if directory is None else directory
    if not stored:
        setup = config.game.setup(ctime=int(reactor.seconds() if now is None else now))
        yield defer.maybeDeferred(store.create_game, setup)
        stored = yield defer.maybeDeferred(store.load_games, all_states=False)
    directory.default_name = (
        config.game.name if any(r.setup.name == config.game.name for r in stored) else None
    )
    for record in stored:
        restore_game(record, store, reactor, directory, desk, hasher=hasher)
    return directory


async def settle(directory: GameDirectory, reactor) -> None:
    """Wait (at most `STOP_WAIT_S`) for the games of `directory` that are resolving a turn to
    store it, then stop every game's timer. A turn not stored by then is resolved again at the
    next start (it is deterministic)."""
    games = list(directory.games.values())
    clock = games[0].clock if games else reactor
    deadline = clock.seconds() + STOP_WAIT_S
    while any(game.busy for game in games) and clock.seconds() < deadline:
        waits = defer.DeferredList([game.ready() for game in games if game.busy])
        waits.addTimeout(max(0.1, deadline - clock.seconds()), clock)
        await waits.addErrback(lambda _: None)
    for game in games:
        game.timer.stop()
        if game.busy:
            log.warn(
                "game {game}: turn {turn} was not stored before the stop; it is resolved again at restart",
                game=game.setup.name,
                turn=game.state.turn,
            )


class LoadedGames(AsyncService):
    """The games of a single server, in `directory`."""

    node = None  # not a cluster node
    session_factory = None  # each TP connection gets a `server.tp.session.Session`

    def __init__(
        self,
        config: ServerConfig,
        reactor,
        store: StoreService,
        hashing: PasswordHashing,
        desk: DeskLease,
        directory: GameDirectory,
    ):
        self.setName("games")
        self.config = config
        self.reactor = reactor
        self._store = store
        self._hashing = hashing
        self._desk = desk
        self.directory = directory

    async def start(self) -> None:
        await load_games(
            self.config,
            self._store.store,
            self.reactor,
            self._desk.desk,
            hasher=self._hashing.hasher,
            directory=self.directory,
        )

    async def stop(self) -> None:
        await settle(self.directory, self.reactor)
        self.directory.stand_in.close()
