"""Starting a cluster node: the fenced store, the node joined, its operator desk.

The server's start calls these when the configuration names a node (`serve --node`): the
store's service and the node's (`server.services.store`, `server.services.cluster`); the rest
of the start (listeners, shutdown) is the single server's.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from twisted.internet import defer
from twisted.logger import Logger

from server.cluster.fencing import FencedStore
from server.cluster.node import ClusterNode
from server.config.errors import ConfigError
from server.config.file import ServerConfig
from server.game.directory import GameDirectory
from server.game.stand_in import StandInPlayer
from server.operating.game_actions import OperationError

log = Logger()


@defer.inlineCallbacks
def open_node_store(config: ServerConfig, reactor, store=None) -> Generator[defer.Deferred, Any, FencedStore]:
    """The node's FencedStore on the configured PostgreSQL database (schema created if the
    database is empty; an older schema is refused, as for a single server)."""
    from sqlalchemy.engine import make_url

    from server.database.opening import DatabaseProblem, Unreachable, needs_schema, unreachable, unusable

    if store is not None:
        if not isinstance(store, FencedStore):
            raise ConfigError("a cluster node needs its own fenced store")
        return store
    url = config.database or ""
    try:
        backend = make_url(url).get_backend_name() if url else "sqlite"
    except Exception:
        raise ConfigError(f"database: {url!r} is not a database URL") from None
    if backend != "postgresql":
        raise ConfigError(
            "cluster nodes (--node) need a PostgreSQL database (postgresql+psycopg://...); "
            "SQLite allows one server per database"
        )
    try:
        store = FencedStore(url, reactor, node=config.node.node if config.node is not None else None)
    except Exception as error:
        raise ConfigError(str(unusable(url, error))) from None
    try:
        if needs_schema(url, (yield store.current_revision()), create=True):
            try:
                yield store.upgrade()
            except Exception:
                # Nodes started together on an empty database: another one created the schema.
                if needs_schema(url, (yield store.current_revision()), create=False):
                    raise
    except Exception as error:
        yield store.close()
        if isinstance(error, DatabaseProblem) and not isinstance(error, Unreachable):
            raise ConfigError(str(error)) from None
        raise OperationError(str(unreachable(url, error))) from None
    return store


async def join_cluster(config: ServerConfig, store: FencedStore, reactor, hasher) -> ClusterNode:
    """The node, joined: its share of the games loaded and its operator desk made (started by
    the caller with the listeners)."""
    from server.operating.desk import OperatorDesk

    settings = config.node
    assert settings is not None
    # The stand-in (and the computer players) play at the configured level on every node.
    directory = GameDirectory(stand_in=StandInPlayer(config.stand_in))
    node = ClusterNode(
        settings,
        config.database or "",
        store,
        directory,
        reactor,
        hasher=hasher,
        default_game=config.game.name,
    )
    node.desk = OperatorDesk(store, directory, reactor, hasher=hasher, cluster=node)
    await node.join(config.game.setup(ctime=int(reactor.seconds())))
    return node
