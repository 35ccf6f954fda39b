"""The end of a turn of one game: the stand-in's orders, the rules, the commit, the new turn.

`TurnEnd` is the part of the write side (`server.game.game.Game`) that runs when the timer (or an
operator) ends a turn: under the game's lock, the seats the stand-in plays get their orders,
`ruleset.resolve_turn` resolves the turn, and the turn is stored as one write with its
`TurnEnded` change record, the next turn's deadline and the notifications it causes
(`server.game.records`); a game's last turn carries its ratings (`RateGame`). Only then is it
applied and the new turn's clock started, so nothing a player was told is lost; a store that
cannot keep it is tried again every COMMIT_RETRY_S.
"""

from __future__ import annotations

from types import MappingProxyType

from twisted.internet import defer
from twisted.logger import Logger

import ruleset
from ruleset import Message, Phase, final_standing, game_rng, resolve_turn
from server.game.write_side import COMMIT_RETRY_S, GameWriteSide
from server.model.attendance import Attendance, Presence, after_turn
from server.model.changes import TurnEnded
from server.model.ratings import against_computer, places_of
from server.model.refusals import TURN_NOT_STORED, Refused
from server.model.store import StoreUnavailable, TurnRecord
from server.model.writes import RateGame, Step, StoreDeadline, StoreTurn
from server.views.board import absence_notices

log = Logger()


class TurnEnd(GameWriteSide):
    """The end-of-turn part of `Game` (see the module docstring)."""

    def end_turn(self) -> defer.Deferred:
        """Run the end of turn now (operators, tests); the timer calls the same path."""
        if self._state.phase is not Phase.OVER and not self.busy:
            self.timer.force_end()
        return self.ready()

    def _timer_ended_turn(self, reason: int) -> None:
        self._resolve()

    def _resolve(self) -> None:
        if self._state.phase is Phase.OVER or self._ready is not None:
            return
        self._ready = defer.Deferred()  # sessions of this game wait from now on
        self._lock.acquire().addCallback(self._resolve_locked)

    def _resolve_locked(self, _lock: object) -> None:
        d = self._play_stand_ins()
        d.addErrback(
            lambda failure: log.failure("game {game}: the stand-in failed", failure, game=self.setup.name)
        )
        d.addCallback(lambda _: self._resolve_orders())

    def _resolve_orders(self) -> None:
        orders = self.snapshot.all_orders()
        try:
            outcome = resolve_turn(self._state, orders, game_rng(self.setup.seed, self._state.turn + 1))
        except Exception:
            # A bug in the rules must not freeze every player of the game: keep the turn open.
            log.failure(
                "game {game}: resolving turn {turn} failed", game=self.setup.name, turn=self._state.turn
            )
            self._lock.release()
            self._release()
            return
        attendance: tuple[Attendance, ...] = ()
        told: tuple[Message, ...] = ()
        if outcome.state.phase is not Phase.OVER:
            # Who missed this turn: the players it waited for who gave no order and did not finish.
            acted = {order.player for order in orders} | self._finished
            tally = after_turn(
                self._attendance,
                self.snapshot.acting_players(),
                acted,
                self.setup.absent_after_missed_turns,
            )
            attendance = tally.changed
            missed = {row.player: row.missed for row in tally.changed}
            for player in tally.became_absent:
                told += absence_notices.became_absent(outcome.state, player, missed[player])
        record = TurnRecord(
            outcome.state.turn,
            outcome.state,
            outcome.messages,
            outcome.events,
            self._modtimes.serial + 1,
            attendance,
            told,
        )
        self._commit(record, outcome)

    def _commit(self, record: TurnRecord, outcome: ruleset.TurnOutcome) -> None:
        """Store the turn with its `TurnEnded` record and the next turn's deadline (worked out
        now, so that the players are told it in the same transaction), then apply it."""
        self._retry = None
        if self._closed:
            self._abandon_turn_end()
            return
        state = outcome.state
        deadline = None if state.phase is Phase.OVER else self.timer.next_turn_deadline()
        change = TurnEnded(
            state.turn,
            state.phase.value,
            deadline,
            tuple((e.kind, e.player, e.fleet, e.cell, e.detail) for e in outcome.events),
            tuple(row.player for row in record.attendance if row.presence is Presence.ABSENT),
        )
        attendance = dict(self._attendance)
        attendance.update((row.player, row) for row in record.attendance)
        after = self._preview(
            state=state,
            queues=MappingProxyType({}),
            finished=frozenset(),
            attendance=MappingProxyType(attendance),
            deadline=deadline,
            resolving=False,
            started=True,
            last_turn_messages=tuple(outcome.messages),
            last_turn_events=tuple(outcome.events),
        )
        steps: tuple[Step, ...] = (StoreTurn(record), StoreDeadline(state.turn + 1, deadline))
        standing = final_standing(state)
        if standing is not None:  # the game is over: its accounts are rated with its end
            rating = RateGame(
                places_of(standing), against_computer(attendance.values()), self.clock.seconds()
            )
            steps = (*steps, rating)
        d = self._write(change, steps, lambda: self._apply(outcome, record, deadline), after)
        d.addErrback(self._commit_failed, record, outcome)

    def _apply(self, outcome: ruleset.TurnOutcome, record: TurnRecord, deadline: float | None) -> None:
        self._state = outcome.state
        self._queues.clear()
        self._finished.clear()
        for message in outcome.messages:
            self._post(message)
        for row in record.attendance:
            self._attendance[row.player] = row
        for message in record.notices:
            self._post(message)
        for row in record.attendance:
            if row.presence is Presence.ABSENT:
                log.info(
                    "game {game}: player {player} missed {missed} turns: the stand-in plays the seat",
                    game=self.setup.name,
                    player=row.player,
                    missed=row.missed,
                )
        self._last_turn = (tuple(outcome.messages), tuple(outcome.events))
        for event in outcome.events:
            log.debug(
                "game {game} turn {turn}: {kind} {detail}",
                game=self.setup.name,
                turn=outcome.state.turn - 1,
                kind=event.kind,
                detail=event.detail,
            )
        log.info(
            "game {game}: turn {ended} ended; "
            + ("the game is over" if self._state.phase is Phase.OVER else "turn {turn} ({phase}) begins"),
            game=self.setup.name,
            ended=outcome.state.turn - 1,
            turn=outcome.state.turn,
            phase=outcome.state.phase.value,
        )
        if self._store_trouble is not None:
            log.info("game {game}: the store keeps turns again", game=self.setup.name)
            self._store_trouble = None
        self._lock.release()
        self._ready = None
        if self._state.phase is Phase.OVER:
            self.timer.stop()
            self._publish()
            self._release()
            self._announce(-1, 1)
        else:
            self._publish()
            self._release()
            if self._closed:  # stored just as the game left this node: its next owner goes on
                return
            self.timer.start_turn(len(self._state.players), at=deadline)
            self._open_stand_in_turn()
            self._end_if_only_stand_ins_act()

    def _abandon_turn_end(self) -> None:
        """The game was closed while its turn was ending (a retry pending, a commit refused, the
        lock not yet had): let go of the game's lock and of everything waiting for the new turn
        (`ready()`: sessions, a handover), so that nothing waits for a game that is gone."""
        self._store_trouble = None
        if self._lock.locked:
            self._lock.release()
        self._release()

    def _commit_failed(self, failure, record: TurnRecord, outcome: ruleset.TurnOutcome) -> None:
        """The store could not keep the turn. Nothing was told yet: keep the sessions waiting
        and store the very same turn again (if the first attempt did commit and only its answer
        was lost, storing the identical turn again succeeds). A game closed meanwhile (it left
        this node) stores nothing more: the turn is abandoned here."""
        if self._closed:
            log.info(
                "game {game}: the end of turn {turn} is left to the game's next owner ({error})",
                game=self.setup.name,
                turn=record.turn - 1,
                error=failure.getErrorMessage(),
            )
            self._abandon_turn_end()
            return
        if failure.check(StoreUnavailable):
            if self._store_trouble is None:  # one line per outage, not a traceback every 5 s
                log.warn(
                    "game {game}: storing the end of turn {turn} failed ({error}); retrying every {delay} s",
                    game=self.setup.name,
                    turn=record.turn - 1,
                    error=failure.getErrorMessage(),
                    delay=COMMIT_RETRY_S,
                )
        else:
            log.failure(
                "game {game}: storing the end of turn {turn} failed; retrying in {delay} s",
                failure,
                game=self.setup.name,
                turn=record.turn - 1,
                delay=COMMIT_RETRY_S,
            )
        self._store_trouble = failure.value
        waiting, self._refusable = self._refusable, []
        for waiter in waiting:
            waiter.errback(Refused(TURN_NOT_STORED))
        if not self._closed:
            self._retry = self.clock.callLater(COMMIT_RETRY_S, self._commit, record, outcome)
