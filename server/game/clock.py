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
from server.game.write_side import GameWriteSide
from server.model.store import GameSetup
from server.model.timer_settings import DeadlineTooFar, NoDeadline
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
        d = self._store_optional("set_pause", True, left)

        def stored(_: object) -> defer.Deferred:
            self.timer.pause()
            self._publish(touched=())
            log.info("game {game}: paused by an operator", game=self.setup.name)
            return self._tell_everyone(operator_notices.paused(self._state.turn, left)).addCallback(
                lambda _: True
            )

        return d.addCallback(stored)

    def resume_clock(self) -> defer.Deferred:
        """Start a paused clock again with the time that was left; every player is told (and a
        turn everyone has finished meanwhile ends now). Fires with False when not paused."""
        return self._lock.run(self._resume_clock)

    def _resume_clock(self) -> defer.Deferred:
        if not self.timer.paused:
            return defer.succeed(False)
        d = self._store_optional("set_pause", False, None)

        def stored(_: object) -> defer.Deferred:
            self.timer.resume()
            self._publish(touched=())
            log.info("game {game}: resumed by an operator", game=self.setup.name)
            told = self._tell_everyone(operator_notices.resumed(self._state.turn, self._seconds_left()))
            return told.addCallback(lambda _: self._store_deadline()).addCallback(lambda _: True)

        def check(result: bool) -> bool:
            if result and self._started and self._finished and not self.busy:
                self.clock.callLater(0, self._check_turn_end)  # outside the lock it holds now
            return result

        return d.addCallback(stored).addCallback(check)

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
        d = self._store_optional("set_pause", True, self.timer.paused_left) if self.timer.paused else None
        d = d or self._store_deadline()

        def stored(_: object) -> defer.Deferred:
            self._publish(touched=())
            log.info("game {game}: turn extended by {seconds} s", game=self.setup.name, seconds=seconds)
            paused = self.timer.paused
            left = self.timer.paused_left if paused else self._seconds_left()
            return self._tell_everyone(operator_notices.extended(self._state.turn, seconds, left, paused))

        def not_stored(failure):
            if self.timer.paused:  # put the clock back as the store still has it
                self.timer.restore_pause(before[1])
            elif before[0] is not None:
                self.timer.extend(before[0] - (self.timer.deadline or before[0]))
            return failure

        return d.addCallbacks(stored, not_stored)

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
        d = self._store_optional("update_setup", setup)

        def stored(_: object) -> defer.Deferred:
            self.setup = setup
            timer_changed = setup.timer.moves_the_clock_from(old.timer)
            running = self._turn_clock_runs()
            if timer_changed and running:
                self.timer.change_settings(setup.timer)
            elif setup.timer != old.timer:
                # the first turn starts under them (or, a calendar setting under another
                # timer, they wait for the calendar timer)
                self.timer.settings = setup.timer.validate()
            self._publish(touched=())
            log.info("game {game}: setting changed: {what}", game=self.setup.name, what=what)
            text = operator_notices.setting_changed(
                self._state.turn,
                what,
                self._seconds_left(),
                timer_changed and running,
                self.timer.paused,
            )
            told = self._tell_everyone(text)
            if timer_changed:
                told.addCallback(lambda _: self._store_deadline())
            return told

        def started(result: object) -> object:
            self.clock.callLater(0, self._start_if_ready)  # fewer players may be needed now
            return result

        return d.addCallback(stored).addCallback(started)

    def _turn_clock_runs(self) -> bool:
        """The open turn has a clock: the game started (restored for a change made without a
        server, it is not started, but has the players to be), and it is not over."""
        if self._state.phase is Phase.OVER:
            return False
        return self._started or len(self._state.players) >= max(1, self.setup.timer.turn_players_min)

    def _seconds_left(self) -> float | None:
        deadline = self.timer.deadline
        return None if deadline is None else max(0.0, deadline - self.clock.seconds())

    def _store_optional(self, method: str, *args: object) -> defer.Deferred:
        """Call a store method the game service uses when the store has it."""
        call = getattr(self.store, method, None)
        return defer.maybeDeferred(call, self.id, *args) if call else defer.succeed(None)

    def _store_deadline(self) -> defer.Deferred:
        """Store the open turn's deadline as the clock now has it (a running server's desk
        records it too; without a server nobody else would); none clears the stored one, so
        that `tae-server status` does not count down to a deadline the players no longer have."""
        if self.timer.deadline is None:
            return self._store_optional("set_deadline", self._state.turn + 1, None)
        return self._store_optional("set_deadline", self._state.turn + 1, self.timer.deadline)

    def _tell_everyone(self, body: str) -> defer.Deferred:
        """Post one board message to every player who is not removed (stored first)."""
        messages = tuple(
            Message(account.player_id, self._state.turn, operator_notices.SUBJECT, body)
            for account in sorted(self._accounts.values(), key=lambda a: a.player_id)
            if account.player_id not in self._removed
        )
        d = self._store_optional("add_notices", messages)

        def stored(_: object) -> None:
            for message in messages:
                self._post(message)
            self._publish()

        def not_stored(failure) -> None:
            log.warn(
                "game {game}: storing the players' notice failed: {error}",
                game=self.setup.name,
                error=failure.getErrorMessage(),
            )

        return d.addCallbacks(stored, not_stored)
