"""`tae-server`: run and operate the TaE server.

    tae-server serve [--listen ENDPOINT]... [--web ENDPOINT]... [--admin ENDPOINT]... [--map FILE]
                     [--seed N] [--turn-length DURATION] [--timer KIND] [--log-format text|json]
                     [--limit NAME=VALUE]... [--node NAME --advertise HOST:PORT]
    tae-server list-games | status GAME | create-game NAME | add-player GAME NAME | ...
                     (the operator command table: server.cli.games)
    tae-server nodes [--json] | upgrade-db | backup FILE [--force] | admin-user NAME
    tae-server ratings [--rebuild] [--json]

Every command takes `--config FILE` (TOML; see server.config.file) and `--database URL`; flags
override the file. Commands that change a game work with or without a running server: without
one they change the database (ending a turn waits for the server); with one they ask it and
wait up to `--wait` seconds for its answer (server.operating.on_database).

Mistakes on the command line or in the configuration, and values the command table refuses,
are one line on stderr and exit status 2; an operation that fails is one line and status 1.
Never a traceback.

    options.py        what every command shares (configuration, database, the table's types)
    games.py          the commands made from the operator command table (server.operating)
    serving.py        serve, which runs the server (runner.py) until SIGINT/SIGTERM
    upkeep.py         nodes, upgrade-db, backup, ratings
    admin_user.py     admin-user: an account line for the [admin.users] configuration
    runner.py, logs.py, serve_flags.py, password_prompt.py   what serve and the others need

The command line stands above everything it starts (`server.app`); the command table, the
actions and the desk it runs are in `server.operating`, below the services.
"""

from __future__ import annotations

import sys

import click

from server.cli.admin_user import admin_user
from server.cli.games import operator_commands
from server.cli.options import EXIT_FAILURE, EXIT_USAGE, print_json_error
from server.cli.serving import serve
from server.cli.upkeep import backup, nodes, ratings, upgrade_db
from server.config.errors import ConfigError


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, invoke_without_command=True)
@click.version_option(package_name="tpserver-tae", prog_name="tae-server", message="%(prog)s %(version)s")
@click.pass_context
def cli(ctx) -> None:
    """Thousand Parsec server for TaE (Tigris and Euphrates in space)."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help(), err=True)
        raise click.UsageError("a command is needed (see the list above)")


for _command in (serve, *operator_commands(), nodes, upgrade_db, admin_user, backup, ratings):
    cli.add_command(_command)


def _fail(message: str, code: int, kind: str, as_json: bool) -> None:
    """One line on stderr and exit status `code`; with `--json` also the error document
    (`{"error": {"code": kind, "exit": code, "message": ...}}`) on stdout."""
    from server.model.refusals import clip_words

    line = clip_words(" ".join(str(message).split()))
    print(f"tae-server: {line}", file=sys.stderr)
    if as_json:
        print_json_error(kind, code, line)
    sys.exit(code)


def _asks_for_json(argv: list[str]) -> bool:
    options = argv[: argv.index("--")] if "--" in argv else argv
    return "--json" in options


def main(argv: list[str] | None = None) -> None:
    from server.model.store import StoreError
    from server.operating.arguments import ArgumentRefused
    from server.operating.game_actions import OperationError

    as_json = _asks_for_json(list(sys.argv[1:] if argv is None else argv))
    try:
        cli.main(args=argv, prog_name="tae-server", standalone_mode=False)
    except click.exceptions.Exit as done:
        sys.exit(done.exit_code)
    except click.UsageError as error:
        _fail(error.format_message(), EXIT_USAGE, "usage", as_json)
    except click.Abort:
        _fail("aborted", EXIT_FAILURE, "aborted", as_json)
    except ConfigError as error:
        _fail(str(error), EXIT_USAGE, "configuration", as_json)
    except ArgumentRefused as error:  # a value the command table refuses: a mistake in the command
        _fail(str(error), EXIT_USAGE, "usage", as_json)
    except OperationError as error:
        _fail(str(error), EXIT_FAILURE, "failed", as_json)
    except StoreError as error:  # the database refused or could not do the change
        _fail(f"database: {error}", EXIT_FAILURE, "database", as_json)
    except KeyboardInterrupt:
        _fail("interrupted", EXIT_FAILURE, "interrupted", as_json)
    except click.ClickException as error:
        _fail(error.format_message(), EXIT_FAILURE, "failed", as_json)
    except Exception as error:  # a bug: still one line, never a traceback
        _fail(f"internal error: {type(error).__name__}: {error}", EXIT_FAILURE, "internal", as_json)
