"""The commands an admin client can run: their descriptions on the wire and how each one runs.

Each `AdminCommand` is one CommandDesc (id, name, help, parameters) and a function that turns
the decoded arguments into a call to the `OperatorBackend` and its answer into the text of the
CommandResult. Names are lower case with dashes, the same as the `tae-server` commands, because
tpadmin-cpp lower-cases what the user types; they avoid tpadmin-cpp's own commands (open,
login, close, debug, quit, exit). Every parameter is one word on tpadmin-cpp's command line.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from protocol.admin import CommandDesc, CommandParam, CommandParamType
from server.admin.backend import GameListing, GameReport, OperatorBackend

STRING = CommandParamType.STRING
INTEGER = CommandParamType.INTEGER

GAME = CommandParam("game", STRING, "The game's name ('-' for the server's default game).")
PLAYER = CommandParam("player", STRING, "The player's user name.")

Runner = Callable[[OperatorBackend, tuple[Any, ...]], Awaitable[str]]


@dataclass(frozen=True, slots=True)
class AdminCommand:
    id: int
    name: str
    help: str
    params: tuple[CommandParam, ...]
    run: Runner

    def describe(self, modtime: int) -> CommandDesc:
        return CommandDesc(self.id, self.name, self.help, self.params, modtime)


# -- rendering --------------------------------------------------------------------------------


def _players(count: int, removed: int, limit: int) -> str:
    text = f"{count} player{'s' if count != 1 else ''}"
    if limit:
        text += f" of at most {limit}"
    if removed:
        text += f" (+{removed} removed)"
    return text


def _turn_state(turn: int, phase: str) -> str:
    if phase == "over":
        return f"over at turn {turn}"
    return f"turn {turn} open ({phase})"


def _timer(kind: str, length: int) -> str:
    return f"{kind} timer, " + (f"{length} s turns" if length else "no turn length")


def render_listing(games: list[GameListing]) -> str:
    if not games:
        return "There are no games on this server.\n"
    lines = [f"{len(games)} game{'s' if len(games) != 1 else ''}:"]
    for g in games:
        lines.append(
            f"  {g.id:>3}  {g.name}: {_turn_state(g.turn, g.phase)}, "
            f"{_players(g.players, g.removed, g.max_players)}, {_timer(g.timer, g.turn_length)}"
        )
    return "\n".join(lines) + "\n"


def render_report(r: GameReport) -> str:
    active = sum(1 for p in r.players if p.turn != "removed")
    lines = [
        f"Game {r.name!r} (id {r.id}): {r.description}" if r.description else f"Game {r.name!r} (id {r.id})",
        f"  {_turn_state(r.turn, r.phase)}; {r.timer_text or _timer(r.timer, r.turn_length)}",
        f"  {_players(active, len(r.players) - active, r.max_players)}; "
        + ("players may create accounts" if r.account_creation else "no new accounts"),
    ]
    for player in r.players:
        lines.append(f"    {player.id:>3}  {player.name:<20} {player.turn}")
    if r.phase == "over":
        lines.append(f"  winners: {', '.join(r.winners) or 'none'}")
        if r.final_scores:
            lines.append("  final scores: " + ", ".join(f"{n} {v}" for n, v in r.final_scores.items()))
    elif not r.started:
        lines.append("  turns start when enough players have joined")
    elif r.paused:
        kept = f", {r.paused_left} s left when resumed" if r.paused_left >= 0 else ""
        lines.append(f"  time left: paused by an operator{kept}")
    else:
        lines.append("  time left: " + (f"{r.seconds_left} s" if r.seconds_left >= 0 else "no deadline"))
        if r.waiting_for:
            lines.append(f"  waiting for: {', '.join(r.waiting_for)}")
    return "\n".join(lines) + "\n"


# -- the table --------------------------------------------------------------------------------


async def _list_games(backend: OperatorBackend, args: tuple[Any, ...]) -> str:
    return render_listing(await backend.list_games())


async def _status(backend: OperatorBackend, args: tuple[Any, ...]) -> str:
    return render_report(await backend.game_status(*args))


def _call(method: str) -> Runner:
    async def run(backend: OperatorBackend, args: tuple[Any, ...]) -> str:
        result: str = await getattr(backend, method)(*args)
        return result

    run.__name__ = method
    return run


COMMANDS: tuple[AdminCommand, ...] = (
    AdminCommand(0, "list-games", "Lists the games: turn, players, timer.", (), _list_games),
    AdminCommand(
        1,
        "status",
        "Shows a game: its turn, its players and who has finished, the time left.",
        (GAME,),
        _status,
    ),
    AdminCommand(
        2,
        "create-game",
        "Creates a game with the server's game settings and a random seed.",
        (CommandParam("name", STRING, "The new game's name."),),
        _call("create_game"),
    ),
    AdminCommand(
        3,
        "add-player",
        "Adds a player to a game, also one closed to new accounts (the password arrives in lower case).",
        (GAME, PLAYER, CommandParam("password", STRING, "The player's password.")),
        _call("add_player"),
    ),
    AdminCommand(
        4,
        "remove-player",
        "Removes a player: no more logins or orders; turns stop waiting for them.",
        (GAME, PLAYER),
        _call("remove_player"),
    ),
    AdminCommand(
        5, "reinstate-player", "Lets a removed player play again.", (GAME, PLAYER), _call("reinstate_player")
    ),
    AdminCommand(6, "end-turn", "Ends a game's current turn now.", (GAME,), _call("end_turn")),
    AdminCommand(7, "pause", "Stops a game's turn clock until it is resumed.", (GAME,), _call("pause")),
    AdminCommand(8, "resume", "Starts a paused game's turn clock again.", (GAME,), _call("resume")),
    AdminCommand(
        9,
        "extend",
        "Gives the current turn more time.",
        (GAME, CommandParam("seconds", INTEGER, "Seconds to add to the deadline.")),
        _call("extend"),
    ),
    AdminCommand(
        10,
        "set",
        "Changes a game setting (turn_length, max_players, account_creation, ...).",
        (
            GAME,
            CommandParam("setting", STRING, "The setting's name."),
            CommandParam("value", STRING, "Its new value."),
        ),
        _call("set_setting"),
    ),
)

BY_ID: Mapping[int, AdminCommand] = {command.id: command for command in COMMANDS}


def descriptions(modtime: int) -> dict[int, CommandDesc]:
    """Every command's CommandDesc, by id, stamped with `modtime`."""
    return {command.id: command.describe(modtime) for command in COMMANDS}
