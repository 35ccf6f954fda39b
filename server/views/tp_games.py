"""The frames that describe a game as a whole: Game (GetGames) and TimeRemaining.

Both read one snapshot and the time `now` (the game clock's), given by the caller.
"""

from __future__ import annotations

from importlib import metadata

import protocol as tp
from protocol import Version
from protocol.records import GameConnection, GameParam
from ruleset import Phase

from ..snapshot import GameSnapshot
from .universe import universe_of


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
    seconds = snapshot.seconds_left(now)
    next_turn = int(now) + seconds if seconds >= 0 else 0
    params = (
        GameParam(P.SHORT_NAME, setup.name, 0),
        GameParam(P.LONG_NAME, setup.description or setup.name, 0),
        GameParam(P.PLAYERS, "", len(snapshot.state.players)),
        GameParam(P.OBJECTS, "", len(universe_of(snapshot).ids)),
        GameParam(P.TURN, "", snapshot.state.turn),
        GameParam(P.NEXT_TURN, "", next_turn),
        GameParam(P.PERIOD, "", setup.timer.turn_length),
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


def turn_title(snapshot: GameSnapshot) -> str:
    """The name of the open turn, as TP04's TimeRemaining carries it: the number is the
    Universe's turn counter, the one every TP client shows (docs/operating.md, "Turn numbers")."""
    state = snapshot.state
    if state.phase is Phase.OVER:
        return "Game over"
    name = f"Turn {state.turn}"
    return name + " (combat)" if state.phase is Phase.COMBAT else name


def time_remaining(snapshot: GameSnapshot, version: Version, seconds: int, reason: int) -> tp.TimeRemaining:
    """TimeRemaining: TP03 has the seconds only; TP04 adds the reason, the turn, its name and
    the players still being waited for."""
    if version == Version.TP03:
        return tp.TimeRemaining(seconds)
    return tp.TimeRemaining(
        seconds, reason, snapshot.state.turn, turn_title(snapshot), snapshot.waiting_for()
    )
