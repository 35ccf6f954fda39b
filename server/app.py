"""Putting a server together: the store, the games, the listeners, logging and shutdown."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

from twisted.internet import defer
from twisted.internet.endpoints import serverFromString
from twisted.logger import (
    FilteringLogObserver,
    Logger,
    LogLevel,
    LogLevelFilterPredicate,
    globalLogBeginner,
    jsonFileLogObserver,
    textFileLogObserver,
)

from .accounts import ThreadPoolHasher
from .config import ConfigError, ServerConfig
from .directory import GameDirectory
from .game_operations import OperationError
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
    web_ports: list = field(default_factory=list)
    web: Any = None  # server.web.WebSite, when there is a web listener
    desk: object | None = None  # server.operator_desk.OperatorDesk, with a database store
    hasher: ThreadPoolHasher | None = None
    cluster: Any = None  # server.cluster.node.ClusterNode, on a cluster node
    advertiser: object | None = None  # server.discovery's, when the games are advertised

    def stop(self) -> defer.Deferred:
        """Stop cleanly: no new connections or operator requests; turns being resolved are
        stored (nothing a player was told is lost, nothing half-done is left); then the store
        is closed, after the work already handed to it."""
        return defer.ensureDeferred(self._stop())

    async def _stop(self) -> None:
        from twisted.internet import reactor as default_reactor

        if self.advertiser is not None:
            await self.advertiser.stop()
        stops = [defer.maybeDeferred(port.stopListening) for port in self.ports + self.web_ports]
        if self.web is not None:
            self.web.close()  # ends the pages' event streams
        await defer.gatherResults(stops, consumeErrors=True).addErrback(
            lambda failure: log.failure("stopping a listener failed", failure)
        )
        if self.desk is not None:
            await self.desk.stop()
        if self.cluster is not None:
            await self.cluster.stop()  # hands every game over to the other nodes
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


@defer.inlineCallbacks
def start_server(config: ServerConfig, reactor, store: GameStore | None = None) -> defer.Deferred:
    """Load the games and listen on every configured endpoint; fires with the `Server`.
    With `config.node` the server is a cluster node (`server.cluster`): it joins the others on
    the PostgreSQL database and runs its share of the games, and its listeners serve them all."""
    node = None
    if config.node is not None:
        from .cluster.start import open_node_store

        store = yield open_node_store(config, reactor, store)
    elif store is None:
        from .database import DEFAULT_URL

        store = yield open_database(config.database or DEFAULT_URL, reactor)
    hasher = ThreadPoolHasher(reactor)
    desk = None
    if config.node is not None:
        from .cluster.start import join_cluster

        try:
            node = yield defer.ensureDeferred(join_cluster(config, store, reactor, hasher))
        except Exception:
            hasher.stop()
            yield defer.maybeDeferred(store.close)  # type: ignore[attr-defined]
            raise
        desk = node.desk
    elif hasattr(store, "pending_requests"):
        from .operator_desk import OperatorDesk

        desk = OperatorDesk(store, None, reactor, hasher=hasher)
        try:
            yield desk.take_lease()
        except Exception:
            hasher.stop()
            yield defer.maybeDeferred(getattr(store, "close", lambda: None))
            raise
    try:
        directory = (
            node.directory
            if node is not None
            else (yield load_games(config, store, reactor, desk, hasher=hasher))
        )
    except Exception:
        hasher.stop()
        if desk is not None:
            yield defer.ensureDeferred(desk.stop())
        yield defer.maybeDeferred(getattr(store, "close", lambda: None))
        raise
    server = Server(config, store, directory, desk=desk, hasher=hasher, cluster=node)
    if desk is not None:
        desk.directory = directory
    factory = TPFactory(directory, session_factory=None if node is None else node.session_factory)
    try:
        for description in config.listen:
            try:
                endpoint = serverFromString(reactor, description)
            except (ValueError, TypeError, KeyError) as error:
                raise ConfigError(f"listen: {description!r} is not a usable endpoint ({error})") from None
            port = yield endpoint.listen(factory)
            server.ports.append(port)
        yield defer.ensureDeferred(start_web(config, server, reactor))
    except Exception:
        yield server.stop()
        raise
    if config.discovery.enabled:
        from .discovery import DiscoveryUnavailable, advertise, listeners_from

        try:
            server.advertiser, _ = advertise(
                listeners_from(config.listen, server.ports),
                directory,
                reactor,
                admin_email=config.discovery.admin_email,
                comment=config.discovery.comment,
            )
        except DiscoveryUnavailable as error:
            log.warn("{error}; the games are not advertised", error=error)
    if config.admin.listen:
        from .admin import LiveBackend
        from .admin import listen as listen_admin

        backend = LiveBackend(directory, store, reactor, config.game, desk=desk, hasher=hasher)
        try:
            server.ports.extend((yield listen_admin(reactor, config.admin, backend, hasher)))
        except Exception:
            yield server.stop()
            raise
    if desk is not None:
        desk.start()
    return server


async def start_web(config: ServerConfig, server: Server, reactor: Any) -> None:
    """The web listener (pages, JSON API) on every `web` endpoint, when there is one."""
    if not config.web:
        return
    from .web import make_site
    from .web.secret import SecretError, load_secret

    try:
        secret = load_secret(config.web_secret_file)
    except SecretError as error:
        raise ConfigError(str(error)) from None
    site = make_site(server.directory, server.store, reactor, secret=secret)
    server.web = site.web  # type: ignore[attr-defined]
    for description in config.web:
        try:
            endpoint = serverFromString(reactor, description)
        except (ValueError, TypeError, KeyError) as error:
            raise ConfigError(f"web: {description!r} is not a usable endpoint ({error})") from None
        port = await endpoint.listen(site)
        server.web_ports.append(port)
        address = port.getHost()
        scheme = "https" if description.startswith("ssl:") else "http"
        host = getattr(address, "host", "?")
        log.info(
            "web pages and JSON API on {scheme}://{host}:{port}/{every}",
            scheme=scheme,
            host=host,
            port=getattr(address, "port", "?"),
            every=" (every interface)" if host in ("0.0.0.0", "::") else "",
        )


def begin_logging(log_format: str, stream=None, level: LogLevel = LogLevel.info) -> None:
    stream = stream or sys.stdout
    # JSON lines: one object per line, without the RFC 7464 record separator Twisted puts first.
    observer = (
        jsonFileLogObserver(stream, recordSeparator="")
        if log_format == "json"
        else textFileLogObserver(stream)
    )
    predicate = LogLevelFilterPredicate(defaultLogLevel=level)
    globalLogBeginner.beginLoggingTo([FilteringLogObserver(observer, [predicate])], redirectStandardIO=False)
