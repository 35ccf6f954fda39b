"""Operating games from the command line: what `tae-server` does to them.

Plain functions over a `SyncDatabase`: create and list games, a game's status, and `operate`,
which carries out any operator command of the table (`server.operating.commands`). They work
with or without a running server on the same database. A command that is safe without a server
(creating a game, adding or removing a player, the clock and the settings) is carried out on the
stored game when no server is running, in one transaction with the check of the server lease
(`server.database.lease`), so a server starting at the same moment either sees the edit or is
the one asked to make it. With a server running, every edit goes through the operator request
queue (`server.database.operator_requests`) and the command waits briefly for the server's
answer (its side is `server.operating.desk`).

Every function takes the time it works at (`now`, Unix seconds) from its caller: the command
line reads the clock, nothing here does. Every failure the operator should read is an
`OperationError` with a one-line message.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from twisted.internet import defer
from twisted.internet.task import Clock

from server.database.opening import DatabaseProblem, one_line, shown_url
from server.game.game import Game
from server.game.passwords import PasswordHasher
from server.model.snapshot import GameSnapshot
from server.model.store import GameSetup, MemoryStore
from server.operating.arguments import DEFAULT_GAME
from server.operating.command_declaration import OperatorCommand, WithoutServer
from server.operating.commands import MOVE_GAME, no_such_game, thd_queue_command
from server.operating.game_actions import OperationError
from server.views.operator_status import GameStatus, status_of

DEFAULT_WAIT_S = 10.0

__all__ = ["OperationError", "one_line", "shown_url"]


@dataclass(frozen=True)
class Outcome:
    """What an operation did: `text` for the operator; `request` is the queued request's id when
    the running server was asked (or will be, when it starts)."""

    text: str
    request: int | None = None
    queued: bool = False  # True: no server answered; the request waits for one


def open_database(url: str, *, create: bool = False):
    """A SyncDatabase at `url` with the current schema. An empty database gets the schema when
    `create` is set; otherwise an empty, old or unreachable database is an OperationError. A
    SQLite file this process cannot write is opened read-only (reading commands work)."""
    from sqlalchemy.engine import make_url

    from server.database import SyncDatabase
    from server.database.engine import readable_url
    from server.database.opening import needs_schema, unreachable, unusable

    try:
        parsed = make_url(url)
    except Exception:
        raise OperationError(f"database: {url!r} is not a database URL") from None
    if (
        parsed.get_backend_name() == "sqlite"
        and parsed.database not in (None, "", ":memory:")
        and not create
        and not os.path.exists(parsed.database)
    ):
        raise OperationError(
            f"database {shown_url(url)}: no such file (start the server or create a game first)"
        )
    try:
        db = SyncDatabase(url if create else readable_url(url))
    except Exception as error:
        raise OperationError(str(unusable(url, error))) from None
    try:
        if needs_schema(url, db.current_revision(), create=create):
            db.upgrade()
    except DatabaseProblem as problem:
        db.close()
        raise OperationError(str(problem)) from None
    except Exception as error:
        db.close()
        raise OperationError(str(unreachable(url, error))) from None
    return db


def server_holder(db, wallclock: Callable[[], float]):
    """The live server using this database (a LeaseHolder), or None."""
    return db.lease_holder(wallclock())


def _game_id(conn, name: str, default_game: str | None = None) -> int:
    """The id of the game `name` names ('-': the server's default game, the configured one if
    the database has it, else the oldest); OperationError when there is none."""
    import sqlalchemy as sa

    from server.database.schema import games

    rows = conn.execute(sa.select(games.c.id, games.c.name).order_by(games.c.id)).all()
    by_name = {row.name: int(row.id) for row in rows}
    if name == DEFAULT_GAME and rows:
        return by_name.get(default_game or "", int(rows[0].id))
    if name not in by_name:
        raise no_such_game(name, list(by_name), "this database")
    return by_name[name]


def wait_for(db, request_id: int, timeout: float, wallclock: Callable[[], float], poll: float = 0.1):
    """The request once the server has answered it, or as it is after `timeout` seconds (by
    `wallclock`), looking every `poll` seconds (`pause_between_looks`)."""
    deadline = wallclock() + timeout
    while True:
        request = db.request(request_id)
        if request is None or request.status != "pending" or wallclock() >= deadline:
            return request
        pause_between_looks(poll)


def pause_between_looks(seconds: float) -> None:
    """How the command line waits between two looks at a queued request: it sleeps (tests put
    a running server's poll here instead, so nothing waits on the wall clock)."""
    time.sleep(seconds)


def _ask_server(db, request_id: int, wait: float, waiting: str, wallclock: Callable[[], float]) -> Outcome:
    """Wait for the running server to answer a queued request."""
    request = wait_for(db, request_id, wait, wallclock)
    if request.status == "done":
        return Outcome(request.result, request_id)
    if request.status == "failed":
        raise OperationError(request.result)
    if server_holder(db, wallclock) is None:
        return Outcome(f"queued as request #{request_id}: the server stopped; {waiting}", request_id, True)
    raise OperationError(
        f"request #{request_id} is queued but the server has not answered in {wait:g} s; {waiting}"
    )


def create_game(
    db, setup: GameSetup, *, wallclock: Callable[[], float], wait: float = DEFAULT_WAIT_S
) -> Outcome:
    """Store a new game; a running server is asked to load it (a starting one loads it anyway)."""
    from server.database import ConflictError, lease
    from server.database import games as q
    from server.database import operator_requests as requests_q

    def create(conn):
        game_id = q.thd_create_game(conn, setup)
        alive = lease.thd_lease_holder(conn, wallclock()) is not None
        request = requests_q.thd_queue_request(conn, game_id, "load_game", {}) if alive else None
        return game_id, request

    try:
        game_id, request = db.run(create)
    except ConflictError:
        raise OperationError(f"a game named {setup.name!r} exists") from None
    text = f"game {setup.name!r} created (id {game_id}, seed {setup.seed})"
    if request is None:
        return Outcome(text + "; no server is running: it is loaded when the server starts")
    answer = _ask_server(db, request, wait, "the game is loaded when the server starts", wallclock)
    return Outcome(
        text
        + "; "
        + (answer.text if not answer.queued else "no server is running: it is loaded when the server starts"),
        request,
        answer.queued,
    )


def list_games(db) -> list:
    """A GameSummary per game, by id."""
    from server.database import games as q

    return db.run(q.thd_game_summaries)


def game_status(
    db, name: str, *, wallclock: Callable[[], float], default_game: str | None = None
) -> GameStatus:
    """A game as stored (`server.views.operator_status`): the deadline is the one the running
    server recorded for the open turn, the pause as stored; `server` says which server runs,
    if one does."""
    from server.database import games as q

    def read(conn):
        return q.thd_load_games(conn, [_game_id(conn, name, default_game)], all_states=False)[0]

    stored = db.run(read)
    now = wallclock()
    holder = server_holder(db, wallclock)
    return status_of(
        stored_snapshot(stored, now),
        now,
        server=None if holder is None else holder.describe(now),
        deadline_recorded=True,
    )


def stored_snapshot(stored, now: float) -> GameSnapshot:
    """The snapshot of a stored game at Unix time `now`, its clock as stored (the recorded
    deadline of the open turn, a pause); nothing runs and nothing is written."""
    clock = Clock()
    clock.advance(now)
    game = Game.restore(stored, MemoryStore(), clock)
    game.restore_clock(stored.deadline)
    return game.snapshot


def _edit(
    db,
    name: str,
    command: OperatorCommand,
    payload: dict[str, Any],
    wallclock: Callable[[], float],
    default_game: str | None,
):
    """Queue the command if a server is running, else carry it out on the stored game here;
    in one transaction with the check of the lease: (request id, None) or (None, its text)."""
    from server.database import ConnectionStore, lease
    from server.database import games as q

    def edit(conn):
        game_id = _game_id(conn, name, default_game)
        if lease.thd_lease_holder(conn, wallclock()) is not None:
            return thd_queue_command(conn, game_id, command, payload)[0], None
        stored = q.thd_load_games(conn, [game_id], all_states=False)[0]
        clock = Clock()
        clock.advance(wallclock())  # the stored deadline is Unix time: the game reads it so
        game = Game.restore(stored, ConnectionStore(conn), clock)
        game.restore_clock(stored.deadline)
        return None, _synchronously(command.carry_out(game, payload))

    return db.run(edit)


def _synchronously(coroutine) -> Any:
    """The result of a coroutine over Deferreds that have all fired (a synchronous store)."""
    from twisted.python.failure import Failure

    out: list = []
    defer.ensureDeferred(coroutine).addBoth(out.append)
    if not out:
        raise RuntimeError("an offline edit did not finish synchronously")
    if isinstance(out[0], Failure):
        out[0].raiseException()
    return out[0]


def operate(
    db,
    command: OperatorCommand,
    values: Mapping[str, Any],
    *,
    hasher: PasswordHasher,
    wallclock: Callable[[], float],
    wait: float = DEFAULT_WAIT_S,
    default_game: str | None = None,
) -> Outcome:
    """Carry out an operator command on a game (`values` as `OperatorCommand.read` gives them;
    passwords are hashed by `hasher`): through the running server when there is one (waiting
    up to `wait` seconds for its answer), else on the stored game, or, for a command that needs
    the server (ending a turn), left queued for it."""
    name = values["game"]
    payload = _synchronously(command.payload(values, hasher))
    later = f"the server carries out {command.name} when it starts"
    if command.without_server is WithoutServer.WAITS_FOR_THE_SERVER:
        request, queued = db.run(
            lambda conn: thd_queue_command(conn, _game_id(conn, name, default_game), command, payload)
        )
        if "open_turn" in queued:
            later = f"turn {queued['open_turn']} of game {name!r} ends when the server starts"
        if server_holder(db, wallclock) is None:
            return Outcome(f"queued as request #{request}: no server is running; {later}", request, True)
        return _ask_server(db, request, wait, later, wallclock)
    request, text = _edit(db, name, command, payload, wallclock, default_game)
    if request is None:
        return Outcome(text)
    return _ask_server(db, request, wait, later, wallclock)


# -- cluster nodes ------------------------------------------------------------------------------


def cluster_view(db) -> dict[str, Any]:
    """The nodes (name, address, state, alive, heartbeat age, games) and the games that wait
    for a node, as plain data (`tae-server nodes`)."""
    from server.database import ownership

    nodes, placements = db.run(ownership.thd_cluster_view)
    return {
        "nodes": [
            {
                "name": n.name,
                "advertise": n.advertise,
                "host": n.host,
                "pid": n.pid,
                "state": n.state,
                "alive": n.alive,
                "heartbeat_age": round(n.heartbeat_age, 1),
                "games": list(n.games),
            }
            for n in nodes
        ],
        "waiting": [p.name for p in placements if not p.owned],
    }


def move_game(
    db,
    name: str,
    node: str,
    *,
    wallclock: Callable[[], float],
    wait: float = DEFAULT_WAIT_S,
    default_game: str | None = None,
) -> Outcome:
    """Ask the node that runs the game to hand it over to `node` (a live cluster node)."""
    from server.database import ownership

    def queue(conn):
        game_id = _game_id(conn, name, default_game)
        nodes = {n.name: n for n in ownership.thd_live_nodes(conn)}
        if not nodes:
            raise OperationError("no cluster node is running (tae-server serve --node NAME on PostgreSQL)")
        if node not in nodes:
            raise OperationError(f"no live node named {node!r} (live nodes: {', '.join(sorted(nodes))})")
        return thd_queue_command(conn, game_id, MOVE_GAME, {"node": node})[0]

    request = db.run(queue)
    return _ask_server(db, request, wait, f"game {name!r} moves when its node gets to it", wallclock)
