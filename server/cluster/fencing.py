"""The two database handles of a cluster node: the fenced game store and the claim connection.

`FencedStore` is the node's `DatabaseStore` with the fencing check added to every write of a
game: the write runs only with the claim epoch the node was given for that game, checked in the
same transaction (`server.database.ownership.thd_check_claim`); a game the node does not hold
fails at once with `ClaimLost`, and a write refused by the database tells the node
(`on_lost(game_id)`), which then lets the game go. Every stored turn also tells every node
(NOTIFY with the turn and its change record's sequence, sent when its transaction commits:
`turn_news`); other writes tell no one, since every node would have to read every such NOTIFY of
every game, a cost that grows with the number of nodes for news no node needs.

`ClaimConnection` is the node's one dedicated connection, on a thread of its own: its session
holds the node's advisory lock (the node is alive exactly while it is open), and the claim
rounds run on it. When it breaks (the database restarted, the connection was terminated) every
call fails with `ClaimConnectionLost`: from then on the node must consider all its claims gone.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.pool import NullPool
from twisted.internet import defer
from twisted.logger import Logger

from server.database import DatabaseStore
from server.database.changes import thd_write
from server.database.engine import create_engine
from server.database.ownership import ClaimLost, session_name, thd_check_claim, thd_notify
from server.database.threads import DatabaseThread
from server.model.changes import TurnEnded
from server.model.store import StoreUnavailable

log = Logger()


def _fenced(conn, game_id: int, epoch: int, space: int, fn: Callable[..., Any], *args: Any) -> Any:
    thd_check_claim(conn, game_id, epoch)
    result = fn(conn, game_id, *args)
    if fn is thd_write and isinstance(args[0].change, TurnEnded):
        thd_notify(conn, space, turn_news(game_id, result, args[0].change))
    return result


def turn_news(game_id: int, sequence: int, change: TurnEnded) -> dict[str, Any]:
    """The NOTIFY of a stored turn (sent when its transaction commits): the game, the turn and
    its change record's sequence, so that other nodes know the game's last turn and can read the
    records they have not seen (`server.database.changes.thd_changes_after`)."""
    return {"k": "turn", "g": game_id, "t": change.turn, "q": sequence}


class FencedStore(DatabaseStore):
    """A DatabaseStore whose game writes carry the node's claim (see the module docstring)."""

    def __init__(
        self,
        url,
        reactor=None,
        *,
        thread=None,
        on_lost: Callable[[int], None] | None = None,
        node: str | None = None,
    ):
        # A node's store sessions carry its name: a peer that cuts the node off ends them too
        # (`server.database.ownership.NODE_SESSION_ROLES`).
        name = session_name(node, "store", os.getpid()) if node is not None else None
        super().__init__(url, reactor, thread=thread, application_name=name)
        self.space = 0
        self.on_lost = on_lost
        self.claims: dict[int, int] = {}  # game id → the claim epoch this node holds

    def hold(self, game_id: int, epoch: int) -> None:
        self.claims[game_id] = epoch

    def forget(self, game_id: int) -> None:
        self.claims.pop(game_id, None)

    def read(self, fn: Callable[..., Any], *args: Any) -> defer.Deferred:
        """Run a read-only `thd_*`-style query on the store's thread."""
        return self._run(fn, *args)

    def notify(self, message: dict[str, Any]) -> defer.Deferred:
        """NOTIFY every node (`server.cluster.notify`), on the store's thread."""
        return self._run(thd_notify, self.space, message)

    def _write(self, fn: Callable[..., Any], game_id: int, *args: Any) -> Any:
        epoch = self.claims.get(game_id)
        if epoch is None:
            return defer.fail(ClaimLost(f"game {game_id} is not run by this node"))
        d = self._run(_fenced, game_id, epoch, self.space, fn, *args)
        d.addErrback(self._refused, game_id, epoch)
        return d

    def _refused(self, failure, game_id: int, epoch: int):
        if failure.check(ClaimLost) and self.claims.get(game_id) == epoch and self.on_lost is not None:
            self.on_lost(game_id)
        return failure


class ClaimConnectionLost(StoreUnavailable):
    """The claim connection broke: the node's advisory lock, and with it every claim, is gone."""


class ClaimConnection:
    """One dedicated connection on its own thread; `run(fn, *args)` runs `fn(connection, *args)`
    in a transaction of its own and returns a Deferred. `application_name` shows it in
    pg_stat_activity; `keepalive` (seconds) makes both ends notice a silent peer soon."""

    def __init__(self, url, reactor, *, application_name: str, keepalive: float):
        idle = max(1, int(keepalive / 3))
        self.engine = create_engine(
            url,
            poolclass=NullPool,
            connect_args={
                "application_name": application_name[:63],
                "keepalives": 1,
                "keepalives_idle": idle,
                "keepalives_interval": 1,
                "keepalives_count": 3,
            },
        )
        self.settings = {"tcp_keepalives_idle": idle, "tcp_keepalives_interval": 1, "tcp_keepalives_count": 3}
        self.thread = DatabaseThread(reactor, name="tae-cluster")
        self.connection: sa.engine.Connection | None = None
        self.broken = False

    def open(self) -> defer.Deferred:
        return self.thread.run(self._open)

    def _open(self) -> int:
        self.connection = self.engine.connect()
        with self.connection.begin():
            for name, value in self.settings.items():
                self.connection.exec_driver_sql(f"SET {name} = {int(value)}")
            return int(self.connection.exec_driver_sql("SELECT pg_backend_pid()").scalar_one())

    def run(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> defer.Deferred:
        return self.thread.run(self._transaction, fn, args, kwargs)

    def _transaction(self, fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        if self.broken or self.connection is None:
            raise ClaimConnectionLost("the claim connection is closed")
        try:
            with self.connection.begin():
                return fn(self.connection, *args, **kwargs)
        except (sa.exc.OperationalError, sa.exc.InterfaceError, sa.exc.DisconnectionError) as error:
            if self.connection.invalidated or self.connection.closed or _connection_gone(error):
                self.broken = True
                raise ClaimConnectionLost(_one_line(error)) from error
            raise StoreUnavailable(_one_line(error)) from error

    def close(self) -> defer.Deferred:
        d = self.thread.run(self._close)

        def stop(result):
            self.thread.stop()
            return result

        return d.addBoth(stop)

    def _close(self) -> None:
        if self.connection is not None:
            try:
                self.connection.close()
            except Exception:  # closing a broken connection: nothing left to do
                pass
        self.engine.dispose()


def _connection_gone(error: Exception) -> bool:
    if getattr(error, "connection_invalidated", False):
        return True
    text = str(getattr(error, "orig", error)).lower()
    return any(
        part in text
        for part in ("terminating connection", "server closed", "connection is closed", "connection refused")
    )


def _one_line(error: BaseException) -> str:
    lines = str(getattr(error, "orig", None) or error).strip().splitlines()
    return lines[0] if lines else type(error).__name__
