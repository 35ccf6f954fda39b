"""Who plays each seat: the player, or the stand-in while they are absent, on vacation or resigned,
or the computer for a computer player's seat.

A player who lets `absent_after_missed_turns` turns in a row end without giving an order or
finishing (the game setting; 0 = never) is marked **absent**: from the next turn on the stand-in
(`ruleset.stand_in`) gives the seat's orders until the player plays again: gives an order,
finishes a turn or says they are back (reading the game, logging in included, is not playing).
A player may also go on **vacation** for up to `vacation_days_max` days (the stand-in plays until
it ends or they cancel it or say they are back) or **resign** (the stand-in plays the seat to
the end of the game; they cannot log in again). A seat the stand-in plays is not waited for:
its orders are given, stored and recorded like anyone's when the turn ends
(`server.game.game.Game`).

A **computer player**'s seat (`Presence.COMPUTER`, added by an operator or a game's creator) is
played by the same machinery as the stand-in's, every turn from the start, at its own level
(`Attendance.level`); nobody logs in to it and it is never marked absent or back.

This module holds the values and the bookkeeping of a turn's end, as pure functions; the game
service stores and applies what they return, and `server.views.board.absence_notices` words what everyone is
told.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from enum import Enum

from ruleset.ai import Level, parse_level

DEFAULT_ABSENT_AFTER = 2  # turns missed in a row
DEFAULT_VACATION_DAYS_MAX = 14
DAY_S = 86400


class Presence(str, Enum):
    """Who plays a seat: the player (PLAYING), the stand-in (the three next), or the computer."""

    PLAYING = "playing"
    ABSENT = "absent"
    VACATION = "vacation"
    RESIGNED = "resigned"
    COMPUTER = "computer"

    @property
    def label(self) -> str:
        """The public word for it ("on vacation"), as status lines and pages show it."""
        return _LABELS[self]


_LABELS = {
    Presence.PLAYING: "playing",
    Presence.ABSENT: "absent",
    Presence.VACATION: "on vacation",
    Presence.RESIGNED: "resigned",
    Presence.COMPUTER: "computer",
}


@dataclass(frozen=True, slots=True)
class Attendance:
    """One player's seat: who plays it, the turns they missed in a row, and when a vacation ends
    (Unix time; only while on vacation), and a computer player's level. The missed count and the
    end date are the player's own business: public views show only `label`."""

    player: int
    presence: Presence = Presence.PLAYING
    missed: int = 0
    until: float | None = None
    level: Level | None = None  # a computer player's (Presence.COMPUTER) level

    @property
    def stand_in(self) -> bool:
        """Whether the computer plays the seat (the stand-in, or a computer player)."""
        return self.presence is not Presence.PLAYING

    @property
    def label(self) -> str:
        """The public words for the seat: "playing", "absent", …, "computer (hard)"."""
        if self.presence is Presence.COMPUTER and self.level is not None:
            return f"computer ({self.level.value})"
        return self.presence.label

    @property
    def stored_presence(self) -> str:
        """The `presence` column's text: the presence, with a computer player's level
        ("computer:hard"); `stored` reads it back."""
        if self.presence is Presence.COMPUTER and self.level is not None:
            return f"{self.presence.value}:{self.level.value}"
        return self.presence.value

    @classmethod
    def stored(cls, player: int, presence: str, missed: int, until: float | None) -> Attendance:
        """The attendance of a stored row (`stored_presence`)."""
        kind, _, level = presence.partition(":")
        return cls(player, Presence(kind), missed, until, parse_level(level) if level else None)


def computer_seat(player: int, level: Level) -> Attendance:
    """A computer player's seat."""
    return Attendance(player, Presence.COMPUTER, level=level)


@dataclass(frozen=True, slots=True)
class TurnAttendance:
    """What the end of a turn changed: the new rows, and the players who became absent."""

    changed: tuple[Attendance, ...] = ()
    became_absent: tuple[int, ...] = ()


def attendance_of(table: Mapping[int, Attendance], player: int) -> Attendance:
    return table.get(player) or Attendance(player)


def stand_ins(table: Mapping[int, Attendance], removed: Collection[int] = ()) -> frozenset[int]:
    """The players whose seat the stand-in plays (never a removed player's: nobody plays it)."""
    return frozenset(p for p, a in table.items() if a.stand_in and p not in removed)


def after_turn(
    table: Mapping[int, Attendance],
    waited_for: Iterable[int],
    acted: Collection[int],
    absent_after: int,
) -> TurnAttendance:
    """Count the turn for every player it waited for: one who `acted` (gave an order or
    finished) has missed none in a row; one who did not has missed one more, and is absent once
    that reaches `absent_after` (0: nobody is ever marked absent)."""
    changed: list[Attendance] = []
    absent: list[int] = []
    for player in sorted(waited_for):
        before = attendance_of(table, player)
        if before.stand_in:
            continue
        if player in acted:
            after = replace(before, missed=0)
        else:
            after = replace(before, missed=before.missed + 1)
            if absent_after and after.missed >= absent_after:
                after = replace(after, presence=Presence.ABSENT)
                absent.append(player)
        if after != before:
            changed.append(after)
    return TurnAttendance(tuple(changed), tuple(absent))


def back(before: Attendance) -> Attendance:
    """The player plays their own seat again: nothing missed, no vacation."""
    return Attendance(before.player)
