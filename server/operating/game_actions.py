"""Operator actions on a live game, shared by every way an operator reaches a game.

The running server's request desk (`server.operating.desk`), the command-line tools working on a
database without a server (`server.operating.on_database`) and the admin protocol all carry an action out
through these functions, which go through the game service like any player's request: an added
player gets the same Welcome messages as one who joined over the network. Every failure the
operator should read is an `OperationError` with a one-line message.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from ruleset import Phase
from server.game.game import Game
from server.model.refusals import Refused, clipped
from server.model.store import GameSetup
from server.model.timer_settings import BASIC_ZERO, TIMER_KINDS, NoDeadline, TimerSettings, TimerSettingsError
from server.views.board.operator_notices import in_words


class OperationError(Exception):
    """An operation that could not be done; the message is one line for the operator."""


async def add_player_to(game: Game, payload: dict[str, Any]) -> str:
    """Add an account through the game service (it gets the Welcome messages); idempotent for
    the same name and password hash, so a request carried out twice adds one player."""
    username = payload["username"]
    existing = game.accounts.get(username)
    if existing is not None:
        if existing.password_hash == payload["password_hash"]:
            return f"player {username!r} is player {existing.player_id} of game {game.setup.name!r}"
        raise OperationError(f"game {game.setup.name!r} already has a player named {username!r}")
    await game.ready()
    try:
        player = await game.create_account(
            username,
            "",
            payload.get("email", ""),
            payload.get("comment", ""),
            creation_setting_applies=False,
            password_hash=payload["password_hash"],
        )
    except Refused as refused:
        raise OperationError(
            f"cannot add {username!r} to game {game.setup.name!r}: {refused.message}"
        ) from None
    return f"player {username!r} added to game {game.setup.name!r} as player {player}"


async def set_password_of(game: Game, payload: dict[str, Any]) -> str:
    """Give a player a new password (its hash, made by the operator's command); doing it twice
    sets the same hash again."""
    username = payload["username"]
    await game.ready()
    try:
        player = await game.set_password(username, password_hash=payload["password_hash"])
    except Refused:
        raise OperationError(f"game {game.setup.name!r} has no player named {clipped(username)}") from None
    name = game.snapshot.usernames.get(player, username)
    return f"password of player {name!r} (player {player}) of game {game.setup.name!r} changed"


async def remove_player_from(game: Game, username: str) -> str:
    """Remove a player (every player is told); removing them again says so."""
    await game.ready()
    known = game.player_id(username)
    already = known is not None and known in game.removed_players
    try:
        player = await game.remove_player(username)
    except Refused:
        raise OperationError(f"game {game.setup.name!r} has no player named {username!r}") from None
    if already:
        return f"player {username!r} (player {player}) was already removed from game {game.setup.name!r}"
    return f"player {username!r} (player {player}) removed from game {game.setup.name!r}"


async def end_turn_of(game: Game, turn: int | None = None) -> str:
    """End the open turn now (or, given `turn`, make sure that turn has ended). Turns are
    numbered as the TP Universe counts them: the open turn is `game.state.turn`."""
    turn = game.state.turn if turn is None else turn
    if game.state.turn > turn:
        return f"turn {turn} of game {game.setup.name!r} has ended; the game is at turn {game.state.turn}"
    if game.state.phase is Phase.OVER:
        raise OperationError(f"game {game.setup.name!r} is over")
    await game.end_turn()
    if game.state.turn <= turn:
        raise OperationError(f"turn {turn} of game {game.setup.name!r} did not end (see the server log)")
    return f"turn {turn} of game {game.setup.name!r} ended" + (
        " and the game is over" if game.state.phase is Phase.OVER else f"; turn {game.state.turn} begins"
    )


# -- the clock and the settings ------------------------------------------------------------------


async def pause_game(game: Game) -> str:
    """Stop the game's turn clock until `resume_game` (nothing but an operator ends a turn)."""
    if game.state.phase is Phase.OVER:
        raise OperationError(f"game {game.setup.name!r} is over")
    await game.ready()
    if not await game.pause():
        return f"game {game.setup.name!r} is paused already"
    left = game.snapshot.paused_left
    if left is not None:
        kept = f"{in_words(left)} left in turn {game.state.turn}"
    elif game.timer.gives_turns_a_deadline():
        kept = "the turn has no deadline yet: it gets its time when the game resumes"
    else:
        kept = "the turn has no deadline"
    return f"game {game.setup.name!r} paused ({kept}); players were told"


async def resume_game(game: Game) -> str:
    """Start a paused clock again with the time that was left."""
    await game.ready()
    if not await game.resume_clock():
        return f"game {game.setup.name!r} is not paused"
    return f"game {game.setup.name!r} resumed ({_time_left(game)}); players were told"


async def extend_game(game: Game, seconds: float) -> str:
    """Move the open turn's deadline `seconds` later (also while paused)."""
    if seconds <= 0:
        raise OperationError("the extension must be longer than 0 s")
    await game.ready()
    if game.state.phase is Phase.OVER:
        raise OperationError(f"cannot extend game {game.setup.name!r}: the game is over")
    try:
        await game.extend(seconds)
    except NoDeadline as error:
        if game.paused and game.timer.gives_turns_a_deadline():
            raise OperationError(
                f"game {game.setup.name!r} is paused and its open turn has no deadline yet: the turn "
                f"gets its time when it resumes (`tae-server resume {game.setup.name}`); extend it then"
            ) from None
        raise OperationError(
            f"game {game.setup.name!r}: {error} (give it one with `tae-server set "
            f"{game.setup.name} turn_length DURATION`)"
        ) from None
    if game.paused:
        left = game.snapshot.paused_left or 0
        told = f"paused, {in_words(left)} left when resumed"
    else:
        told = _time_left(game)
    return f"turn {game.state.turn} of game {game.setup.name!r} extended by {in_words(seconds)} ({told})"


async def set_setting_of(game: Game, key: str, value: str) -> str:
    """Change one setting of a running game (SETTINGS lists them), checked first."""
    if game.state.phase is Phase.OVER:
        raise OperationError(f"cannot change game {game.setup.name!r}: the game is over")
    setup, what = changed_setup(game.setup, key, value, players=len(game.state.players))
    await game.ready()
    if setup == game.setup:
        return f"game {game.setup.name!r}: {what} already"
    clock_touched = setup.timer.moves_the_clock_from(game.setup.timer)
    try:
        await game.change_setup(setup, what)
    except TimerSettingsError as error:
        raise OperationError(f"game {game.setup.name!r}: {error}") from None
    left = f"; {_time_left(game)}" if clock_touched else ""
    return f"game {game.setup.name!r}: {what}{left}; players were told"


async def reinstate_player_in(game: Game, username: str) -> str:
    """Take back a player's removal."""
    await game.ready()
    try:
        player, was_removed = await game.reinstate_player(username)
    except Refused:
        raise OperationError(f"game {game.setup.name!r} has no player named {clipped(username)}") from None
    name = game.snapshot.usernames.get(player, username)
    if not was_removed:
        return f"player {name!r} (player {player}) of game {game.setup.name!r} was not removed"
    return f"player {name!r} (player {player}) reinstated in game {game.setup.name!r}"


def _time_left(game: Game) -> str:
    snapshot = game.snapshot
    if snapshot.paused:
        return "paused"
    seconds = snapshot.seconds_left(game.clock.seconds())
    if seconds >= 0:
        return f"turn {game.state.turn} ends in {in_words(seconds)}"
    if not snapshot.started and game.timer.gives_turns_a_deadline():
        return "no deadline yet: the turn clock starts with the game"
    return "no deadline"


# -- reading the operator's values ------------------------------------------------------------------

_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([dhms]?)", re.IGNORECASE)
_UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1, "": 1}
MAX_DURATION_S = 366 * 86400


def parse_duration(text: str) -> int:
    """Seconds of a duration written "90m", "2h", "1d", "1h30m", "45s" or "3600"."""
    compact = text.strip().replace(" ", "")
    position, total = 0, 0.0
    if not compact:
        raise OperationError(f"{text!r} is not a duration (like 90m, 2h, 1d, 1h30m or 3600)")
    while position < len(compact):
        match = _DURATION.match(compact, position)
        if match is None or match.end() == position:
            raise OperationError(f"{text!r} is not a duration (like 90m, 2h, 1d, 1h30m or 3600)")
        total += float(match.group(1)) * _UNITS[match.group(2).lower()]
        position = match.end()
    if total > MAX_DURATION_S:
        raise OperationError(f"{text!r} is longer than a year")
    return int(round(total))


SETTINGS = {
    "timer": "the timer kind: " + ", ".join(TIMER_KINDS),
    "turn_length": "seconds (or 90m, 2h, 1d) per turn; calendar: the shortest turn; 0 = none",
    "turn_players_min": "players needed before turns start",
    "turn_player_threshold": "threshold timer: percent of players who must finish",
    "turn_length_over_threshold": "threshold timer: seconds once over the threshold",
    "turn_length_under_threshold": "threshold timer: seconds under the threshold (0 = none)",
    "schedule": 'calendar timer: when turns end, e.g. "Mon,Wed,Fri 20:00"',
    "time_zone": "calendar timer: the schedule's zone, e.g. Europe/Berlin",
    "finish_early": "calendar timer: end the turn when everyone has finished (yes/no)",
    "max_players": "players allowed (0 = no limit)",
    "account_creation": "players may create accounts (yes/no)",
    "auto_add": "a login with an unknown name creates the account (yes/no)",
}
_DURATIONS = ("turn_length", "turn_length_over_threshold", "turn_length_under_threshold")
_COUNTS = ("turn_players_min", "turn_player_threshold", "max_players")
_SWITCHES = ("finish_early", "account_creation", "auto_add")
_YES, _NO = ("yes", "true", "on", "1"), ("no", "false", "off", "0")
# Said of a calendar timer's setting changed while the game has another timer.
_CALENDAR_ONLY = " (a calendar timer setting: it applies once the timer is calendar; the timer is {})"


def _with_number(timer: TimerSettings, name: str, number: int) -> TimerSettings:
    """The timer with one of its whole-number settings changed."""
    numbers = {field: getattr(timer, field) for field in _DURATIONS + _COUNTS if field != "max_players"}
    numbers[name] = number
    return replace(timer, **numbers)


def changed_setup(setup: GameSetup, key: str, value: str, *, players: int) -> tuple[GameSetup, str]:
    """The setup with one setting changed, and the change in words; OperationError for an
    unknown key or a value that cannot be used (the timer's own check included)."""
    name = key.strip().lower().replace("-", "_")
    if name not in SETTINGS:
        raise OperationError(f"no setting {key!r} (settings: {', '.join(SETTINGS)})")
    text = value.strip()
    timer = setup.timer
    if name == "timer":
        if text not in TIMER_KINDS:
            raise OperationError(f"timer must be one of {', '.join(TIMER_KINDS)}, not {value!r}")
        if text == "calendar" and not timer.schedule.strip():
            raise OperationError(
                "the calendar timer needs a schedule: first "
                f'`tae-server set {setup.name} schedule "Mon,Wed,Fri 20:00"`'
            )
        timer = replace(timer, kind=text)
        what = f"the timer is now {text}"
        if text == "basic" and not timer.turn_length:
            what += f" ({BASIC_ZERO})"
    elif name in _DURATIONS:
        if text.startswith("-"):
            raise OperationError(f"{name} cannot be negative")
        seconds = parse_duration(text)
        timer = _with_number(timer, name, seconds)
        what = f"{name} is now {in_words(seconds) if seconds else 'none'}"
        if name == "turn_length" and not seconds and timer.kind == "basic":
            what = f"turn_length is now 0: {BASIC_ZERO}"
    elif name in _COUNTS:
        if text.startswith("-"):
            raise OperationError(f"{name} cannot be negative")
        if not text.isdigit():
            raise OperationError(f"{name} must be a whole number ≥ 0, not {value!r}")
        number = int(text)
        if name == "max_players":
            if number and number < players:
                raise OperationError(
                    f"max_players cannot be {number}: the game has {players} players already"
                )
            return replace(setup, max_players=number), (
                f"at most {number} players" if number else "no limit on players"
            )
        timer = _with_number(timer, name, number)
        what = f"{name} is now {number}"
    elif name in _SWITCHES:
        if text.lower() not in _YES + _NO:
            raise OperationError(f"{name} must be yes or no, not {value!r}")
        on = text.lower() in _YES
        if name == "finish_early":
            timer = replace(timer, finish_early=on)
            what = "the calendar timer " + (
                "ends a turn early when everyone has finished" if on else "never ends a turn early"
            )
            if timer.kind != "calendar":
                what = f"finish_early is now {'yes' if on else 'no'}" + _CALENDAR_ONLY.format(timer.kind)
        else:
            words = {
                "account_creation": ("players may create accounts", "players can no longer create accounts"),
                "auto_add": ("a login with a new name creates the account", "a login needs an account"),
            }[name]
            changed = (
                replace(setup, auto_add=on) if name == "auto_add" else replace(setup, account_creation=on)
            )
            return changed, words[0 if on else 1]
    elif name == "schedule":
        timer = replace(timer, schedule=text)
        what = f"turns end {text} ({timer.time_zone})"
    else:
        timer = replace(timer, time_zone=text)
        what = f"the schedule's time zone is now {text}"
    try:
        timer = timer.validate()
    except TimerSettingsError as error:
        raise OperationError(str(error)) from None
    if name == "schedule":
        what = f"turns end {timer.calendar.describe()}"
    if name in ("schedule", "time_zone") and timer.kind != "calendar":
        what = ("the calendar schedule is now: " if name == "schedule" else "") + what
        what += _CALENDAR_ONLY.format(timer.kind)
    return replace(setup, timer=timer), what


async def _extend_request(game: Game, payload: dict[str, Any]) -> str:
    return await extend_game(game, float(payload["seconds"]))


async def _set_request(game: Game, payload: dict[str, Any]) -> str:
    return await set_setting_of(game, str(payload["key"]), str(payload["value"]))


async def _reinstate_request(game: Game, payload: dict[str, Any]) -> str:
    return await reinstate_player_in(game, str(payload["username"]))


async def _pause_request(game: Game, payload: dict[str, Any]) -> str:
    return await pause_game(game)


async def _resume_request(game: Game, payload: dict[str, Any]) -> str:
    return await resume_game(game)


# The operator requests of the clock and the settings: request kind → what carries it out, the
# same whether the running server's desk or a command without a server does it.
CONTROLS = {
    "pause": _pause_request,
    "resume": _resume_request,
    "extend": _extend_request,
    "set": _set_request,
    "reinstate": _reinstate_request,
}
