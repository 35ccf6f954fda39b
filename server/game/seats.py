"""Who plays each seat of one game: absent players, vacations, resigning, and the stand-in's turn.

`Seats` is the part of the write side (`server.game.game.Game`) that changes `server.model.attendance`
records, tells everyone, and gives the stand-in's orders (`server.game.stand_in`: the computer
player, `ruleset.ai`, at the level the operator chose) at the end of a turn, each checked, stored
and queued like any player's.
"""

from __future__ import annotations

from types import MappingProxyType

from twisted.internet import defer
from twisted.logger import Logger

import ruleset
from ruleset import Message, Order, Phase, Problem
from ruleset.ai import Level
from server.game.write_side import COMMIT_RETRY_S, GameWriteSide
from server.model.attendance import DAY_S, Attendance, Presence, attendance_of, back
from server.model.changes import BACK, VACATION, VACATION_ENDED, SeatChanged
from server.model.changes import RESIGNED as RESIGNED_SEAT
from server.model.refusals import (
    GAME_ENDED,
    NO_SUCH_PLAYER,
    NO_VACATIONS,
    NOT_AWAY,
    NOT_ON_VACATION,
    REMOVED,
    RESIGNED,
    refuse,
    vacation_days,
)
from server.model.writes import StoreAttendance
from server.views.board import absence_notices

log = Logger()


class Seats(GameWriteSide):
    """The seats part of `Game` (see the module docstring)."""

    def attendance(self, player: int) -> Attendance:
        return attendance_of(self._attendance, player)

    def come_back(self, player: int) -> defer.Deferred:
        """The player says they are back (`tae-client back`, the player page's button,
        ``POST /api/games/NAME/back``): an absent player plays their own seat again, and a
        vacation ends as `end_vacation` ends it; everyone is told. Reading the game (logging in,
        status, pages) never does this: only this, an order or a finished turn take the seat
        back. Fires with the Attendance; Refused(NOT_AWAY) when the stand-in does not play the
        seat, or the seat's problem (resigned, removed, a game that is over)."""
        return self._lock.run(self._come_back, player)

    def _come_back(self, player: int) -> defer.Deferred:
        problem = self._seat_problem(player)
        if problem is not None:
            return refuse(problem)
        presence = attendance_of(self._attendance, player).presence
        if presence is Presence.VACATION:
            return self._end_vacation(player, False)
        if presence is Presence.ABSENT:
            return self._take_seat_back(player)
        return refuse(NOT_AWAY)

    def _take_seat_back(self, player: int) -> defer.Deferred:
        """An absent player plays their own seat again (they gave an order, finished a turn or
        said they are back) and everyone is told, once: a seat that is not absent is left as it is."""
        before = attendance_of(self._attendance, player)
        if before.presence is not Presence.ABSENT or not self._state.has_player(player):
            return defer.succeed(before)
        return self._change_seat(BACK, back(before), absence_notices.back_again(self._state, player))

    def _back_quietly(self, player: int) -> defer.Deferred:
        """`_take_seat_back` under the lock already held, after an order that was stored; a store
        failure only leaves the seat with the stand-in until the player's next order (the order
        itself has succeeded). Fires with None."""

        def not_stored(failure) -> None:
            log.warn(
                "game {game}: storing that player {player} is back failed: {error}",
                game=self.setup.name,
                player=player,
                error=failure.getErrorMessage(),
            )

        return self._take_seat_back(player).addCallbacks(lambda _: None, not_stored)

    def start_vacation(self, player: int, days: int) -> defer.Deferred:
        """The player goes on vacation for `days` days from now (1 to the game's
        vacation_days_max; again while on vacation: a new end date). The stand-in plays the seat
        until then. Fires with the Attendance; Refused when the game has no vacations, for
        other lengths, a resigned or removed player, or a game that is over."""
        return self._lock.run(self._start_vacation, player, days)

    def _start_vacation(self, player: int, days: int) -> defer.Deferred:
        problem = self._seat_problem(player)
        maximum = self.setup.vacation_days_max
        if problem is None and not maximum:
            problem = NO_VACATIONS
        if problem is None and (
            isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= maximum
        ):
            problem = vacation_days(maximum)
        if problem is not None:
            return refuse(problem)
        before = attendance_of(self._attendance, player)
        after = Attendance(player, Presence.VACATION, 0, self.clock.seconds() + days * DAY_S)
        told = (
            ()
            if before.presence is Presence.VACATION
            else absence_notices.vacation_started(self._state, player)
        )
        return self._change_seat(VACATION, after, told)

    def end_vacation(self, player: int) -> defer.Deferred:
        """The player cancels their vacation and plays their own seat again; fires with the
        Attendance, Refused(NOT_ON_VACATION) when they are not on one."""
        return self._lock.run(self._end_vacation, player, False)

    def _end_vacation(self, player: int, only_when_due: bool) -> defer.Deferred:
        before = attendance_of(self._attendance, player)
        if before.presence is not Presence.VACATION:
            return defer.succeed(before) if only_when_due else refuse(NOT_ON_VACATION)
        if only_when_due and before.until is not None and before.until > self.clock.seconds():
            self._schedule_vacation_end(before)  # the clock fired early
            return defer.succeed(before)
        return self._change_seat(
            VACATION_ENDED, back(before), absence_notices.vacation_ended(self._state, player)
        )

    def resign(self, player: int) -> defer.Deferred:
        """The player leaves the game for good: the stand-in plays their seat to the end, and
        they cannot log in again. Fires with the Attendance (resigning twice is not an error)."""
        return self._lock.run(self._resign, player)

    def _resign(self, player: int) -> defer.Deferred:
        before = attendance_of(self._attendance, player)
        if before.presence is Presence.RESIGNED:
            return defer.succeed(before)
        problem = self._seat_problem(player)
        if problem is not None:
            return refuse(problem)
        return self._change_seat(
            RESIGNED_SEAT,
            Attendance(player, Presence.RESIGNED),
            absence_notices.resigned(self._state, player),
        )

    def _seat_problem(self, player: int) -> Problem | None:
        if not self._state.has_player(player):
            return NO_SUCH_PLAYER
        if player in self._removed:
            return REMOVED
        if attendance_of(self._attendance, player).presence is Presence.RESIGNED:
            return RESIGNED
        if self._state.phase is Phase.OVER:
            return GAME_ENDED
        return None

    def _change_seat(self, action: str, after: Attendance, told: tuple[Message, ...]) -> defer.Deferred:
        """Store a seat's new attendance and the notices about it with a `SeatChanged` record,
        then apply them (under the lock)."""

        def stored() -> Attendance:
            before = attendance_of(self._attendance, after.player)
            self._attendance[after.player] = after
            for message in told:
                self._post(message)
            self._schedule_vacation_end(after)
            self._publish()
            log.info(
                "game {game}: player {player}'s seat: {before} -> {after}",
                game=self.setup.name,
                player=after.player,
                before=before.presence.value,
                after=after.presence.value,
            )
            if after.stand_in and self._started and not self.busy:
                self._open_stand_in_turn()
                if self._finished:
                    self._check_turn_end()  # the others may all have finished already
                self._end_if_only_stand_ins_act()
            return after

        attendance = dict(self._attendance)
        attendance[after.player] = after
        preview = self._preview(attendance=MappingProxyType(attendance))
        change = SeatChanged(action, after.player, self._state.turn)
        return self._write(change, (StoreAttendance((after,), told),), stored, preview)

    def _schedule_vacation_end(self, attendance: Attendance) -> None:
        """Run the end of a vacation at its end date (at once for one that ended meanwhile)."""
        call = self._vacation_ends.pop(attendance.player, None)
        if call is not None and call.active():
            call.cancel()
        if attendance.presence is not Presence.VACATION or attendance.until is None or self._closed:
            return
        delay = max(0.0, attendance.until - self.clock.seconds())
        self._vacation_ends[attendance.player] = self.clock.callLater(
            delay, self._vacation_due, attendance.player
        )

    def _vacation_due(self, player: int) -> None:
        self._vacation_ends.pop(player, None)
        d = self._lock.run(self._end_vacation, player, True)

        def not_stored(failure) -> None:
            log.warn(
                "game {game}: ending the vacation of player {player} failed ({error}); "
                "trying again in {delay} s",
                game=self.setup.name,
                player=player,
                error=failure.getErrorMessage(),
                delay=COMMIT_RETRY_S,
            )
            if not self._closed:
                self._vacation_ends[player] = self.clock.callLater(COMMIT_RETRY_S, self._vacation_due, player)

        d.addErrback(not_stored)

    def _play_stand_ins(self) -> defer.Deferred:
        """Give the orders of every seat the stand-in plays in this turn, one seat after the
        other in id order, each checked, stored and queued like any player's."""
        stand_ins = self.snapshot.stand_ins()
        d: defer.Deferred = defer.succeed(None)
        for player in ruleset.acting_players(self._state, self._removed):
            if player in stand_ins:
                d.addCallback(self._stand_in_turn, player)
        return d

    def _stand_in_order(self, _previous: object, order: ruleset.Order) -> defer.Deferred:
        return self._insert_order(order.player, order.fleet, -1, order.type, order.target)

    def _open_stand_in_turn(self) -> None:
        """A turn opened (or a seat passed to the stand-in): a `hard` stand-in starts thinking."""
        if self._state.phase is Phase.OVER:
            return
        stand_ins = self.snapshot.stand_ins()
        seats = [p for p in ruleset.acting_players(self._state, self._removed) if p in stand_ins]
        if seats:
            self.stand_in.open_turn(self.setup.seed, self._state, seats, self.clock, self._computer_levels())

    def _computer_levels(self) -> dict[int, Level]:
        """The computer players' seats and their levels (the stand-in's seats play at its own)."""
        return {p: a.level for p, a in self._attendance.items() if a.level is not None}

    def _stand_in_turn(self, _previous: object, player: int) -> defer.Deferred:
        # The stand-in sees what the player sees, and the orders the player gave this turn.
        level = attendance_of(self._attendance, player).level
        d = self.stand_in.orders(
            self.setup.seed, self._state, player, self.snapshot.orders_of(player), self.clock, level
        )
        d.addCallback(self._give_stand_in_orders, player, level)
        return d

    def _give_stand_in_orders(
        self, orders: tuple[Order, ...], player: int, level: Level | None
    ) -> defer.Deferred:
        d: defer.Deferred = defer.succeed(None)
        for order in orders:
            d.addCallback(self._stand_in_order, order)
            d.addErrback(self._stand_in_order_failed, order)
        if orders:
            log.info(
                "game {game}: {who} ({ai_level}) gives {count} orders for player {player}",
                game=self.setup.name,
                who="the stand-in" if level is None else "the computer player",
                ai_level=(level or self.stand_in.level).value,
                count=len(orders),
                player=player,
            )
        return d

    def _stand_in_order_failed(self, failure, order: Order) -> None:
        log.warn(
            "game {game}: the stand-in's order {order} was not taken: {error}",
            game=self.setup.name,
            order=order,
            error=failure.getErrorMessage(),
        )
