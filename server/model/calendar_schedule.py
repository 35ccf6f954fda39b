"""When the calendar timer ends turns: weekdays and wall-clock times in a named time zone.

A schedule is written as one or more entries separated by ``;``, each ``DAYS TIMES``:

    Mon,Wed,Fri 20:00                 three turns a week, at 20:00
    Mon-Fri 08:00,20:00; Sat 12:00    twice on weekdays, once on Saturdays
    daily 12:00                       every day (``daily`` and ``*`` mean every day;
    12:00                             so does leaving the days out)

Days are ``Mon Tue Wed Thu Fri Sat Sun`` (any case, ranges like ``Mon-Fri`` and ``Fri-Mon``);
times are ``HH:MM`` on a 24-hour clock. The zone is an IANA name read with `zoneinfo`
("Europe/Berlin", "UTC").

Daylight-saving time: a scheduled time is a wall-clock time, so "20:00 Berlin" stays 20:00 in
Berlin in summer and in winter (the turn that spans the change is an hour shorter or longer).
A time the change skips (02:30 on the night clocks go forward) ends the turn as much later as
the gap is long (03:30 summer time); a time that happens twice (02:30 on the night clocks go
back) ends it at the first of the two (02:30 summer time). These are Python's rules for a
local time with ``fold=0`` (PEP 495); a time never ends two turns.

Pure: no clock is read here; every question takes the time it is asked at (Unix seconds).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

DAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
DAY_FULL_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
EVERY_DAY = ("daily", "*")
_TIME = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")
MAX_ENTRIES = 50


class ScheduleError(ValueError):
    """A schedule or time zone that cannot be used; the message says what is wrong, in one line."""


@dataclass(frozen=True, slots=True)
class ScheduleEntry:
    days: frozenset[int]  # 0 = Monday
    times: tuple[time, ...]


@dataclass(frozen=True, slots=True)
class CalendarSchedule:
    """A parsed schedule in its zone; `next_end(after)` is the question the timer asks."""

    entries: tuple[ScheduleEntry, ...]
    zone: ZoneInfo

    @classmethod
    def parse(cls, text: str, zone_name: str) -> CalendarSchedule:
        return cls(parse_entries(text), time_zone(zone_name))

    def next_end(self, after: float) -> float:
        """The first scheduled moment strictly later than `after` (Unix seconds)."""
        local = datetime.fromtimestamp(after, self.zone)
        candidates = (
            moment
            # From the day before (a zone offset never reaches further) to eight days on (every
            # weekday comes again).
            for offset in range(-1, 9)
            for day in (local.date() + timedelta(days=offset),)
            for entry in self.entries
            if day.weekday() in entry.days
            for at in entry.times
            for moment in (datetime.combine(day, at, tzinfo=self.zone).timestamp(),)
            if moment > after
        )
        return min(candidates)

    def describe(self) -> str:
        """The schedule written back in its normal form, with its zone."""
        return f"{normal_form(self.entries)} ({self.zone.key})"


def time_zone(name: str) -> ZoneInfo:
    """The zone of an IANA name; ScheduleError for a name zoneinfo does not know."""
    if not name or name != name.strip() or ".." in name or name.startswith("/"):
        raise ScheduleError(f"time zone {name!r} is not an IANA zone name like Europe/Berlin or UTC")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ScheduleError(f"unknown time zone {name!r} (an IANA name like Europe/Berlin or UTC)") from None


def parse_entries(text: str) -> tuple[ScheduleEntry, ...]:
    """Read a schedule's text (see the module docstring); ScheduleError names the bad part."""
    parts = [part.strip() for part in text.split(";")]
    if not text.strip() or not any(parts):
        raise ScheduleError('it is empty (e.g. "Mon,Wed,Fri 20:00")')
    if len(parts) > MAX_ENTRIES:
        raise ScheduleError(f"more than {MAX_ENTRIES} entries")
    entries = []
    for part in parts:
        if not part:
            continue
        words = part.split()
        if len(words) == 1:
            days_text, times_text = "daily", words[0]
        elif len(words) == 2:
            days_text, times_text = words
        else:
            raise ScheduleError(f"entry {part!r}: expected DAYS TIMES, like Mon,Wed,Fri 20:00")
        entries.append(ScheduleEntry(_days(days_text, part), _times(times_text, part)))
    return tuple(entries)


def _days(text: str, entry: str) -> frozenset[int]:
    if text.lower() in EVERY_DAY:
        return frozenset(range(7))
    days: set[int] = set()
    for item in text.split(","):
        ends = item.split("-")
        if len(ends) > 2:
            raise ScheduleError(f"entry {entry!r}: {item!r} is not a day or a range of days")
        first, last = (_day(end, entry) for end in (ends[0], ends[-1]))
        day = first
        days.add(day)
        while day != last:
            day = (day + 1) % 7
            days.add(day)
    return frozenset(days)


def _day(text: str, entry: str) -> int:
    word = text.strip().lower()
    for index, name in enumerate(DAY_FULL_NAMES):
        if word in (name, name[:3]):
            return index
    raise ScheduleError(f"entry {entry!r}: {text!r} is not a day (Mon Tue Wed Thu Fri Sat Sun, or daily)")


def _times(text: str, entry: str) -> tuple[time, ...]:
    times = set()
    for item in text.split(","):
        match = _TIME.match(item.strip())
        if match is None:
            raise ScheduleError(f"entry {entry!r}: {item!r} is not a time HH:MM (00:00 to 23:59)")
        times.add(time(int(match.group(1)), int(match.group(2))))
    return tuple(sorted(times))


def normal_form(entries: tuple[ScheduleEntry, ...]) -> str:
    """Entries written back: days in week order, times sorted ("Mon,Wed,Fri 20:00")."""
    written = []
    for entry in entries:
        days = "daily" if len(entry.days) == 7 else _day_ranges(entry.days)
        written.append(days + " " + ",".join(t.strftime("%H:%M") for t in entry.times))
    return "; ".join(written)


def _day_ranges(days: frozenset[int]) -> str:
    """Days in week order, three or more in a row as a range: "Mon-Fri", "Mon,Wed,Fri"."""
    runs: list[list[int]] = []
    for day in sorted(days):
        if runs and runs[-1][-1] == day - 1:
            runs[-1].append(day)
        else:
            runs.append([day])
    return ",".join(
        f"{DAY_NAMES[run[0]]}-{DAY_NAMES[run[-1]]}" if len(run) >= 3 else ",".join(DAY_NAMES[d] for d in run)
        for run in runs
    )
