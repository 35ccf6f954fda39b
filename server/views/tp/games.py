"""The frames that describe a game as a whole: Game (GetGames) and TimeRemaining.

Both read one snapshot and the time `now` (the game clock's), given by the caller.
"""

from __future__ import annotations

import functools
from importlib import metadata

import protocol as tp
from protocol import Version
from protocol.records import GameConnection, GameParam
from ruleset import Phase
from server.model.calendar_schedule import CalendarSchedule, ScheduleError
from server.model.snapshot import GameSnapshot
from server.model.timer_settings import LONGEST_WAIT_S, TimerSettings
from server.views.tp.universe import universe_of


def _installed_version() -> str:
    try:
        return metadata.version("tpserver-tae")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


SERVER_VERSION = _installed_version()
SERVER_TYPE = "tpserver-tae"
RULESET_NAME = "TaE"
RULESET_VERSION = "0.01"


def game_frame(snapshot: GameSnapshot, host: str, port: int, now: float) -> tp.Game:
    """The Game frame of GetGames (TP04): names, players, objects, turn, next turn, period."""
    P = tp.GameParamId
    setup = snapshot.setup
    seconds = wire_seconds(snapshot.seconds_left(now))
    next_turn = min(int(now) + seconds, U32_MAX) if seconds >= 0 else 0
    params = (
        GameParam(P.SHORT_NAME, setup.name, 0),
        GameParam(P.LONG_NAME, setup.description or setup.name, 0),
        GameParam(P.PLAYERS, "", len(snapshot.state.players)),
        GameParam(P.OBJECTS, "", len(universe_of(snapshot).ids)),
        GameParam(P.TURN, "", snapshot.state.turn),
        GameParam(P.NEXT_TURN, "", next_turn),
        GameParam(P.PERIOD, "", min(turn_period(setup.timer, now), LONGEST_WAIT_S)),
    )
    connections = (GameConnection("tp", host, host, port),)
    return tp.Game(
        setup.name,
        "",
        ("0.3", "0.4"),
        SERVER_VERSION,
        SERVER_TYPE,
        RULESET_NAME,
        RULESET_VERSION,
        connections,
        params,
        "",
        setup.ctime,
    )


WEEK_S = 7 * 86400


def turn_period(timer: TimerSettings, now: float) -> int:
    """The Game frame's period: seconds per turn. A calendar's is the mean gap between its
    scheduled ends over the coming week (at least `turn_length`); other timers' is
    `turn_length` (0: none)."""
    if timer.kind != "calendar" or not timer.schedule.strip():
        return timer.turn_length
    return max(timer.turn_length, _calendar_period(timer.schedule, timer.time_zone, int(now) // 3600 * 3600))


@functools.lru_cache(maxsize=256)
def _calendar_period(schedule: str, zone: str, hour: float) -> int:
    try:
        calendar = CalendarSchedule.parse(schedule, zone)
    except (ScheduleError, ValueError, KeyError):  # a stored setting was checked; be safe anyway
        return 0
    ends, moment = 0, hour
    while True:
        moment = calendar.next_end(moment)
        if moment > hour + WEEK_S:
            break
        ends += 1
    return WEEK_S // ends if ends else 0


def turn_title(snapshot: GameSnapshot) -> str:
    """The name of the open turn, as TP04's TimeRemaining carries it: the number is the
    Universe's turn counter, the one every TP client shows (docs/operating.md, "Turn numbers")."""
    state = snapshot.state
    if state.phase is Phase.OVER:
        return "Game over"
    name = f"Turn {state.turn}"
    return name + " (combat)" if state.phase is Phase.COMBAT else name


U32_MAX = 2**32 - 1


def wire_seconds(seconds: int) -> int:
    """Seconds as a TP frame carries them: -1 (no timer) for anything negative, at most
    `LONGEST_WAIT_S`. The turn timer never makes more (`server.game.timer`); this keeps a frame
    encodable whatever a snapshot says."""
    return -1 if seconds < 0 else min(int(seconds), LONGEST_WAIT_S)


def time_remaining(snapshot: GameSnapshot, version: Version, seconds: int, reason: int) -> tp.TimeRemaining:
    """TimeRemaining: TP03 has the seconds only; TP04 adds the reason, the turn, its name and
    the players still being waited for. The seconds are cut to what both versions carry."""
    seconds = wire_seconds(seconds)
    if version == Version.TP03:
        return tp.TimeRemaining(seconds)
    return tp.TimeRemaining(
        seconds, reason, snapshot.state.turn, turn_title(snapshot), snapshot.waiting_for()
    )
