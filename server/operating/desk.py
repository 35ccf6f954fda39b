"""A running server's side of operations: the lease and the operator request queue.

The desk takes the server lease of the database at start (`server.database.lease`), polls the
operator request queue every second on the database thread (`server.database.operator_requests`),
carries out each request through the operator command of its kind (`server.operating.commands`,
which checks the stored values again and runs the action on the game), writes back the
result and keeps its heartbeat fresh. (Each game stores its own turn deadline, with its change
records: `server.game.records`.) The command-line side is `server.operating.on_database`.

On a cluster node (`server.cluster`) the node's registration replaces the lease: the desk is
made with `cluster=` the node, asks only for the requests of the games the node runs, and writes
each result back as a fenced write of the game, so a request is carried out by the node that
runs its game and a node that lost the game cannot mark it done (the new owner does it).
`move_game` hands a game to another node.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from twisted.internet import defer
from twisted.internet.task import LoopingCall
from twisted.logger import Logger

from server.game.directory import GameDirectory
from server.game.game import Game
from server.model.store import StoreUnavailable
from server.operating.commands import BY_REQUEST
from server.operating.game_actions import OperationError

log = Logger()

POLL_INTERVAL_S = 1.0


class OperatorDesk:
    """A running server's side of operations (see the module docstring).

    `store` is a `DatabaseStore`; `clock` schedules the polls (the reactor, or a
    `twisted.internet.task.Clock` in tests) and `wallclock` gives the Unix time written to the
    lease, which the CLI compares with its own clock (default: the clock's time, which is the
    Unix time on a real reactor).
    """

    def __init__(
        self,
        store,
        directory: GameDirectory,
        clock,
        *,
        wallclock: Callable[[], float] | None = None,
        host: str | None = None,
        pid: int | None = None,
        poll_interval: float = POLL_INTERVAL_S,
        hasher=None,
        cluster=None,
    ):
        from server.database import lease

        self.store = store
        self.directory = directory
        self.clock = clock
        self.wallclock = wallclock or clock.seconds
        self.host = host or lease.this_host()
        self.pid = pid if pid is not None else os.getpid()
        self.poll_interval = poll_interval
        self.hasher = hasher
        self._loop: LoopingCall | None = None
        self._polling: defer.Deferred | None = None
        self._last_beat = 0.0
        self._stopped = False
        self._unreachable = False  # the last poll could not reach the database
        self.cluster = cluster  # server.cluster.node.ClusterNode: no lease, only its games' requests
        self.notifications = None  # server.notifications.service.Notifications: follows each game

    # -- the lease ----------------------------------------------------------------------

    @defer.inlineCallbacks
    def take_lease(self):
        """Become the server of this database; OperationError if another live one is."""
        now = self.wallclock()
        holder = yield self.store.lease.take(self.host, self.pid, now)
        if holder is not None:
            raise OperationError(f"another server is using this database ({holder.describe(now)})")
        self._last_beat = now

    # -- games --------------------------------------------------------------------------

    def watch(self, game: Game) -> None:
        """Hand the game to the notifications (every game this process runs comes through
        here). The game stores its own deadline, with its change records
        (`server.game.records`)."""
        if self.notifications is not None:
            self.notifications.follow(game)

    # -- polling ------------------------------------------------------------------------

    def start(self) -> None:
        self._loop = LoopingCall(self.poll)
        self._loop.clock = self.clock
        self._loop.start(self.poll_interval, now=True)

    def poll(self) -> defer.Deferred:
        """Refresh the heartbeat when due, then carry out the pending requests in order.
        Never fails (a failure would stop the loop): problems are logged."""
        d = defer.ensureDeferred(self._poll())
        d.addCallbacks(self._polled, self._poll_failed)
        self._polling = d
        return d

    def _polled(self, _: object) -> None:
        if self._unreachable:
            self._unreachable = False
            log.info("operator requests: the database is reachable again")

    def _poll_failed(self, failure) -> None:
        if not failure.check(StoreUnavailable):
            log.failure("operator requests: polling failed", failure)
        elif not self._unreachable:  # one line per outage, not one a second
            self._unreachable = True
            log.warn(
                "operator requests: the database is unreachable: {error}", error=failure.getErrorMessage()
            )

    async def _poll(self) -> None:
        from server.database.lease import HEARTBEAT_INTERVAL_S

        now = self.wallclock()
        if self.cluster is None and now - self._last_beat >= HEARTBEAT_INTERVAL_S:
            ours = await self.store.lease.heartbeat(self.host, self.pid, now)
            self._last_beat = now
            if not ours:
                log.warn("the server lease of this database was taken by another process")
        if self.cluster is None:
            pending = await self.store.requests.pending()
        else:
            pending = await self.store.requests.pending(
                game_ids=[g.id for g in self.directory.games.values()]
            )
        for request in pending:
            if self._stopped:
                return
            if self.cluster is not None and (
                self._game(request.game_id) is None or self.cluster.leaving_game(request.game_id) is not None
            ):
                continue  # the game left (or is leaving) this node: its new owner carries it out
            # A game is not handed over between carrying a request out and marking it done
            # (a hand-over waits for the requests in progress): else the new owner would find it
            # still pending and carry it out again ("An account with that name already exists").
            # Moving the game is the hand-over itself.
            holds = self.cluster is not None and request.kind != "move_game"
            if holds:
                self.cluster.begin(request.game_id)
            try:
                status, result = await self.apply(request)
                if self.cluster is None:
                    await self.store.requests.finish(request.id, status, result)
                elif request.kind == "move_game" or self._game(request.game_id) is None:
                    # the game left with the request (moved, or its claim was lost on the way)
                    await self.store.requests.finish(request.id, status, result)
                else:
                    await self.store.requests.finish(request.id, status, result, game_id=request.game_id)
            finally:
                if holds:
                    self.cluster.end(request.game_id)
            log.info(
                "operator request #{id} {kind} {payload}: {status}: {result}",
                id=request.id,
                kind=request.kind,
                payload=_public(request.kind, request.payload),
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
        if self.cluster is not None:
            return
        try:
            await self.store.lease.release(self.host, self.pid)
        except Exception:
            log.failure("giving back the server lease failed")

    # -- requests -----------------------------------------------------------------------

    def _game(self, game_id: int) -> Game | None:
        return next((g for g in self.directory.games.values() if g.id == game_id), None)

    def _live(self, game_id: int) -> Game:
        """The running game a request is for (`apply` loads it first); OperationError if none."""
        game = self._game(game_id)
        if game is None:
            raise OperationError(f"no game with id {game_id}")
        return game

    async def apply(self, request) -> tuple[str, str]:
        """Carry out one request: ("done" | "failed", a one-line result)."""
        from server.database.operator_requests import DONE, FAILED

        try:
            if request.kind == "load_game":
                return DONE, await self._apply_load_game(request)
            command = BY_REQUEST.get(request.kind)
            if command is None:
                return FAILED, f"unknown request {request.kind!r}"
            if self._game(request.game_id) is None:
                await self._apply_load_game(request)
            if command.action is None:  # move-game: where the game runs, not what it is
                result = await self._apply_move_game(request.game_id, command.checked(request.payload))
            else:
                result = await command.carry_out(self._live(request.game_id), request.payload)
        except OperationError as error:
            return FAILED, str(error)
        except StoreUnavailable as error:  # the database is away, or the game just moved
            log.warn("operator request #{id} was not carried out: {error}", id=request.id, error=error)
            return FAILED, f"not carried out: {error}"
        except Exception as error:
            log.failure("operator request #{id} failed", id=request.id)
            return FAILED, f"internal error: {error}"
        return DONE, result

    async def _apply_load_game(self, request) -> str:
        game = self._game(request.game_id)
        if game is not None and self.cluster is not None:
            return f"game {game.setup.name!r} runs on node {self.cluster.name!r} (turn {game.state.turn})"
        if game is not None:
            return f"game {game.setup.name!r} is loaded"
        stored = await self.store.load_games([request.game_id], all_states=False)
        if not stored:
            raise OperationError(f"no game with id {request.game_id}")
        game = restore_game(stored[0], self.store, self.clock, self.directory, self, hasher=self.hasher)
        return f"game {game.setup.name!r} loaded at turn {game.state.turn}"

    async def _apply_move_game(self, game_id: int, values: dict[str, Any]) -> str:
        if self.cluster is None:
            raise OperationError("moving a game needs cluster nodes (tae-server serve --node on PostgreSQL)")
        return str(await self.cluster.move_game(self._game(game_id), values["node"]))


def _public(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    """A request's payload without its secrets (the password hashes), for the log."""
    command = BY_REQUEST.get(kind)
    secret = {a.payload_key for a in command.arguments if a.secret} if command is not None else set()
    return {k: v for k, v in payload.items() if k not in secret and k != "password_hash"}


def restore_game(
    stored, store, clock, directory: GameDirectory, desk: OperatorDesk | None, *, hasher=None
) -> Game:
    """A stored game brought back to life in `directory`: restored as last committed, its timer
    started with the stored deadline and the players who had finished (`Game.resume`)."""
    game = Game.restore(stored, store, clock, hasher=hasher)
    directory.add(game)
    game.resume(stored.deadline)
    if desk is not None:
        desk.watch(game)
    return game
