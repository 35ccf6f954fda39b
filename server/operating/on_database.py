"""Operating games from the command line: what `tae-server` does to them.

Plain functions over a `SyncDatabase`: create and list games, a game's status, add or remove
players, set a player's password, end a turn. They work with or without a running server on the
same database. Edits that are safe without a server (creating a game, adding or removing a
player, setting a password) are made directly when no server is running, in one transaction
with the check of the server lease (`server.database.lease`), so a server starting at the same
moment either sees the edit or is the one asked to make it. With a server running, every edit
goes through the operator request queue (`server.database.operator_requests`) and the command
waits briefly for the server's answer (its side is `server.operating.desk`).

Every function takes the time it works at (`now`, Unix seconds) from its caller: the command
line reads the clock, nothing here does. Every failure the operator should read is an
`OperationError` with a one-line message.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from twisted.internet import defer
from twisted.internet.task import Clock

from ruleset import Phase
from server.database.opening import DatabaseProblem, one_line, shown_url
from server.game.game import Game
from server.game.passwords import SCRYPT_N, hash_password
from server.model.store import GameSetup, MemoryStore
from server.operating.final_standing import standing
from server.operating.game_actions import (
    CONTROLS,
    OperationError,
    add_player_to,
    remove_player_from,
    set_password_of,
)

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


def _game_id(conn, name: str) -> int:
    import sqlalchemy as sa

    from server.database.schema import games

    game_id = conn.execute(sa.select(games.c.id).where(games.c.name == name)).scalar()
    if game_id is None:
        names = conn.execute(sa.select(games.c.name).order_by(games.c.id)).scalars().all()
        known = f" (games: {', '.join(names)})" if names else " (there are no games)"
        raise OperationError(f"no game named {name!r}{known}")
    return int(game_id)


def wait_for(db, request_id: int, timeout: float, wallclock: Callable[[], float], poll: float = 0.1):
    """The request once the server has answered it, or as it is after `timeout` seconds."""
    deadline = wallclock() + timeout
    while True:
        request = db.request(request_id)
        if request is None or request.status != "pending" or wallclock() >= deadline:
            return request
        time.sleep(poll)


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


@dataclass
class GameStatus:
    summary: Any
    players: list[dict[str, Any]] = field(default_factory=list)
    waiting_for: list[str] = field(default_factory=list)
    deadline: float | None = None
    seconds_left: int | None = None
    server: str | None = None
    final_scores: dict[str, int] = field(default_factory=dict)
    setup: Any = None  # the game's GameSetup
    paused_left: float | None = None  # paused: the seconds the deadline gets back at resume

    def as_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        data = asdict(self.summary)
        data["board_size"] = list(data["board_size"])
        data["winners"] = list(data["winners"])
        data.update(
            players=self.players,
            waiting_for=self.waiting_for,
            deadline=self.deadline,
            seconds_left=self.seconds_left,
            server=self.server,
            final_scores=self.final_scores,
            paused_left=self.paused_left,
        )
        if self.setup is not None:
            data.update(
                absent_after_missed_turns=self.setup.absent_after_missed_turns,
                vacation_days_max=self.setup.vacation_days_max,
            )
        return data


def game_status(db, name: str, *, wallclock: Callable[[], float]) -> GameStatus:
    """A game as stored: turn, phase, players (who finished this turn, who was removed), the
    deadline the running server set for this turn, the result of a finished game."""
    from server.database import games as q

    def read(conn):
        game_id = _game_id(conn, name)
        return q.thd_game_summaries(conn, name)[0], q.thd_load_games(conn, [game_id], all_states=False)[0]

    summary, stored = db.run(read)
    snapshot = Game.restore(stored, MemoryStore(), Clock()).snapshot  # read only: never writes
    state = snapshot.state
    waiting = set(snapshot.waiting_for())
    players = []
    for account in sorted(stored.accounts, key=lambda a: a.player_id):
        pid = account.player_id
        if snapshot.over:
            turn = standing(state, pid)
            if pid in snapshot.removed_players:
                turn = "removed; " + turn
        elif pid in snapshot.removed_players:
            turn = "removed"
        elif pid in snapshot.stand_ins():
            turn = f"{snapshot.seat_label(pid)}: the stand-in plays"
        elif pid in snapshot.finished:
            turn = "finished"
        elif pid in waiting:
            turn = "waiting"
        else:
            turn = "not playing this turn"
        score = state.player(pid).scores if state.has_player(pid) else ()
        players.append(
            {
                "id": pid,
                "name": account.username,
                "turn": turn,
                "seat": snapshot.seat_label(pid),
                "scores": list(score),
            }
        )
    names = {p.id: p.name for p in state.players}
    deadline = None
    paused, paused_left = stored.paused
    if stored.deadline is not None and stored.deadline[0] == state.turn + 1 and not snapshot.over:
        deadline = None if paused else stored.deadline[1]
    now = wallclock()
    holder = server_holder(db, wallclock)
    final = {}
    if state.result is not None:
        final = {names.get(pid, str(pid)): score for pid, score in state.result.final.items()}
    return GameStatus(
        summary,
        players,
        [names[p] for p in sorted(waiting)],
        deadline,
        None if deadline is None else max(0, round(deadline - now)),
        None if holder is None else holder.describe(now),
        final,
        stored.setup,
        paused_left if paused else None,
    )


def _edit(
    db,
    name: str,
    kind: str,
    payload: dict[str, Any],
    offline: Callable[[Game], Any],
    wallclock: Callable[[], float],
):
    """Queue a request if a server is running, else change the game here; in one transaction."""
    from server.database import ConnectionStore, lease
    from server.database import games as q
    from server.database import operator_requests as requests_q

    def edit(conn):
        game_id = _game_id(conn, name)
        if lease.thd_lease_holder(conn, wallclock()) is not None:
            return requests_q.thd_queue_request(conn, game_id, kind, payload), None
        stored = q.thd_load_games(conn, [game_id], all_states=False)[0]
        clock = Clock()
        clock.advance(wallclock())  # the stored deadline is Unix time: the game reads it so
        game = Game.restore(stored, ConnectionStore(conn), clock)
        game.restore_clock(stored.deadline)
        return None, _synchronously(offline(game))

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


def add_player(
    db,
    name: str,
    username: str,
    password: str,
    email: str = "",
    comment: str = "",
    *,
    wallclock: Callable[[], float],
    wait: float = DEFAULT_WAIT_S,
    cost: int = SCRYPT_N,
) -> Outcome:
    """Add a player to a game (also when it takes no new accounts, but not beyond its size).
    The caller has checked the password against the policy; `cost` is scrypt's N."""
    payload = {
        "username": username,
        "password_hash": hash_password(password, n=cost),
        "email": email,
        "comment": comment,
    }
    request, text = _edit(
        db, name, "add_player", payload, lambda game: add_player_to(game, payload), wallclock
    )
    if request is None:
        return Outcome(text)
    return _ask_server(db, request, wait, "the player is added when the server starts", wallclock)


def set_password(
    db,
    name: str,
    username: str,
    password: str,
    *,
    wallclock: Callable[[], float],
    wait: float = DEFAULT_WAIT_S,
    cost: int = SCRYPT_N,
) -> Outcome:
    """Give a player a new password (checked against the policy by the caller); `cost` is
    scrypt's N. Like add-player, it works with or without a running server."""
    payload = {"username": username, "password_hash": hash_password(password, n=cost)}
    request, text = _edit(
        db, name, "set_password", payload, lambda game: set_password_of(game, payload), wallclock
    )
    if request is None:
        return Outcome(text)
    return _ask_server(db, request, wait, "the password is changed when the server starts", wallclock)


def remove_player(
    db, name: str, username: str, *, wallclock: Callable[[], float], wait: float = DEFAULT_WAIT_S
) -> Outcome:
    """Remove a player: no more logins or orders, and turns no longer wait for them."""
    request, text = _edit(
        db,
        name,
        "remove_player",
        {"username": username},
        lambda game: remove_player_from(game, username),
        wallclock,
    )
    if request is None:
        return Outcome(text)
    return _ask_server(db, request, wait, "the player is removed when the server starts", wallclock)


def control(
    db,
    name: str,
    kind: str,
    payload: dict[str, Any] | None = None,
    *,
    wallclock: Callable[[], float],
    wait: float = DEFAULT_WAIT_S,
) -> Outcome:
    """pause, resume, extend ({"seconds": S}), set ({"key", "value"}) or reinstate
    ({"username"}) a game: through the running server when there is one, else here, in the
    database (`server.operating.game_actions.CONTROLS` does it in both cases; players are told)."""
    payload = dict(payload or {})
    operation = CONTROLS[kind]
    request, text = _edit(db, name, kind, payload, lambda game: operation(game, payload), wallclock)
    if request is None:
        return Outcome(text)
    return _ask_server(db, request, wait, f"the server does it ({kind}) when it starts", wallclock)


def end_turn(db, name: str, *, wallclock: Callable[[], float], wait: float = DEFAULT_WAIT_S) -> Outcome:
    """Ask the server to end the game's current turn now. Without a running server the request
    waits, and the turn ends when the server starts."""
    from server.database import games as q
    from server.database import operator_requests as requests_q

    def queue(conn):
        game_id = _game_id(conn, name)
        summary = q.thd_game_summaries(conn, name)[0]
        if summary.phase == Phase.OVER.value:
            raise OperationError(f"game {name!r} is over")
        turn = summary.turn  # the open turn, numbered as TP clients show it
        return requests_q.thd_queue_request(conn, game_id, "end_turn", {"open_turn": turn}), turn

    request, turn = db.run(queue)
    if server_holder(db, wallclock) is None:
        return Outcome(
            f"queued as request #{request}: no server is running; turn {turn} of game "
            f"{name!r} ends when the server starts",
            request,
            True,
        )
    return _ask_server(db, request, wait, f"turn {turn} ends when the server gets to it", wallclock)


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
    db, name: str, node: str, *, wallclock: Callable[[], float], wait: float = DEFAULT_WAIT_S
) -> Outcome:
    """Ask the node that runs the game to hand it over to `node` (a live cluster node)."""
    from server.database import operator_requests as requests_q
    from server.database import ownership

    def queue(conn):
        game_id = _game_id(conn, name)
        nodes = {n.name: n for n in ownership.thd_live_nodes(conn)}
        if not nodes:
            raise OperationError("no cluster node is running (tae-server serve --node NAME on PostgreSQL)")
        if node not in nodes:
            raise OperationError(f"no live node named {node!r} (live nodes: {', '.join(sorted(nodes))})")
        return requests_q.thd_queue_request(conn, game_id, "move_game", {"node": node})

    request = db.run(queue)
    return _ask_server(db, request, wait, f"game {name!r} moves when its node gets to it", wallclock)
