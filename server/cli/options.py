"""What every `tae-server` command shares: the configuration and database options, reading an
argument by the operator command table's types, the exit statuses, and the wall clock (this
module is where the command line reads it; everything else is given `wallclock`).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import replace
from typing import Any

import click

from server.config.errors import ConfigError
from server.config.file import ServerConfig, apply_game_settings, load_config, validate
from server.game.passwords import InlineHasher, PasswordPolicy
from server.operating.arguments import ArgumentRefused, ArgumentType

EXIT_USAGE = 2
EXIT_FAILURE = 1

#: The version of every document `--json` prints (`"schema": "tae-server/COMMAND/1"`); the JSON
#: Schemas are server/cli/schemas/COMMAND.1.json (docs/schemas.md).
SCHEMA_VERSION = 1


def print_json(command: str, data: dict[str, Any]) -> None:
    """Print the JSON document of `tae-server COMMAND --json`: `data` after its `"schema"`."""
    document = {"schema": f"tae-server/{command}/{SCHEMA_VERSION}", **data}
    click.echo(json.dumps(document, indent=2, ensure_ascii=False))


def print_json_error(code: str, exit_status: int, message: str) -> None:
    """The error document of a `--json` command that failed: on stdout, beside the one line on
    stderr, so that a script reads every answer the same way."""
    print_json("error", {"error": {"code": code, "exit": exit_status, "message": message}})


def wallclock() -> float:
    """The Unix time, as the command line reads it."""
    return time.time()


class Refused(click.UsageError):
    """A value the command table refuses: a mistake on the command line (exit status 2), said
    in the table's words only, as every other channel says it."""


class ArgumentParam(click.ParamType):
    """A click parameter type that reads its value with an argument type of the operator
    command table (`server.operating.arguments`)."""

    def __init__(self, kind: ArgumentType):
        self.kind = kind
        self.name = kind.metavar.lower()

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value  # a default, already a value
        try:
            return self.kind.parse(value)
        except ArgumentRefused as refusal:
            # the words of the table, after the flag the operator typed (an argument is named
            # by the words themselves)
            flag = param.opts[0] if isinstance(param, click.Option) else None
            raise Refused(f"{flag}: {refusal}" if flag else str(refusal)) from None

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return self.kind.metavar


class TakesNegativeValues(click.Command):
    """A command whose arguments may be written with a leading '-' ("-5", "-1h"): click would
    read them as options ("No such option '-5'"). The options are put first and the arguments,
    in their order, behind a "--", so they reach the command table's types, which answer their
    own refusal. A value right after an option that takes one ("--wait -5") stays that
    option's."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
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
                value = next(words, None) if word in takes_value and "=" not in word else None
                if value is not None:
                    options.append(value)
            args = [*options, "--", *arguments]
        return super().parse_args(ctx, args)


_NEGATIVE = re.compile(r"-[0-9.]")


# -- configuration and database ------------------------------------------------------------------


def configured(
    config_path: str | None,
    listen: tuple[str, ...] = (),
    log_format: str | None = None,
    database: str | None = None,
    web: tuple[str, ...] = (),
    limits: tuple[str, ...] = (),
    **game: Any,
) -> ServerConfig:
    """The configuration file's settings (`--config`), changed by the flags given."""
    config = load_config(config_path)
    changes: dict[str, Any] = {}
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


def database_url(config_path: str | None, database: str | None) -> str:
    """The database the command uses; refused when it is one of PostgreSQL's own, unless
    `--allow-system-database` was given (`server.config.database_url`)."""
    from server.config.database_url import check_not_system_database
    from server.database import DEFAULT_URL

    url = configured(config_path, database=database).database or DEFAULT_URL
    ctx = click.get_current_context(silent=True)
    allowed = bool(ctx is not None and ctx.meta.get(ALLOW_SYSTEM_DATABASE))
    check_not_system_database(url, database_origin(config_path, database), allowed)
    return url


def database_origin(config_path: str | None, database: str | None) -> str:
    """How a message names the database setting: the flag when it was given, else the key of
    the configuration file."""
    return "--database" if database else f"{config_path}: database" if config_path else "database"


ALLOW_SYSTEM_DATABASE = "tae.allow_system_database"


def _allow_system_database(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    if value:
        ctx.meta[ALLOW_SYSTEM_DATABASE] = True
    return value


def allow_system_database_option(command):
    return click.option(
        "--allow-system-database",
        is_flag=True,
        expose_value=False,
        is_eager=True,
        callback=_allow_system_database,
        help="Use PostgreSQL's 'postgres' or a 'template…' database all the same (refused by default).",
    )(command)


def open_database(config_path: str | None, database: str | None, *, create: bool = False):
    from server.operating.on_database import open_database as opened

    return opened(database_url(config_path, database), create=create)


def password_hasher(config_path: str | None) -> InlineHasher:
    """The hasher of new passwords: the server's policy (`[limits]` password_min_length and
    password_hash_cost), hashing here."""
    limits = load_config(config_path).limits
    return InlineHasher(
        policy=PasswordPolicy.with_cost(limits.password_min_length, limits.password_hash_cost)
    )


def database_options(command):
    command = allow_system_database_option(command)
    command = click.option(
        "--database",
        metavar="URL",
        help="Database URL (default: the configuration's, else sqlite:///tae.db).",
    )(command)
    return click.option("--config", "config_path", metavar="FILE", help="TOML configuration file.")(command)


def wait_option(command):
    return click.option(
        "--wait",
        type=click.FloatRange(min=0, max=3600),
        default=10.0,
        show_default=True,
        metavar="SECONDS",
        help="How long to wait for a running server's answer.",
    )(command)
