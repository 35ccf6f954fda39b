"""The settings of a game an operator may change (`tae-server set GAME KEY VALUE`, the admin
protocol's `set`), each declared once: its key, the type of its value with its bounds
(`server.operating.arguments`), what it means, the `create-game` option that gives it to a new
game, and how it changes a game's setup, in words for the operator and the players.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from server.model.store import GameSetup
from server.model.timer_settings import BASIC_ZERO, TIMER_KINDS, TimerSettings, TimerSettingsError
from server.operating.arguments import (
    ArgumentRefused,
    ArgumentType,
    Duration,
    OneOf,
    Text,
    WholeNumber,
    YesNo,
)
from server.operating.game_actions import OperationError
from server.views.board.operator_notices import in_words

# Said of a calendar timer's setting changed while the game has another timer.
_CALENDAR_ONLY = " (a calendar timer setting: it applies once the timer is calendar; the timer is {})"

Change = Callable[[GameSetup, Any, int], tuple[GameSetup, str]]


@dataclass(frozen=True, slots=True)
class Setting:
    """One setting: `key` (as in `[game]` of the configuration), its `value` type, a `summary`,
    the `flag` of `create-game` (a yes/no setting gets `--flag/--no-flag`) and `change`, which
    gives the changed setup and the change in words (OperationError when it cannot work with
    the rest of the setup: `players` is how many the game has)."""

    key: str
    value: ArgumentType
    summary: str
    flag: str
    change: Change


def _timer(setup: GameSetup, kind: str, players: int) -> tuple[GameSetup, str]:
    timer = setup.timer
    if kind == "calendar" and not timer.schedule.strip():
        raise OperationError(
            "the calendar timer needs a schedule: first "
            f'`tae-server set {setup.name} schedule "Mon,Wed,Fri 20:00"`'
        )
    timer = replace(timer, kind=kind)
    what = f"the timer is now {kind}"
    if kind == "basic" and not timer.turn_length:
        what += f" ({BASIC_ZERO})"
    return _with_timer(setup, timer, what)


def _timer_number(key: str) -> Change:
    """A change of one of the timer's numbers (seconds or a count)."""

    def change(setup: GameSetup, number: int, players: int) -> tuple[GameSetup, str]:
        numbers: dict[str, Any] = {key: number}
        timer = replace(setup.timer, **numbers)
        if key.startswith("turn_length"):
            what = f"{key} is now {in_words(number) if number else 'none'}"
            if key == "turn_length" and not number and timer.kind == "basic":
                what = f"turn_length is now 0: {BASIC_ZERO}"
        else:
            what = f"{key} is now {number}"
        return _with_timer(setup, timer, what)

    return change


def _schedule(setup: GameSetup, text: str, players: int) -> tuple[GameSetup, str]:
    timer = _validated(replace(setup.timer, schedule=text.strip()))
    what = f"turns end {timer.calendar.describe()}"
    if timer.kind != "calendar":
        what = "the calendar schedule is now: " + what + _CALENDAR_ONLY.format(timer.kind)
    return replace(setup, timer=timer), what


def _time_zone(setup: GameSetup, text: str, players: int) -> tuple[GameSetup, str]:
    timer = _validated(replace(setup.timer, time_zone=text.strip()))
    what = f"the schedule's time zone is now {timer.time_zone}"
    if timer.kind != "calendar":
        what += _CALENDAR_ONLY.format(timer.kind)
    return replace(setup, timer=timer), what


def _finish_early(setup: GameSetup, on: bool, players: int) -> tuple[GameSetup, str]:
    timer = replace(setup.timer, finish_early=on)
    if timer.kind == "calendar":
        what = "the calendar timer " + (
            "ends a turn early when everyone has finished" if on else "never ends a turn early"
        )
    else:
        what = f"finish_early is now {'yes' if on else 'no'}" + _CALENDAR_ONLY.format(timer.kind)
    return _with_timer(setup, timer, what)


def _max_players(setup: GameSetup, number: int, players: int) -> tuple[GameSetup, str]:
    if number and number < players:
        raise OperationError(f"max_players cannot be {number}: the game has {players} players already")
    return replace(setup, max_players=number), (
        f"at most {number} players" if number else "no limit on players"
    )


def _account_creation(setup: GameSetup, on: bool, players: int) -> tuple[GameSetup, str]:
    words = "players may create accounts" if on else "players can no longer create accounts"
    return replace(setup, account_creation=on), words


def _auto_add(setup: GameSetup, on: bool, players: int) -> tuple[GameSetup, str]:
    words = "a login with a new name creates the account" if on else "a login needs an account"
    return replace(setup, auto_add=on), words


def _validated(timer: TimerSettings) -> TimerSettings:
    try:
        return timer.validate()
    except TimerSettingsError as error:
        raise OperationError(str(error)) from None


def _with_timer(setup: GameSetup, timer: TimerSettings, what: str) -> tuple[GameSetup, str]:
    return replace(setup, timer=_validated(timer)), what


SETTINGS: tuple[Setting, ...] = (
    Setting("timer", OneOf("timer", TIMER_KINDS, metavar="KIND"), "the timer kind", "timer", _timer),
    Setting(
        "turn_length",
        Duration("turn_length"),
        "per turn; 0: none (basic: 60 s turns); calendar: the shortest turn",
        "turn-length",
        _timer_number("turn_length"),
    ),
    Setting(
        "turn_players_min",
        WholeNumber("turn_players_min"),
        "players needed before turns start",
        "players-min",
        _timer_number("turn_players_min"),
    ),
    Setting(
        "turn_player_threshold",
        WholeNumber("turn_player_threshold", maximum=100, metavar="PERCENT"),
        "threshold timer: percent of players who must finish",
        "threshold",
        _timer_number("turn_player_threshold"),
    ),
    Setting(
        "turn_length_over_threshold",
        Duration("turn_length_over_threshold"),
        "threshold timer: the turn's length once over the threshold",
        "over",
        _timer_number("turn_length_over_threshold"),
    ),
    Setting(
        "turn_length_under_threshold",
        Duration("turn_length_under_threshold"),
        "threshold timer: the turn's length under the threshold (0: no deadline)",
        "under",
        _timer_number("turn_length_under_threshold"),
    ),
    Setting(
        "schedule",
        Text("schedule", longest=200, metavar="WHEN"),
        'calendar timer: when turns end, e.g. "Mon,Wed,Fri 20:00" or "Mon-Fri 08:00,20:00; Sat 12:00"',
        "schedule",
        _schedule,
    ),
    Setting(
        "time_zone",
        Text("time_zone", longest=64, metavar="ZONE"),
        "calendar timer: the schedule's zone, e.g. Europe/Berlin (default UTC)",
        "time-zone",
        _time_zone,
    ),
    Setting(
        "finish_early",
        YesNo("finish_early"),
        "calendar timer: a turn ends early when everyone has finished",
        "finish-early",
        _finish_early,
    ),
    Setting(
        "max_players",
        WholeNumber("max_players"),
        "players allowed (0: no limit; never fewer than the game has)",
        "max-players",
        _max_players,
    ),
    Setting(
        "account_creation",
        YesNo("account_creation"),
        "players may create their own accounts",
        "account-creation",
        _account_creation,
    ),
    Setting(
        "auto_add",
        YesNo("auto_add"),
        "a login with an unknown name creates the account",
        "auto-add",
        _auto_add,
    ),
)

BY_KEY: Mapping[str, Setting] = {setting.key: setting for setting in SETTINGS}


def setting_named(key: str) -> Setting:
    """The setting a key names ("turn-length" and "Turn_Length" name turn_length too)."""
    setting = BY_KEY.get(key.strip().lower().replace("-", "_"))
    if setting is None:
        shown = key if len(key) <= 40 else key[:37] + "..."
        raise ArgumentRefused(f"no setting {shown!r} (settings: {', '.join(BY_KEY)})")
    return setting


def changed_setup(setup: GameSetup, key: str, value: str, *, players: int) -> tuple[GameSetup, str]:
    """The setup with one setting changed, and the change in words; ArgumentRefused for an
    unknown key or a value its type refuses, OperationError for one that cannot work with the
    rest of the setup (the timer's own check included)."""
    setting = setting_named(key)
    return setting.change(setup, setting.value.parse(value), players)
