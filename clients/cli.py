"""``tae-client``: play TaE on a Thousand Parsec server from the command line or a script.

    tae-client [connection options] COMMAND [options]

Connection options come from flags, then ``TAE_*`` environment variables, then a TOML config
file (``clients.cli_settings``). Read commands (``status``, ``board``, ``fleets``,
``messages``, ``orders``) take ``--json``. ``submit FILE`` sends a whole turn from a TOML or
JSON file, all or nothing (``clients.cli_turns``); ``order …`` single orders
(``clients.cli_orders``); ``bot`` plays with bots (``clients.cli_bot``); ``discover`` lists the
servers on the local network (``clients.cli_discover``). Exit codes are in ``EXIT_CODES`` and in
``tae-client --help``. Errors are one line on stderr, never a traceback (``--debug`` shows one
for internal errors); ``clients.cli_runtime`` holds what the commands share.
"""

from __future__ import annotations

import os
import sys
from importlib.metadata import PackageNotFoundError, version

import click

from protocol import CreateAccount

from . import cli_board, cli_status
from . import cli_output as output
from .blocking import BlockingClient
from .cli_absence import back, resign, vacation
from .cli_bot import bot
from .cli_discover import discover
from .cli_notify import notify
from .cli_orders import order_group
from .cli_runtime import (
    EXIT_CODES,
    EXIT_REFUSED,
    EXIT_USAGE,
    CliError,
    Runtime,
    TaeGroup,
    emit_json,
    json_option,
    runtime,
    say,
    show,
)
from .cli_settings import Settings
from .cli_turns import finish, play, submit, wait
from .errors import RequestFailed

__all__ = ["EXIT_CODES", "CliError", "cli", "main"]

_EPILOG = (
    "\b\nExit codes:\n"
    + "\n".join(f"  {code:<3} {text}" for code, text in EXIT_CODES.items())
    + (
        "\n\n\b\nConnection settings: flags > TAE_HOST, TAE_PORT, TAE_USER, TAE_PASSWORD,\n"
        "TAE_PROTOCOL, TAE_TIMEOUT, TAE_TLS, TAE_CA_FILE, TAE_INSECURE, TAE_WEB_URL > config\n"
        "file (--config, $TAE_CLIENT_CONFIG or ~/.config/tae-client/config.toml; keys host,\n"
        "port, user, password, protocol, timeout, tls, ca_file, insecure, web_url) > defaults\n"
        "(localhost:6923, or 6924 with --tls; tp04, 30 s).\n\n"
        "\b\nFleets: an id, or merchant-leader, scientist-leader, settler-leader,\n"
        "mining-leader, bomber, colonist:TYPE (merchant, scientist, settler, mining).\n"
        "Targets: x,y (row 0 at the bottom) or a star system id."
    )
)


def _version() -> str:
    try:
        return version("tpserver-tae")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree never installed
        return "unknown (not installed)"


@click.group(
    cls=TaeGroup,
    epilog=_EPILOG,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option("--host", metavar="HOST", help="Server host [env TAE_HOST; default localhost].")
@click.option("--port", metavar="PORT", help="Server port [env TAE_PORT; default 6923, 6924 with --tls].")
@click.option("--user", "-u", metavar="NAME[@GAME]", help="Player name [env TAE_USER].")
@click.option(
    "--password",
    metavar="PASSWORD",
    help="Password [env TAE_PASSWORD; prefer the env or config file: flags show in ps].",
)
@click.option("--protocol", metavar="tp03|tp04", help="Protocol version [env TAE_PROTOCOL; tp04].")
@click.option("--timeout", metavar="SECONDS", help="Seconds to wait for each answer [env TAE_TIMEOUT; 30].")
@click.option(
    "--tls/--no-tls",
    "tls",
    default=None,
    help="TLS from the first byte, as the server's ssl: (tps) listener speaks [env TAE_TLS].",
)
@click.option(
    "--ca-file",
    metavar="FILE",
    help="With --tls: trust the CAs in this PEM file, not the system store [env TAE_CA_FILE].",
)
@click.option(
    "--insecure",
    is_flag=True,
    default=None,
    help="With --tls: accept any certificate (self-signed test servers only) [env TAE_INSECURE].",
)
@click.option(
    "--web-url",
    metavar="URL",
    help=(
        "The server's web listener, for notify/vacation/back/resign/passwd "
        "[env TAE_WEB_URL; http://HOST:8080]."
    ),
)
@click.option(
    "--config",
    "config",
    metavar="FILE",
    help="TOML config file [env TAE_CLIENT_CONFIG; ~/.config/tae-client/config.toml].",
)
@click.option("--json", "json_default", is_flag=True, help="JSON output for every command.")
@click.option(
    "--color/--no-color",
    "color",
    default=None,
    help="Force or turn off colour (default: on a terminal, unless NO_COLOR is set).",
)
@click.option("--debug", is_flag=True, help="Show a traceback for internal errors.")
@click.version_option(_version(), "--version", prog_name="tae-client", message="%(prog)s %(version)s")
@click.pass_context
def cli(
    ctx,
    host,
    port,
    user,
    password,
    protocol,
    timeout,
    tls,
    ca_file,
    insecure,
    web_url,
    config,
    json_default,
    color,
    debug,
):
    """Play TaE (Tigris and Euphrates in space) on a Thousand Parsec server."""
    flags = {
        "host": host,
        "port": port,
        "user": user,
        "password": password,
        "protocol": protocol,
        "timeout": timeout,
        "tls": tls,
        "ca_file": ca_file,
        "insecure": insecure,
        "web_url": web_url,
    }
    if color is None and "NO_COLOR" in os.environ:
        color = False
    run = Runtime(flags, config, json_default, color)
    ctx.obj = run
    ctx.call_on_close(run.close)


# ------------------------------------------------------------------------------------------------
# Accounts and settings
# ------------------------------------------------------------------------------------------------


@cli.command("create-account")
@click.option("--email", default="", help="E-mail address to store with the account.")
@click.option("--comment", default="", help="A comment to store with the account.")
@json_option
def create_account(email, comment, as_json):
    """Create the account --user/--password on the server (exit 1 if it exists)."""
    run = runtime()
    user, password = run.credentials()
    client = run.connect()
    try:
        reply = client.request(CreateAccount(user, password, email, comment))
    except RequestFailed as error:
        raise CliError(EXIT_REFUSED, f"account {user} not created: {error.fail.message}") from None
    if run.wants_json(as_json):
        emit_json({"created": True, "user": user, "message": reply.message})
    else:
        click.echo(f"account {user} created ({reply.message})")


@cli.command("settings")
@json_option
def show_settings(as_json):
    """Show the connection settings in effect and where each comes from (no connection)."""
    run = runtime()
    data = run.settings().public()
    if run.wants_json(as_json):
        emit_json(data)
        return
    for key in ("host", "port", "user", "password", "protocol", "timeout"):
        value = data[key]
        click.echo(f"{key:<9} {'-' if value is None else value}  ({data['sources'][key]})")
    tls = data["tls"]
    text = "on" if tls["enabled"] else "off"
    if tls["enabled"]:
        text += (
            ", insecure (no certificate check)"
            if tls["insecure"]
            else f", CA {tls['ca_file'] or 'system store'}"
        )
    click.echo(f"{'tls':<9} {text}  ({tls['sources']['tls']})")
    click.echo(f"{'web_url':<9} {data['web_url']}  ({data['sources']['web_url']})")
    click.echo(f"{'config':<9} {data['config'] or '-'}")


@cli.command("passwd")
@click.option(
    "--new-password-stdin",
    "from_stdin",
    is_flag=True,
    help="Read the new password from the first line of stdin (for scripts) instead of asking.",
)
@json_option
def passwd(from_stdin, as_json):
    """Change the password of --user (through the server's web listener, see --web-url)."""
    run = runtime()
    api = run.player_api()
    if from_stdin:
        new_password = sys.stdin.readline().rstrip("\r\n")
    elif sys.stdin.isatty():
        new_password = click.prompt("new password", hide_input=True, confirmation_prompt=True, err=True)
    else:
        raise CliError(EXIT_USAGE, "no new password: run on a terminal or give --new-password-stdin")
    if not new_password:
        raise CliError(EXIT_USAGE, "the new password is empty")
    api.call("POST", "password", {"new_password": new_password})
    settings = run.settings()
    hint = ""
    if settings.sources.get("password") in ("file", "env"):
        where = "$TAE_PASSWORD" if settings.sources["password"] == "env" else str(settings.config_path)
        hint = f"; update {where}"
    say(run, as_json, {"changed": True, "user": api.username}, f"password of {api.username} changed{hint}")


# ------------------------------------------------------------------------------------------------
# Read commands
# ------------------------------------------------------------------------------------------------


def _game_name(client: BlockingClient, settings: Settings) -> str | None:
    if settings.game:
        return settings.game
    try:
        games = client.games()
    except RequestFailed:
        return None
    return games[0].name if len(games) == 1 else None


@cli.command()
@json_option
def status(as_json):
    """Turn, time left, who has finished, my scores."""
    run = runtime()
    client = run.client()
    settings = run.settings()
    data = cli_status.status_data(
        client.game, game_name=_game_name(client, settings), host=settings.host, port=settings.port
    )
    show(run, as_json, data, cli_status.render_status)


@cli.command()
@json_option
def board(as_json):
    """Draw the board: colonies by type, leaders, artifacts, regions, destroyed systems."""
    run = runtime()
    data = cli_board.board_data(run.client().game)
    show(
        run,
        as_json,
        data,
        lambda console, shown: cli_board.render_board(console, shown, color=run.colored),
    )


@cli.command()
@click.option("--all", "everyone", is_flag=True, help="Every player's fleets, not only mine.")
@json_option
def fleets(everyone, as_json):
    """List my fleets (or everyone's) with their names, places and orders."""
    run = runtime()
    data = output.fleets_data(run.client().game, everyone=everyone)
    show(
        run,
        as_json,
        data,
        lambda console, shown: output.render_fleets(console, shown, everyone=everyone),
        key="fleets",
    )


@cli.command()
@click.option("--subject", metavar="TEXT", help="Only messages whose subject contains TEXT.")
@click.option(
    "--since-turn", type=click.IntRange(min=0), metavar="N", help="Only messages of turn N and later."
)
@click.option("--last", type=click.IntRange(min=1), metavar="N", help="Only the last N messages.")
@json_option
def messages(subject, since_turn, last, as_json):
    """List my messages (turn reports, scores, combat, game over)."""
    run = runtime()
    data = output.messages_data(run.client().game, subject=subject, since_turn=since_turn)
    if last is not None:
        data = data[-last:]
    show(run, as_json, data, output.render_messages, key="messages")


@cli.command()
@json_option
def orders(as_json):
    """List the orders queued on my fleets this turn."""
    run = runtime()
    data = output.orders_data(run.client().game)
    show(run, as_json, data, output.render_orders, key="orders")


for command in (order_group, submit, finish, wait, play, bot, discover, vacation, back, resign, notify):
    cli.add_command(command)


def main(argv: list[str] | None = None) -> None:
    """The ``tae-client`` console script."""
    cli.main(args=argv, prog_name="tae-client")


if __name__ == "__main__":
    main()
