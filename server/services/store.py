"""The store of the server's games: opened after the listeners are bound, closed last.

`StoreService` opens the configured database (a cluster node's fenced store on PostgreSQL, or
the one given, in tests) and closes it when the server stops, after every other part has
stopped. A start that fails leaves no database behind that it created: a SQLite file that did
not exist before the start is removed when the start is undone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from twisted.internet import defer
from twisted.logger import Logger

from server.config.errors import ConfigError
from server.config.file import ServerConfig
from server.model.store import GameStore
from server.operating.game_actions import OperationError
from server.services.ordered import AsyncService

log = Logger()


def database_store(url: str, reactor) -> Any:
    """The `DatabaseStore` at `url`, not connected yet; ConfigError for a malformed URL or a
    missing driver."""
    from server.database import DatabaseStore
    from server.database.opening import unusable

    try:
        return DatabaseStore(url, reactor)
    except Exception as error:
        raise ConfigError(str(unusable(url, error))) from None


async def give_schema(store: Any, url: str) -> None:
    """Give an empty database the schema; refuse an old one (ConfigError), or one that cannot
    be reached or read (OperationError: exit status 1, not a configuration error)."""
    from server.database.opening import DatabaseProblem, Unreachable, needs_schema, unreachable

    try:
        if needs_schema(url, await store.current_revision(), create=True):
            await store.upgrade()
    except Exception as error:
        if isinstance(error, DatabaseProblem) and not isinstance(error, Unreachable):
            raise ConfigError(str(error)) from None
        raise OperationError(str(unreachable(url, error))) from None


class StoreService(AsyncService):
    """The server's store (`store`, once started). `given`: a store made by the caller (tests),
    used as it is and closed at stop."""

    def __init__(self, config: ServerConfig, reactor, given: GameStore | None = None):
        self.setName("store")
        self.config = config
        self.reactor = reactor
        self.given = given
        self.store: Any = None  # a GameStore; the database stores have more (leases, outbox)
        self.created: Path | None = None  # the SQLite file this start creates

    async def start(self) -> None:
        config = self.config
        if config.node is not None:
            from server.cluster.start import open_node_store

            self.store = await open_node_store(config, self.reactor, self.given)
        elif self.given is not None:
            self.store = self.given
        else:
            from server.database import DEFAULT_URL

            url = config.database or DEFAULT_URL
            self.created = new_sqlite_file(config)
            self.store = database_store(url, self.reactor)
            await give_schema(self.store, url)  # a failure: `stop` closes the store

    async def stop(self) -> None:
        store, self.store = self.store, None
        if store is not None:
            await defer.maybeDeferred(store.close)
        if getattr(self.parent, "undoing_start", False):
            remove_created(self.created)


def new_sqlite_file(config: ServerConfig) -> Path | None:
    """The SQLite file a start is about to create (None: it exists, or it is no SQLite file)."""
    from sqlalchemy.engine import make_url

    from server.database import DEFAULT_URL

    try:
        url = make_url(config.database or DEFAULT_URL)
    except Exception:
        return None
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    path = Path(str(url.database))
    return None if path.exists() else path


def remove_created(path: Path | None) -> None:
    """Remove a SQLite file (and its WAL and shared-memory files) a failed start created."""
    if path is None:
        return
    for leftover in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        try:
            leftover.unlink()
        except FileNotFoundError:
            pass
        except OSError as error:
            log.warn("could not remove {path}: {error}", path=str(leftover), error=error)
