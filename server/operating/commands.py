"""The operator command table: every command an operator gives a game, declared once.

Like a Command of Twisted's AMP, each `OperatorCommand` says everything the channels need to
know: its name (the one spelling: `tae-server`'s, which the admin protocol uses too), what it
does, its arguments with their types and bounds (`server.operating.arguments`; `set`'s keys are
in `server.operating.game_settings`), what it changes, who is told, what it does when no server
runs, its admin protocol id, the kind of the operator request that asks a running server to do
it, and the action that carries it out on a live game (`server.operating.game_actions`).

The channels are made from the table or dispatch through it:

* the command line (`server.cli`) makes a click command of each, with these
  arguments and their words of refusal;
* the admin protocol (`server.admin.commands`) offers a CommandDesc of each command with an
  admin id, and reads the parameters with the same types;
* a running server's desk (`server.operating.desk`) carries out a queued request through the
  command of its kind, which checks the stored values again;
* without a server, `server.operating.on_database` carries the command out on the stored game.

So every channel accepts and refuses the same values with the same words. The JSON API offers no
operator command.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ruleset.ai import LEVEL_NAMES
from server.game.game import Game
from server.operating.arguments import (
    DEFAULT_GAME,
    GAME,
    PASSWORD,
    PLAYER,
    Duration,
    NewGameName,
    OneOf,
    Text,
    WholeNumber,
)
from server.operating.command_declaration import (
    Argument,
    Changes,
    OperatorCommand,
    Option,
    Told,
    WithoutServer,
)
from server.operating.game_actions import (
    OperationError,
    add_computer_to,
    add_player_to,
    end_turn_of,
    end_turn_refusal,
    extend_game,
    join_kept_apart,
    pause_game,
    reinstate_player_in,
    remove_player_from,
    resume_game,
    set_password_of,
    set_setting_of,
)
from server.operating.game_settings import BY_KEY, changed_setup, setting_named


def no_such_game(name: str, known: Sequence[str], where: str) -> OperationError:
    """The refusal of a command naming a game `where` ("this server") does not have."""
    if name == DEFAULT_GAME:
        return OperationError(f"{where} has no default game")
    listed = ", ".join(sorted(known)) or "there are none"
    shown = name if len(name) <= 40 else name[:37] + "..."
    return OperationError(f"no game named {shown!r} (games: {listed})")


# -- the actions -----------------------------------------------------------------------------


async def _add_player(game: Game, values: Mapping[str, Any]) -> str:
    return await add_player_to(
        game,
        values["username"],
        values["password_hash"],
        values.get("email") or "",
        values.get("comment") or "",
    )


async def _add_computer(game: Game, values: Mapping[str, Any]) -> str:
    return await add_computer_to(game, values["level"], values.get("username") or None)


async def _set_password(game: Game, values: Mapping[str, Any]) -> str:
    return await set_password_of(game, values["username"], values["password_hash"])


async def _join_accounts(game: Game, values: Mapping[str, Any]) -> str:
    return await join_kept_apart(game, values["username"])


async def _remove_player(game: Game, values: Mapping[str, Any]) -> str:
    return await remove_player_from(game, values["username"])


async def _reinstate(game: Game, values: Mapping[str, Any]) -> str:
    return await reinstate_player_in(game, values["username"])


async def _end_turn(game: Game, values: Mapping[str, Any]) -> str:
    if "open_turn" in values:
        return await end_turn_of(game, _turn(values["open_turn"]))
    if "turn" in values:
        # queued before turns were numbered as TP clients show them: "turn" was the number of
        # turns played once it had ended
        return await end_turn_of(game, _turn(values["turn"]) - 1)
    return await end_turn_of(game)


def _turn(value: Any) -> int:
    return WholeNumber("the turn").check(value)


async def _pause(game: Game, values: Mapping[str, Any]) -> str:
    return await pause_game(game)


async def _resume(game: Game, values: Mapping[str, Any]) -> str:
    return await resume_game(game)


async def _extend(game: Game, values: Mapping[str, Any]) -> str:
    return await extend_game(game, values["seconds"])


async def _set(game: Game, values: Mapping[str, Any]) -> str:
    key, value = values["key"], values["value"]
    return await set_setting_of(
        game, lambda setup, players: changed_setup(setup, key, value, players=players)
    )


def _value_of_its_key(values: Mapping[str, Any]) -> None:
    setting_named(values["key"]).value.parse(values["value"])


# -- the table -------------------------------------------------------------------------------

_GAME = Argument("game", GAME, "The game's name ('-' for the server's default game).")
_PLAYER = Argument("player", PLAYER, "The player's user name.", key="username")
_EXTENSION = Duration("the extension", minimum=1)

_SETTINGS_HELP = "; ".join(f"{s.key}: {s.value.describe()}" for s in BY_KEY.values())

LIST_GAMES = OperatorCommand(
    "list-games",
    "Lists the games: turn, players, timer.",
    (),
    Changes.NOTHING,
    Told.NOBODY,
    WithoutServer.READS_THE_DATABASE,
    admin_id=0,
)
STATUS = OperatorCommand(
    "status",
    "Shows a game: its turn, its players and who has finished, the time left; once over, the final standing.",
    (_GAME,),
    Changes.NOTHING,
    Told.NOBODY,
    WithoutServer.READS_THE_DATABASE,
    admin_id=1,
)
CREATE_GAME = OperatorCommand(
    "create-game",
    "Creates a game with the server's game settings (the options change them) and a random seed.",
    (Argument("name", NewGameName(), "The new game's name."),),
    Changes.NEW_GAME,
    Told.NEW_PLAYERS,
    WithoutServer.CHANGES_THE_DATABASE,
    admin_id=2,
    options=(
        Option(
            "map",
            Text("the map file", metavar="FILE"),
            "Map file ('.', 'M', 'A'); default: the standard map.",
            "map",
        ),
        Option("seed", WholeNumber("the seed"), "Random seed (default: a random one).", "seed"),
        *(
            Option(
                setting.flag,
                setting.value,
                setting.summary[:1].upper() + setting.summary[1:] + ".",
                setting.key,
            )
            for setting in BY_KEY.values()
        ),
        Option(
            "description",
            Text("the description", metavar="TEXT"),
            "Long name shown to clients.",
            "description",
        ),
        Option(
            "absent-after",
            WholeNumber("absent_after_missed_turns", metavar="TURNS"),
            "Turns missed in a row before the stand-in plays the seat (default 2; 0: never).",
            "absent_after_missed_turns",
        ),
        Option(
            "vacation-days-max",
            WholeNumber("vacation_days_max", metavar="DAYS"),
            "The longest vacation a player may declare (default 14; 0: no vacations).",
            "vacation_days_max",
        ),
    ),
)
ADD_PLAYER = OperatorCommand(
    "add-player",
    "Adds a player to a game, also one closed to new accounts.",
    (
        _GAME,
        _PLAYER,
        Argument("password", PASSWORD, "The player's password.", key="password_hash", secret=True),
    ),
    Changes.THE_GAME,
    Told.THE_NEW_PLAYER,
    WithoutServer.CHANGES_THE_DATABASE,
    admin_id=3,
    request="add_player",
    action=_add_player,
    options=(
        Option(
            "email",
            Text("the e-mail address", empty=True, metavar="ADDRESS"),
            "The player's e-mail address.",
            "email",
            "",
        ),
        Option("comment", Text("the comment", empty=True), "A comment on the account.", "comment", ""),
    ),
)
JOIN_ACCOUNTS = OperatorCommand(
    "join-accounts",
    "Joins a player's account kept apart (NAME~GAME, from the upgrade to one account per server) "
    "to the server's account NAME: its password is then theirs in this game too.",
    (_GAME, _PLAYER),
    Changes.THE_GAME,
    Told.NOBODY,
    WithoutServer.CHANGES_THE_DATABASE,
    request="join_accounts",
    action=_join_accounts,
)
ADD_COMPUTER = OperatorCommand(
    "add-computer",
    "Adds a computer player: a seat the computer plays every turn, at a level of its own.",
    (_GAME,),
    Changes.THE_GAME,
    Told.THE_NEW_PLAYER,
    WithoutServer.CHANGES_THE_DATABASE,
    request="add_computer",
    action=_add_computer,
    options=(
        Option(
            "level",
            OneOf("the level", LEVEL_NAMES, metavar="LEVEL"),
            "How well it plays: easy, normal or hard (default normal).",
            "level",
            "normal",
        ),
        Option(
            "name",
            PLAYER,
            "Its user name (default: computer-LEVEL, then computer-LEVEL-2, ...).",
            "username",
        ),
    ),
)
REMOVE_PLAYER = OperatorCommand(
    "remove-player",
    "Removes a player: no more logins or orders; turns stop waiting for them.",
    (_GAME, _PLAYER),
    Changes.THE_GAME,
    Told.EVERY_PLAYER,
    WithoutServer.CHANGES_THE_DATABASE,
    admin_id=4,
    request="remove_player",
    action=_remove_player,
)
REINSTATE = OperatorCommand(
    "reinstate",
    "Takes back a player's removal: they log in and play again.",
    (_GAME, _PLAYER),
    Changes.THE_GAME,
    Told.EVERY_PLAYER,
    WithoutServer.CHANGES_THE_DATABASE,
    admin_id=5,
    request="reinstate",
    action=_reinstate,
)
END_TURN = OperatorCommand(
    "end-turn",
    "Ends a game's open turn now.",
    (_GAME,),
    Changes.THE_GAME,
    Told.OPERATOR_AND_TURN,
    WithoutServer.WAITS_FOR_THE_SERVER,
    admin_id=6,
    request="end_turn",
    action=_end_turn,
    pins_the_turn=True,
)
PAUSE = OperatorCommand(
    "pause",
    "Stops a game's turn clock: no turn ends by itself until it is resumed.",
    (_GAME,),
    Changes.THE_GAME,
    Told.EVERY_PLAYER_AND_CLIENT,
    WithoutServer.CHANGES_THE_DATABASE,
    admin_id=7,
    request="pause",
    action=_pause,
)
RESUME = OperatorCommand(
    "resume",
    "Starts a paused game's turn clock again with the time that was left.",
    (_GAME,),
    Changes.THE_GAME,
    Told.EVERY_PLAYER_AND_CLIENT,
    WithoutServer.CHANGES_THE_DATABASE,
    admin_id=8,
    request="resume",
    action=_resume,
)
EXTEND = OperatorCommand(
    "extend",
    f"Gives the open turn more time: {_EXTENSION.describe()}.",
    (
        _GAME,
        Argument(
            "duration",
            _EXTENSION,
            "How much later the turn ends (90m, 2h, 1d, 1h30m or seconds).",
            key="seconds",
        ),
    ),
    Changes.THE_GAME,
    Told.EVERY_PLAYER_AND_CLIENT,
    WithoutServer.CHANGES_THE_DATABASE,
    admin_id=9,
    request="extend",
    action=_extend,
)
SET = OperatorCommand(
    "set",
    "Changes a setting of a game, also a running one.",
    (
        _GAME,
        Argument("key", Text("the setting", longest=64, metavar="KEY"), f"The setting: {', '.join(BY_KEY)}."),
        Argument(
            "value",
            Text("the value", longest=200, empty=True, metavar="VALUE"),
            f"Its new value ({_SETTINGS_HELP}).",
        ),
    ),
    Changes.THE_GAME,
    Told.EVERY_PLAYER_AND_CLIENT,
    WithoutServer.CHANGES_THE_DATABASE,
    admin_id=10,
    request="set",
    action=_set,
    refine=_value_of_its_key,
)
SET_PASSWORD = OperatorCommand(
    "set-password",
    "Gives a player a new password (the old one stops working at once).",
    (
        _GAME,
        _PLAYER,
        Argument("password", PASSWORD, "The new password.", key="password_hash", secret=True, confirm=True),
    ),
    Changes.THE_GAME,
    Told.NOBODY,
    WithoutServer.CHANGES_THE_DATABASE,
    admin_id=11,
    request="set_password",
    action=_set_password,
)
MOVE_GAME = OperatorCommand(
    "move-game",
    "Hands a game over to another cluster node (its players stay connected).",
    (
        _GAME,
        Argument(
            "node", Text("the node's name", longest=200, metavar="NODE"), "The node to run it.", key="node"
        ),
    ),
    Changes.WHERE_IT_RUNS,
    Told.NOBODY,
    WithoutServer.NEEDS_A_CLUSTER,
    request="move_game",
)

COMMANDS: tuple[OperatorCommand, ...] = (
    LIST_GAMES,
    STATUS,
    CREATE_GAME,
    ADD_PLAYER,
    ADD_COMPUTER,
    SET_PASSWORD,
    JOIN_ACCOUNTS,
    REMOVE_PLAYER,
    REINSTATE,
    END_TURN,
    PAUSE,
    RESUME,
    EXTEND,
    SET,
    MOVE_GAME,
)

BY_NAME: Mapping[str, OperatorCommand] = {command.name: command for command in COMMANDS}
BY_REQUEST: Mapping[str, OperatorCommand] = {
    command.request: command for command in COMMANDS if command.request is not None
}


def thd_queue_command(
    conn: Any, game_id: int, command: OperatorCommand, payload: Mapping[str, Any]
) -> tuple[int, dict[str, Any]]:
    """Queue `command` for the server that runs game `game_id` (database thread): the request's
    id and the payload queued. An end of turn names the open turn (so a request carried out
    twice ends one turn) and is refused here as the server would refuse it."""
    from server.database import games as q
    from server.database import operator_requests as requests_q
    from server.database.schema import games

    assert command.request is not None, f"{command.name} is not asked of a server"
    payload = dict(payload)
    if command.pins_the_turn:
        import sqlalchemy as sa

        name = conn.execute(sa.select(games.c.name).where(games.c.id == game_id)).scalar_one()
        summary = q.thd_game_summaries(conn, name)[0]
        refusal = end_turn_refusal(name, summary.phase == "over", summary.players + summary.removed)
        if refusal is not None:
            raise refusal
        payload["open_turn"] = summary.turn
    return requests_q.thd_queue_request(conn, game_id, command.request, payload), payload
