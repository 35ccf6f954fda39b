"""``tae-client bot``: play whole games with bots, from tae-client's own connection settings.

The server, protocol, request timeout and TLS come from the global options (``tae-client --host
H --port P --protocol tp03 bot …``), like every other command. Each bot logs in as its NAME
(``NAME@GAME`` with ``--game``) with the bots' password, creating the account if it is new; the
global ``--user``/``--password`` are not used. The result is a table (or one JSON document) and
the exit code says how the worst bot ended (``clients.bot.BotResult.failure``).
"""

from __future__ import annotations

import logging
import time
import zlib

import click

from ruleset.ai import DEFAULT_ITERATIONS, LEVEL_NAMES, parse_level

from .bot import (
    DEFAULT_MAX_TURNS,
    DEFAULT_PASSWORD,
    DEFAULT_TURN_TIMEOUT,
    BotResult,
    Failure,
    format_results,
    log,
    run_bots,
)
from .bot_view import Strategy
from .cli_runtime import (
    EXIT_CONNECTION,
    EXIT_INTERNAL,
    EXIT_REFUSED,
    EXIT_USAGE,
    EXIT_WAIT_TIMEOUT,
    CliError,
    emit_json,
    json_option,
    runtime,
)
from .seat_frames import AiStrategy, RandomStrategy

__all__ = ["bot"]

#: Exit code per way a bot can end badly, worst first.
_EXIT_FOR = (
    (Failure.INTERNAL, EXIT_INTERNAL),
    (Failure.CONNECTION, EXIT_CONNECTION),
    (Failure.REFUSED, EXIT_REFUSED),
    (Failure.DEADLINE, EXIT_WAIT_TIMEOUT),
)


@click.command()
@click.argument("names", nargs=-1, metavar="[NAME]...")
@click.option(
    "-n",
    "--count",
    type=click.IntRange(min=1),
    default=4,
    show_default=True,
    help="How many bots when no NAME is given (named PREFIX1 … PREFIXn).",
)
@click.option("--prefix", default="bot", show_default=True, metavar="TEXT", help="Prefix of generated names.")
@click.option(
    "--password",
    "bot_password",
    default=DEFAULT_PASSWORD,
    show_default=True,
    metavar="PASSWORD",
    help="Password of the bots' accounts (created if new).",
)
@click.option("--game", metavar="GAME", help="Join GAME (log in as NAME@GAME); default: the server's game.")
@click.option(
    "--max-turns",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_TURNS,
    show_default=True,
    metavar="N",
    help="Stop (exit 5) after playing N turns without GAME OVER.",
)
@click.option(
    "--turn-timeout",
    type=click.FloatRange(min=0.1),
    default=DEFAULT_TURN_TIMEOUT,
    show_default=True,
    metavar="SECONDS",
    help="Give up on a turn that does not end within SECONDS.",
)
@click.option(
    "--deadline",
    type=click.FloatRange(min=0.1),
    metavar="SECONDS",
    help="Stop (exit 5) after SECONDS in all; default: no limit.",
)
@click.option(
    "--strategy",
    type=click.Choice([*LEVEL_NAMES, "smart", "random"]),
    default="normal",
    show_default=True,
    help="The computer player's level (easy, normal, hard; smart is normal) or random legal orders.",
)
@click.option(
    "--budget",
    type=click.IntRange(min=1),
    default=DEFAULT_ITERATIONS,
    show_default=True,
    metavar="PLAYOUTS",
    help="hard: playouts per decision (about 0.25 s per 100 on one core; a second at most).",
)
@click.option("--seed", type=int, metavar="N", help="Seed of the bots' choices (per bot: N and its name).")
@click.option("-v", "--verbose", count=True, help="Log each turn's orders (-vv: log everything).")
@json_option
def bot(
    names,
    count,
    prefix,
    bot_password,
    game,
    max_turns,
    turn_timeout,
    deadline,
    strategy,
    budget,
    seed,
    verbose,
    as_json,
):
    """Play with bots until GAME OVER: one bot per NAME, all at once.

    \b
    tae-client bot                   # bot1 … bot4 join the server's game
    tae-client --port 6924 --tls --insecure bot ann bob
    tae-client bot -n 3 --game tae --password s3cret --deadline 600

    Each bot waits until all have joined, then plays every turn (pushed TimeRemaining, or
    polling the turn counter) until GAME OVER. Exit 0 when every bot reached GAME OVER; else
    the worst case: 70 a bot crashed, 3 connection lost or refused, 1 login refused, 5 the
    deadline or --max-turns passed first.
    """
    run = runtime()
    settings = run.settings()
    players = list(names) or [f"{prefix}{i}" for i in range(1, count + 1)]
    if len(set(players)) != len(players):
        raise CliError(EXIT_USAGE, "bot names must be different")
    _configure_logging(verbose)
    started = time.monotonic()
    results = run_bots(
        settings.host,
        settings.port,
        players,
        bot_password,
        settings.version,
        game,
        max_turns,
        settings.timeout,
        turn_timeout=turn_timeout,
        deadline=deadline,
        strategy=_strategy_factory(strategy, seed, budget),
        tls=run.tls(),
    )
    elapsed = time.monotonic() - started
    if run.wants_json(as_json):
        emit_json({"bots": [result.to_dict() for result in results], "seconds": round(elapsed, 3)})
    else:
        click.echo(format_results(results, elapsed))
    _exit_for(results)


def _strategy_factory(name: str, seed: int | None, budget: int = DEFAULT_ITERATIONS):
    def own_seed(player: str) -> int:
        return zlib.crc32(f"{0 if seed is None else seed} {player}".encode())

    if name == "random":

        def random_strategy(player: str) -> Strategy:
            return RandomStrategy(None if seed is None else own_seed(player))

        return random_strategy
    level = parse_level("normal" if name == "smart" else name)

    def ai_strategy(player: str) -> Strategy:
        return AiStrategy(level, own_seed(player), budget)

    return ai_strategy


def _configure_logging(verbose: int) -> None:
    if not verbose:
        return
    level = logging.DEBUG if verbose > 1 else logging.INFO
    logging.basicConfig(level=level, format="%(asctime)s %(threadName)s %(levelname)s %(message)s")
    log.setLevel(logging.DEBUG)


def _exit_for(results: list[BotResult]) -> None:
    failed = [result for result in results if not result.ok]
    if not failed:
        return
    for failure, code in _EXIT_FOR:
        worst = [result for result in failed if result.failure is failure]
        if worst:
            first = (worst[0].error or "").splitlines()[0]
            raise CliError(
                code, f"{len(failed)} of {len(results)} bots did not finish; {worst[0].name}: {first}"
            )
    raise CliError(EXIT_INTERNAL, f"{failed[0].name} did not finish: {failed[0].error}")  # pragma: no cover
