"""`tae-server`: run and operate the TaE server.

    tae-server serve [--listen ENDPOINT]... [--map FILE] [--seed N] [--turn-length S]
                     [--timer basic|playersfinished|threshold] [--config FILE]

Every mistake on the command line or in the configuration is one line on stderr and exit 2.
"""

from __future__ import annotations

import sys

from dataclasses import replace

import click

from .config import ConfigError, ServerConfig, apply_game_settings, load_config, validate
from .turn_timer import TIMER_KINDS

EXIT_USAGE = 2
EXIT_FAILURE = 1


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """Thousand Parsec server for TaE (Tigris and Euphrates in space)."""


def _config(config_path: str | None, listen: tuple[str, ...], log_format: str | None,
            database: str | None, **game) -> ServerConfig:
    config = load_config(config_path)
    changes = {}
    if database:
        changes["database"] = database
    if listen:
        changes["listen"] = listen
    if log_format:
        changes["log_format"] = log_format
    config = replace(config, game=apply_game_settings(config.game, game), **changes)
    return validate(config)


@cli.command()
@click.option("--config", "config_path", metavar="FILE", help="TOML configuration file.")
@click.option("--listen", multiple=True, metavar="ENDPOINT",
              help="Twisted endpoint to listen on (repeatable); default tcp:6923.")
@click.option("--map", "map_path", metavar="FILE", help="Map file for a new game ('.', 'M', 'A').")
@click.option("--seed", type=int, help="Random seed of a new game.")
@click.option("--turn-length", type=click.IntRange(min=0), help="Seconds per turn (0: no deadline).")
@click.option("--timer", type=click.Choice(TIMER_KINDS), help="Turn timer (default playersfinished).")
@click.option("--game-name", help="Name of the open game created on first start (default tae).")
@click.option("--log-format", type=click.Choice(["text", "json"]), help="Log as text or JSON lines.")
@click.option("--database", metavar="URL", help="Database URL (default sqlite:///tae.db).")
def serve(config_path, listen, map_path, seed, turn_length, timer, game_name, log_format, database) -> None:
    """Start the server and play."""
    config = _config(config_path, listen, log_format, database, map=map_path, seed=seed,
                     turn_length=turn_length, timer=timer, name=game_name)
    config.game.setup(ctime=0)  # read and check the map now, before anything starts
    from .runner import run

    sys.exit(run(config))


def main(argv: list[str] | None = None) -> None:
    try:
        cli.main(args=argv, prog_name="tae-server", standalone_mode=False)
    except click.exceptions.Exit as done:
        sys.exit(done.exit_code)
    except click.UsageError as error:
        print(f"tae-server: {error.format_message()}", file=sys.stderr)
        sys.exit(EXIT_USAGE)
    except click.Abort:
        sys.exit(EXIT_FAILURE)
    except ConfigError as error:
        print(f"tae-server: {error}", file=sys.stderr)
        sys.exit(EXIT_USAGE)


if __name__ == "__main__":
    main()
