"""The operators' controls of one game's clock and settings: pause, resume, extend, change a setting.

`TurnClockControls` is the part of the write side (`server.game.game.Game`) behind `tae-server pause`,
`resume`, `extend` and `set` (`server.operating.game_actions`): each change is stored, then applied to
the turn timer, and every player is told on their board.
"""

from __future__ import annotations

from dataclasses import replace

from twisted.internet import defer
from twisted.logger import Logger

from ruleset import Message, Phase
from server.game.timer import TurnTimer
from server.game.write_side import GameWriteSide
from server.model.changes import EXTENDED, PAUSED, RESUMED, SETTINGS_CHANGED, TURN_ENDING, ClockControlled
from server.model.store import GameSetup
from server.model.timer_settings import DeadlineTooFar, NoDeadline
from server.model.writes import StoreDeadline, StoreNotices, StorePause, StoreSetup
from server.views.board import operator_notices

log = Logger()


class TurnClockControls(GameWriteSide):
    """The clock and settings part of `Game` (see the module docstring)."""

    @property
    def paused(self) -> bool:
        return self.timer.paused

    def pause(self) -> defer.Deferred:
        """Stop the turn clock (stored, so a restart keeps it stopped); every player is told.
        Fires with False when the game was paused already."""
        return self._lock.run(self._pause)

    def _pause(self) -> defer.Deferred:
        if self.timer.paused:
            return defer.succeed(False)
        deadline = self.timer.deadline
        left = None if deadline is None else max(0.0, deadline - self.clock.seconds())
        notices = self._notices_for_everyone(operator_notices.paused(self._state.turn, left))
        change = ClockControlled(PAUSED, self._state.turn)
        steps = (StorePause(True, left), StoreDeadline(self._state.turn + 1, None), StoreNotices(notices))

        def stored() -> bool:
            self.timer.pause()
            self._post_notices(notices)
            self._publish(touched=())
            log.info("game {game}: paused by an operator", game=self.setup.name)
            return True

        return self._write(change, steps, stored, self._preview(paused=True, deadline=None))

    def resume_clock(self) -> defer.Deferred:
        """Start a paused clock again with the time that was left; every player is told (and a
        turn everyone has finished meanwhile ends now). Fires with False when not paused."""
        return self._lock.run(self._resume_clock)

    def _resume_clock(self) -> defer.Deferred:
        if not self.timer.paused:
            return defer.succeed(False)
        left = self.timer.paused_left
        deadline = None if left is None else self.clock.seconds() + left
        notices = self._notices_for_everyone(operator_notices.resumed(self._state.turn, left))
        change = ClockControlled(RESUMED, self._state.turn)
        steps = (
            StorePause(False, None),
            StoreDeadline(self._state.turn + 1, deadline),
            StoreNotices(notices),
        )

        def stored() -> bool:
            self.timer.resume(at=deadline)
            self._post_notices(notices)
            self._publish(touched=())
            log.info("game {game}: resumed by an operator", game=self.setup.name)
            return True

        def check(result: bool) -> bool:
            if result and self._started and self._finished and not self.busy:
                self.clock.callLater(0, self._check_turn_end)  # outside the lock it holds now
            return result

        after = self._preview(paused=False, paused_left=None, deadline=deadline)
        return self._write(change, steps, stored, after).addCallback(check)

    def extend(self, seconds: float) -> defer.Deferred:
        """Move the open turn's deadline `seconds` later; every player is told. Fails with
        NoDeadline when the turn has none, DeadlineTooFar when it would end too far away
        (`server.game.timer.TurnTimer.extend`); nothing changes then."""
        return self._lock.run(self._extend, seconds)

    def _extend(self, seconds: float) -> defer.Deferred:
        if self._state.phase is Phase.OVER:
            return defer.fail(NoDeadline("the game is over"))
        try:
            before = (self.timer.deadline, self.timer.paused_left)
            self.timer.extend(seconds)
        except (NoDeadline, DeadlineTooFar) as error:
            return defer.fail(error)
        paused = self.timer.paused
        left = self.timer.paused_left if paused else self._seconds_left()
        notices = self._notices_for_everyone(
            operator_notices.extended(self._state.turn, seconds, left, paused)
        )
        steps: tuple = (StoreNotices(notices),)
        if paused:
            steps = (StorePause(True, self.timer.paused_left), *steps)
        change = ClockControlled(EXTENDED, self._state.turn, seconds)

        def stored() -> None:
            self._post_notices(notices)
            self._publish(touched=())
            log.info("game {game}: turn extended by {seconds} s", game=self.setup.name, seconds=seconds)

        def not_stored(failure):
            if self.timer.paused:  # put the clock back as the store still has it
                self.timer.restore_pause(before[1])
            elif before[0] is not None:
                self.timer.extend(before[0] - (self.timer.deadline or before[0]))
            return failure

        return self._write(change, steps, stored).addErrback(not_stored)

    def change_setup(self, setup: GameSetup, what: str) -> defer.Deferred:
        """An operator changed settings of the running game (its timer, size, accounts; never
        its name, map or seed): stored, then applied; a changed timer starts the open turn's
        clock again under the new settings. `what` says the change to the players."""
        try:
            setup.timer.validate()
        except Exception as error:
            return defer.fail(error)
        return self._lock.run(self._change_setup, setup, what)

    def _change_setup(self, setup: GameSetup, what: str) -> defer.Deferred:
        old = self.setup
        setup = replace(setup, name=old.name, map_text=old.map_text, seed=old.seed, ctime=old.ctime)
        timer_changed = setup.timer.moves_the_clock_from(old.timer)
        running = self._turn_clock_runs()
        restarts = timer_changed and running
        left = self._seconds_left()
        if restarts and not self.timer.paused:  # the open turn's clock starts again under them
            preview = TurnTimer(self.clock, setup.timer, lambda reason: None, lambda seconds, reason: None)
            left = preview.next_turn_deadline()
            left = None if left is None else max(0.0, left - self.clock.seconds())
        text = operator_notices.setting_changed(self._state.turn, what, left, restarts, self.timer.paused)
        notices = self._notices_for_everyone(text)
        change = ClockControlled(SETTINGS_CHANGED, self._state.turn, what=what)

        def stored() -> None:
            self.setup = setup
            if restarts:
                self.timer.change_settings(setup.timer)
            elif setup.timer != old.timer:
                # the first turn starts under them (or, a calendar setting under another
                # timer, they wait for the calendar timer)
                self.timer.settings = setup.timer.validate()
            self._post_notices(notices)
            self._publish(touched=())
            log.info("game {game}: setting changed: {what}", game=self.setup.name, what=what)

        def started(result: object) -> object:
            self.clock.callLater(0, self._start_if_ready)  # fewer players may be needed now
            return result

        steps = (StoreSetup(setup), StoreNotices(notices))
        return self._write(change, steps, stored).addCallback(started)

    def tell_turn_ending(self) -> defer.Deferred:
        """Tell every player that an operator ends the open turn now: a board message, stored
        (with its change record) before the end of turn, like every other operator change."""
        return self._lock.run(self._tell_turn_ending)

    def _tell_turn_ending(self) -> defer.Deferred:
        notices = self._notices_for_everyone(operator_notices.turn_ended(self._state.turn))
        change = ClockControlled(TURN_ENDING, self._state.turn)

        def stored() -> None:
            self._post_notices(notices)
            self._publish(touched=())

        return self._write(change, (StoreNotices(notices),), stored)

    def _turn_clock_runs(self) -> bool:
        """The open turn has a clock: the game started (restored for a change made without a
        server, it is not started, but has the players to be), and it is not over."""
        if self._state.phase is Phase.OVER:
            return False
        return self._started or len(self._state.players) >= max(1, self.setup.timer.turn_players_min)

    def _seconds_left(self) -> float | None:
        deadline = self.timer.deadline
        return None if deadline is None else max(0.0, deadline - self.clock.seconds())

    def _notices_for_everyone(self, body: str, removed: set[int] | None = None) -> tuple[Message, ...]:
        """One board message to every player who is not removed (`removed`: the removed
        players as the change leaves them), to be stored with the change."""
        gone = self._removed if removed is None else removed
        return tuple(
            Message(account.player_id, self._state.turn, operator_notices.SUBJECT, body)
            for account in sorted(self._accounts.values(), key=lambda a: a.player_id)
            if account.player_id not in gone
        )

    def _post_notices(self, messages: tuple[Message, ...]) -> None:
        """Put stored notices on the players' boards (the caller publishes)."""
        for message in messages:
            self._post(message)
