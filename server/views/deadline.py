"""A turn's deadline as every surface shows it: one rendering, so that a deadline reads the same
on the pages, in the JSON API, in notifications and in the operator's status.

* `deadline_fields(deadline, now)`: `{"deadline": ISO 8601 with its UTC offset, or None,
  "seconds_left": whole seconds, -1 without a deadline}`; documents carry both, side by side.
* `deadline_words(deadline, now, zone)`: one line for people, "Tue 14 May 2024, 18:20 UTC
  (in 3 h 12 min)"; "no deadline" without one. Give `zone` (a `tzinfo`) to write it in another
  time zone (a calendar game's own, an operator's); the default is UTC, which every reader can
  place. Browsers turn the ISO form into their own local date and time (`/static/live.js`).
* `in_words(seconds)`: a duration for people, "3 h 12 min", "1 d 4 h", "45 s".

`deadline` is the game clock's time (`GameSnapshot.deadline`: Unix time on a real reactor);
`now` is passed in (domain code never reads the clock).
"""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from typing import Any


def seconds_left(deadline: float | None, now: float) -> int:
    """Whole seconds until `deadline`, never below 0; -1 without a deadline."""
    if deadline is None:
        return -1
    return max(0, int(round(deadline - now)))


def deadline_iso(deadline: float | None, zone: tzinfo = UTC) -> str | None:
    """ISO 8601 to the second, with its UTC offset: "2024-05-14T18:20:00+00:00"."""
    if deadline is None:
        return None
    return datetime.fromtimestamp(round(deadline), zone).isoformat()


def deadline_fields(deadline: float | None, now: float) -> dict[str, Any]:
    return {"seconds_left": seconds_left(deadline, now), "deadline": deadline_iso(deadline)}


def in_words(seconds: float) -> str:
    """A duration for people: "45 s", "12 min 30 s", "3 h 12 min", "1 d 4 h"."""
    seconds = max(0, int(round(seconds)))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h" if hours else f"{days} d"
    if hours:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    if minutes:
        return f"{minutes} min {secs} s" if secs else f"{minutes} min"
    return f"{secs} s"


def local_time_words(moment: datetime) -> str:
    """ "Tue 14 May 2024, 18:20 UTC": the weekday, the date and the time of day, with the zone's
    abbreviation (or its offset when it has none)."""
    zone = moment.tzname() or moment.strftime("%z")
    if zone.startswith(("+", "-")) and len(zone) == 5:
        zone = f"UTC{zone[:3]}:{zone[3:]}"
    return f"{moment.strftime('%a')} {moment.day} {moment.strftime('%b %Y, %H:%M')} {zone}"


def deadline_words(deadline: float | None, now: float, zone: tzinfo = UTC) -> str:
    """The deadline for people: its date and time in `zone` and the time left."""
    if deadline is None:
        return "no deadline"
    moment = datetime.fromtimestamp(round(deadline), zone)
    return f"{local_time_words(moment)} (in {in_words(seconds_left(deadline, now))})"
