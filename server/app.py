"""Putting a server together: the store, the games, the listeners, logging and shutdown."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

from twisted.internet import defer
from twisted.internet.endpoints import serverFromString
from twisted.logger import (
    FilteringLogObserver,
    LogLevel,
    LogLevelFilterPredicate,
    Logger,
    globalLogBeginner,
    jsonFileLogObserver,
    textFileLogObserver,
)

from .config import ConfigError, ServerConfig
from .directory import GameDirectory
from .game import Game
from .network import TPFactory
from .store import GameStore

log = Logger()


@dataclass
class Server:
    """A running server: its games and the ports it listens on."""

    config: ServerConfig
    store: GameStore
    directory: GameDirectory
    ports: list = field(default_factory=list)

    def stop(self) -> defer.Deferred:
        for game in self.directory.games.values():
            game.timer.stop()
        stops = [defer.maybeDeferred(port.stopListening) for port in self.ports]
        d = defer.gatherResults(stops, consumeErrors=True)
        close = getattr(self.store, "close", None)
        if close is not None:
            d.addBoth(lambda _: close())
        return d


@defer.inlineCallbacks
def load_games(config: ServerConfig, store: GameStore, reactor) -> defer.Deferred:
    """Every stored game as last committed; the configured open game is created on first start."""
    stored = yield defer.maybeDeferred(store.load_games)
    directory = GameDirectory()
    if not stored:
        setup = config.game.setup(ctime=int(time.time()))
        yield defer.maybeDeferred(store.create_game, setup)
        stored = yield defer.maybeDeferred(store.load_games)
    for record in stored:
        game = Game.restore(record, store, reactor)
        directory.add(game)
    directory.default_name = config.game.name if config.game.name in directory.games else directory.default_name
    for game in directory.games.values():
        game.start()
    return directory


@defer.inlineCallbacks
def open_database(url: str, reactor) -> defer.Deferred:
    """The database store at `url`; an empty database gets the schema, an old one is refused."""
    from .database import DatabaseStore, head_revision

    try:
        store = DatabaseStore(url, reactor)
    except Exception as error:  # a malformed URL or a missing driver
        raise ConfigError(f"database: cannot use {url!r}: {error}") from None
    try:
        revision = yield store.current_revision()
        if revision is None:
            yield store.upgrade()
        elif revision != head_revision():
            raise ConfigError(f"database {url} is at schema revision {revision}, this server needs "
                              f"{head_revision()}: run `tae-server upgrade-db` first")
    except ConfigError:
        yield store.close()
        raise
    except Exception as error:
        yield store.close()
        raise ConfigError(f"database: cannot open {url}: {error}") from None
    return store


@defer.inlineCallbacks
def start_server(config: ServerConfig, reactor, store: GameStore | None = None) -> defer.Deferred:
    """Load the games and listen on every configured endpoint; fires with the `Server`."""
    if store is None:
        from .database import DEFAULT_URL

        store = yield open_database(config.database or DEFAULT_URL, reactor)
    directory = yield load_games(config, store, reactor)
    server = Server(config, store, directory)
    factory = TPFactory(directory)
    for description in config.listen:
        try:
            endpoint = serverFromString(reactor, description)
        except (ValueError, TypeError, KeyError) as error:
            raise ConfigError(f"listen: {description!r} is not a usable endpoint ({error})") from None
        port = yield endpoint.listen(factory)
        server.ports.append(port)
    return server


def begin_logging(log_format: str, stream=None, level: LogLevel = LogLevel.info) -> None:
    stream = stream or sys.stdout
    observer = jsonFileLogObserver(stream) if log_format == "json" else textFileLogObserver(stream)
    predicate = LogLevelFilterPredicate(defaultLogLevel=level)
    globalLogBeginner.beginLoggingTo([FilteringLogObserver(observer, [predicate])],
                                     redirectStandardIO=False)
