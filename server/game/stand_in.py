"""The stand-in's player on the server: which level of the computer player (`ruleset.ai`) gives the
orders of a seat the stand-in plays, and where it thinks.

`easy` and `normal` decide in a few milliseconds, on the reactor, when the turn ends. `hard`
searches (`ruleset.ai.search`: `hard_budget` playouts, for `hard_seconds` at most, 0.9 s by
default, after which it answers with its best so far), so it never runs on the reactor: when a turn
opens, `StandInPlayer.open_turn` starts the search of every seat the stand-in plays in a process
pool (sized from the machine's cores), and the end of the turn takes the answer that is ready. It
waits for it at most `hard_wait` seconds: at four fifths of that the reactor raises the search's
stop flag (shared memory the pool's processes are given when they start) and the search answers with
its best so far; if even that is not there in time (a busy machine), the seat gets `normal`'s
answer. An end of turn is never held up longer.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from typing import Any

from twisted.internet import defer
from twisted.logger import Logger

from ruleset import GameState, Order
from ruleset.ai import Level, ai_rng, decide
from ruleset.seat import SeatView, seat_view
from server.model.stand_in import StandInSettings

log = Logger()

STOP_SLOTS = 256  # searches that may be under way at once, each with its own stop flag
_stop_flags: Any = None  # in a worker process: the flags it inherited from the server


def _inherit_stop_flags(flags: Any) -> None:
    global _stop_flags
    _stop_flags = flags


def hard_decision(seat: SeatView, seed: int, turn: int, budget: int, slot: int) -> tuple[Order, ...]:
    """A hard decision in a worker process: `budget` playouts, fewer when its stop flag rises
    (the reactor raises it `hard_seconds` after asking, or when an end of turn stops waiting)."""
    rng = ai_rng(seed, turn, seat.player)
    flags = _stop_flags

    def should_stop() -> bool:
        return flags is not None and slot >= 0 and flags[slot] != 0

    return decide(seat, Level.HARD, rng, budget=budget, should_stop=should_stop)


_Search = tuple[GameState, tuple[Order, ...], tuple[Future, int]]


class StandInPlayer:
    """Decides the stand-in's orders at one level, for every game of a server."""

    def __init__(
        self,
        settings: StandInSettings | None = None,
        *,
        executor: Executor | None = None,
        call_from_thread: Callable[..., object] | None = None,
    ):
        self.settings = settings or StandInSettings()
        self._executor = executor
        self._call_from_thread = call_from_thread
        self._flags: Any = None
        self._slots = itertools.cycle(range(STOP_SLOTS))
        # (game seed, turn, player) -> (the position and the seat's own orders it was started
        # for, (the search running, its stop flag))
        self._searches: dict[
            tuple[int, int, int], tuple[GameState, tuple[Order, ...], tuple[Future, int]]
        ] = {}

    @property
    def level(self) -> Level:
        return self.settings.level

    def _pool(self) -> Executor:
        if self._executor is None:
            # Fresh processes, not forks of the server: a fork would share its sockets and
            # database connections, which a worker could close under it when it exits.
            methods = multiprocessing.get_all_start_methods()
            context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
            self._flags = context.Array("b", STOP_SLOTS, lock=False)
            self._executor = ProcessPoolExecutor(
                max_workers=os.cpu_count() or 1,
                mp_context=context,
                initializer=_inherit_stop_flags,
                initargs=(self._flags,),
            )
        return self._executor

    def _search(self, seed: int, seat: SeatView, turn: int, clock) -> tuple[Future, int]:
        """Start a hard search in the pool; its stop flag rises `hard_seconds` from now (on the
        reactor's `clock`: the workers read none), unless it has answered by then."""
        pool = self._pool()
        slot = -1
        if self._flags is not None:
            slot = next(self._slots)
            self._flags[slot] = 0
        search = pool.submit(hard_decision, seat, seed, turn, self.settings.hard_budget, slot)
        if slot >= 0:

            def bound() -> None:
                if not search.done():  # (else the slot may serve another search already)
                    self._stop(slot)

            call = clock.callLater(self.settings.hard_seconds, bound)
            search.add_done_callback(lambda _: self._call(_cancel_call, call))
        return search, slot

    def _call(self, f: Callable[..., object], *args: object) -> None:
        """Run `f(*args)` in the reactor's thread (a future's callback runs in the pool's)."""
        call = self._call_from_thread
        if call is None:
            from twisted.internet import reactor

            call = reactor.callFromThread  # type: ignore[attr-defined]
        call(f, *args)

    def _stop(self, slot: int) -> None:
        if self._flags is not None and slot >= 0:
            self._flags[slot] = 1

    def open_turn(
        self,
        seed: int,
        state: GameState,
        players: Sequence[int],
        clock,
        levels: Mapping[int, Level] | None = None,
    ) -> None:
        """A turn opened: start the searches of `players`' seats (hard only; others decide at the
        end). `levels`: the seats that play at a level of their own (computer players); the
        others play at the stand-in's. `clock`: the reactor's, which bounds each search."""
        turn = state.turn + 1
        for key in [k for k in self._searches if k[0] == seed and k[1] < turn]:
            future, slot = self._searches.pop(key)[2]
            future.cancel()
            self._stop(slot)
        for player in players:
            if (levels or {}).get(player, self.level) is not Level.HARD:
                continue
            key = (seed, turn, player)
            if key not in self._searches:
                try:
                    search = self._search(seed, seat_view(state, player), turn, clock)
                    self._searches[key] = (state, (), search)
                except RuntimeError as error:  # a pool that is shutting down
                    log.warn("the stand-in's search could not start: {error}", error=error)
                    return

    def orders(
        self,
        seed: int,
        state: GameState,
        player: int,
        accepted: Sequence[Order],
        clock,
        level: Level | None = None,
    ) -> defer.Deferred:
        """The orders for `player`'s seat at the end of this turn (fires with a tuple of orders),
        at `level` (a computer player's own) or else the stand-in's."""
        turn = state.turn + 1
        own = tuple(order for order in accepted if order.player == player)
        level = self.level if level is None else level
        if level is not Level.HARD:
            return defer.succeed(decide(seat_view(state, player, own), level, ai_rng(seed, turn, player)))

        def normal() -> tuple[Order, ...]:
            return decide(seat_view(state, player, own), Level.NORMAL, ai_rng(seed, turn, player))

        started = self._searches.pop((seed, turn, player), None)
        # The search of the turn's opening answers for the same position and the same own orders.
        if started is not None and started[0] is state and started[1] == own:
            future, slot = started[2]
        else:
            if started is not None:
                started[2][0].cancel()
                self._stop(started[2][1])
            try:
                future, slot = self._search(seed, seat_view(state, player, own), turn, clock)
            except RuntimeError:
                return defer.succeed(normal())
        return self._wait(future, slot, normal, clock)

    def _wait(
        self, future: Future, slot: int, fallback: Callable[[], tuple[Order, ...]], clock
    ) -> defer.Deferred:
        """Fires with the search's answer, or `fallback()` when it fails or is not there in time."""
        d: defer.Deferred = defer.Deferred()

        def done(finished: Future) -> None:
            self._call(_deliver, finished)

        def _deliver(finished: Future) -> None:
            if d.called:
                return
            if finished.cancelled() or finished.exception() is not None:
                if not finished.cancelled():
                    log.warn("the stand-in's search failed: {error}", error=finished.exception())
                d.callback(fallback())
            else:
                d.callback(finished.result())

        if future.done():
            _deliver(future)
            return d
        future.add_done_callback(done)
        wait = self.settings.hard_wait
        stop = clock.callLater(wait * 0.8, self._stop, slot)

        def give_up() -> None:
            if not d.called:
                d.callback(fallback())

        timeout = clock.callLater(wait, give_up)

        def tidy(result: object) -> object:
            for call in (stop, timeout):
                if call.active():
                    call.cancel()
            return result

        return d.addBoth(tidy)

    def searching(self) -> bool:
        """Whether a search started at a turn's opening is still running."""
        return any(not search[2][0].done() for search in self._searches.values())

    def close(self) -> None:
        """Stop the searches and the pool (the server stops)."""
        for _, _, (future, slot) in self._searches.values():
            future.cancel()
            self._stop(slot)
        self._searches.clear()
        if isinstance(self._executor, ProcessPoolExecutor):
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None


def _cancel_call(call) -> None:
    if call.active():
        call.cancel()
