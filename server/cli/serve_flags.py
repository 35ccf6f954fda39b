"""What `tae-server serve` says about game flags it did not apply.

`serve --seed/--turn-length/--timer/--map` set up the open game the server creates when its
database has none. Once that game exists, they change nothing: this module words one line per
such flag, saying what the game has and how to change it (`tae-server set`), or that it cannot
change (a game's seed and map are fixed at creation). The runner prints the lines on stderr.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from server.model.store import GameSetup

# serve's game flags → the name `tae-server set` knows (None: fixed when the game is created)
SETTABLE = {"turn_length": "turn_length", "timer": "timer", "seed": None, "map": None}
FLAG_NAMES = {"turn_length": "--turn-length", "timer": "--timer", "seed": "--seed", "map": "--map"}


def unapplied_flags(
    requested: Mapping[str, Any], wanted: GameSetup, game: GameSetup | None, game_name: str
) -> list[str]:
    """One line per flag of `requested` that `game` (the existing open game, None when the
    database has games but none named `game_name`) does not have. `wanted` is the setup the
    flags asked for (its map text read from the file)."""
    lines = []
    for key, value in requested.items():
        flag = f"{FLAG_NAMES[key]} {value}"
        if game is None:
            lines.append(
                f"{flag} not applied: the database has games but none named {game_name!r} "
                f"(tae-server create-game {game_name} {FLAG_NAMES[key]} {value})"
            )
            continue
        has, asked = _values(key, game), _values(key, wanted)
        if has == asked:
            continue
        if key == "map":
            has = "its own map" if game.map_text else "the standard map"
        setting = SETTABLE[key]
        if setting is None:
            lines.append(
                f"{flag} not applied: game {game.name!r} exists with {_named(key, has)} "
                f"and a game's {key} "
                f"never changes (a new game: tae-server create-game NAME {FLAG_NAMES[key]} {value})"
            )
        else:
            lines.append(
                f"{flag} not applied: game {game.name!r} exists with {key} {has}; to change it: "
                f"tae-server set {game.name} {setting} {value}"
            )
    return lines


def _values(key: str, setup: GameSetup) -> Any:
    if key == "seed":
        return setup.seed
    if key == "map":
        return setup.map_text
    if key == "timer":
        return setup.timer.kind
    return setup.timer.turn_length


def _named(key: str, value: Any) -> str:
    return str(value) if key == "map" else f"{key} {value}"
