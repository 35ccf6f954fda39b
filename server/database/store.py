"""The durable GameStore: `DatabaseStore` for the server, `SyncDatabase` for the CLI and tests.

Both run the `thd_*` functions of `server.database.games`, each in a transaction of its own that
is committed before the result is given back. `DatabaseStore` runs them on its one database
thread and gives back Deferreds that fire after the commit, which is what lets the game service
promise "stored before answered". `SyncDatabase` runs them in the calling thread.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import URL, Engine
from twisted.internet import defer

from ruleset import Message
from server.database import changes as changes_q
from server.database import games as q
from server.database import migrate, ownership
from server.database import notification_outbox as outbox_q
from server.database import ratings as ratings_q
from server.database.components import (
    NotificationOutbox,
    OperatorRequests,
    Ratings,
    ServerLease,
    WebSessionRevocations,
)
from server.database.engine import create_engine
from server.database.threads import DatabaseThread
from server.model.store import (
    Account,
    ConflictError,
    GameSetup,
    OrderEntry,
    OutcomeUnknown,
    StoreUnavailable,
    TurnRecord,
)
from server.model.writes import GameWrite

# The cluster's tables (revision 0003c), the notifications' (0004n) and the ratings' (0008r)
# are part of the schema: defined with their queries.
SCHEMA_MODULES = (ownership, outbox_q, changes_q, ratings_q)


def in_transaction(engine: Engine, fn: Callable[..., Any], *args: Any) -> Any:
    """Run `fn(connection, *args)` in one transaction, committed before this returns.

    Runs on the database thread. A constraint violation becomes ConflictError, a database that
    cannot be reached (or cannot write) StoreUnavailable; any error rolls the whole transaction
    back. An error before the COMMIT was sent changed nothing; but a connection that breaks while
    PostgreSQL commits leaves the outcome unknown (the COMMIT may have reached it and only its
    answer been lost): that is OutcomeUnknown, naming the session, never StoreUnavailable alone.
    """
    try:
        with engine.connect() as connection:
            transaction = connection.begin()
            try:
                result = fn(connection, *args)
            except BaseException:
                if transaction.is_active:
                    _roll_back(transaction)
                raise
            session = _session_of(connection)
            try:
                transaction.commit()
            except (sa.exc.OperationalError, sa.exc.InterfaceError, sa.exc.DisconnectionError) as exc:
                if engine.dialect.name == "sqlite":  # a local file: a failed COMMIT kept nothing
                    raise
                raise OutcomeUnknown(f"the commit's answer was lost ({_first_line(exc)})", session) from exc
            return result
    except sa.exc.IntegrityError as exc:
        raise ConflictError(str(exc.orig)) from exc
    except (sa.exc.OperationalError, sa.exc.InterfaceError, sa.exc.DisconnectionError) as exc:
        raise StoreUnavailable(_first_line(exc)) from exc


def _roll_back(transaction) -> None:
    try:
        transaction.rollback()
    except sa.exc.DBAPIError:  # the connection is gone: so is the transaction
        pass


def _session_of(connection) -> int | None:
    """The PostgreSQL backend serving `connection` (its pid), known without a round trip."""
    info = getattr(connection.connection.dbapi_connection, "info", None)
    pid = getattr(info, "backend_pid", None)
    return pid if isinstance(pid, int) else None


def _first_line(exc: BaseException) -> str:
    lines = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def find_write(engine: Engine, game_id: int, write: GameWrite, doubt: OutcomeUnknown) -> int | None:
    """Whether a write whose commit ended in `doubt` is stored (its record's sequence, or None).

    Runs on the database thread, on a new connection. The session the COMMIT was sent on is cut
    off first and waited for (`ownership.thd_end_session`): until it is gone, a COMMIT still on
    its way could land after the look. OutcomeUnknown while the database cannot be asked."""
    try:
        with engine.begin() as connection:
            if isinstance(doubt.session, int) and not ownership.thd_end_session(connection, doubt.session):
                raise OutcomeUnknown(f"{doubt} (its session {doubt.session} does not end)", doubt.session)
            return changes_q.thd_find_write(connection, game_id, write)
    except (sa.exc.OperationalError, sa.exc.InterfaceError, sa.exc.DisconnectionError) as exc:
        raise OutcomeUnknown(
            f"{doubt}; the database cannot be asked ({_first_line(exc)})", doubt.session
        ) from exc


class _Games:
    """The GameStore methods over `_run(fn, *args)`, which subclasses define."""

    engine: Engine

    def _run(self, fn: Callable[..., Any], *args: Any) -> Any:
        raise NotImplementedError

    def _write(self, fn: Callable[..., Any], game_id: int, *args: Any) -> Any:
        """Run one write of a game. A cluster node's store adds its fencing check here
        (`server.cluster.fencing`), in the same transaction as the write."""
        return self._run(fn, game_id, *args)

    def create_game(self, setup: GameSetup):
        """The new game's id."""
        return self._run(q.thd_create_game, setup)

    def add_account(self, game_id: int, account: Account, messages: tuple[Message, ...]):
        return self._write(q.thd_add_account, game_id, account, tuple(messages))

    def record_order(self, game_id: int, entry: OrderEntry):
        return self._write(q.thd_record_order, game_id, entry)

    def remove_order(self, game_id: int, seq: int):
        return self._write(q.thd_remove_order, game_id, seq)

    def remove_message(self, game_id: int, player: int, index: int):
        return self._write(q.thd_remove_message, game_id, player, index)

    def commit_turn(self, game_id: int, record: TurnRecord):
        return self._write(q.thd_commit_turn, game_id, record)

    def load_games(self, game_ids=None, all_states: bool = True):
        """list[StoredGame], by game id (see `thd_load_games` for `all_states`)."""
        return self._run(q.thd_load_games, game_ids, all_states)

    def turn_record(self, game_id: int, turn: int):
        """One stored turn (TurnRecord, state decoded) or None."""
        return self._run(q.thd_turn_record, game_id, turn)

    def turn_events(self, game_id: int, after: int = 0):
        """[(turn, events)] of the stored turns after `after`."""
        return self._run(q.thd_turn_events, game_id, after)

    # -- one write of a game and its change record (revision 0006c) ------------------------

    def write(self, game_id: int, write: GameWrite):
        """Store a `GameWrite` (its rows, change record and notifications) in one transaction;
        the record's sequence number."""
        return self._write(changes_q.thd_write, game_id, write)

    def find_write(self, game_id: int, write: GameWrite, doubt: OutcomeUnknown):
        """The sequence of the record a write whose commit ended in `doubt` stored, or None
        when it is not stored; fails with OutcomeUnknown while that cannot be told."""
        return self._find(find_write, self.engine, game_id, write, doubt)

    def _find(self, fn: Callable[..., Any], *args: Any) -> Any:
        return fn(*args)

    def changes_after(self, game_id: int, after: int = 0):
        """[ChangeRecord] of the game numbered above `after`, oldest first."""
        return self._run(changes_q.thd_changes_after, game_id, after)

    # -- a player's turn and the deadline (revision 0002) --------------------------------

    def record_finished(self, game_id: int, turn: int, player: int):
        return self._write(q.thd_record_finished, game_id, turn, player)

    def remove_player(self, game_id: int, player_id: int):
        return self._write(q.thd_remove_player, game_id, player_id)

    def set_deadline(self, game_id: int, turn: int, deadline: float | None):
        return self._write(q.thd_set_deadline, game_id, turn, deadline)

    def record_attendance(self, game_id: int, attendance: tuple, notices: tuple[Message, ...]):
        """Who plays seats now (`server.model.attendance.Attendance` rows) and what everyone is told."""
        return self._write(q.thd_record_attendance, game_id, tuple(attendance), tuple(notices))

    def reinstate_player(self, game_id: int, player_id: int):
        return self._write(q.thd_reinstate_player, game_id, player_id)

    def set_pause(self, game_id: int, paused: bool, left: float | None):
        return self._write(q.thd_set_pause, game_id, paused, left)

    def update_setup(self, game_id: int, setup: GameSetup):
        return self._write(q.thd_update_setup, game_id, setup)

    def add_notices(self, game_id: int, messages: tuple[Message, ...]):
        return self._write(q.thd_add_notices, game_id, tuple(messages))

    def account_hash(self, name: str):
        """(name, password hash) of the server account `name`, or None."""
        return self._run(q.thd_account_hash, name)

    def set_password_hash(self, game_id: int, player_id: int, password_hash: str):
        return self._run(q.thd_set_password_hash, game_id, player_id, password_hash)

    # -- the other table groups, one component each (buildbot's db/ layout) ----------------

    @cached_property
    def requests(self) -> OperatorRequests:
        """The operator request queue (revision 0002)."""
        return OperatorRequests(self)

    @cached_property
    def lease(self) -> ServerLease:
        """The lease of a single server (revision 0002)."""
        return ServerLease(self)

    @cached_property
    def notifications(self) -> NotificationOutbox:
        """The players' channels and the outbox (revision 0004n)."""
        return NotificationOutbox(self)

    @cached_property
    def ratings(self) -> Ratings:
        """The ratings across games (revision 0008r)."""
        return Ratings(self)

    @cached_property
    def web_sessions(self) -> WebSessionRevocations:
        """Browser sessions that ended (revision 0005s)."""
        return WebSessionRevocations(self)


class ConnectionStore(_Games):
    """The store methods run on an open Connection, inside the caller's transaction (the CLI's
    offline edits: a game restored and changed in one transaction with the lease check)."""

    def __init__(self, connection):
        self.connection = connection

    def _run(self, fn: Callable[..., Any], *args: Any) -> Any:
        return fn(self.connection, *args)


def _engine(target: str | URL | Engine, application_name: str | None = None) -> tuple[Engine, bool]:
    if isinstance(target, Engine):
        return target, False
    if application_name is not None:
        return create_engine(target, connect_args={"application_name": application_name}), True
    return create_engine(target), True


class DatabaseStore(_Games):
    """The server's store: a GameStore whose every method returns a Deferred that fires after
    the transaction committed (or fails, having changed nothing).

    `url` is a database URL or an Engine (then the caller disposes of it). `thread` replaces the
    database thread; tests pass a `SynchronousDatabaseThread`. `application_name` names the
    store's PostgreSQL sessions (pg_stat_activity). Call `close()` when done.
    The schema must be current: call `upgrade()` (or `server.database.upgrade(url)`) first.
    """

    def __init__(
        self, url: str | URL | Engine, reactor=None, *, thread=None, application_name: str | None = None
    ):
        self.engine, self._owns_engine = _engine(url, application_name)
        self.thread = thread if thread is not None else DatabaseThread(reactor)

    def _run(self, fn: Callable[..., Any], *args: Any) -> defer.Deferred:
        return self.thread.run(in_transaction, self.engine, fn, *args)

    def _find(self, fn: Callable[..., Any], *args: Any) -> defer.Deferred:
        return self.thread.run(fn, *args)

    def upgrade(self) -> defer.Deferred:
        """Migrate the schema to the newest revision, on the database thread; fires with it."""
        return self.thread.run(migrate.upgrade, self.engine)

    def current_revision(self) -> defer.Deferred:
        return self.thread.run(migrate.current_revision, self.engine)

    def close(self) -> defer.Deferred:
        """Finish the work handed over, close the connections, stop the thread."""
        d = self.thread.run(self._dispose)

        def stop(result):
            self.thread.stop()
            return result

        return d.addBoth(stop)

    def _dispose(self) -> None:
        if self._owns_engine:
            self.engine.dispose()


class SyncDatabase(_Games):
    """The same operations, run in the calling thread and returning plain values (CLI, tests,
    benchmarks). Also a GameStore: `Game` accepts plain results as well as Deferreds."""

    def __init__(self, url: str | URL | Engine):
        self.engine, self._owns_engine = _engine(url)

    def _run(self, fn: Callable[..., Any], *args: Any) -> Any:
        return in_transaction(self.engine, fn, *args)

    def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run any `thd_*`-style function in a transaction of its own."""
        return in_transaction(self.engine, fn, *args)

    def upgrade(self) -> str | None:
        return migrate.upgrade(self.engine)

    def current_revision(self) -> str | None:
        return migrate.current_revision(self.engine)

    def close(self) -> None:
        if self._owns_engine:
            self.engine.dispose()

    def __enter__(self) -> SyncDatabase:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
