"""The `tae-server` commands of the operator command table (`server.operating.commands`), made
from it: each table command becomes a click command with the table's name, summary, arguments
(read by the table's types, refused in the table's words), options, and what it does without a
server; `--wait` for those that ask a running server, `--json` for those that read.

    tae-server list-games [--json]
    tae-server status GAME [--json]
    tae-server create-game NAME [--map FILE] [--seed N] [--timer KIND] [--turn-length DURATION] ...
    tae-server add-player GAME NAME [--password PW] [--email E] [--comment C]
    tae-server set-password GAME NAME [--password PW]
    tae-server remove-player GAME NAME | reinstate GAME NAME
    tae-server end-turn GAME | pause GAME | resume GAME
    tae-server extend GAME DURATION | set GAME KEY VALUE
    tae-server move-game GAME NODE
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import asdict, replace
from typing import Any

import click

from server.cli.options import (
    ArgumentParam,
    TakesNegativeValues,
    configured,
    database_options,
    open_database,
    password_hasher,
    print_json,
    wait_option,
    wallclock,
)
from server.cli.password_prompt import asked_password
from server.config.file import load_config
from server.operating.arguments import YesNo
from server.operating.command_declaration import Changes, OperatorCommand, WithoutServer
from server.operating.commands import COMMANDS, CREATE_GAME, LIST_GAMES, MOVE_GAME, STATUS


def _help(command: OperatorCommand) -> str:
    told = "" if command.told.name == "NOBODY" else f"\n\nWho is told: {command.told.value}."
    alone = f"\n\nWithout a running server it {command.without_server.value}."
    return command.summary + told + alone


def _password_callback(text: str, confirm: bool) -> Callable[[click.Context, click.Parameter, Any], str]:
    def ask(ctx: click.Context, param: click.Parameter, value: Any) -> str:
        return asked_password(text, confirm=confirm) if value is None else value

    return ask


def command_for(command: OperatorCommand, run: Callable[..., None]) -> click.Command:
    """The click command of a table command; `run(**values)` does it."""
    params: list[click.Parameter] = []
    for argument in command.arguments:
        if argument.secret:
            asked = "New password" if argument.confirm else "Password"
            params.append(
                click.Option(
                    [f"--{argument.name}"],
                    default=None,
                    callback=_password_callback(asked, argument.confirm),
                    help=f"{argument.help} (asked for on a terminal when not given).",
                )
            )
        else:
            params.append(click.Argument([argument.name], type=ArgumentParam(argument.type)))
    for option in command.options:
        if isinstance(option.type, YesNo):
            params.append(
                click.Option(
                    [f"--{option.name}/--no-{option.name}", option.key], default=None, help=option.help
                )
            )
        else:
            params.append(
                click.Option(
                    [f"--{option.name}", option.key], type=ArgumentParam(option.type), help=option.help
                )
            )
    if command.changes is Changes.NOTHING:
        params.append(click.Option(["--json", "as_json"], is_flag=True, help="JSON instead of text."))
    else:
        params.append(_wait_param())
    params.extend(_database_params())
    return TakesNegativeValues(command.name, params=params, callback=run, help=_help(command))


def _wait_param() -> click.Parameter:
    """The `--wait` option every command that asks a running server has (`wait_option`)."""
    return click.command()(wait_option(lambda wait: None)).params[0]


def _database_params() -> list[click.Parameter]:
    """`--config` and `--database`, as every command has them (`database_options`)."""
    return click.command()(database_options(lambda config_path, database: None)).params


# -- reading ------------------------------------------------------------------------------------


def _list_games(as_json: bool, config_path: str | None, database: str | None) -> None:
    from rich.console import Console
    from rich.table import Table

    from server.operating.on_database import list_games, server_holder

    db = open_database(config_path, database)
    try:
        games = list_games(db)
        holder = server_holder(db, wallclock)
    finally:
        db.close()
    if as_json:
        print_json("list-games", {"games": [asdict(g) for g in games]})
        return
    table = Table(title=f"{len(games)} game{'s' if len(games) != 1 else ''}", title_justify="left")
    for column in ("id", "name", "turn", "phase", "players", "timer", "map", "seed", "accounts"):
        table.add_column(column, justify="right" if column in ("id", "turn", "seed") else "left")
    for g in games:
        players = f"{g.players}/{g.max_players or '∞'}" + (f" (+{g.removed} removed)" if g.removed else "")
        phase = g.phase + (f": {', '.join(g.winners)} won" if g.winners else "")
        accounts = "auto" if g.auto_add else ("open" if g.account_creation else "closed")
        table.add_row(
            str(g.id),
            g.name,
            str(g.turn),
            phase,
            players,
            ("PAUSED, " if g.paused else "") + g.timer_brief,
            f"{'custom' if g.custom_map else 'standard'} {g.board_size[0]}×{g.board_size[1]}",
            str(g.seed),
            accounts,
        )
    console = Console(width=None if Console().is_terminal else 200)
    console.print(table)
    console.print("server: " + (f"running ({holder.describe(wallclock())})" if holder else "not running"))


def _status(game: str, as_json: bool, config_path: str | None, database: str | None) -> None:
    from server.operating.on_database import game_status
    from server.views.operator_status import status_document, status_text

    db = open_database(config_path, database)
    try:
        status = game_status(db, game, wallclock=wallclock, default_game=load_config(config_path).game.name)
    finally:
        db.close()
    if as_json:
        print_json("status", status_document(status))
    else:
        click.echo(status_text(status), nl=False)


# -- changing -------------------------------------------------------------------------------------


def _create_game(
    name: str, wait: float, config_path: str | None, database: str | None, **options: Any
) -> None:
    from server.operating.on_database import create_game

    values = CREATE_GAME.completed({"name": name}, options)
    given = {option.key: values[option.key] for option in CREATE_GAME.options}
    if given["seed"] is None and load_config(config_path).game.seed is None:
        given["seed"] = secrets.randbelow(2**31)
    config = configured(config_path, database=database, name=name, **given)
    setup = config.game.setup(ctime=int(wallclock()))
    if given["description"] is None:
        setup = replace(setup, description=f"TaE game {name}")
    db = open_database(config_path, database, create=True)
    try:
        click.echo(create_game(db, setup, wallclock=wallclock, wait=wait).text)
    finally:
        db.close()


def _move_game(game: str, node: str, wait: float, config_path: str | None, database: str | None) -> None:
    from server.operating.on_database import move_game

    db = open_database(config_path, database)
    try:
        text = move_game(
            db, game, node, wallclock=wallclock, wait=wait, default_game=load_config(config_path).game.name
        ).text
        click.echo(text)
    finally:
        db.close()


def _change(command: OperatorCommand) -> Callable[..., None]:
    """What a table command that changes a game does on the command line."""

    def run(wait: float, config_path: str | None, database: str | None, **given: Any) -> None:
        from server.operating.on_database import operate

        arguments = {argument.name: given.pop(argument.name) for argument in command.arguments}
        values = command.completed(
            arguments, {option.key: given.get(option.key) for option in command.options}
        )
        hasher = password_hasher(config_path)
        db = open_database(config_path, database)
        try:
            outcome = operate(
                db,
                command,
                values,
                hasher=hasher,
                wallclock=wallclock,
                wait=wait,
                default_game=load_config(config_path).game.name,
            )
        finally:
            db.close()
        click.echo(outcome.text)

    return run


def _runner(command: OperatorCommand) -> Callable[..., None]:
    if command is LIST_GAMES:
        return _list_games
    if command is STATUS:
        return _status
    if command is CREATE_GAME:
        return _create_game
    if command is MOVE_GAME:
        return _move_game
    assert command.without_server is not WithoutServer.READS_THE_DATABASE
    return _change(command)


def operator_commands() -> list[click.Command]:
    """A click command for every command of the table."""
    return [command_for(command, _runner(command)) for command in COMMANDS]
