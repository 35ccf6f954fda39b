"""Operating games: what `tae-server` does to them, and how a running server hears about it.

Two sides share one database:

* The CLI side (plain functions over a `SyncDatabase`): create and list games, a game's status,
  add or remove players, end a turn. Edits that are safe without a server (creating a game,
  adding or removing a player) are made directly when no server is running, in one transaction
  with the check of the server lease (`server.database.lease`), so a server starting at the
  same moment either sees the edit or is the one asked to make it. With a server running, every
  edit goes through the operator request queue (`server.database.operator_requests`) and the
  CLI waits briefly for the server's answer.
* The server side (`OperatorDesk`): takes the lease at start, polls the request queue every
  second on the database thread, carries out each request through the game service (an added
  player gets the same Welcome messages as one who joined over the network), writes back the
  result, keeps its heartbeat fresh and records each turn's deadline, so that a restart does not
  make a turn longer.

Every failure the operator should read is an `OperationError` with a one-line message.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from twisted.internet import defer
from twisted.internet.task import Clock, LoopingCall
from twisted.logger import Logger

from ruleset import Phase

from .accounts import hash_password
from .directory import GameDirectory
from .game import Game
from .store import GameSetup

log = Logger()

POLL_INTERVAL_S = 1.0
DEFAULT_WAIT_S = 10.0


class OperationError(Exception):
    """An operation that could not be done; the message is one line for the operator."""


# =============================================================================================
# The server side
# =============================================================================================


class OperatorDesk:
    """A running server's side of operations (see the module docstring).

    `store` is a `DatabaseStore`; `clock` schedules the polls (the reactor, or a
    `twisted.internet.task.Clock` in tests) and `wallclock` gives the Unix time written to the
    lease, which the CLI compares with its own clock.
    """

    def __init__(
        self,
        store,
        directory: GameDirectory,
        clock,
        *,
        wallclock: Callable[[], float] = time.time,
        host: str | None = None,
        pid: int | None = None,
        poll_interval: float = POLL_INTERVAL_S,
    ):
        from .database import lease

        self.store = store
        self.directory = directory
        self.clock = clock
        self.wallclock = wallclock
        self.host = host or lease.this_host()
        self.pid = pid if pid is not None else os.getpid()
        self.poll_interval = poll_interval
        self._loop: LoopingCall | None = None
        self._polling: defer.Deferred | None = None
        self._last_beat = 0.0
        self._deadlines: dict[int, tuple[int, float]] = {}
        self._stopped = False

    # -- the lease ----------------------------------------------------------------------

    @defer.inlineCallbacks
    def take_lease(self):
        """Become the server of this database; OperationError if another live one is."""
        now = self.wallclock()
        holder = yield self.store.take_lease(self.host, self.pid, now)
        if holder is not None:
            raise OperationError(f"another server is using this database ({holder.describe(now)})")
        self._last_beat = now

    # -- games --------------------------------------------------------------------------

    def watch(self, game: Game) -> None:
        """Record the deadline of each of the game's turns as its timer sets it."""
        game.listeners.append(lambda seconds, reason: self._record_deadline(game))
        self._record_deadline(game)

    def _record_deadline(self, game: Game) -> None:
        deadline = game.timer.deadline
        if deadline is None or self._stopped:
            return  # the end of a turn clears the timer: keep the deadline until the next one
        key = (game.state.turn + 1, deadline)
        if self._deadlines.get(game.id) == key:
            return
        self._deadlines[game.id] = key
        d = defer.maybeDeferred(self.store.set_deadline, game.id, *key)
        d.addErrback(
            lambda failure: log.failure(
                "game {game}: storing the turn deadline failed", failure, game=game.setup.name
            )
        )

    # -- polling ------------------------------------------------------------------------

    def start(self) -> None:
        self._loop = LoopingCall(self.poll)
        self._loop.clock = self.clock
        self._loop.start(self.poll_interval, now=True)

    def poll(self) -> defer.Deferred:
        """Refresh the heartbeat when due, then carry out the pending requests in order.
        Never fails (a failure would stop the loop): problems are logged."""
        d = defer.ensureDeferred(self._poll())
        d.addErrback(lambda failure: log.failure("operator requests: polling failed", failure))
        self._polling = d
        return d

    async def _poll(self) -> None:
        from .database.lease import HEARTBEAT_INTERVAL_S

        now = self.wallclock()
        if now - self._last_beat >= HEARTBEAT_INTERVAL_S:
            ours = await self.store.heartbeat(self.host, self.pid, now)
            self._last_beat = now
            if not ours:
                log.warn("the server lease of this database was taken by another process")
        for request in await self.store.pending_requests():
            if self._stopped:
                return
            status, result = await self.apply(request)
            await self.store.finish_request(request.id, status, result)
            log.info(
                "operator request #{id} {kind} {payload}: {status}: {result}",
                id=request.id,
                kind=request.kind,
                payload=_public(request.payload),
                status=status,
                result=result,
            )

    async def stop(self) -> None:
        """Stop polling (a request being carried out is finished first) and give back the lease."""
        self._stopped = True
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        if self._polling is not None:
            await self._polling
        try:
            await self.store.release_lease(self.host, self.pid)
        except Exception:
            log.failure("giving back the server lease failed")

    # -- requests -----------------------------------------------------------------------

    def _game(self, game_id: int) -> Game | None:
        return next((g for g in self.directory.games.values() if g.id == game_id), None)

    async def apply(self, request) -> tuple[str, str]:
        """Carry out one request: ("done" | "failed", a one-line result)."""
        from .database.operator_requests import DONE, FAILED

        try:
            handler = getattr(self, f"_apply_{request.kind}", None)
            if handler is None:
                return FAILED, f"unknown request {request.kind!r}"
            if request.kind != "load_game" and self._game(request.game_id) is None:
                await self._apply_load_game(request)
            result = await handler(request)
        except OperationError as error:
            return FAILED, str(error)
        except Exception as error:
            log.failure("operator request #{id} failed", id=request.id)
            return FAILED, f"internal error: {error}"
        return DONE, result

    async def _apply_load_game(self, request) -> str:
        game = self._game(request.game_id)
        if game is not None:
            return f"game {game.setup.name!r} is loaded"
        stored = await self.store.load_games([request.game_id], all_states=False)
        if not stored:
            raise OperationError(f"no game with id {request.game_id}")
        game = restore_game(stored[0], self.store, self.clock, self.directory, self)
        return f"game {game.setup.name!r} loaded at turn {game.state.turn}"

    async def _apply_end_turn(self, request) -> str:
        game = self._game(request.game_id)
        turn = int(request.payload.get("turn", game.state.turn + 1))
        if game.state.turn >= turn:
            return f"turn {turn} of game {game.setup.name!r} has ended; the game is at turn {game.state.turn}"
        if game.state.phase is Phase.OVER:
            raise OperationError(f"game {game.setup.name!r} is over")
        await game.end_turn()
        if game.state.turn < turn:
            raise OperationError(f"turn {turn} of game {game.setup.name!r} did not end (see the server log)")
        return f"turn {turn} of game {game.setup.name!r} ended" + (
            " and the game is over" if game.state.phase is Phase.OVER else ""
        )

    async def _apply_add_player(self, request) -> str:
        game = self._game(request.game_id)
        return await add_player_to(game, request.payload)

    async def _apply_remove_player(self, request) -> str:
        game = self._game(request.game_id)
        return await remove_player_from(game, request.payload["username"])


def _public(payload: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in payload.items() if k != "password_hash"}


def restore_game(stored, store, clock, directory: GameDirectory, desk: OperatorDesk | None) -> Game:
    """A stored game brought back to life in `directory`: restored as last committed, its timer
    started with the stored deadline and the players who had finished (`Game.resume`)."""
    game = Game.restore(stored, store, clock)
    directory.add(game)
    game.resume(stored.deadline)
    if desk is not None:
        desk.watch(game)
    return game


async def add_player_to(game: Game, payload: dict[str, Any]) -> str:
    """Add an account through the game service (it gets the Welcome messages); idempotent for
    the same name and password hash, so a request carried out twice adds one player."""
    username = payload["username"]
    existing = game.accounts.get(username)
    if existing is not None:
        if existing.password_hash == payload["password_hash"]:
            return f"player {username!r} is player {existing.player_id} of game {game.setup.name!r}"
        raise OperationError(f"game {game.setup.name!r} already has a player named {username!r}")
    await game.ready()
    player, problem = await game.create_account(
        username,
        "",
        payload.get("email", ""),
        payload.get("comment", ""),
        creation_setting_applies=False,
        password_hash=payload["password_hash"],
    )
    if problem is not None:
        raise OperationError(f"cannot add {username!r} to game {game.setup.name!r}: {problem.message}")
    return f"player {username!r} added to game {game.setup.name!r} as player {player}"


async def remove_player_from(game: Game, username: str) -> str:
    await game.ready()
    player, problem = await game.remove_player(username)
    if problem is not None:
        raise OperationError(f"game {game.setup.name!r} has no player named {username!r}")
    return f"player {username!r} (player {player}) removed from game {game.setup.name!r}"


# =============================================================================================
# The CLI side
# =============================================================================================


@dataclass(frozen=True)
class Outcome:
    """What an operation did: `text` for the operator; `request` is the queued request's id when
    the running server was asked (or will be, when it starts)."""

    text: str
    request: int | None = None
    queued: bool = False  # True: no server answered; the request waits for one


def open_database(url: str, *, create: bool = False):
    """A SyncDatabase at `url` with the current schema. An empty database gets the schema when
    `create` is set; otherwise an empty, old or unreachable database is an OperationError."""
    from sqlalchemy.engine import make_url

    from .database import SyncDatabase, head_revision

    try:
        parsed = make_url(url)
    except Exception:
        raise OperationError(f"database: {url!r} is not a database URL") from None
    shown = shown_url(url)
    if (
        parsed.get_backend_name() == "sqlite"
        and parsed.database not in (None, "", ":memory:")
        and not create
        and not os.path.exists(parsed.database)
    ):
        raise OperationError(f"database {shown}: no such file (start the server or create a game first)")
    try:
        db = SyncDatabase(url)
    except Exception as error:
        raise OperationError(f"database: cannot use {shown!r}: {one_line(error)}") from None
    try:
        revision = db.current_revision()
        if revision is None:
            if not create:
                raise OperationError(
                    f"database {shown} has no games (no schema yet): start the server or create a game first"
                )
            db.upgrade()
        elif revision != head_revision():
            raise OperationError(
                f"database {shown} is at schema revision {revision}, this program needs "
                f"{head_revision()}: run `tae-server upgrade-db` first"
            )
    except OperationError:
        db.close()
        raise
    except Exception as error:
        db.close()
        raise OperationError(f"database: cannot open {shown}: {one_line(error)}") from None
    return db


def shown_url(url: str) -> str:
    """The URL without its password, for messages."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return url


def one_line(error: BaseException) -> str:
    text = str(getattr(error, "orig", None) or error).strip().splitlines()
    return text[0] if text else type(error).__name__


def server_holder(db):
    """The live server using this database (a LeaseHolder), or None."""
    return db.lease_holder(time.time())


def _game_id(conn, name: str) -> int:
    import sqlalchemy as sa

    from .database.schema import games

    game_id = conn.execute(sa.select(games.c.id).where(games.c.name == name)).scalar()
    if game_id is None:
        names = conn.execute(sa.select(games.c.name).order_by(games.c.id)).scalars().all()
        known = f" (games: {', '.join(names)})" if names else " (there are no games)"
        raise OperationError(f"no game named {name!r}{known}")
    return int(game_id)


def wait_for(db, request_id: int, timeout: float, poll: float = 0.1):
    """The request once the server has answered it, or as it is after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        request = db.request(request_id)
        if request is None or request.status != "pending" or time.monotonic() >= deadline:
            return request
        time.sleep(poll)


def _ask_server(db, request_id: int, wait: float, waiting: str) -> Outcome:
    """Wait for the running server to answer a queued request."""
    request = wait_for(db, request_id, wait)
    if request.status == "done":
        return Outcome(request.result, request_id)
    if request.status == "failed":
        raise OperationError(request.result)
    if server_holder(db) is None:
        return Outcome(f"queued as request #{request_id}: the server stopped; {waiting}", request_id, True)
    raise OperationError(
        f"request #{request_id} is queued but the server has not answered in {wait:g} s; {waiting}"
    )


def create_game(db, setup: GameSetup, wait: float = DEFAULT_WAIT_S) -> Outcome:
    """Store a new game; a running server is asked to load it (a starting one loads it anyway)."""
    from .database import ConflictError, lease
    from .database import games as q
    from .database import operator_requests as requests_q

    def create(conn):
        game_id = q.thd_create_game(conn, setup)
        alive = lease.thd_lease_holder(conn, time.time()) is not None
        request = requests_q.thd_queue_request(conn, game_id, "load_game", {}) if alive else None
        return game_id, request

    try:
        game_id, request = db.run(create)
    except ConflictError:
        raise OperationError(f"a game named {setup.name!r} exists") from None
    text = f"game {setup.name!r} created (id {game_id}, seed {setup.seed})"
    if request is None:
        return Outcome(text + "; no server is running: it is loaded when the server starts")
    answer = _ask_server(db, request, wait, "the game is loaded when the server starts")
    return Outcome(
        text
        + "; "
        + (answer.text if not answer.queued else "no server is running: it is loaded when the server starts"),
        request,
        answer.queued,
    )


def list_games(db) -> list:
    """A GameSummary per game, by id."""
    from .database import games as q

    return db.run(q.thd_game_summaries)


@dataclass
class GameStatus:
    summary: Any
    players: list[dict[str, Any]] = field(default_factory=list)
    waiting_for: list[str] = field(default_factory=list)
    deadline: float | None = None
    server: str | None = None
    final_scores: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        data = asdict(self.summary)
        data["board_size"] = list(data["board_size"])
        data["winners"] = list(data["winners"])
        now = time.time()
        data.update(
            players=self.players,
            waiting_for=self.waiting_for,
            deadline=self.deadline,
            seconds_left=None if self.deadline is None else max(0, round(self.deadline - now)),
            server=self.server,
            final_scores=self.final_scores,
        )
        return data


def game_status(db, name: str) -> GameStatus:
    """A game as stored: turn, phase, players (who finished this turn, who was removed), the
    deadline the running server set for this turn, the result of a finished game."""
    from .database import games as q

    def read(conn):
        game_id = _game_id(conn, name)
        return q.thd_game_summaries(conn, name)[0], q.thd_load_games(conn, [game_id], all_states=False)[0]

    summary, stored = db.run(read)
    game = Game.restore(stored, None, Clock())
    waiting = set(game.waiting_for())
    players = []
    for account in sorted(stored.accounts, key=lambda a: a.player_id):
        pid = account.player_id
        state = (
            "removed"
            if pid in game.removed_players
            else "finished"
            if pid in game.finished
            else "waiting"
            if pid in waiting
            else "not playing this turn"
        )
        score = game.state.player(pid).scores if game.state.has_player(pid) else ()
        players.append({"id": pid, "name": account.username, "turn": state, "scores": list(score)})
    names = {p.id: p.name for p in game.state.players}
    deadline = None
    if (
        stored.deadline is not None
        and stored.deadline[0] == game.state.turn + 1
        and game.state.phase is not Phase.OVER
    ):
        deadline = stored.deadline[1]
    holder = server_holder(db)
    final = {}
    if game.state.result is not None:
        final = {names.get(pid, str(pid)): score for pid, score in game.state.result.final.items()}
    return GameStatus(
        summary,
        players,
        [names[p] for p in sorted(waiting)],
        deadline,
        None if holder is None else holder.describe(time.time()),
        final,
    )


def _edit(db, name: str, kind: str, payload: dict[str, Any], offline: Callable[[Game], Any]):
    """Queue a request if a server is running, else change the game here; in one transaction."""
    from .database import ConnectionStore, lease
    from .database import games as q
    from .database import operator_requests as requests_q

    def edit(conn):
        game_id = _game_id(conn, name)
        if lease.thd_lease_holder(conn, time.time()) is not None:
            return requests_q.thd_queue_request(conn, game_id, kind, payload), None
        stored = q.thd_load_games(conn, [game_id], all_states=False)[0]
        game = Game.restore(stored, ConnectionStore(conn), Clock())
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
    wait: float = DEFAULT_WAIT_S,
) -> Outcome:
    """Add a player to a game (also when it takes no new accounts, but not beyond its size)."""
    payload = {
        "username": username,
        "password_hash": hash_password(password),
        "email": email,
        "comment": comment,
    }
    request, text = _edit(db, name, "add_player", payload, lambda game: add_player_to(game, payload))
    if request is None:
        return Outcome(text)
    return _ask_server(db, request, wait, "the player is added when the server starts")


def remove_player(db, name: str, username: str, wait: float = DEFAULT_WAIT_S) -> Outcome:
    """Remove a player: no more logins or orders, and turns no longer wait for them."""
    request, text = _edit(
        db, name, "remove_player", {"username": username}, lambda game: remove_player_from(game, username)
    )
    if request is None:
        return Outcome(text)
    return _ask_server(db, request, wait, "the player is removed when the server starts")


def end_turn(db, name: str, wait: float = DEFAULT_WAIT_S) -> Outcome:
    """Ask the server to end the game's current turn now. Without a running server the request
    waits, and the turn ends when the server starts."""
    from .database import games as q
    from .database import operator_requests as requests_q

    def queue(conn):
        game_id = _game_id(conn, name)
        summary = q.thd_game_summaries(conn, name)[0]
        if summary.phase == Phase.OVER.value:
            raise OperationError(f"game {name!r} is over")
        turn = summary.turn + 1
        return requests_q.thd_queue_request(conn, game_id, "end_turn", {"turn": turn}), turn

    request, turn = db.run(queue)
    if server_holder(db) is None:
        return Outcome(
            f"queued as request #{request}: no server is running; turn {turn} of game "
            f"{name!r} ends when the server starts",
            request,
            True,
        )
    return _ask_server(db, request, wait, f"turn {turn} ends when the server gets to it")
