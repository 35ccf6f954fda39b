"""`tae-server`: run and operate the TaE server.

    tae-server serve [--listen ENDPOINT]... [--web ENDPOINT]... [--map FILE] [--seed N] [--turn-length S]
                     [--timer KIND] [--log-format text|json]
                     [--limit NAME=VALUE]...
    tae-server create-game NAME [--map FILE] [--seed N] [--max-players N] [--timer KIND]
                     [--turn-length S] [--players-min N] [--threshold P --over S --under S]
                     [--schedule WHEN --time-zone ZONE --no-finish-early]
                     [--no-account-creation] [--auto-add] [--description TEXT]
                     [--absent-after TURNS] [--vacation-days-max DAYS]
    tae-server list-games [--json]
    tae-server status GAME [--json]
    tae-server add-player GAME NAME --password PW [--email E] [--comment C]
    tae-server set-password GAME NAME [--password PW]
    tae-server remove-player GAME NAME
    tae-server end-turn GAME
    tae-server pause GAME | resume GAME | extend GAME DURATION | set GAME KEY VALUE
    tae-server reinstate GAME NAME
    tae-server upgrade-db
    tae-server backup FILE [--force]
    tae-server serve --node NAME --advertise HOST:PORT ...   (a cluster node, PostgreSQL)
    tae-server nodes [--json]
    tae-server move-game GAME NODE

Every command takes `--config FILE` (TOML; see server.config.file) and `--database URL`; flags
override the file. Commands that change a game work with or without a running server: without
one they change the database (ending a turn waits for the server); with one they ask it and
wait up to `--wait` seconds for its answer (server.operating.on_database).

Mistakes on the command line or in the configuration are one line on stderr and exit status 2;
an operation that fails is one line and status 1. Never a traceback.
"""

from __future__ import annotations

import json
import re
import secrets
import sys
import time
from dataclasses import asdict, replace

import click

from server.config.errors import ConfigError
from server.config.file import ServerConfig, apply_game_settings, load_config, validate
from server.model.timer_settings import TIMER_KINDS
from server.operating.admin_user import admin_user
from server.operating.password_prompt import password_option

EXIT_USAGE = 2
EXIT_FAILURE = 1
MAX_GAME_NAME = 200


class Duration(click.ParamType):
    """A length of time: seconds ("3600") or with units ("90m", "4h", "1d", "1h30m")."""

    name = "duration"

    def convert(self, value, param, ctx):
        from server.operating.game_actions import OperationError, parse_duration

        if isinstance(value, int):
            return value
        try:
            return parse_duration(str(value))
        except OperationError as error:
            self.fail(str(error), param, ctx)


DURATION = Duration()


class TakesNegativeValues(click.Command):
    """A command whose arguments may be written with a leading '-' ("-5", "-1h"): click would
    read them as options ("No such option '-5'"). The options are put first and the arguments,
    in their order, behind a "--", so they reach the command, which answers its own message
    about the value. A value right after an option that takes one ("--wait -5") stays that
    option's."""

    def parse_args(self, ctx, args):
        if "--" not in args and any(_NEGATIVE.match(arg) for arg in args):
            takes_value = {
                name
                for param in self.params
                if isinstance(param, click.Option) and not param.is_flag
                for name in param.opts
            }
            options, arguments = [], []
            words = iter(args)
            for word in words:
                if _NEGATIVE.match(word) or not word.startswith("-"):
                    arguments.append(word)
                    continue
                options.append(word)
                value = next(words, None) if word in takes_value else None
                if value is not None:
                    options.append(value)
            args = [*options, "--", *arguments]
        return super().parse_args(ctx, args)


_NEGATIVE = re.compile(r"-[0-9.]")


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, invoke_without_command=True)
@click.version_option(package_name="tpserver-tae", prog_name="tae-server", message="%(prog)s %(version)s")
@click.pass_context
def cli(ctx) -> None:
    """Thousand Parsec server for TaE (Tigris and Euphrates in space)."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help(), err=True)
        raise click.UsageError("a command is needed (see the list above)")


def _config(
    config_path: str | None,
    listen: tuple[str, ...] = (),
    log_format: str | None = None,
    database: str | None = None,
    web: tuple[str, ...] = (),
    limits: tuple[str, ...] = (),
    **game,
) -> ServerConfig:
    config = load_config(config_path)
    changes: dict = {}
    if limits:
        changes["limits"] = _limits(config, limits)
    if web:
        changes["web"] = web
    if database:
        changes["database"] = database
    if listen:
        changes["listen"] = listen
    if log_format:
        changes["log_format"] = log_format
    config = replace(config, game=apply_game_settings(config.game, game), **changes)
    return validate(config)


def _limits(config: ServerConfig, flags: tuple[str, ...]):
    from server.config.file import limits_from
    from server.config.limits import parse_limit_flag

    values = {}
    for flag in flags:
        try:
            name, value = parse_limit_flag(flag)
        except ValueError as error:
            raise ConfigError(str(error)) from None
        values[name] = value
    return limits_from(config.limits, values, "--limit ")


def _database_url(config_path: str | None, database: str | None) -> str:
    from server.database import DEFAULT_URL

    return _config(config_path, database=database).database or DEFAULT_URL


def database_options(command):
    command = click.option(
        "--database",
        metavar="URL",
        help="Database URL (default: the configuration's, else sqlite:///tae.db).",
    )(command)
    return click.option("--config", "config_path", metavar="FILE", help="TOML configuration file.")(command)


def wait_option(command):
    return click.option(
        "--wait",
        type=click.FloatRange(min=0),
        default=10.0,
        show_default=True,
        metavar="SECONDS",
        help="How long to wait for a running server's answer.",
    )(command)


def _open(config_path, database, *, create=False):
    from server.operating.on_database import open_database

    return open_database(_database_url(config_path, database), create=create)


# -- serve ------------------------------------------------------------------------------------


@cli.command()
@click.option("--config", "config_path", metavar="FILE", help="TOML configuration file.")
@click.option(
    "--listen",
    multiple=True,
    metavar="ENDPOINT",
    help="Twisted endpoint to listen on (repeatable); default tcp:6923.",
)
@click.option(
    "--web",
    multiple=True,
    metavar="ENDPOINT",
    help="Twisted endpoint for the web pages and JSON API (repeatable), e.g. tcp:8080:interface=127.0.0.1 "
    "or ssl:8443:privateKey=key.pem; default: the configuration's, else none.",
)
@click.option("--map", "map_path", metavar="FILE", help="Map file for a new game ('.', 'M', 'A').")
@click.option("--seed", type=int, help="Random seed of a new game.")
@click.option("--turn-length", type=DURATION, help="Seconds (or 90m, 4h, 1d) per turn (0: no deadline).")
@click.option("--timer", type=click.Choice(TIMER_KINDS), help="Turn timer (default playersfinished).")
@click.option("--game-name", help="Name of the open game created on first start (default tae).")
@click.option("--log-format", type=click.Choice(["text", "json"]), help="Log as text or JSON lines.")
@click.option("--database", metavar="URL", help="Database URL (default sqlite:///tae.db).")
@click.option(
    "--limit",
    "limits",
    multiple=True,
    metavar="NAME=VALUE",
    help="Set one limit of the [limits] table, e.g. connections_per_address=100 (repeatable; 0 = off).",
)
@click.option("--node", metavar="NAME", help="Run as this cluster node (PostgreSQL; see docs/cluster.md).")
@click.option("--advertise", metavar="HOST:PORT", help="Where the other nodes reach this node's TP listener.")
@click.option(
    "--web-advertise",
    metavar="HOST:PORT",
    help="Where the other nodes reach this node's web listener (default: the --advertise host).",
)
@click.option(
    "--admin",
    multiple=True,
    metavar="ENDPOINT",
    help="Listen for admin clients (tpadmin-cpp) on ENDPOINT (repeatable), e.g. tcp:6925.",
)
def serve(
    config_path,
    listen,
    web,
    map_path,
    seed,
    turn_length,
    timer,
    game_name,
    log_format,
    database,
    node,
    advertise,
    web_advertise,
    admin,
    limits,
) -> None:
    """Start the server and play (stop it with SIGTERM or Ctrl-C)."""
    config = _config(
        config_path,
        listen,
        log_format,
        database,
        web=web,
        limits=limits,
        map=map_path,
        seed=seed,
        turn_length=turn_length,
        timer=timer,
        name=game_name,
    )
    if node or advertise or web_advertise:
        from server.config.cluster import ClusterSettings
        from server.config.file import validate

        cluster = config.cluster or ClusterSettings("", "")
        cluster = replace(
            cluster,
            node=node or cluster.node,
            advertise=advertise or cluster.advertise,
            web_advertise=web_advertise or cluster.web_advertise,
        )
        if not cluster.node:
            raise click.UsageError("--advertise is for a cluster node: give --node NAME too")
        config = validate(replace(config, cluster=cluster))
    if admin:
        config = replace(config, admin=config.admin.with_listen(admin))
    config.game.setup(ctime=0)  # read and check the map now, before anything starts
    given = {"seed": seed, "turn_length": turn_length, "timer": timer, "map": map_path}
    config = replace(config, serve_game_flags=tuple((k, v) for k, v in given.items() if v is not None))
    if config.game.seed is None:
        # The open game made on a first start gets a random seed unless one was asked for
        # (the configuration's [game] seed, or --seed).
        config = replace(config, game=replace(config.game, seed=secrets.randbelow(2**31)))
    from server.operating.runner import run

    sys.exit(run(config))


# -- games ------------------------------------------------------------------------------------


@cli.command("create-game")
@click.argument("name")
@click.option(
    "--map", "map_path", metavar="FILE", help="Map file ('.', 'M', 'A'); default: the standard map."
)
@click.option("--seed", type=int, help="Random seed (default: a random one).")
@click.option("--max-players", type=click.IntRange(min=0), help="Players allowed (0: no limit).")
@click.option("--timer", type=click.Choice(TIMER_KINDS), help="Turn timer (default playersfinished).")
@click.option("--turn-length", type=DURATION, help="Seconds (or 90m, 4h, 1d) per turn (0: no deadline).")
@click.option("--players-min", type=click.IntRange(min=0), help="Players needed before turns start.")
@click.option(
    "--threshold",
    type=click.IntRange(0, 100),
    metavar="PERCENT",
    help="threshold timer: share of players who must finish.",
)
@click.option(
    "--over",
    type=click.IntRange(min=0),
    metavar="SECONDS",
    help="threshold timer: turn length once over the threshold.",
)
@click.option(
    "--under",
    type=click.IntRange(min=0),
    metavar="SECONDS",
    help="threshold timer: turn length under the threshold (0: no deadline).",
)
@click.option(
    "--schedule",
    metavar="WHEN",
    help='calendar timer: when turns end, e.g. "Mon,Wed,Fri 20:00" or "Mon-Fri 08:00,20:00".',
)
@click.option("--time-zone", metavar="ZONE", help="calendar timer: the schedule's zone (default UTC).")
@click.option(
    "--no-finish-early", is_flag=True, help="calendar timer: a turn never ends before its scheduled time."
)
@click.option("--no-account-creation", is_flag=True, help="Players cannot create accounts themselves.")
@click.option("--auto-add", is_flag=True, help="A login with an unknown name creates the account.")
@click.option("--description", help="Long name shown to clients.")
@click.option(
    "--absent-after",
    type=click.IntRange(min=0),
    metavar="TURNS",
    help="Turns missed in a row before the stand-in plays the seat (default 2; 0: never).",
)
@click.option(
    "--vacation-days-max",
    type=click.IntRange(min=0),
    metavar="DAYS",
    help="The longest vacation a player may declare (default 14; 0: no vacations).",
)
@wait_option
@database_options
def create_game(
    name,
    map_path,
    seed,
    max_players,
    timer,
    turn_length,
    players_min,
    threshold,
    over,
    under,
    schedule,
    time_zone,
    no_finish_early,
    no_account_creation,
    auto_add,
    description,
    absent_after,
    vacation_days_max,
    wait,
    config_path,
    database,
) -> None:
    """Create a game; a running server loads it at once."""
    from server.operating.on_database import create_game as create

    if seed is None and load_config(config_path).game.seed is None:
        seed = secrets.randbelow(2**31)
    config = _config(
        config_path,
        database=database,
        name=name,
        map=map_path,
        seed=seed,
        max_players=max_players,
        timer=timer,
        turn_length=turn_length,
        turn_players_min=players_min,
        turn_player_threshold=threshold,
        turn_length_over_threshold=over,
        turn_length_under_threshold=under,
        schedule=schedule,
        time_zone=time_zone,
        finish_early=False if no_finish_early else None,
        account_creation=False if no_account_creation else None,
        auto_add=True if auto_add else None,
        description=description,
        absent_after_missed_turns=absent_after,
        vacation_days_max=vacation_days_max,
    )
    if len(name) > MAX_GAME_NAME:
        raise ConfigError(f"game name: at most {MAX_GAME_NAME} characters")
    setup = config.game.setup(ctime=int(time.time()))
    if description is None:
        setup = replace(setup, description=f"TaE game {name}")
    db = _open(config_path, database, create=True)
    try:
        click.echo(create(db, setup, wallclock=time.time, wait=wait).text)
    finally:
        db.close()


@cli.command("list-games")
@click.option("--json", "as_json", is_flag=True, help="One JSON array instead of a table.")
@database_options
def list_games(as_json, config_path, database) -> None:
    """List the games: turn, phase, players, timer."""
    from server.operating.on_database import list_games as summaries
    from server.operating.on_database import server_holder

    db = _open(config_path, database)
    try:
        games = summaries(db)
        holder = server_holder(db, time.time)
    finally:
        db.close()
    if as_json:
        click.echo(json.dumps([asdict(g) for g in games], indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{len(games)} game{'s' if len(games) != 1 else ''}", title_justify="left")
    for column in (
        "id",
        "name",
        "turn",
        "phase",
        "players",
        "timer",
        "map",
        "seed",
        "accounts",
    ):
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
    console.print("server: " + (f"running ({holder.describe(time.time())})" if holder else "not running"))


@cli.command()
@click.argument("game")
@click.option("--json", "as_json", is_flag=True, help="A JSON object instead of text.")
@database_options
def status(game, as_json, config_path, database) -> None:
    """Show a game: turn, phase, players and who has finished, time left, the result."""
    from server.operating.on_database import game_status

    db = _open(config_path, database)
    try:
        info = game_status(db, game, wallclock=time.time)
    finally:
        db.close()
    data = info.as_dict()
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    s = info.summary
    lines = [
        f"game {s.name!r} (id {s.id}): "
        + (f"over at turn {s.turn}" if s.phase == "over" else f"turn {s.turn} open ({s.phase} turn)")
    ]
    lines.append(
        f"  map: {'custom' if s.custom_map else 'standard'} {s.board_size[0]}×{s.board_size[1]}, "
        f"seed {s.seed}"
    )
    lines.append(f"  timer: {s.timer_description}" + (" — PAUSED" if s.paused else ""))
    lines.append(
        f"  players: {s.players}"
        + (f" of at most {s.max_players}" if s.max_players else "")
        + (f", {s.removed} removed" if s.removed else "")
    )
    for player in data["players"]:
        lines.append(f"    {player['id']:>3}  {player['name']:<20} {player['turn']}")
    setup = info.setup
    if setup is not None:
        lines.append(
            "  absent players: "
            + (
                f"the stand-in plays after {setup.absent_after_missed_turns} missed turns"
                if setup.absent_after_missed_turns
                else "never marked"
            )
            + "; vacations: "
            + (f"up to {setup.vacation_days_max} days" if setup.vacation_days_max else "none")
        )
    if s.phase != "over":
        if s.paused:
            left = "paused" + (
                "" if info.paused_left is None else f", {round(info.paused_left)} s left when resumed"
            )
        elif info.deadline is None:
            timeless = setup is not None and not setup.timer.turns_have_a_deadline()
            if info.server or timeless:
                left = "no deadline" + ("" if timeless else " set")
            else:
                left = "no deadline known (the server is not running)"
        elif info.server is None:
            left = (
                "the turn ends when the server starts"
                if data["seconds_left"] == 0
                else f"{data['seconds_left']} s (the server is not running)"
            )
        else:
            left = f"{data['seconds_left']} s"
        lines.append(f"  time left: {left}")
        if data["waiting_for"]:
            lines.append(f"  waiting for: {', '.join(data['waiting_for'])}")
    else:
        lines.append(f"  winners: {', '.join(s.winners) or 'none'}")
        if info.final_scores:
            lines.append("  final scores: " + ", ".join(f"{n} {v}" for n, v in info.final_scores.items()))
    lines.append("  server: " + (f"running ({info.server})" if info.server else "not running"))
    click.echo("\n".join(lines))


# -- players and turns ------------------------------------------------------------------------


@cli.command("add-player")
@click.argument("game")
@click.argument("name")
@password_option("Password", confirm=False, help="The player's password (asked for on a terminal).")
@click.option("--email", default="", help="The player's e-mail address.")
@click.option("--comment", default="", help="A comment on the account.")
@wait_option
@database_options
def add_player(game, name, password, email, comment, wait, config_path, database) -> None:
    """Add a player to a game (also one closed to new accounts)."""
    from server.operating.on_database import add_player as add

    cost = _checked_password(config_path, password)
    db = _open(config_path, database)
    try:
        outcome = add(db, game, name, password, email, comment, wallclock=time.time, wait=wait, cost=cost)
        click.echo(outcome.text)
    finally:
        db.close()


@cli.command("set-password")
@click.argument("game")
@click.argument("name")
@password_option("New password", confirm=True, help="The new password (asked for twice on a terminal).")
@wait_option
@database_options
def set_password(game, name, password, wait, config_path, database) -> None:
    """Give a player a new password (the old one stops working at once)."""
    from server.operating.on_database import set_password as set_it

    cost = _checked_password(config_path, password)
    db = _open(config_path, database)
    try:
        click.echo(set_it(db, game, name, password, wallclock=time.time, wait=wait, cost=cost).text)
    finally:
        db.close()


def _checked_password(config_path: str | None, password: str) -> int:
    """The scrypt N for a new hash, once `password` is one the server's policy accepts
    (a usage error otherwise)."""
    from server.game.passwords import PasswordPolicy

    limits = load_config(config_path).limits
    policy = PasswordPolicy.with_cost(limits.password_min_length, limits.password_hash_cost)
    problem = policy.problem(password)
    if problem is not None:
        raise click.BadParameter(problem.message, param_hint="'--password'")
    return policy.cost


@cli.command("remove-player")
@click.argument("game")
@click.argument("name")
@wait_option
@database_options
def remove_player(game, name, wait, config_path, database) -> None:
    """Remove a player: no more logins or orders; turns stop waiting for them."""
    from server.operating.on_database import remove_player as remove

    db = _open(config_path, database)
    try:
        click.echo(remove(db, game, name, wallclock=time.time, wait=wait).text)
    finally:
        db.close()


@cli.command("end-turn")
@click.argument("game")
@wait_option
@database_options
def end_turn(game, wait, config_path, database) -> None:
    """End a game's current turn now (the running server resolves it)."""
    from server.operating.on_database import end_turn as end

    db = _open(config_path, database)
    try:
        click.echo(end(db, game, wallclock=time.time, wait=wait).text)
    finally:
        db.close()


# -- the clock and the settings of a running game --------------------------------------------


def _control(config_path, database, game, kind, payload, wait) -> None:
    from server.operating.on_database import control

    db = _open(config_path, database)
    try:
        click.echo(control(db, game, kind, payload, wallclock=time.time, wait=wait).text)
    finally:
        db.close()


@cli.command()
@click.argument("game")
@wait_option
@database_options
def pause(game, wait, config_path, database) -> None:
    """Stop a game's turn clock (no turn ends by itself until `resume`); players are told."""
    _control(config_path, database, game, "pause", {}, wait)


@cli.command()
@click.argument("game")
@wait_option
@database_options
def resume(game, wait, config_path, database) -> None:
    """Start a paused game's clock again with the time that was left; players are told."""
    _control(config_path, database, game, "resume", {}, wait)


@cli.command(cls=TakesNegativeValues)
@click.argument("game")
@click.argument("duration")
@wait_option
@database_options
def extend(game, duration, wait, config_path, database) -> None:
    """Give the open turn DURATION more (90m, 2h, 1d, 1h30m or seconds); players are told."""
    from server.operating.game_actions import OperationError, parse_duration

    if duration.strip().startswith("-"):
        raise click.BadParameter("a duration must be positive", param_hint="'DURATION'")
    try:
        seconds = parse_duration(duration)
    except OperationError as error:
        raise click.BadParameter(str(error), param_hint="'DURATION'") from None
    if seconds <= 0:
        raise click.BadParameter("the extension must be longer than 0 s", param_hint="'DURATION'")
    _control(config_path, database, game, "extend", {"seconds": seconds}, wait)


@cli.command("set", cls=TakesNegativeValues)
@click.argument("game")
@click.argument("key")
@click.argument("value")
@wait_option
@database_options
def set_setting(game, key, value, wait, config_path, database) -> None:
    """Change a setting of a game, also a running one; players are told.

    \b
    KEY is one of:
      timer: basic, playersfinished, threshold or calendar
      turn_length: seconds (or 90m, 2h, 1d) per turn; calendar: the shortest turn
      turn_players_min, turn_player_threshold,
      turn_length_over_threshold, turn_length_under_threshold
      schedule: calendar timer: "Mon,Wed,Fri 20:00", "Mon-Fri 08:00,20:00; Sat 12:00"
      time_zone: calendar timer: an IANA zone, e.g. Europe/Berlin
      finish_early: calendar timer: yes or no
      max_players: 0 = no limit (not fewer than the players the game has)
      account_creation, auto_add: yes or no

    A changed timer setting starts the open turn's clock again under it, from now.
    """
    _control(config_path, database, game, "set", {"key": key, "value": value}, wait)


@cli.command()
@click.argument("game")
@click.argument("name")
@wait_option
@database_options
def reinstate(game, name, wait, config_path, database) -> None:
    """Take back a player's removal: they log in and play again; players are told."""
    _control(config_path, database, game, "reinstate", {"username": name}, wait)


# -- cluster nodes ----------------------------------------------------------------------------


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON object instead of a table.")
@database_options
def nodes(as_json, config_path, database) -> None:
    """List the cluster nodes, the games each runs, and the games waiting for a node."""
    from server.operating.on_database import cluster_view

    db = _open(config_path, database)
    try:
        view = cluster_view(db)
    finally:
        db.close()
    if as_json:
        click.echo(json.dumps(view, indent=2))
        return
    if not view["nodes"]:
        click.echo("no cluster nodes have joined this database")
    for n in view["nodes"]:
        state = n["state"] if n["alive"] else "down"
        click.echo(
            f"{n['name']:<16} {state:<9} {n['advertise']:<22} pid {n['pid']} on {n['host']}, "
            f"heartbeat {n['heartbeat_age']:.0f} s ago, {len(n['games'])} games"
            + (f": {', '.join(n['games'])}" if n["games"] else "")
        )
    if view["waiting"]:
        click.echo(f"waiting for a node: {', '.join(view['waiting'])}")


@cli.command("move-game")
@click.argument("game")
@click.argument("node")
@wait_option
@database_options
def move_game(game, node, wait, config_path, database) -> None:
    """Hand a game over to another cluster node (its players stay connected)."""
    from server.operating.on_database import move_game as move

    db = _open(config_path, database)
    try:
        click.echo(move(db, game, node, wallclock=time.time, wait=wait).text)
    finally:
        db.close()


# -- the database -----------------------------------------------------------------------------


@cli.command("upgrade-db")
@database_options
def upgrade_db(config_path, database) -> None:
    """Create or migrate the database schema to this version's; prints the revision."""
    from server.database import SyncDatabase, head_revision
    from server.database.opening import one_line, shown_url
    from server.operating.game_actions import OperationError

    url = _database_url(config_path, database)
    try:
        db = SyncDatabase(url)
    except Exception as error:
        raise OperationError(f"database: cannot use {shown_url(url)!r}: {one_line(error)}") from None
    url = shown_url(url)
    try:
        before = db.current_revision()
        after = db.upgrade()
    except Exception as error:
        raise OperationError(f"database: cannot upgrade {url}: {one_line(error)}") from None
    finally:
        db.close()
    if before == after:
        click.echo(f"database {url} is at revision {after} (the newest)")
    else:
        click.echo(
            f"database {url} upgraded from revision {before or 'none'} to {after}"
            + (" (the newest)" if after == head_revision() else "")
        )


cli.add_command(admin_user)


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--force", is_flag=True, help="Replace FILE if it exists.")
@database_options
def backup(file, force, config_path, database) -> None:
    """Copy a SQLite database consistently, also while the server runs (PostgreSQL: pg_dump)."""
    from server.operating.backup import backup as copy

    url = _database_url(config_path, database)
    from server.database.opening import shown_url

    click.echo(copy(url, file, force=force).describe(shown_url(url)))


# -- entry point ------------------------------------------------------------------------------


def _fail(message: str, code: int) -> None:
    print(f"tae-server: {' '.join(str(message).split())}", file=sys.stderr)
    sys.exit(code)


def main(argv: list[str] | None = None) -> None:
    from server.model.store import StoreError
    from server.operating.game_actions import OperationError

    try:
        cli.main(args=argv, prog_name="tae-server", standalone_mode=False)
    except click.exceptions.Exit as done:
        sys.exit(done.exit_code)
    except click.UsageError as error:
        _fail(error.format_message(), EXIT_USAGE)
    except click.Abort:
        _fail("aborted", EXIT_FAILURE)
    except ConfigError as error:
        _fail(str(error), EXIT_USAGE)
    except OperationError as error:
        _fail(str(error), EXIT_FAILURE)
    except StoreError as error:  # the database refused or could not do the change
        _fail(f"database: {error}", EXIT_FAILURE)
    except KeyboardInterrupt:
        _fail("interrupted", EXIT_FAILURE)
    except click.ClickException as error:
        _fail(error.format_message(), EXIT_FAILURE)
    except Exception as error:  # a bug: still one line, never a traceback
        _fail(f"internal error: {type(error).__name__}: {error}", EXIT_FAILURE)


if __name__ == "__main__":
    main()
