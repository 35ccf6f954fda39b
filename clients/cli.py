"""``tae-client``: play TaE on a Thousand Parsec server from the command line or a script.

    tae-client [connection options] COMMAND [options]

Connection options come from flags, then ``TAE_*`` environment variables, then a TOML config
file (``clients.cli_settings``). Read commands (``status``, ``board``, ``fleets``,
``messages``, ``orders``) take ``--json``. ``submit FILE`` sends a whole turn from a TOML or
JSON file, all or nothing (``clients.turn_file``, ``clients.turn_submission``). Exit codes are
in ``EXIT_CODES`` and in ``tae-client --help``. Errors are one line on stderr, never a
traceback (``--debug`` shows one for internal errors).
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field

import click

from protocol import CreateAccount, Fail, Order, TimeRemaining, Version

from . import cli_output as output
from .blocking import BlockingClient
from .cli_settings import Settings, SettingsError, resolve_settings
from .errors import (
    ClientError,
    ConnectFailed,
    ConnectionClosed,
    Redirected,
    RequestFailed,
    RequestTimeout,
)
from .fleet_refs import FleetPicker, fleet_ref, parse_fleet_selector, parse_target, resolve_target
from .turn_file import ORDER_TYPES, TurnFileError, load_turn_file, parse_order_type
from .turn_submission import submit_turn

__all__ = ["EXIT_CODES", "CliError", "cli", "main"]

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_CONNECTION = 3
EXIT_GAME_OVER = 4
EXIT_WAIT_TIMEOUT = 5
EXIT_INTERRUPTED = 130
EXIT_INTERNAL = 70

EXIT_CODES = {
    EXIT_OK: "success",
    EXIT_REFUSED: "the server refused (an order, the login, the account …); nothing half-done",
    EXIT_USAGE: "bad command line, configuration or turn file (nothing was sent)",
    EXIT_CONNECTION: "cannot connect, connection lost, or the server did not answer in time",
    EXIT_GAME_OVER: "the game is over (submit, finish, wait, play)",
    EXIT_WAIT_TIMEOUT: "wait/play --timeout passed before the next turn started",
    EXIT_INTERNAL: "a bug in tae-client (rerun with --debug for the traceback)",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
}

_EPILOG = (
    "\b\nExit codes:\n"
    + "\n".join(f"  {code:<3} {text}" for code, text in EXIT_CODES.items())
    + (
        "\n\n\b\nConnection settings: flags > TAE_HOST, TAE_PORT, TAE_USER, TAE_PASSWORD,\n"
        "TAE_PROTOCOL, TAE_TIMEOUT > config file (--config, $TAE_CLIENT_CONFIG or\n"
        "~/.config/tae-client/config.toml; keys host, port, user, password, protocol,\n"
        "timeout) > defaults (localhost:6923, tp04, 30 s).\n\n"
        "\b\nFleets: an id, or merchant-leader, scientist-leader, settler-leader,\n"
        "mining-leader, bomber, colonist:TYPE (merchant, scientist, settler, mining).\n"
        "Targets: x,y (row 0 at the bottom) or a star system id."
    )
)


class CliError(Exception):
    """A problem to report in one line, with the exit code to use."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# ------------------------------------------------------------------------------------------------
# Error handling: one place turns every failure into one line and an exit code
# ------------------------------------------------------------------------------------------------


def _describe_failure(error: BaseException) -> tuple[int, str]:
    if isinstance(error, CliError):
        return error.code, error.message
    if isinstance(error, (SettingsError, TurnFileError)):
        return EXIT_USAGE, str(error)
    if isinstance(error, RequestFailed):
        return EXIT_REFUSED, f"the server refused: {error.fail.message}"
    if isinstance(error, ConnectFailed):
        return EXIT_CONNECTION, str(error)
    if isinstance(error, RequestTimeout):
        return EXIT_CONNECTION, f"the server did not answer in time ({error})"
    if isinstance(error, ConnectionClosed):
        return EXIT_CONNECTION, f"lost the connection to the server: {error}"
    if isinstance(error, Redirected):
        return EXIT_CONNECTION, f"the server redirects to {error.uri}; connect there instead"
    if isinstance(error, ClientError):
        return EXIT_CONNECTION, f"cannot talk to the server: {error}"
    if isinstance(error, click.UsageError):
        hint = ""
        if error.ctx is not None:
            hint = f" (see '{error.ctx.command_path} --help')"
        return EXIT_USAGE, f"{error.format_message()}{hint}"
    if isinstance(error, click.ClickException):
        return EXIT_USAGE, error.format_message()
    return EXIT_INTERNAL, f"internal error: {type(error).__name__}: {error} (rerun with --debug)"


class TaeGroup(click.Group):
    """A click group whose ``main`` reports every error as ``tae-client: …`` on stderr and
    exits with the documented code (also under click's ``CliRunner``)."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        argv = list(sys.argv[1:] if args is None else args)
        debug = "--debug" in argv or os.environ.get("TAE_CLIENT_DEBUG", "") not in ("", "0")
        try:
            code = super().main(argv, "tae-client", complete_var, standalone_mode=False, **extra)
            code = code if isinstance(code, int) else EXIT_OK
        except (KeyboardInterrupt, click.Abort):
            click.echo("tae-client: interrupted", err=True)
            code = EXIT_INTERRUPTED
        except BrokenPipeError:
            _silence_stdout()
            code = EXIT_REFUSED
        except Exception as error:
            code, message = _describe_failure(error)
            if code == EXIT_INTERNAL and debug:
                raise
            click.echo(f"tae-client: {message}", err=True)
        if standalone_mode:
            sys.exit(code)
        return code


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


# ------------------------------------------------------------------------------------------------
# The session of one command: settings, connection, output
# ------------------------------------------------------------------------------------------------


@dataclass
class Runtime:
    flags: dict
    config: str | None
    json_default: bool
    color: bool | None
    _settings: Settings | None = None
    _client: BlockingClient | None = None
    closers: list = field(default_factory=list)

    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = resolve_settings(self.flags, os.environ, self.config)
        return self._settings

    def credentials(self) -> tuple[str, str]:
        settings = self.settings()
        if not settings.user:
            raise CliError(
                EXIT_USAGE, "no user: give --user NAME[@GAME], set TAE_USER or put user in the config file"
            )
        password = settings.password
        if password is None:
            if sys.stdin.isatty():
                password = click.prompt(f"password for {settings.user}", hide_input=True, err=True)
            else:
                raise CliError(
                    EXIT_USAGE,
                    "no password: give --password, set TAE_PASSWORD or put password in the config file",
                )
        return settings.user, password

    def connect(self) -> BlockingClient:
        settings = self.settings()
        client = BlockingClient.connect(
            settings.host, settings.port, version=settings.version, timeout=settings.timeout
        )
        self.closers.append(client.close)
        return client

    def client(self) -> BlockingClient:
        """Connected, logged in and up to date."""
        if self._client is None:
            user, password = self.credentials()
            client = self.connect()
            try:
                client.login(user, password)
            except RequestFailed as error:
                raise CliError(EXIT_REFUSED, f"login as {user} refused: {error.fail.message}") from None
            client.update()
            self._client = client
        return self._client

    def close(self) -> None:
        for close in reversed(self.closers):
            try:
                close()
            except Exception:
                pass
        self.closers.clear()

    def console(self, *, stderr: bool = False):
        return output.make_console(self.color, stderr=stderr)

    def wants_json(self, flag: bool) -> bool:
        return flag or self.json_default

    @property
    def colored(self) -> bool:
        if self.color is not None:
            return self.color
        return "NO_COLOR" not in os.environ


def _runtime() -> Runtime:
    return click.get_current_context().find_object(Runtime)


def _emit_json(data) -> None:
    click.echo(output.dump_json(data))


def _show(runtime: Runtime, as_json: bool, data, render) -> None:
    """Print `data` as JSON when asked (flag or global --json), else with `render(console, data)`."""
    if runtime.wants_json(as_json):
        _emit_json(data)
    else:
        render(runtime.console(), data)


def json_option(function):
    """``--json`` and ``--color/--no-color`` of a command that prints something."""
    function = click.option(
        "--color/--no-color",
        "color",
        default=None,
        callback=_set_color,
        expose_value=False,
        help="Force or turn off colour.",
    )(function)
    return click.option("--json", "as_json", is_flag=True, help="Print JSON (stable keys) instead of text.")(
        function
    )


def _set_color(ctx, param, value):
    if value is not None:
        ctx.find_object(Runtime).color = value
    return value


@click.group(
    cls=TaeGroup,
    epilog=_EPILOG,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option("--host", metavar="HOST", help="Server host [env TAE_HOST; default localhost].")
@click.option("--port", metavar="PORT", help="Server port [env TAE_PORT; default 6923].")
@click.option("--user", "-u", metavar="NAME[@GAME]", help="Player name [env TAE_USER].")
@click.option(
    "--password",
    metavar="PASSWORD",
    help="Password [env TAE_PASSWORD; prefer the env or config file: flags show in ps].",
)
@click.option("--protocol", metavar="tp03|tp04", help="Protocol version [env TAE_PROTOCOL; tp04].")
@click.option("--timeout", metavar="SECONDS", help="Seconds to wait for each answer [env TAE_TIMEOUT; 30].")
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
@click.version_option("0.1.0", "--version", prog_name="tae-client")
@click.pass_context
def cli(ctx, host, port, user, password, protocol, timeout, config, json_default, color, debug):
    """Play TaE (Tigris and Euphrates in space) on a Thousand Parsec server."""
    flags = {
        "host": host,
        "port": port,
        "user": user,
        "password": password,
        "protocol": protocol,
        "timeout": timeout,
    }
    if color is None and "NO_COLOR" in os.environ:
        color = False
    runtime = Runtime(flags, config, json_default, color)
    ctx.obj = runtime
    ctx.call_on_close(runtime.close)


# ------------------------------------------------------------------------------------------------
# Accounts and settings
# ------------------------------------------------------------------------------------------------


@cli.command("create-account")
@click.option("--email", default="", help="E-mail address to store with the account.")
@click.option("--comment", default="", help="A comment to store with the account.")
@json_option
def create_account(email, comment, as_json):
    """Create the account --user/--password on the server (exit 1 if it exists)."""
    runtime = _runtime()
    user, password = runtime.credentials()
    client = runtime.connect()
    try:
        reply = client.request(CreateAccount(user, password, email, comment))
    except RequestFailed as error:
        raise CliError(EXIT_REFUSED, f"account {user} not created: {error.fail.message}") from None
    if runtime.wants_json(as_json):
        _emit_json({"created": True, "user": user, "message": reply.message})
    else:
        click.echo(f"account {user} created ({reply.message})")


@cli.command("settings")
@json_option
def show_settings(as_json):
    """Show the connection settings in effect and where each comes from (no connection)."""
    runtime = _runtime()
    data = runtime.settings().public()
    if runtime.wants_json(as_json):
        _emit_json(data)
        return
    for key in ("host", "port", "user", "password", "protocol", "timeout"):
        value = data[key]
        click.echo(f"{key:<9} {'-' if value is None else value}  ({data['sources'][key]})")
    click.echo(f"{'config':<9} {data['config'] or '-'}")


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
    runtime = _runtime()
    client = runtime.client()
    settings = runtime.settings()
    data = output.status_data(
        client.game, game_name=_game_name(client, settings), host=settings.host, port=settings.port
    )
    _show(runtime, as_json, data, output.render_status)


@cli.command()
@json_option
def board(as_json):
    """Draw the board: colonies by type, leaders, artifacts, regions, destroyed systems."""
    runtime = _runtime()
    data = output.board_data(runtime.client().game)
    _show(
        runtime,
        as_json,
        data,
        lambda console, shown: output.render_board(console, shown, color=runtime.colored),
    )


@cli.command()
@click.option("--all", "everyone", is_flag=True, help="Every player's fleets, not only mine.")
@json_option
def fleets(everyone, as_json):
    """List my fleets (or everyone's) with their names, places and orders."""
    runtime = _runtime()
    data = output.fleets_data(runtime.client().game, everyone=everyone)
    _show(
        runtime, as_json, data, lambda console, shown: output.render_fleets(console, shown, everyone=everyone)
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
    runtime = _runtime()
    data = output.messages_data(runtime.client().game, subject=subject, since_turn=since_turn)
    if last is not None:
        data = data[-last:]
    _show(runtime, as_json, data, output.render_messages)


@cli.command()
@json_option
def orders(as_json):
    """List the orders queued on my fleets this turn."""
    runtime = _runtime()
    data = output.orders_data(runtime.client().game)
    _show(runtime, as_json, data, output.render_orders)


# ------------------------------------------------------------------------------------------------
# Single orders
# ------------------------------------------------------------------------------------------------


@cli.group("order")
def order_group():
    """Insert, probe or remove single orders."""


def _pick_fleet(client: BlockingClient, text: str, *, with_orders: bool = False):
    try:
        selector = parse_fleet_selector(text)
    except ValueError as error:
        raise CliError(EXIT_USAGE, str(error)) from None
    picker = FleetPicker(client.game)
    if with_orders and not selector.by_id:
        found = sorted(picker.candidates(selector), key=lambda f: (not f.orders, f.id))
        if found:
            return found[0]
    try:
        return picker.pick(selector)
    except LookupError as error:
        raise CliError(EXIT_REFUSED, str(error.args[0])) from None


def _order_and_target(client: BlockingClient, order_text: str, target_text: str | None):
    try:
        order_type = parse_order_type(order_text)
    except ValueError as error:
        raise CliError(EXIT_USAGE, str(error)) from None
    name, takes_target = ORDER_TYPES[order_type]
    if takes_target and target_text is None:
        raise CliError(EXIT_USAGE, f"{name} needs a TARGET (x,y or a star system id)")
    if not takes_target and target_text is not None:
        raise CliError(EXIT_USAGE, f"{name} takes no TARGET")
    target_id = None
    if target_text is not None:
        try:
            target = parse_target(target_text)
        except ValueError as error:
            raise CliError(EXIT_USAGE, str(error)) from None
        try:
            target_id = resolve_target(client.game, target)
        except LookupError as error:  # as in a turn file: the game, not the syntax, says no
            raise CliError(EXIT_REFUSED, str(error.args[0])) from None
    try:
        desc = client.game.order_desc(name)
    except KeyError:
        raise CliError(EXIT_REFUSED, f"the server has no order type {name}") from None
    return desc, target_id


def _refusal(client: BlockingClient, fleet, desc, error: RequestFailed) -> CliError:
    reason = error.fail.message
    allowed = client.game.allowed_orders(fleet.id)
    if desc.id not in {d.id for d in allowed}:
        names = ", ".join(d.name for d in allowed) or "no orders now"
        reason += f" ({fleet_ref(fleet)} {fleet.id} accepts: {names})"
    return CliError(EXIT_REFUSED, f"{desc.name} by {fleet_ref(fleet)} {fleet.id} refused: {reason}")


def _target_text(client: BlockingClient, target_id: int | None) -> str:
    if target_id is None:
        return ""
    for view in client.game.systems().values():
        if view.id == target_id:
            return f" → {view.x},{view.y}"
    return f" → #{target_id}"


@order_group.command("insert")
@click.argument("fleet")
@click.argument("order")
@click.argument("target", required=False)
@click.option(
    "--slot", type=int, default=-1, show_default=True, help="Where in the fleet's queue (-1: at the end)."
)
@json_option
def order_insert(fleet, order, target, slot, as_json):
    """Queue ORDER for FLEET, at TARGET (x,y or a system id)."""
    runtime = _runtime()
    client = runtime.client()
    _refuse_when_over(client)
    view = _pick_fleet(client, fleet)
    desc, target_id = _order_and_target(client, order, target)
    try:
        reply = client.insert_order(view.id, desc.id, target_id, slot=slot)
    except RequestFailed as error:
        raise _refusal(client, view, desc, error) from None
    slot_used = reply.slot if isinstance(reply, Order) else len(client.game.fleet(view.id).orders) - 1
    data = {
        "inserted": True,
        "fleet": view.id,
        "fleet_ref": fleet_ref(view),
        "order": desc.name,
        "order_type": desc.id,
        "target": target_id,
        "slot": slot_used,
    }
    if runtime.wants_json(as_json):
        _emit_json(data)
    else:
        click.echo(
            f"inserted {desc.name} by {fleet_ref(view)} {view.id}"
            f"{_target_text(client, target_id)} (slot {slot_used})"
        )


@order_group.command("probe")
@click.argument("fleet")
@click.argument("order")
@click.argument("target", required=False)
@json_option
def order_probe(fleet, order, target, as_json):
    """Ask whether the server would accept ORDER for FLEET (nothing is queued)."""
    runtime = _runtime()
    client = runtime.client()
    _refuse_when_over(client)
    view = _pick_fleet(client, fleet)
    desc, target_id = _order_and_target(client, order, target)
    try:
        client.probe_order(view.id, desc.id, target_id)
    except RequestFailed as error:
        refusal = _refusal(client, view, desc, error)
        if runtime.wants_json(as_json):
            _emit_json(
                {
                    "accepted": False,
                    "fleet": view.id,
                    "order": desc.name,
                    "target": target_id,
                    "reason": refusal.message,
                    "code": error.code,
                }
            )
        raise refusal from None
    if runtime.wants_json(as_json):
        _emit_json(
            {
                "accepted": True,
                "fleet": view.id,
                "order": desc.name,
                "target": target_id,
                "reason": None,
                "code": None,
            }
        )
    else:
        click.echo(
            f"the server would accept {desc.name} by {fleet_ref(view)} {view.id}"
            f"{_target_text(client, target_id)}"
        )


@order_group.command("remove")
@click.argument("fleet")
@click.argument("slots", nargs=-1, type=click.IntRange(min=0))
@json_option
def order_remove(fleet, slots, as_json):
    """Remove FLEET's orders (all, or the given SLOTS)."""
    runtime = _runtime()
    client = runtime.client()
    view = _pick_fleet(client, fleet, with_orders=True)
    count = len(view.orders)
    wanted = sorted(set(slots)) if slots else list(range(count))
    if not wanted:
        result = {"fleet": view.id, "fleet_ref": fleet_ref(view), "removed": [], "failed": []}
        _say(runtime, as_json, result, f"{fleet_ref(view)} {view.id} has no orders")
        return
    results = client.remove_orders(view.id, wanted)
    ordered = sorted(wanted, reverse=True)
    removed = [s for s, r in zip(ordered, results) if not isinstance(r, Fail)]
    failed = [{"slot": s, "reason": r.message} for s, r in zip(ordered, results) if isinstance(r, Fail)]
    data = {"fleet": view.id, "fleet_ref": fleet_ref(view), "removed": sorted(removed), "failed": failed}
    text = f"removed {len(removed)} order(s) from {fleet_ref(view)} {view.id}"
    _say(runtime, as_json, data, text)
    if failed:
        raise CliError(EXIT_REFUSED, "; ".join(f"slot {f['slot']}: {f['reason']}" for f in failed))


@order_group.command("clear")
@json_option
def order_clear(as_json):
    """Remove every order queued on my fleets this turn."""
    runtime = _runtime()
    client = runtime.client()
    removed, failed = 0, []
    for view in client.game.my_fleets():
        if not view.orders:
            continue
        for result in client.remove_orders(view.id):
            if isinstance(result, Fail):
                failed.append(f"{fleet_ref(view)} {view.id}: {result.message}")
            else:
                removed += 1
    _say(runtime, as_json, {"removed": removed, "failed": failed}, f"removed {removed} order(s)")
    if failed:
        raise CliError(EXIT_REFUSED, "could not remove: " + "; ".join(failed))


def _say(runtime: Runtime, as_json: bool, data, text: str) -> None:
    if runtime.wants_json(as_json):
        _emit_json(data)
    else:
        click.echo(text)


# ------------------------------------------------------------------------------------------------
# Whole turns
# ------------------------------------------------------------------------------------------------


def _refuse_when_over(client: BlockingClient) -> None:
    over = client.game.game_over
    if over is not None:
        raise CliError(
            EXIT_GAME_OVER,
            f"the game is over (turn {over.turn}): "
            f"{over.body.strip().splitlines()[0] if over.body else ''}".rstrip(": "),
        )


submit_options = [
    click.argument("file", metavar="FILE"),
    click.option(
        "--replace",
        is_flag=True,
        default=None,
        help="Replace the orders already queued this turn (as 'replace = true').",
    ),
    click.option(
        "--format",
        "file_format",
        type=click.Choice(["toml", "json"]),
        help="File format (default: by extension; '-' reads stdin).",
    ),
]


def _with(options):
    def decorate(function):
        for option in reversed(options):
            function = option(function)
        return function

    return decorate


def _submit(runtime: Runtime, file: str, replace, file_format, dry_run: bool) -> dict:
    """Run the submission; return the report's data (the caller prints it)."""
    turn_file = load_turn_file(file, file_format)  # TurnFileError: exit 2, before connecting
    client = runtime.client()
    _refuse_when_over(client)
    try:
        report = client.run(submit_turn(client.game, turn_file, replace=replace, dry_run=dry_run))
    except ClientError as error:
        code, message = _describe_failure(error)
        raise CliError(code, f"{message}; some orders may be queued: check 'tae-client orders'") from None
    return report.to_dict()


def _print_submission(runtime: Runtime, data: dict, as_json: bool) -> None:
    _show(runtime, as_json, data, output.render_submission)


@cli.command()
@_with(submit_options)
@click.option("--dry-run", is_flag=True, help="Only probe the orders; insert nothing.")
@json_option
def submit(file, replace, file_format, dry_run, as_json):
    """Submit a whole turn from FILE (TOML or JSON), all or nothing.

    Each order is probed first; only if the server accepts every one are they inserted. If an
    insert is refused anyway (probes do not see each other: the 2-orders limit), the orders
    inserted so far are removed again. Exit 1 and a report say what was refused and why;
    exit 2 for a file that cannot be used (nothing is sent).

    \b
    turn = 3                      # optional: only for this turn
    replace = true                # optional: like --replace
    [[orders]]
    fleet = "colonist:merchant"   # an id or a name (see tae-client --help)
    order = "Colonize"            # ColonizeMining, Colonize, Move, Attack
    target = [3, 2]               # [x, y], "x,y" or a system id
    [[orders]]                    # combat turns: N eligible colonists
    order = "Reinforce"
    count = 2

    JSON: {"orders": [{"fleet": ..., "order": ..., "target": ...}]}. With --dry-run and
    --replace, the probes still see the orders queued now.
    """
    runtime = _runtime()
    data = _submit(runtime, file, replace, file_format, dry_run)
    _print_submission(runtime, data, as_json)
    if not data["ok"]:
        raise CliError(EXIT_REFUSED, data["message"])


@cli.command()
@json_option
def finish(as_json):
    """Tell the server I have finished this turn."""
    runtime = _runtime()
    client = runtime.client()
    _refuse_when_over(client)
    turn = client.game.turn
    client.finish_turn()
    _say(runtime, as_json, {"finished": True, "turn": turn}, f"finished turn {turn}")


wait_options = [
    click.option(
        "--timeout",
        "wait_timeout",
        type=click.FloatRange(min=0),
        metavar="SECONDS",
        help="Give up after SECONDS (exit 5); default: wait as long as it takes.",
    ),
    click.option(
        "--poll",
        type=click.FloatRange(min=0.05),
        default=5.0,
        show_default=True,
        metavar="SECONDS",
        help="Also look for a new turn every SECONDS.",
    ),
]


def _wait(
    runtime: Runtime, after: int | None, wait_timeout: float | None, poll: float, *, finished: bool = False
) -> dict:
    """Wait until the turn is later than ``after`` (default: now) or the game is over; return
    the new status (``status_data`` plus ``previous_turn``)."""
    client = runtime.client()
    game = client.game
    start = game.turn if after is None else after
    if start is None:
        raise CliError(EXIT_CONNECTION, "the server does not show the turn number (object 0)")
    remaining = client.cache.time_remaining
    me = game.player_id
    if (
        not finished
        and not game.is_over
        and remaining is not None
        and me is not None
        and me in remaining.waiting
        and game.turn == start
    ):
        click.echo(f"tae-client: note: you have not finished turn {game.turn}", err=True)
    deadline = None if wait_timeout is None else time.monotonic() + wait_timeout
    while not game.is_over and (game.turn is None or game.turn <= start):
        step = poll
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CliError(EXIT_WAIT_TIMEOUT, f"turn {game.turn} had not ended after {wait_timeout:g} s")
            step = min(step, left)
        try:
            client.connection.wait_async(_turn_ended, timeout=step)
        except RequestTimeout:
            pass
        client.update()
    settings = runtime.settings()
    data = output.status_data(game, game_name=settings.game, host=settings.host, port=settings.port)
    data["previous_turn"] = start
    return data


def _print_new_turn(runtime: Runtime, data: dict) -> None:
    scores = data["scores"]
    if data["game_over"]:
        click.echo(f"the game is over (turn {data['game_over']['turn']})")
        click.echo(data["game_over"]["message"])
        return
    text = f"turn {data['turn']} started"
    if data["phase"] == "combat":
        text += " (combat turn)"
    if scores:
        text += (
            f"; scores M {scores['money']} T {scores['technology']} "
            f"P {scores['people']} R {scores['raw_materials']} A {scores['artifacts']}"
        )
    click.echo(text)


def _game_over_exit(data: dict) -> None:
    if data["game_over"]:
        raise CliError(EXIT_GAME_OVER, f"the game is over (turn {data['game_over']['turn']})")


def _turn_ended(message) -> bool:
    return isinstance(message, TimeRemaining) and message.time == 0


@cli.command()
@_with(wait_options)
@click.option(
    "--after-turn",
    type=click.IntRange(min=0),
    metavar="N",
    help="Wait until the turn is later than N (default: the current turn). Use the "
    "turn 'finish' printed, so a turn that ended meanwhile is not missed.",
)
@json_option
def wait(wait_timeout, poll, after_turn, as_json):
    """Wait until the next turn starts, then print the new turn and my scores.

    Exit 4 if the game is (or becomes) over, 5 if --timeout passes first.
    """
    runtime = _runtime()
    data = _wait(runtime, after_turn, wait_timeout, poll)
    if runtime.wants_json(as_json):
        _emit_json(data)
    else:
        _print_new_turn(runtime, data)
    _game_over_exit(data)


@cli.command()
@_with(submit_options)
@_with(wait_options)
@json_option
def play(file, replace, file_format, wait_timeout, poll, as_json):
    """Submit FILE, finish the turn and wait for the next one, on one connection.

    Stops at the first step that fails, with that step's exit code.
    """
    runtime = _runtime()
    json_mode = runtime.wants_json(as_json)
    submitted = _submit(runtime, file, replace, file_format, False)
    if not submitted["ok"]:
        if json_mode:
            _emit_json({"submit": submitted, "finished": None, "wait": None})
        else:
            _print_submission(runtime, submitted, False)
        raise CliError(EXIT_REFUSED, submitted["message"])
    if not json_mode:
        _print_submission(runtime, submitted, False)
    client = runtime.client()
    turn = client.game.turn
    client.finish_turn()
    if not json_mode:
        click.echo(f"finished turn {turn}")
    try:
        data = _wait(runtime, turn, wait_timeout, poll, finished=True)
    except CliError:
        if json_mode:
            _emit_json({"submit": submitted, "finished": turn, "wait": None})
        raise
    if json_mode:
        _emit_json({"submit": submitted, "finished": turn, "wait": data})
    else:
        _print_new_turn(runtime, data)
    _game_over_exit(data)


@cli.command(
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []}
)
@click.argument("bot_args", nargs=-1, type=click.UNPROCESSED)
def bot(bot_args):
    """Play with bots until GAME OVER: tae-client bot [NAME ...] [-n COUNT] ... (bot --help).

    The host, port and protocol come from tae-client's settings unless given after `bot`.
    """
    from .bot import main as bot_main

    settings = _runtime().settings()
    defaults = [
        "--host",
        settings.host,
        "--port",
        str(settings.port),
        "--protocol",
        "3" if settings.version == Version.TP03 else "4",
    ]
    raise SystemExit(bot_main(defaults + list(bot_args)))


def main(argv: list[str] | None = None) -> None:
    """The ``tae-client`` console script."""
    cli.main(args=argv, prog_name="tae-client")


if __name__ == "__main__":
    main()
