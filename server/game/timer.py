"""When a turn ends: the turn timers of tpserver-cpp, on an injected clock.

* ``basic``: every turn lasts ``turn_length`` seconds (0 means 60), whoever has finished.
* ``playersfinished`` (the default): the turn ends when every player who can act has finished,
  once the game has ``turn_players_min`` players; ``turn_length`` > 0 is also a deadline.
* ``threshold``: the turn lasts ``turn_length_under_threshold`` seconds (0 = no deadline) until
  ``turn_player_threshold`` percent of the players have finished; then at most
  ``turn_length_over_threshold`` more (0 = at once); everybody finished ends it at once.
* ``calendar``: turns end at the times of ``schedule`` in ``time_zone``
  (`server.model.calendar_schedule`: "Mon,Wed,Fri 20:00" in "Europe/Berlin"); a scheduled time less
  than ``turn_length`` seconds after the turn started is skipped (so a turn that began just
  before one is not seconds long); with ``finish_early`` the turn also ends once every player
  who can act has finished (and the game has ``turn_players_min`` players). For this kind the
  clock's time is read as Unix time (it is, on a real reactor).

An operator can `pause` the clock (the deadline stops; nothing ends the turn by itself, an
operator's end of turn still does; the turns that follow wait too, until `resume`), `resume` it
(with the time that was left) and `extend` the open turn's deadline.

A deadline is set in one place, `_arm`, and never lies more than `LONGEST_WAIT_S` ahead (nor
does the time a paused turn gets back), so every TimeRemaining frame can carry the seconds left:
settings, a stored deadline or pause are cut to it, and an extension past it is refused.

The timer tells its owner through two callbacks: ``announce(seconds, reason)`` for the
TimeRemaining frames pushed to every connection, and ``end_turn(reason)`` to run the end of turn.
"""

from __future__ import annotations

from collections.abc import Callable

from twisted.internet.interfaces import IDelayedCall, IReactorTime

from server.model.timer_settings import (
    ALL_FINISHED,
    BASIC_DEFAULT_S,
    END_OF_TURN_STARTED,
    LONGEST_WAIT_S,
    REQUESTED,
    THRESHOLD_TIMER_STARTED,
    TIMER_STARTED,
    TIMER_WARNING,
    DeadlineTooFar,
    NoDeadline,
    TimerSettings,
)


def bounded(seconds: float) -> float:
    """`seconds` from now, cut to what a deadline may be (0 to `LONGEST_WAIT_S`)."""
    return min(max(0.0, seconds), float(LONGEST_WAIT_S))


# TP04 TimeRemaining reasons (spec/protocol.md §5.6).
class TurnTimer:
    """One game's turn timer. Call `start_turn` at the start of every turn, `player_finished`
    whenever a player finishes, and `stop` when the game ends; operators `pause`, `resume`
    and `extend` it, and `change_settings`."""

    def __init__(
        self,
        clock: IReactorTime,
        settings: TimerSettings,
        end_turn: Callable[[int], None],
        announce: Callable[[int, int], None],
    ):
        self.clock = clock
        self.settings = settings.validate()
        self._end_turn = end_turn
        self._announce = announce
        self._call: IDelayedCall | None = None
        self._deadline: float | None = None
        self._over_threshold = False
        self._paused = False
        self._paused_left: float | None = None  # seconds the deadline had left when paused

    # -- queries -------------------------------------------------------------------------

    def seconds_left(self) -> int:
        """Seconds until the deadline; -1 when there is none (the protocol's "no timer"),
        also while the clock is paused."""
        if self._deadline is None:
            return -1
        return max(0, int(round(self._deadline - self.clock.seconds())))

    @property
    def deadline(self) -> float | None:
        """When the turn ends by the clock (clock time), None without a deadline or paused."""
        return self._deadline

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def paused_left(self) -> float | None:
        """While paused: the seconds the deadline will have when resumed (None: no deadline)."""
        return self._paused_left if self._paused else None

    # -- events --------------------------------------------------------------------------

    def resume_deadline(self, deadline: float) -> None:
        """After a restart: end this turn at a deadline the timer had before (clock time), if
        that is sooner than the one it has now; a deadline already passed ends the turn now."""
        if self._paused:
            return
        if self._deadline is not None and self._deadline <= deadline:
            return
        self._cancel()
        seconds = max(0.0, deadline - self.clock.seconds())
        self._arm(seconds)
        self._announce(self.seconds_left(), TIMER_STARTED)

    def next_turn_deadline(self) -> float | None:
        """The deadline a turn starting now gets (None: none, or the clock is paused): what the
        end of a turn stores with the turn, before the turn starts (`start_turn(at=...)`)."""
        seconds = self._turn_seconds()
        if self._paused or seconds is None:
            return None
        return self.clock.seconds() + bounded(seconds)

    def start_turn(self, players: int, at: float | None = None) -> None:
        """A new turn began (also the first one): arm the deadline (at `at`, when the turn's
        deadline was worked out and stored before it began: `next_turn_deadline`) and announce
        it (a paused clock keeps the new turn's time for `resume`)."""
        self._cancel()
        self._over_threshold = False
        seconds = self._turn_seconds()
        if self._paused:
            self._paused_left = None if seconds is None else bounded(seconds)
            self._announce(-1, TIMER_STARTED)
            return
        if at is not None:
            seconds = at - self.clock.seconds()
        if seconds is not None:
            self._arm(seconds)
        self._announce(self.seconds_left(), TIMER_STARTED)

    def gives_turns_a_deadline(self) -> bool:
        """A turn starting now would have a deadline under these settings."""
        return self.settings.turns_have_a_deadline()

    def _turn_seconds(self) -> float | None:
        """How long a turn starting now lasts by the clock; None: no deadline."""
        s = self.settings
        if s.kind == "basic":
            return s.turn_length or BASIC_DEFAULT_S
        if s.kind == "playersfinished":
            return s.turn_length or None
        if s.kind == "calendar":
            now = self.clock.seconds()
            return s.calendar.next_end(now + bounded(s.turn_length)) - now
        return s.turn_length_under_threshold or None

    def player_finished(self, finished: int, waiting_for: int, players: int) -> None:
        """`finished` of the `waiting_for` players who can act are done; `players` in the game."""
        s = self.settings
        everyone = waiting_for > 0 and finished >= waiting_for
        if self._paused or s.kind == "basic":
            self._announce(self.seconds_left(), TIMER_WARNING)
            return
        if s.kind in ("playersfinished", "calendar"):
            early = s.kind == "playersfinished" or s.finish_early
            if everyone and early and players >= s.turn_players_min:
                self._finish(ALL_FINISHED)
            else:
                self._announce(self.seconds_left(), TIMER_WARNING)
            return
        if everyone and players >= 2:
            self._finish(ALL_FINISHED)
            return
        over = waiting_for > 0 and finished * 100 >= s.turn_player_threshold * waiting_for
        if over and not self._over_threshold:
            self._over_threshold = True
            length = s.turn_length_over_threshold
            if length == 0 and s.turn_player_threshold > 0:
                self._finish(ALL_FINISHED)
                return
            length = length or 60
            if self._deadline is None or self._deadline > self.clock.seconds() + length:
                self._cancel()
                self._arm(length)
                self._announce(self.seconds_left(), THRESHOLD_TIMER_STARTED)
                return
        self._announce(self.seconds_left(), TIMER_WARNING)

    def force_end(self) -> None:
        """An operator ended the turn by hand (also while paused)."""
        self._finish(END_OF_TURN_STARTED)

    def pause(self) -> None:
        """Stop the clock: the deadline no longer runs and nothing but an operator ends the
        turn until `resume`."""
        if self._paused:
            return
        left = None if self._deadline is None else max(0.0, self._deadline - self.clock.seconds())
        self._cancel()
        self._paused, self._paused_left = True, left
        self._announce(-1, REQUESTED)

    def restore_pause(self, left: float | None) -> None:
        """A pause stored before a restart: paused, with `left` seconds (None: no deadline)."""
        self._cancel()
        self._paused, self._paused_left = True, None if left is None else bounded(left)

    def resume(self, at: float | None = None) -> None:
        """Start a paused clock again with the time that was left when it stopped (ending at
        `at` when that was worked out and stored before)."""
        if not self._paused:
            return
        left, self._paused, self._paused_left = self._paused_left, False, None
        if left is not None:
            self._arm(left if at is None else at - self.clock.seconds())
        self._announce(self.seconds_left(), TIMER_STARTED)

    def extend(self, seconds: float) -> None:
        """Move the open turn's deadline `seconds` later: NoDeadline when it has none,
        DeadlineTooFar (and nothing changes) when it would end more than `LONGEST_WAIT_S` from
        now."""
        if self._paused:
            if self._paused_left is None:
                raise NoDeadline("the open turn has no deadline to extend")
            self._paused_left = self._within_reach(self._paused_left + seconds)
            return
        if self._deadline is None:
            raise NoDeadline("the open turn has no deadline to extend")
        left = self._within_reach(self._deadline + seconds - self.clock.seconds())
        self._cancel()
        self._arm(left)
        self._announce(self.seconds_left(), TIMER_STARTED)

    @staticmethod
    def _within_reach(left: float) -> float:
        if left > LONGEST_WAIT_S:
            raise DeadlineTooFar(f"the turn cannot end more than {LONGEST_WAIT_S} s from now")
        return max(0.0, left)

    def change_settings(self, settings: TimerSettings) -> None:
        """New settings (validated) from now on: the open turn's clock starts again under them,
        counted from now (while paused, that is the time the turn gets at `resume`)."""
        self.settings = settings.validate()
        self._over_threshold = False
        seconds = self._turn_seconds()
        if self._paused:
            self._paused_left = None if seconds is None else bounded(seconds)
            return
        self._cancel()
        if seconds is not None:
            self._arm(seconds)
        self._announce(self.seconds_left(), TIMER_STARTED)

    def stop(self) -> None:
        self._cancel()

    # -- internals -----------------------------------------------------------------------

    def _arm(self, seconds: float) -> None:
        """Set the deadline `seconds` from now: the one place a deadline is made (bounded)."""
        seconds = bounded(seconds)
        self._deadline = self.clock.seconds() + seconds
        self._call = self.clock.callLater(seconds, self._expired)

    def _cancel(self) -> None:
        if self._call is not None and self._call.active():
            self._call.cancel()
        self._call = None
        self._deadline = None

    def _expired(self) -> None:
        self._call = None
        self._finish(END_OF_TURN_STARTED)

    def _finish(self, reason: int) -> None:
        self._cancel()
        self._announce(0, reason)
        self._end_turn(reason)
