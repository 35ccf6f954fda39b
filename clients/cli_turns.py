"""``tae-client submit``, ``finish``, ``wait`` and ``play``: whole turns.

``submit`` sends a turn file all or nothing (``clients.turn_submission``); ``wait`` blocks until
the next turn starts; ``play`` is submit + finish + wait on one connection. The game being over
is exit 4, a ``--timeout`` passing exit 5.
"""

from __future__ import annotations

import time

import click

from protocol import TimeRemaining

from . import cli_output as output
from . import cli_status
from .blocking import BlockingClient
from .cli_runtime import (
    EXIT_CONNECTION,
    EXIT_GAME_OVER,
    EXIT_REFUSED,
    EXIT_WAIT_TIMEOUT,
    CliError,
    Runtime,
    describe_failure,
    emit_json,
    json_option,
    refuse_when_over,
    runtime,
    say,
    show,
    with_options,
)
from .errors import ClientError, ConnectFailed, ConnectionClosed, RequestTimeout
from .turn_file import load_turn_file
from .turn_submission import submit_turn

__all__ = ["finish", "play", "submit", "wait"]

DEFAULT_RETRIES = 8
MAX_RETRY_PAUSE = 30.0


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
        help="File format (default: by the extension, else detected: a JSON object or list, else "
        "TOML). FILE '-' reads standard input.",
    ),
]


def _submit(run: Runtime, file: str, replace, file_format, dry_run: bool) -> dict:
    """Run the submission; return the report's data (the caller prints it)."""
    turn_file = load_turn_file(file, file_format)  # TurnFileError: exit 2, before connecting
    client = run.client()
    refuse_when_over(client)
    try:
        report = client.run(submit_turn(client.game, turn_file, replace=replace, dry_run=dry_run))
    except ClientError as error:
        code, message = describe_failure(error)
        raise CliError(code, f"{message}; some orders may be queued: check 'tae-client orders'") from None
    return report.to_dict()


def _print_submission(run: Runtime, data: dict, as_json: bool) -> None:
    show(run, as_json, data, output.render_submission)


@click.command()
@with_options(submit_options)
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
    when = "normal"               # optional: only for a normal (or "combat") turn
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
    run = runtime()
    data = _submit(run, file, replace, file_format, dry_run)
    _print_submission(run, data, as_json)
    if not data["ok"]:
        raise CliError(EXIT_REFUSED, data["message"])


@click.command()
@json_option
def finish(as_json):
    """Tell the server I have finished this turn."""
    run = runtime()
    client = run.client()
    refuse_when_over(client)
    turn = client.game.turn
    client.finish_turn()
    say(run, as_json, {"finished": True, "turn": turn}, f"finished turn {turn}")


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
    click.option(
        "--retries",
        type=click.IntRange(min=0, max=100),
        default=DEFAULT_RETRIES,
        show_default=True,
        metavar="N",
        help="When the connection is lost (a server restart), reconnect up to N times in a row, "
        "waiting 1, 2, 4 … (at most 30) seconds between tries.",
    ),
]


def _wait(
    run: Runtime,
    after: int | None,
    wait_timeout: float | None,
    poll: float,
    retries: int,
    *,
    finished: bool = False,
) -> dict:
    """Wait until the turn is later than ``after`` (default: now) or the game is over; return
    the new status (``status_data`` plus ``previous_turn``). A lost connection is made again,
    up to ``retries`` times in a row (``_reconnect``)."""
    client = run.client()
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
            try:
                client.connection.wait_async(_turn_ended, timeout=step)
            except RequestTimeout:
                pass
            client.update()
        except (ConnectionClosed, RequestTimeout) as error:
            client = _reconnect(run, error, retries, deadline)
            game = client.game
    settings = run.settings()
    data = cli_status.status_data(game, game_name=settings.game, host=settings.host, port=settings.port)
    data["previous_turn"] = start
    return data


def _reconnect(run: Runtime, lost: ClientError, retries: int, deadline: float | None) -> BlockingClient:
    """Connect and log in again after ``lost``, trying up to ``retries`` times with a growing
    pause (1, 2, 4 … 30 s, never past ``deadline``); exit 3 when every try fails."""
    run.forget_client()
    problem: ClientError = lost
    for attempt in range(1, retries + 1):
        pause = min(2.0 ** (attempt - 1), MAX_RETRY_PAUSE)
        if deadline is not None:
            pause = min(pause, max(deadline - time.monotonic(), 0.0))
        click.echo(
            f"tae-client: note: lost the connection ({problem}); reconnecting in {pause:g} s "
            f"(try {attempt} of {retries})",
            err=True,
        )
        time.sleep(pause)
        try:
            client = run.client()
        except (ConnectFailed, ConnectionClosed, RequestTimeout) as error:
            run.forget_client()
            problem = error
            if deadline is not None and time.monotonic() >= deadline:
                break
            continue
        click.echo(f"tae-client: note: reconnected (turn {client.game.turn})", err=True)
        return client
    code, message = describe_failure(problem)
    raise CliError(code, f"{message} (gave up after {retries} tries to reconnect)")


def _print_new_turn(run: Runtime, data: dict) -> None:
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


@click.command()
@with_options(wait_options)
@click.option(
    "--after-turn",
    type=click.IntRange(min=0),
    metavar="N",
    help="Wait until the turn is later than N (default: the current turn). Use the "
    "turn 'finish' printed, so a turn that ended meanwhile is not missed.",
)
@json_option
def wait(wait_timeout, poll, retries, after_turn, as_json):
    """Wait until the next turn starts, then print the new turn and my scores.

    A lost connection (the server restarting) is made again, up to --retries times in a row.
    Exit 4 if the game is (or becomes) over, 5 if --timeout passes first, 3 if the server stays
    away.
    """
    run = runtime()
    data = _wait(run, after_turn, wait_timeout, poll, retries)
    if run.wants_json(as_json):
        emit_json(data)
    else:
        _print_new_turn(run, data)
    _game_over_exit(data)


@click.command()
@with_options(submit_options)
@with_options(wait_options)
@json_option
def play(file, replace, file_format, wait_timeout, poll, retries, as_json):
    """Submit FILE, finish the turn and wait for the next one, on one connection.

    Stops at the first step that fails, with that step's exit code.
    """
    run = runtime()
    json_mode = run.wants_json(as_json)
    submitted = _submit(run, file, replace, file_format, False)
    if not submitted["ok"]:
        if json_mode:
            emit_json({"submit": submitted, "finished": None, "wait": None})
        else:
            _print_submission(run, submitted, False)
        raise CliError(EXIT_REFUSED, submitted["message"])
    if not json_mode:
        _print_submission(run, submitted, False)
    client = run.client()
    turn = client.game.turn
    client.finish_turn()
    if not json_mode:
        click.echo(f"finished turn {turn}")
    try:
        data = _wait(run, turn, wait_timeout, poll, retries, finished=True)
    except CliError:
        if json_mode:
            emit_json({"submit": submitted, "finished": turn, "wait": None})
        raise
    if json_mode:
        emit_json({"submit": submitted, "finished": turn, "wait": data})
    else:
        _print_new_turn(run, data)
    _game_over_exit(data)
