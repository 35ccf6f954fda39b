"""When a turn ends: the turn timers of tpserver-cpp, on an injected clock.

* ``basic``: every turn lasts ``turn_length`` seconds (0 means 60), whoever has finished.
* ``playersfinished`` (the default): the turn ends when every player who can act has finished,
  once the game has ``turn_players_min`` players; ``turn_length`` > 0 is also a deadline.
* ``threshold``: the turn lasts ``turn_length_under_threshold`` seconds (0 = no deadline) until
  ``turn_player_threshold`` percent of the players have finished; then at most
  ``turn_length_over_threshold`` more (0 = at once); everybody finished ends it at once.

The timer tells its owner through two callbacks: ``announce(seconds, reason)`` for the
TimeRemaining frames pushed to every connection, and ``end_turn(reason)`` to run the end of turn.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from twisted.internet.interfaces import IDelayedCall, IReactorTime

# TP04 TimeRemaining reasons (spec/protocol.md §5.6).
REQUESTED = 0
TIMER_STARTED = 1
TIMER_WARNING = 2
ALL_FINISHED = 3
THRESHOLD_TIMER_STARTED = 4
END_OF_TURN_STARTED = 5

TIMER_KINDS = ("basic", "playersfinished", "threshold")


class TimerSettingsError(ValueError):
    """A timer configuration that cannot work; the message says which setting."""


@dataclass(frozen=True, slots=True)
class TimerSettings:
    """Timer configuration, with tpserver-cpp's setting names."""

    kind: str = "playersfinished"
    turn_length: int = 300
    turn_players_min: int = 2
    turn_player_threshold: int = 0
    turn_length_over_threshold: int = 0
    turn_length_under_threshold: int = 0

    def validate(self) -> TimerSettings:
        if self.kind not in TIMER_KINDS:
            raise TimerSettingsError(f"timer must be one of {', '.join(TIMER_KINDS)}, not {self.kind!r}")
        for name in (
            "turn_length",
            "turn_players_min",
            "turn_length_over_threshold",
            "turn_length_under_threshold",
        ):
            if getattr(self, name) < 0:
                raise TimerSettingsError(f"{name} cannot be negative")
        if not 0 <= self.turn_player_threshold <= 100:
            raise TimerSettingsError("turn_player_threshold is a percentage, 0 to 100")
        return self


class TurnTimer:
    """One game's turn timer. Call `start_turn` at the start of every turn, `player_finished`
    whenever a player finishes, and `stop` when the game ends."""

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

    # -- queries -------------------------------------------------------------------------

    def seconds_left(self) -> int:
        """Seconds until the deadline; -1 when there is none (the protocol's "no timer")."""
        if self._deadline is None:
            return -1
        return max(0, int(round(self._deadline - self.clock.seconds())))

    @property
    def deadline(self) -> float | None:
        """When the turn ends by the clock (clock time), None without a deadline."""
        return self._deadline

    # -- events --------------------------------------------------------------------------

    def resume_deadline(self, deadline: float) -> None:
        """After a restart: end this turn at a deadline the timer had before (clock time), if
        that is sooner than the one it has now; a deadline already passed ends the turn now."""
        if self._deadline is not None and self._deadline <= deadline:
            return
        self._cancel()
        seconds = max(0.0, deadline - self.clock.seconds())
        self._deadline = self.clock.seconds() + seconds
        self._call = self.clock.callLater(seconds, self._expired)
        self._announce(self.seconds_left(), TIMER_STARTED)

    def start_turn(self, players: int) -> None:
        """A new turn began (also the first one): arm the deadline and announce it."""
        self._cancel()
        self._over_threshold = False
        s = self.settings
        if s.kind == "basic":
            self._arm(s.turn_length or 60)
        elif s.kind == "playersfinished":
            if s.turn_length:
                self._arm(s.turn_length)
        else:
            if s.turn_length_under_threshold:
                self._arm(s.turn_length_under_threshold)
        self._announce(self.seconds_left(), TIMER_STARTED)

    def player_finished(self, finished: int, waiting_for: int, players: int) -> None:
        """`finished` of the `waiting_for` players who can act are done; `players` in the game."""
        s = self.settings
        everyone = waiting_for > 0 and finished >= waiting_for
        if s.kind == "basic":
            self._announce(self.seconds_left(), TIMER_WARNING)
            return
        if s.kind == "playersfinished":
            if everyone and players >= s.turn_players_min:
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
        """An operator ended the turn by hand."""
        self._finish(END_OF_TURN_STARTED)

    def stop(self) -> None:
        self._cancel()

    # -- internals -----------------------------------------------------------------------

    def _arm(self, seconds: int) -> None:
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
