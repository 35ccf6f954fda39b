"""How a game's turns are timed: the timer settings (tpserver-cpp's names and the calendar's own),
checked, and the TP04 TimeRemaining reason codes.

`TimerSettings` is a value every part shares (the setup of a game, the configuration, the
views); `server.game.game.timer.TurnTimer` runs a turn's clock by them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

from server.model.calendar_schedule import CalendarSchedule, ScheduleError, time_zone

REQUESTED = 0
TIMER_STARTED = 1
TIMER_WARNING = 2
ALL_FINISHED = 3
THRESHOLD_TIMER_STARTED = 4
END_OF_TURN_STARTED = 5

TIMER_KINDS = ("basic", "playersfinished", "threshold", "calendar")
DEFAULT_TIME_ZONE = "UTC"
# The basic timer treats a turn_length of 0 as 60 s, like tpserver-cpp.
BASIC_DEFAULT_S = 60
BASIC_ZERO = f"basic turns last {BASIC_DEFAULT_S} s when turn_length is 0"

#: The most seconds a turn's deadline may be away (about 68 years). TimeRemaining carries the
#: seconds left as j32 on TP03 and u32 on TP04 (spec/protocol.md §2, frame 15), libtpproto-cpp
#: reads them as a signed 32-bit number, and 0xFFFFFFFF means "no timer": 2**31 - 1 is the
#: largest count every client reads as that count. The turn timer never arms a deadline further
#: away, whatever its settings, a stored deadline or an operator's extensions say.
LONGEST_WAIT_S = 2**31 - 1


class TimerSettingsError(ValueError):
    """A timer configuration that cannot work; the message says which setting."""


class NoDeadline(ValueError):
    """The open turn has no deadline to extend (the message says so, in one line)."""


class DeadlineTooFar(ValueError):
    """An extension would put the open turn's deadline more than `LONGEST_WAIT_S` away."""


@dataclass(frozen=True)
class TimerSettings:
    """Timer configuration, with tpserver-cpp's setting names (and the calendar's own)."""

    kind: str = "playersfinished"
    turn_length: int = 300
    turn_players_min: int = 2
    turn_player_threshold: int = 0
    turn_length_over_threshold: int = 0
    turn_length_under_threshold: int = 0
    schedule: str = ""  # calendar: "Mon,Wed,Fri 20:00" (server.model.calendar_schedule)
    time_zone: str = DEFAULT_TIME_ZONE  # calendar: an IANA zone name
    finish_early: bool = True  # calendar: everyone finished ends the turn before its time

    def turns_have_a_deadline(self) -> bool:
        """A turn starting under these settings gets a deadline (threshold: before the
        threshold is reached)."""
        if self.kind == "playersfinished":
            return self.turn_length > 0
        if self.kind == "threshold":
            return self.turn_length_under_threshold > 0
        return True

    def moves_the_clock_from(self, old: TimerSettings) -> bool:
        """These settings, replacing `old`, change how the open turn is timed: not so for a
        calendar setting (schedule, time zone, finish_early) changed under another timer."""
        if self.kind == "calendar" or self.kind != old.kind:
            return self != old
        same_calendar = replace(
            self, schedule=old.schedule, time_zone=old.time_zone, finish_early=old.finish_early
        )
        return same_calendar != old

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
        if self.kind == "calendar" and not self.schedule.strip():
            raise TimerSettingsError('schedule: the calendar timer needs one, e.g. "Mon,Wed,Fri 20:00"')
        try:
            time_zone(self.time_zone)
        except ScheduleError as error:
            raise TimerSettingsError(f"time_zone: {error}") from None
        if self.schedule.strip():
            try:
                _ = self.calendar
            except ScheduleError as error:
                raise TimerSettingsError(f"schedule: {error}") from None
        return self

    @cached_property
    def calendar(self) -> CalendarSchedule:
        """The parsed schedule in its zone (ScheduleError when it cannot be read)."""
        return CalendarSchedule.parse(self.schedule or "00:00", self.time_zone)

    def brief(self) -> str:
        """A few words for a table: the kind and its length or schedule."""
        if self.kind == "calendar":
            return f"calendar {self.calendar.describe()}"
        return self.describe()

    def describe(self) -> str:
        """One line for operators: the kind and what drives it."""
        if self.kind == "calendar":
            text = f"calendar, turns end {self.calendar.describe()}"
            if self.turn_length:
                text += f", at least {self.turn_length} s after they start"
            return text + (", or when everyone has finished" if self.finish_early else "")
        if self.kind == "threshold":
            return (
                f"threshold {self.turn_player_threshold}%, {self.turn_length_under_threshold} s under it, "
                f"{self.turn_length_over_threshold} s over it"
            )
        if self.kind == "basic":
            if not self.turn_length:
                return f"basic, {BASIC_DEFAULT_S} s turns ({BASIC_ZERO})"
            return f"basic, {self.turn_length} s turns"
        return f"{self.kind}, " + (f"{self.turn_length} s turns" if self.turn_length else "no turn length")
