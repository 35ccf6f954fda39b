"""Putting a server together: the listeners, the store, the games, and shutdown."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from twisted.internet import defer
from twisted.internet.endpoints import serverFromString
from twisted.internet.error import CannotListenError
from twisted.logger import Logger

from .accounts import PasswordPolicy, ThreadPoolHasher
from .config import ConfigError, ServerConfig
from .directory import GameDirectory
from .game_operations import OperationError
from .login_guard import LoginGuard
from .network import TPFactory
from .store import GameStore

log = Logger()

# How long a stopping server waits for turns being resolved to be stored.
STOP_WAIT_S = 60


@dataclass
class Server:
    """A running server: its games and the ports it listens on."""

    config: ServerConfig
    store: GameStore
    directory: GameDirectory
    ports: list = field(default_factory=list)
    desk: object | None = None  # server.operator_desk.OperatorDesk, with a database store
    hasher: ThreadPoolHasher | None = None
    guard: LoginGuard | None = None

    def stop(self) -> defer.Deferred:
        """Stop cleanly: no new connections or operator requests; turns being resolved are
        stored (nothing a player was told is lost, nothing half-done is left); then the store
        is closed, after the work already handed to it."""
        return defer.ensureDeferred(self._stop())

    async def _stop(self) -> None:
        from twisted.internet import reactor as default_reactor

        stops = [defer.maybeDeferred(port.stopListening) for port in self.ports]
        await defer.gatherResults(stops, consumeErrors=True).addErrback(
            lambda failure: log.failure("stopping a listener failed", failure)
        )
        if self.desk is not None:
            await self.desk.stop()
        games = list(self.directory.games.values())
        clock = games[0].clock if games else default_reactor
        deadline = clock.seconds() + STOP_WAIT_S
        while any(game.busy for game in games) and clock.seconds() < deadline:
            waits = defer.DeferredList([game.ready() for game in games if game.busy])
            waits.addTimeout(max(0.1, deadline - clock.seconds()), clock)
            await waits.addErrback(lambda _: None)
        for game in games:
            game.timer.stop()
            if game.busy:
                log.warn(
                    "game {game}: turn {turn} was not stored before the stop; it is resolved "
                    "again at restart",
                    game=game.setup.name,
                    turn=game.state.turn + 1,
                )
        if self.guard is not None:
            self.guard.stop()
        if self.hasher is not None:
            self.hasher.stop()
        close = getattr(self.store, "close", None)
        if close is not None:
            await defer.maybeDeferred(close)
        log.info("server stopped")


@defer.inlineCallbacks
def load_games(
    config: ServerConfig, store: GameStore, reactor, desk=None, *, hasher=None, now: float | None = None
) -> defer.Deferred:
    """Every stored game as last committed; the configured open game is created on first start
    (at time `now`, the reactor's time by default).

    Each game resumes its turn (`Game.resume`): with the deadline its timer had and the players
    who had finished it, so a turn whose end a crash interrupted is resolved again now."""
    from .operator_desk import restore_game

    stored = yield defer.maybeDeferred(store.load_games, all_states=False)
    directory = GameDirectory()
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


@defer.inlineCallbacks
def open_database(url: str, reactor) -> defer.Deferred:
    """The database store at `url`; an empty database gets the schema, an old one is refused."""
    from .database import DatabaseStore
    from .database.opening import DatabaseProblem, Unreachable, needs_schema, unreachable, unusable

    try:
        store = DatabaseStore(url, reactor)
    except Exception as error:  # a malformed URL or a missing driver
        raise ConfigError(str(unusable(url, error))) from None
    try:
        if needs_schema(url, (yield store.current_revision()), create=True):
            yield store.upgrade()
    except Exception as error:
        yield store.close()
        if isinstance(error, DatabaseProblem) and not isinstance(error, Unreachable):
            raise ConfigError(str(error)) from None
        # unreachable or broken: an operational failure (exit 1), not a configuration error
        raise OperationError(str(unreachable(url, error))) from None
    return store


def _endpoints(config: ServerConfig, reactor) -> list[tuple[str, Any]]:
    """Every configured listener as an endpoint, checked before anything is opened."""
    endpoints = []
    for description in config.listen:
        try:
            endpoints.append((description, serverFromString(reactor, description)))
        except (ValueError, TypeError, KeyError) as error:
            raise ConfigError(f"listen: {description!r} is not a usable endpoint ({error})") from None
    return endpoints


def _hold(port) -> None:
    """Accept no connection on `port` yet (they wait in the backlog until `_release`)."""
    stop = getattr(port, "stopReading", None)
    if stop is not None:
        stop()


def _release(port) -> None:
    start = getattr(port, "startReading", None)
    if start is not None:
        start()


@defer.inlineCallbacks
def start_server(config: ServerConfig, reactor, store: GameStore | None = None) -> defer.Deferred:
    """Listen on every configured endpoint, then open the store and load the games; fires with
    the `Server`, accepting connections from then on.

    The order makes a start that fails create and change nothing: the listeners are checked
    and bound first (a bad endpoint, a port in use), and only then is the database opened,
    created or given a first game."""
    limits = config.limits
    endpoints = _endpoints(config, reactor)
    guard = LoginGuard(reactor, limits)
    factory = TPFactory(GameDirectory(), limits=limits, guard=guard, clock=reactor)
    ports: list = []
    try:
        for description, endpoint in endpoints:
            try:
                port = yield endpoint.listen(factory)
            except CannotListenError as error:
                reason = getattr(error.socketError, "strerror", None) or error.socketError
                raise OperationError(f"listen: cannot listen on {description!r}: {reason}") from None
            _hold(port)
            ports.append(port)
    except Exception:
        yield defer.gatherResults([defer.maybeDeferred(p.stopListening) for p in ports], consumeErrors=True)
        raise
    try:
        server = yield _open_and_load(config, reactor, store, factory)
    except Exception:
        yield defer.gatherResults([defer.maybeDeferred(p.stopListening) for p in ports], consumeErrors=True)
        raise
    server.ports.extend(ports)
    server.guard = guard
    for port in ports:
        _release(port)
    return server


@defer.inlineCallbacks
def _open_and_load(config: ServerConfig, reactor, store: GameStore | None, factory: TPFactory):
    if store is None:
        from .database import DEFAULT_URL

        store = yield open_database(config.database or DEFAULT_URL, reactor)
    limits = config.limits
    hasher = ThreadPoolHasher(
        reactor,
        limits.hashing_threads,
        policy=PasswordPolicy.with_cost(limits.password_min_length, limits.password_hash_cost),
    )
    desk = None
    if hasattr(store, "pending_requests"):
        from .operator_desk import OperatorDesk

        desk = OperatorDesk(store, None, reactor, hasher=hasher)
        try:
            yield desk.take_lease()
        except Exception:
            hasher.stop()
            yield defer.maybeDeferred(getattr(store, "close", lambda: None))
            raise
    try:
        directory = yield load_games(config, store, reactor, desk, hasher=hasher)
    except Exception:
        hasher.stop()
        if desk is not None:
            yield defer.ensureDeferred(desk.stop())
        yield defer.maybeDeferred(getattr(store, "close", lambda: None))
        raise
    server = Server(config, store, directory, desk=desk, hasher=hasher)
    factory.directory = directory
    if desk is not None:
        desk.directory = directory
        desk.start()
    return server
